//! The reflector's list phase: fetch the whole state page by page and
//! replace the store with it.

use std::sync::Arc;
use std::time::Duration;

use clientgo_apimachinery::{ListOptions, Object};
use clientgo_listwatch::{DEFAULT_PAGE_SIZE, ListerWatcher, Pager, PagerEvent};
use clientgo_store::meta_namespace_key;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use crate::error::Error;
use crate::recovery::{Action, Cause, Ended, Outcome, Phase, RetryState};
use crate::reflector::Reflector;
use crate::status::ReflectorMode;

/// A list taking longer than this is logged with its duration.
const SLOW_LIST: Duration = Duration::from_secs(10);

/// A complete listing.
struct Listed<K> {
    items: Vec<Arc<K>>,
    resource_version: String,
    paginated: bool,
}

impl<K, L> Reflector<K, L>
where
    K: Object + DeserializeOwned + Send + Sync + 'static,
    L: ListerWatcher<K> + Clone + 'static,
{
    /// Lists and replaces the store (client-go's `list`). Returns without
    /// touching the store when cancelled.
    ///
    /// The resourceVersion comes from
    /// [`relist_resource_version`](Self::relist_resource_version); pages of
    /// 500 are used at "" and "0" (and always once an RV="0" list came back
    /// paginated), none at a specific resourceVersion so the watch cache
    /// can answer. After a failure the recovery table decides: a 410 or
    /// too-large resourceVersion marks the last one unavailable and lists
    /// again at once at ""; anything else is returned for the run loop to
    /// back off and list again.
    pub(crate) async fn list(&mut self, cancel: &CancellationToken) -> Result<(), Error> {
        let mut retry = RetryState::new(Duration::ZERO);
        // A retry at "" keeps the first attempt's page size, as client-go's
        // one pager does.
        let page_size = self.page_size_for(&self.relist_resource_version());
        let pager = Pager::with_page_size(page_size);
        loop {
            let resource_version = self.relist_resource_version();
            let started = self.options.clock.now();
            tracing::debug!(%resource_version, page_size, "listing");
            let listed = match self
                .collect(&pager, list_options(&resource_version), cancel)
                .await
            {
                Ok(Some(listed)) => listed,
                Ok(None) => return Ok(()),
                Err(source) => {
                    let ended = Ended {
                        phase: Phase::List,
                        outcome: Outcome::Failed(Cause::of(&source)),
                        lasted: self.options.clock.since(started),
                        events: 0,
                        at_latest: resource_version.is_empty(),
                    };
                    let error = Error::List {
                        resource: self.name().to_string(),
                        resource_version,
                        source,
                    };
                    if self.decide(ended, &mut retry).action == Action::RetryAtLatest {
                        self.report(error);
                        self.resource_version_unavailable = true;
                        continue;
                    }
                    return Err(error);
                }
            };
            let elapsed = self.options.clock.since(started);
            if elapsed > SLOW_LIST {
                tracing::info!(?elapsed, objects = listed.items.len(), "slow list");
            }
            if resource_version == "0" && listed.paginated {
                self.paginated_result = true;
            }
            let count = listed.items.len();
            self.replace_store(
                listed.items,
                &listed.resource_version,
                ReflectorMode::ListWatch,
            )
            .map_err(|source| Error::Store {
                resource: self.name().to_string(),
                operation: "replace",
                source,
            })?;
            tracing::debug!(
                resource_version = %listed.resource_version,
                objects = count,
                ?elapsed,
                "listed and replaced the store"
            );
            return Ok(());
        }
    }

    /// client-go's page size rule.
    fn page_size_for(&self, resource_version: &str) -> u64 {
        if let Some(page_size) = self.options.page_size {
            return page_size;
        }
        if resource_version.is_empty() || resource_version == "0" || self.paginated_result {
            DEFAULT_PAGE_SIZE
        } else {
            0
        }
    }

    /// Fetches every page, wrapping objects in `Arc`s as each page arrives
    /// (the page's JSON is gone by then: only decoded objects are kept, and
    /// the next page is fetched meanwhile). `None` when cancelled.
    async fn collect(
        &self,
        pager: &Pager,
        options: ListOptions,
        cancel: &CancellationToken,
    ) -> Result<Option<Listed<K>>, clientgo_listwatch::Error> {
        let mut pages = pager.stream(self.lister_watcher.clone(), options);
        let mut listed = Listed {
            items: Vec::new(),
            resource_version: String::new(),
            paginated: false,
        };
        let mut first = true;
        loop {
            let next = tokio::select! {
                () = cancel.cancelled() => return Ok(None),
                next = pages.next() => next,
            };
            match next {
                None => return Ok(Some(listed)),
                Some(Err(error)) => return Err(error),
                Some(Ok(PagerEvent::Page(page))) => {
                    if first {
                        first = false;
                        listed.resource_version =
                            page.metadata.resource_version.clone().unwrap_or_default();
                    }
                    if page
                        .metadata
                        .continue_
                        .as_deref()
                        .is_some_and(|token| !token.is_empty())
                    {
                        listed.paginated = true;
                    }
                    listed.items.reserve(page.items.len());
                    listed.items.extend(
                        page.items
                            .into_iter()
                            .map(|object| self.reuse_known(object)),
                    );
                }
                Some(Ok(PagerEvent::Restarted)) => {
                    listed = Listed {
                        items: Vec::new(),
                        resource_version: String::new(),
                        paginated: false,
                    };
                    first = true;
                }
            }
        }
    }
}

impl<K, L> Reflector<K, L>
where
    K: Object + Send + Sync + 'static,
{
    /// The store's own `Arc` for `object` when it holds the same version
    /// (same key, UID and resourceVersion); else `object`, wrapped. The
    /// decoded duplicate is dropped at once.
    pub(crate) fn reuse_known(&self, object: K) -> Arc<K> {
        let Some(known) = &self.options.known_objects else {
            return Arc::new(object);
        };
        let Some(resource_version) = object.resource_version().filter(|rv| !rv.is_empty()) else {
            return Arc::new(object);
        };
        match known.get_by_key(&meta_namespace_key(&object)) {
            Some(existing)
                if existing.resource_version() == Some(resource_version)
                    && existing.uid() == object.uid() =>
            {
                existing
            }
            _ => Arc::new(object),
        }
    }
}

/// A list at `resource_version` ("" sends none).
fn list_options(resource_version: &str) -> ListOptions {
    let options = ListOptions::default();
    if resource_version.is_empty() {
        options
    } else {
        options.resource_version(resource_version)
    }
}
