//! `stream`: the floor of a watch-list sync. One watch-list request for
//! every pod, asking for protobuf as the default informer does, read chunk
//! by chunk and cut into frames at their length prefixes, up to the
//! bookmark that ends the initial events; nothing is decoded and nothing
//! kept. What the default informer's sync costs above this is its own
//! per-event path (decoding, the hand-off, the accumulator, the replace)
//! and the price of keeping what it receives, which `stream-keep`
//! ([`Keep::Frames`]) measures on its own.

use std::time::Instant;

use super::ClientPlan;
use crate::{BoxError, Figures};
use clientgo_testing::process_cpu::cpu_seconds;
use clientgo_testing::process_memory::rss_mib;

/// The annotation the server puts on the bookmark that ends the initial
/// events.
const INITIAL_EVENTS_END: &[u8] = b"k8s.io/initial-events-end";

/// The longest frame searched for [`INITIAL_EVENTS_END`]: a bookmark is a
/// few hundred bytes, a pod thousands.
const BOOKMARK_MAX: usize = 1_024;

/// What the reader keeps of the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Keep {
    /// Nothing: the stream's floor.
    Nothing,
    /// Each frame's bytes, copied into an allocation of its own and held
    /// to the end: the allocations and first touches of the memory a
    /// cache of the objects needs, without decoding them.
    Frames,
}

/// How far a stream of protobuf frames has been read.
#[derive(Debug, Default)]
struct Framer {
    /// The frames kept, when asked to keep them.
    kept: Option<Vec<Box<[u8]>>>,
    /// Bytes received and not yet cut into frames.
    pending: Vec<u8>,
    /// Whole frames seen.
    frames: u64,
    /// Whether the initial-events-end bookmark was seen.
    ended: bool,
}

impl Framer {
    /// Takes one chunk of the stream; cuts every whole frame out of what
    /// is pending and counts it.
    fn push(&mut self, chunk: &[u8]) {
        self.pending.extend_from_slice(chunk);
        let mut start = 0;
        while let Some(prefix) = self.pending.get(start..start + 4) {
            let length = u32::from_be_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]) as usize;
            let Some(frame) = self.pending.get(start + 4..start + 4 + length) else {
                break;
            };
            self.frames += 1;
            if let Some(kept) = self.kept.as_mut() {
                kept.push(frame.into());
            }
            if frame.len() <= BOOKMARK_MAX
                && memchr::memmem::find(frame, INITIAL_EVENTS_END).is_some()
            {
                self.ended = true;
            }
            start += 4 + length;
        }
        self.pending.drain(..start);
    }
}

pub(super) async fn run(plan: &ClientPlan, keep: Keep) -> Result<Figures, BoxError> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    // The informer's own transport (TLS, HTTP/2 where the server offers
    // it, gzip asked for), so only what is done with the bytes differs.
    let rest = clientgo_rest::RestClient::new(crate::real_server::clientgo_config(&plan.url)?)?;
    let mut figures = Figures {
        rss_baseline_mib: rss_mib(),
        ..Figures::default()
    };
    let cpu_before = cpu_seconds();
    let started = Instant::now();
    let mut response = rest
        .get()
        .abs_path("/api/v1/pods")
        .param("watch", "true")
        .param("sendInitialEvents", "true")
        .param("allowWatchBookmarks", "true")
        .param("resourceVersionMatch", "NotOlderThan")
        .header("accept", clientgo_rest::config::PROTOBUF_ACCEPT)
        .watch()
        .await?;
    let mut framer = Framer {
        kept: (keep == Keep::Frames).then(Vec::new),
        ..Framer::default()
    };
    while !framer.ended {
        let Some(chunk) = response.next_chunk().await? else {
            return Err("the stream ended before the initial events did".into());
        };
        framer.push(&chunk);
    }
    figures.sync_seconds = started.elapsed().as_secs_f64();
    figures.cpu_seconds = Some(cpu_seconds() - cpu_before);
    // Every pod, and the bookmark.
    if framer.frames != plan.pods as u64 + 1 {
        return Err(format!("{} frames, expected {}", framer.frames, plan.pods + 1).into());
    }
    figures.rss_synced_mib = rss_mib();
    if let Some(kept) = &framer.kept {
        figures.cache_mib =
            Some(kept.iter().map(|frame| frame.len()).sum::<usize>() as f64 / (1024.0 * 1024.0));
    }
    figures.rss_steady_mib = figures.rss_synced_mib;
    figures.relist_peak_mib = figures.rss_synced_mib;
    // As the caching clients settle before they announce their sync, so
    // the server's CPU is read at the same point after every sync (its
    // garbage collector may still be running).
    tokio::time::sleep(super::SETTLE).await;
    Ok(figures)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut bytes = (body.len() as u32).to_be_bytes().to_vec();
        bytes.extend_from_slice(body);
        bytes
    }

    #[test]
    fn frames_are_counted_across_any_cut_and_the_bookmark_ends_the_stream() {
        let mut stream = frame(&[7; 3_000]);
        stream.extend(frame(b"pod two"));
        stream.extend(frame(b"BOOKMARK k8s.io/initial-events-end true"));
        for cut in [1, 2, 3, 5, 4_096] {
            let mut framer = Framer::default();
            for chunk in stream.chunks(cut) {
                assert!(!framer.ended, "ended early with chunks of {cut}");
                framer.push(chunk);
            }
            assert_eq!(framer.frames, 3, "chunks of {cut}");
            assert!(framer.kept.is_none());
            assert!(framer.ended, "chunks of {cut}");
            assert!(framer.pending.is_empty());
        }
    }

    #[test]
    fn kept_frames_are_the_frames_bodies() {
        let mut stream = frame(b"one");
        stream.extend(frame(b"BOOKMARK k8s.io/initial-events-end true"));
        let mut framer = Framer {
            kept: Some(Vec::new()),
            ..Framer::default()
        };
        for chunk in stream.chunks(5) {
            framer.push(chunk);
        }
        let kept = framer.kept.unwrap_or_default();
        assert_eq!(kept.len(), 2);
        assert_eq!(&*kept[0], b"one");
    }

    #[test]
    fn a_long_frame_naming_the_annotation_is_not_the_bookmark() {
        let mut body = vec![0; 2_000];
        body.extend_from_slice(INITIAL_EVENTS_END);
        let mut framer = Framer::default();
        framer.push(&frame(&body));
        assert_eq!(framer.frames, 1);
        assert!(!framer.ended);
    }
}
