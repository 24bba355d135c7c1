//! The reflector's list phase: fetch the whole state page by page and
//! replace the store with it.

use std::sync::Arc;
use std::time::Duration;

use clientgo_apimachinery::{ApiObject, ListOptions};
use clientgo_listwatch::{DEFAULT_PAGE_SIZE, ListerWatcher, Pager, PagerEvent};
use clientgo_store::{Arrival, StoreError};
use tokio_util::sync::CancellationToken;

use crate::error::Error;
use crate::recovery::{Action, Cause, Ended, Outcome, Phase, RetryState};
use crate::reflector::Reflector;
use crate::status::ReflectorMode;

/// A list taking longer than this is logged with its duration.
const SLOW_LIST: Duration = Duration::from_secs(10);

/// Why a listing stopped short.
enum Failure {
    /// A page's request failed.
    Request(clientgo_listwatch::Error),
    /// The store refused to prepare an object.
    Refused(StoreError),
}

/// A complete listing.
struct Listed<K> {
    items: Vec<Arc<K>>,
    resource_version: String,
    paginated: bool,
}

impl<K, L> Reflector<K, L>
where
    K: ApiObject,
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
                Err(Failure::Refused(source)) => {
                    return Err(Error::Store {
                        resource: self.name().to_string(),
                        operation: "prepare",
                        source,
                    });
                }
                Err(Failure::Request(source)) => {
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

    /// Fetches every page, handing each object to the store's
    /// [`prepare`](clientgo_store::ReflectorStore::prepare) as its page
    /// arrives (the page's bytes are gone by then: only prepared objects
    /// are kept, unchanged ones shared with the cache, and the next page is
    /// fetched meanwhile). `None` when cancelled.
    async fn collect(
        &self,
        pager: &Pager,
        options: ListOptions,
        cancel: &CancellationToken,
    ) -> Result<Option<Listed<K>>, Failure> {
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
                Some(Err(error)) => return Err(Failure::Request(error)),
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
                    for object in page.items {
                        listed.items.push(
                            self.store
                                .prepare(Arc::new(object), Arrival::Listed)
                                .map_err(Failure::Refused)?,
                        );
                    }
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

/// A list at `resource_version` ("" sends none).
fn list_options(resource_version: &str) -> ListOptions {
    let options = ListOptions::default();
    if resource_version.is_empty() {
        options
    } else {
        options.resource_version(resource_version)
    }
}
