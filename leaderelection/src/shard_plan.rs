//! [`plan`]: which shard leases a replica of a [`ShardElector`]
//! campaigns for and which it lets go, from what it sees of the others.
//! A pure function, so every rule has a row in its table test.
//!
//! [`ShardElector`]: crate::ShardElector

/// What a replica sees of one shard's lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ShardView {
    /// This replica leads it.
    Mine,
    /// This replica campaigns for it and does not lead it (yet).
    Campaigning,
    /// Another replica holds it and its lease is valid.
    Taken,
    /// Nobody holds it, or its holder's lease expired.
    Free,
}

/// What to change.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Shards to start campaigning for.
    pub(crate) campaign: Vec<u32>,
    /// Shards to stop campaigning for (not led).
    pub(crate) withdraw: Vec<u32>,
    /// Shards led to release (their work stopped first).
    pub(crate) release: Vec<u32>,
}

/// A replica's share: every shard divided over the live replicas,
/// rounded up, so the shares always cover every shard.
pub(crate) fn fair_share(shards: u32, replicas: u32) -> u32 {
    shards.div_ceil(replicas.max(1))
}

/// The plan for one replica: lead at most its fair share (releasing the
/// shards it likes least beyond it, so a new replica gets them), and
/// campaign for free shards, those it likes most, until campaigns and led
/// shards reach the share. When the shares do not divide evenly (16 over
/// 3: 6, 5, 5) and `starving` says another replica leads fewer than the
/// lower share while no shard is free, a replica at the upper share
/// releases one, so replicas do not stay at 6, 6, 4. `preference` ranks
/// shards for this replica (lower is preferred); different replicas rank
/// differently, so they rarely race for the same free shard.
pub(crate) fn plan(
    views: &[ShardView],
    replicas: u32,
    starving: bool,
    preference: impl Fn(u32) -> u64,
) -> Plan {
    let share = fair_share(views.len() as u32, replicas) as usize;
    let lower = views.len() / replicas.max(1) as usize;
    let by_preference = |mut shards: Vec<u32>| {
        shards.sort_by_key(|&shard| (preference(shard), shard));
        shards
    };
    let with = |wanted: ShardView| {
        by_preference(
            (0..views.len() as u32)
                .filter(|&shard| views[shard as usize] == wanted)
                .collect(),
        )
    };
    let mine = with(ShardView::Mine);
    let campaigning = with(ShardView::Campaigning);
    let free = with(ShardView::Free);
    let mut plan = Plan::default();
    // While another replica starves, this one aims at the lower share: it
    // takes nothing more, and releases down to it once no shard is free.
    let target = if starving && share > lower {
        lower
    } else {
        share
    };
    let keep = if free.is_empty() { target } else { share };
    if mine.len() > keep {
        plan.release = mine[keep..].to_vec();
        plan.withdraw = campaigning;
        return plan;
    }
    let room = target.saturating_sub(mine.len());
    // Campaigns for shards another replica took meanwhile are withdrawn
    // (they wait for its lease to expire); of the rest, the preferred ones
    // up to the room are kept or started.
    let mut wanted: Vec<u32> = by_preference(
        campaigning
            .iter()
            .copied()
            .chain(free.iter().copied())
            .collect(),
    );
    wanted.truncate(room);
    plan.withdraw = campaigning
        .iter()
        .copied()
        .filter(|shard| !wanted.contains(shard))
        .collect();
    plan.campaign = wanted
        .into_iter()
        .filter(|shard| views[*shard as usize] == ShardView::Free)
        .collect();
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use ShardView::{Campaigning as C, Free as F, Mine as M, Taken as T};

    /// Prefers lower shard numbers.
    fn in_order(shard: u32) -> u64 {
        u64::from(shard)
    }

    #[test]
    fn fair_shares_cover_every_shard() {
        for (shards, replicas, share) in [
            (16, 1, 16),
            (16, 3, 6),
            (16, 4, 4),
            (16, 0, 16),
            (16, 17, 1),
        ] {
            assert_eq!(fair_share(shards, replicas), share, "{shards}/{replicas}");
            assert!(fair_share(shards, replicas) * replicas.max(1) >= shards);
        }
    }

    #[test]
    fn every_rule_of_the_plan() {
        let p = |campaign: &[u32], withdraw: &[u32], release: &[u32]| Plan {
            campaign: campaign.to_vec(),
            withdraw: withdraw.to_vec(),
            release: release.to_vec(),
        };
        let rows: [(&str, Vec<ShardView>, u32, bool, Plan); 12] = [
            (
                "alone, nothing held: campaign for all",
                vec![F; 4],
                1,
                false,
                p(&[0, 1, 2, 3], &[], &[]),
            ),
            (
                "two replicas: half each",
                vec![F; 4],
                2,
                false,
                p(&[0, 1], &[], &[]),
            ),
            (
                "at the share: nothing to do",
                vec![M, M, T, T],
                2,
                false,
                p(&[], &[], &[]),
            ),
            (
                "a replica joined: release the excess",
                vec![M, M, M, M],
                2,
                false,
                p(&[], &[], &[2, 3]),
            ),
            (
                "a replica died: its free shards are taken",
                vec![M, F, F, T],
                2,
                false,
                p(&[1], &[], &[]),
            ),
            (
                "campaigns count toward the share",
                vec![C, F, F, T],
                2,
                false,
                p(&[1], &[], &[]),
            ),
            (
                "a campaign beyond the share is withdrawn",
                vec![M, M, C, T],
                2,
                false,
                p(&[], &[2], &[]),
            ),
            (
                "releasing withdraws every campaign",
                vec![M, M, M, C],
                2,
                false,
                p(&[], &[3], &[2]),
            ),
            // 5 shards over 2: shares 3 and 2.
            (
                "at the upper share, another starving: release one",
                vec![M, M, M, T, T],
                2,
                true,
                p(&[], &[], &[2]),
            ),
            (
                "at the upper share, nobody starving: keep",
                vec![M, M, M, T, T],
                2,
                false,
                p(&[], &[], &[]),
            ),
            (
                "a free shard feeds the starving first",
                vec![M, M, M, T, F],
                2,
                true,
                p(&[], &[], &[]),
            ),
            (
                "at the lower share, another starving: take nothing more",
                vec![M, M, T, F, F],
                2,
                true,
                p(&[], &[], &[]),
            ),
        ];
        for (name, views, replicas, starving, want) in rows {
            assert_eq!(plan(&views, replicas, starving, in_order), want, "{name}");
        }
    }

    #[test]
    fn preferences_decide_which_shards() {
        // Prefers higher numbers: releases the lowest, campaigns the highest.
        let reverse = |shard: u32| u64::from(u32::MAX - shard);
        assert_eq!(plan(&[M, M, M, M], 2, false, reverse).release, [1, 0]);
        assert_eq!(plan(&[F; 4], 2, false, reverse).campaign, [3, 2]);
    }
}
