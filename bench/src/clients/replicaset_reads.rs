//! A ReplicaSet controller's reads from its cache: each reconcile lists
//! the pods of one group, by namespace and label selector, as client-go's
//! ReplicaSet and Job controllers do on every sync
//! (`rsc.podLister.Pods(ns).List(selector)`).
//!
//! The bench's pods fall into 100 such groups: pod `index` is in
//! `namespace-{index % 20}` and labelled `app: app-{index % 50}`, so a
//! (namespace, app) pair holds every pod whose index has the same
//! remainder modulo 100 (the least common multiple): N / 100 pods each.
//! The reads cycle over every group, as a controller reconciling every
//! ReplicaSet in turn does; a decode cache smaller than all the pods
//! decoded then misses on every read.

use std::time::{Duration, Instant};

use crate::BoxError;
use crate::server::NAMESPACES;
use clientgo_testing::REALISTIC_POD_APPS;

/// Groups: every (namespace, app) pair the pods take.
pub const GROUPS: usize = 100;

// Each remainder modulo GROUPS must name one (namespace, app) pair (the
// tests check that the pairs are distinct).
const _: () =
    assert!(GROUPS.is_multiple_of(NAMESPACES) && GROUPS.is_multiple_of(REALISTIC_POD_APPS));

/// How long the timed reads go on for, at least (and at least one cycle
/// over every group).
const TIMED: Duration = Duration::from_millis(500);

/// The largest cache read through one untimed cycle first (so a decode
/// cache that holds every group is measured warm); above it a cycle takes
/// seconds and the cache cannot hold the pods anyway.
const WARM_UP_MAX: usize = 100_000;

/// One group: its namespace and its `app` label's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Group {
    /// Its number, below [`GROUPS`].
    pub index: usize,
    /// The namespace every pod of the group is in.
    pub namespace: String,
    /// The `app` label every pod of the group carries.
    pub app: String,
}

/// Group `index` (taken modulo [`GROUPS`]), and how many of `pods` it
/// holds.
fn group(index: usize, pods: usize) -> (Group, usize) {
    let index = index % GROUPS;
    let group = Group {
        index,
        namespace: format!("namespace-{}", index % NAMESPACES),
        app: format!("app-{}", index % REALISTIC_POD_APPS),
    };
    let size = pods / GROUPS + usize::from(index < pods % GROUPS);
    (group, size)
}

/// Reconciles per second: `list` (which returns how many pods it listed)
/// called for each group in turn, one untimed cycle first for caches of
/// up to [`WARM_UP_MAX`] pods, then timed for at least [`TIMED`] and one
/// whole cycle. An error when a list returns another count than the
/// group holds.
pub(super) fn reads_per_second(
    pods: usize,
    mut list: impl FnMut(&Group) -> usize,
) -> Result<f64, BoxError> {
    let mut read = |index: usize| -> Result<(), BoxError> {
        let (group, size) = group(index, pods);
        let listed = list(&group);
        if listed != size {
            return Err(format!("{group:?} listed {listed} pods, expected {size}").into());
        }
        Ok(())
    };
    if pods <= WARM_UP_MAX {
        for index in 0..GROUPS {
            read(index)?;
        }
    }
    let started = Instant::now();
    let mut reads = 0;
    while reads < GROUPS || started.elapsed() < TIMED {
        read(reads)?;
        reads += 1;
    }
    Ok(reads as f64 / started.elapsed().as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_groups_are_the_pods_by_index_modulo_a_hundred() {
        let pods = 10_250;
        let mut members = vec![0; GROUPS];
        for index in 0..pods {
            let (group, _) = group(index % GROUPS, pods);
            assert_eq!(group.namespace, format!("namespace-{}", index % NAMESPACES));
            assert_eq!(group.app, format!("app-{}", index % REALISTIC_POD_APPS));
            members[index % GROUPS] += 1;
        }
        for (index, count) in members.iter().enumerate() {
            assert_eq!(group(index, pods).1, *count, "group {index}");
        }
        let distinct: std::collections::HashSet<_> = (0..GROUPS)
            .map(|index| group(index, pods).0)
            .map(|g| (g.namespace, g.app))
            .collect();
        assert_eq!(distinct.len(), GROUPS);
    }

    #[test]
    fn a_list_of_the_wrong_size_is_an_error() {
        let error = reads_per_second(1_000, |_| 9).unwrap_err();
        assert!(error.to_string().contains("expected 10"), "{error}");
        let rate = reads_per_second(1_000, |_| 10).unwrap();
        assert!(rate > 0.0);
    }
}
