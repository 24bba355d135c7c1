//! The protobuf list and watch decoders: bodies split at every byte give
//! the same result, cut-off bodies and oversized items are typed errors,
//! and random bytes in random chunks never panic.
#![allow(clippy::unwrap_used)]

use clientgo_apimachinery::{INITIAL_EVENTS_END_ANNOTATION, Unknown, WatchEvent};
use clientgo_listwatch::{FrameError, ProtobufListDecoder, ProtobufWatchDecoder};
use clientgo_protobuf::{Message, put};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ListMeta, ObjectMeta, Status};
use proptest::prelude::*;

fn pod(name: &str, rv: &str) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            resource_version: Some(rv.into()),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn list_body(pods: &[Pod], rv: &str) -> Vec<u8> {
    let mut list = Vec::new();
    let meta = ListMeta {
        resource_version: Some(rv.into()),
        ..Default::default()
    };
    put::put_message::<ListMeta, _>(&mut list, 1, &meta);
    for pod in pods {
        put::put_message::<Pod, _>(&mut list, 2, pod);
    }
    Unknown::wrap("v1", "PodList", &list)
}

fn frame(event_type: &str, kind: &str, object: &[u8]) -> Vec<u8> {
    let mut event = Vec::new();
    put::put_string(&mut event, 1, &event_type.to_string());
    let inner = Unknown::wrap("v1", kind, object);
    put::length_prefixed(&mut event, 2, |out| {
        put::put_bytes(out, 1, &ByteString(inner))
    });
    // A bare WatchEvent, as kube-apiserver frames it: only the object
    // inside has the envelope.
    let mut bytes = (event.len() as u32).to_be_bytes().to_vec();
    bytes.extend_from_slice(&event);
    bytes
}

fn codec() -> clientgo_protobuf::Codec<Pod> {
    clientgo_protobuf::codec::<Pod>().unwrap()
}

/// Items, resourceVersion and kind of a list body fed in chunks.
type Decoded = (Vec<Pod>, Option<String>, Option<String>);

fn decode_list(body: &[u8], chunk: usize) -> Result<Decoded, FrameError> {
    let mut decoder = ProtobufListDecoder::new(codec(), 1 << 20);
    for piece in body.chunks(chunk.max(1)) {
        decoder.push(piece)?;
    }
    let list = decoder.finish()?;
    Ok((list.items, list.metadata.resource_version, list.kind))
}

#[test]
fn a_list_split_anywhere_decodes_the_same() {
    let pods: Vec<Pod> = (0..5)
        .map(|i| pod(&format!("p{i}"), &format!("{i}")))
        .collect();
    let body = list_body(&pods, "42");
    for chunk in 1..=body.len() {
        let (items, rv, kind) = decode_list(&body, chunk).unwrap();
        assert_eq!(items, pods, "chunks of {chunk}");
        assert_eq!(rv.as_deref(), Some("42"));
        assert_eq!(kind.as_deref(), Some("PodList"));
    }
    assert_eq!(
        decode_list(&list_body(&[], "7"), 3).unwrap().0,
        Vec::<Pod>::new()
    );
}

#[test]
fn a_cut_list_is_an_error_never_a_shorter_list() {
    let pods: Vec<Pod> = (0..3).map(|i| pod(&format!("p{i}"), "1")).collect();
    let body = list_body(&pods, "9");
    // The envelope ends with two empty fields (contentEncoding and
    // contentType, 2 bytes each) after the list: cutting those loses
    // nothing; cutting anything else is an error.
    let list_end = body.len() - 4;
    let whole_fields = [list_end, list_end + 2, body.len()];
    for cut in 0..=body.len() {
        let decoded = decode_list(&body[..cut], 7);
        if whole_fields.contains(&cut) {
            assert_eq!(decoded.unwrap().0, pods);
        } else {
            assert!(decoded.is_err(), "cut at {cut} of {}", body.len());
        }
    }
}

#[test]
fn an_oversized_item_and_a_foreign_body_are_refused() {
    let big = Pod {
        metadata: ObjectMeta {
            name: Some("x".repeat(4096)),
            ..Default::default()
        },
        ..Default::default()
    };
    let mut decoder = ProtobufListDecoder::new(codec(), 1024);
    let error = decoder.push(&list_body(&[big], "1")).unwrap_err();
    assert!(
        matches!(error, FrameError::TooLarge { limit: 1024, .. }),
        "{error}"
    );
    let mut decoder = ProtobufListDecoder::new(codec(), 1024);
    assert!(decoder.push(b"{\"kind\":\"PodList\"}").is_err());
}

