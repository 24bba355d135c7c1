//! [`Pager`]: lists a resource page by page, as client-go's `tools/pager`,
//! handing each page over as soon as it is decoded.

use std::pin::Pin;
use std::task::{Context, Poll};

use clientgo_apimachinery::{ListOptions, ObjectList};
use futures_core::Stream;
use tokio::sync::mpsc;

use crate::error::Error;
use crate::lister_watcher::ListerWatcher;

/// Objects per page by default; client-go's `pager.PageSize`.
pub const DEFAULT_PAGE_SIZE: u64 = 500;

/// Lists in pages, following continue tokens.
///
/// Rules, as client-go's `ListPager`:
/// - the first request carries the caller's options with `limit` set to
///   the page size (unless the caller set one, or the page size is 0:
///   unpaginated);
/// - continuation pages send the `continue` token and **clear**
///   `resourceVersion` and `resourceVersionMatch` (the token pins the
///   snapshot);
/// - when a continuation page fails with 410 Expired (the token outlived
///   the server's compaction window), the whole list is requested again
///   **once**, unpaginated, with the original resourceVersion and match;
///   the consumer is told with [`PagerEvent::Restarted`] to drop the pages
///   it has;
/// - any other error ends the listing.
///
/// Pages are fetched by a task and handed over through a channel holding
/// `buffered_pages` pages (1 by default): the next page is fetched while the
/// consumer stores the last, and at most that many decoded pages wait in
/// between, so memory stays bounded by the page size, not the list size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pager {
    /// Objects per page; 0 lists in one request.
    pub page_size: u64,
    /// Relist unpaginated once when a continue token expires.
    pub full_list_if_expired: bool,
    /// Decoded pages that may wait for the consumer.
    pub buffered_pages: usize,
}

impl Default for Pager {
    fn default() -> Self {
        Pager {
            page_size: DEFAULT_PAGE_SIZE,
            full_list_if_expired: true,
            buffered_pages: 1,
        }
    }
}

/// What the pager hands over.
#[derive(Debug)]
pub enum PagerEvent<K> {
    /// The next page. The first page's resourceVersion is the list's.
    Page(ObjectList<K>),
    /// A continue token expired: drop every page received so far; the list
    /// starts again (unpaginated).
    Restarted,
}

/// The pages of one listing, in order: a [`Stream`]. Dropping it stops
/// the fetching.
#[derive(Debug)]
pub struct PageStream<K> {
    pages: mpsc::Receiver<Result<PagerEvent<K>, Error>>,
}

impl<K> PageStream<K> {
    /// The next page or restart notice; `None` after the last page or an
    /// error. Cancel-safe. The same as
    /// [`StreamExt::next`](futures_util::StreamExt::next).
    pub async fn next(&mut self) -> Option<Result<PagerEvent<K>, Error>> {
        self.pages.recv().await
    }
}

impl<K> Stream for PageStream<K> {
    type Item = Result<PagerEvent<K>, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.pages.poll_recv(cx)
    }
}

/// A whole list, collected from its pages.
#[derive(Debug)]
pub struct ListResult<K> {
    /// Every object, in the server's order.
    pub items: Vec<K>,
    /// The list's resourceVersion (the first page's).
    pub resource_version: String,
    /// Whether the server split it into more than one page (client-go keeps
    /// paginating later relists when an RV="0" list came back paginated).
    pub paginated: bool,
    /// Pages of the final listing (1 after a restart, which is one
    /// unpaginated request).
    pub pages: usize,
}

impl Pager {
    /// A pager with `page_size` objects per page.
    pub fn with_page_size(page_size: u64) -> Self {
        Pager {
            page_size,
            ..Pager::default()
        }
    }

    /// Starts listing with `options` on a task; pages arrive on the
    /// returned stream. Must be called inside a tokio runtime.
    pub fn stream<K, L>(&self, lister: L, options: ListOptions) -> PageStream<K>
    where
        K: Send + 'static,
        L: ListerWatcher<K> + 'static,
    {
        let (sender, pages) = mpsc::channel(self.buffered_pages.max(1));
        let pager = *self;
        tokio::spawn(async move {
            pager.fetch(&lister, options, &sender).await;
        });
        PageStream { pages }
    }

    async fn fetch<K, L>(
        &self,
        lister: &L,
        original: ListOptions,
        sender: &mpsc::Sender<Result<PagerEvent<K>, Error>>,
    ) where
        L: ListerWatcher<K>,
    {
        let mut options = original.clone();
        if options.limit.is_none() && self.page_size > 0 {
            options.limit = Some(self.page_size);
        }
        let mut restarted = false;
        loop {
            let continuation = options.continue_token.is_some();
            match lister.list(&options).await {
                Ok(page) => {
                    let next = page
                        .metadata
                        .continue_
                        .clone()
                        .filter(|token| !token.is_empty());
                    if sender.send(Ok(PagerEvent::Page(page))).await.is_err() {
                        return;
                    }
                    let Some(token) = next else {
                        return;
                    };
                    options.continue_token = Some(token);
                    options.resource_version = None;
                    options.resource_version_match = None;
                }
                Err(error)
                    if continuation
                        && !restarted
                        && self.full_list_if_expired
                        && error.is_expired_or_gone() =>
                {
                    tracing::info!(
                        resource = %lister.describe(),
                        "continue token expired; listing again in one request"
                    );
                    restarted = true;
                    if sender.send(Ok(PagerEvent::Restarted)).await.is_err() {
                        return;
                    }
                    options = original.clone();
                    options.limit = None;
                    options.continue_token = None;
                }
                Err(error) => {
                    let _ = sender.send(Err(error)).await;
                    return;
                }
            }
        }
    }

    /// Lists everything and collects it (for callers that need the whole
    /// list at once). Pages are still fetched ahead of collection.
    pub async fn list_all<K, L>(
        &self,
        lister: L,
        options: ListOptions,
    ) -> Result<ListResult<K>, Error>
    where
        K: Send + 'static,
        L: ListerWatcher<K> + 'static,
    {
        let mut stream = self.stream(lister, options);
        let mut result = ListResult {
            items: Vec::new(),
            resource_version: String::new(),
            paginated: false,
            pages: 0,
        };
        while let Some(event) = stream.next().await {
            match event? {
                PagerEvent::Page(page) => {
                    if result.pages == 0 {
                        result.resource_version =
                            page.metadata.resource_version.clone().unwrap_or_default();
                    }
                    result.pages += 1;
                    if page
                        .metadata
                        .continue_
                        .as_deref()
                        .is_some_and(|c| !c.is_empty())
                    {
                        result.paginated = true;
                    }
                    result.items.extend(page.items);
                }
                PagerEvent::Restarted => {
                    result.items.clear();
                    result.pages = 0;
                    result.paginated = false;
                }
            }
        }
        Ok(result)
    }
}