#[test]
fn watch_frames_split_anywhere_decode_the_same() {
    let mut stream = Vec::new();
    stream.extend(frame("ADDED", "Pod", &pod("a", "1").encode()));
    stream.extend(frame("MODIFIED", "Pod", &pod("a", "2").encode()));
    let mut bookmark = pod("", "3");
    bookmark.metadata.name = None;
    bookmark.metadata.namespace = None;
    bookmark.metadata.annotations = Some(
        [(
            INITIAL_EVENTS_END_ANNOTATION.to_string(),
            "true".to_string(),
        )]
        .into(),
    );
    stream.extend(frame("BOOKMARK", "Pod", &bookmark.encode()));
    stream.extend(frame("ADDED", "Event", &pod("foreign", "4").encode()));
    stream.extend(frame("DELETED", "Pod", &pod("a", "5").encode()));
    let status = Status {
        code: Some(410),
        reason: Some("Expired".into()),
        ..Default::default()
    };
    stream.extend(frame("ERROR", "Status", &status.encode()));
    for chunk in 1..=stream.len() {
        // Pod's own type is expected with nothing said.
        let mut decoder = ProtobufWatchDecoder::new(codec(), 1 << 20);
        let mut events = Vec::new();
        for piece in stream.chunks(chunk) {
            decoder.push(piece);
            while let Some(event) = decoder.next_event() {
                events.push(event.unwrap());
            }
        }
        decoder.finish().unwrap();
        assert_eq!(decoder.skipped_events(), 1, "the Event is skipped");
        assert_eq!(events.len(), 5, "chunks of {chunk}");
        assert!(
            matches!(&events[0], WatchEvent::Added(p) if p.metadata.resource_version.as_deref() == Some("1"))
        );
        assert!(
            matches!(&events[1], WatchEvent::Modified(p) if p.metadata.resource_version.as_deref() == Some("2"))
        );
        let WatchEvent::Bookmark(mark) = &events[2] else {
            panic!("{:?}", events[2])
        };
        assert_eq!(mark.metadata.resource_version, "3");
        assert!(mark.is_initial_events_end());
        assert!(
            matches!(&events[3], WatchEvent::Deleted(p) if p.metadata.resource_version.as_deref() == Some("5"))
        );
        let WatchEvent::Error(status) = &events[4] else {
            panic!("{:?}", events[4])
        };
        assert_eq!(status.code, 410);
    }
}

/// The wire issue: an event wrapped in a `k8s\0` envelope of its own is
/// not what kube-apiserver sends, and is refused rather than guessed at.
#[test]
fn an_enveloped_watch_event_is_not_a_frame() {
    let added = frame("ADDED", "Pod", &pod("a", "1").encode());
    let enveloped = Unknown::wrap("v1", "WatchEvent", &added[4..]);
    let mut bytes = (enveloped.len() as u32).to_be_bytes().to_vec();
    bytes.extend_from_slice(&enveloped);
    let mut decoder = ProtobufWatchDecoder::new(codec(), 1 << 20);
    decoder.push(&bytes);
    assert!(matches!(
        decoder.next_event(),
        Some(Err(FrameError::Protobuf(_)))
    ));
}

#[test]
fn cut_and_oversized_watch_frames_are_errors() {
    let added = frame("ADDED", "Pod", &pod("a", "1").encode());
    for cut in 1..added.len() {
        let mut decoder = ProtobufWatchDecoder::new(codec(), 1 << 20);
        decoder.push(&added[..cut]);
        assert!(decoder.next_event().is_none());
        assert!(
            matches!(decoder.finish(), Err(FrameError::Truncated { .. })),
            "cut at {cut}"
        );
    }
    let mut decoder = ProtobufWatchDecoder::new(codec(), 16);
    decoder.push(&added);
    assert!(matches!(
        decoder.next_event(),
        Some(Err(FrameError::TooLarge { limit: 16, .. }))
    ));
    assert!(decoder.next_event().is_none(), "nothing after an error");
    let mut decoder = ProtobufWatchDecoder::new(codec(), 1 << 20);
    decoder.push(&frame("EXPLODED", "Pod", &pod("a", "1").encode()));
    assert!(matches!(
        decoder.next_event(),
        Some(Err(FrameError::Protobuf(_)))
    ));
}

proptest! {
    #[test]
    fn random_bytes_in_random_chunks_never_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..600),
        chunk in 1usize..64,
    ) {
        let mut watch = ProtobufWatchDecoder::new(codec(), 4096);
        let mut list = ProtobufListDecoder::new(codec(), 4096);
        let mut list_failed = false;
        for piece in bytes.chunks(chunk) {
            watch.push(piece);
            while let Some(event) = watch.next_event() {
                if event.is_err() {
                    break;
                }
            }
            prop_assert!(watch.buffered() <= 4096 + 4 + chunk);
            list_failed = list_failed || list.push(piece).is_err();
        }
        let _ = watch.finish();
        if !list_failed {
            let _ = list.finish();
        }
    }

    #[test]
    fn flipped_bits_in_a_real_stream_never_panic(at in any::<prop::sample::Index>(), bit in 0u8..8) {
        let mut stream = frame("ADDED", "Pod", &pod("a", "1").encode());
        let index = at.index(stream.len());
        stream[index] ^= 1 << bit;
        let mut watch = ProtobufWatchDecoder::new(codec(), 4096);
        watch.push(&stream);
        while let Some(event) = watch.next_event() {
            if event.is_err() {
                break;
            }
        }
        let mut body = list_body(&[pod("a", "1"), pod("b", "2")], "3");
        let index = at.index(body.len());
        body[index] ^= 1 << bit;
        let _ = decode_list(&body, 5);
    }
}
