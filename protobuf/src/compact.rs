//! `Compact<K, Protobuf>` entries straight from a protobuf message: the
//! metadata (field 1 of every resource message) is decoded and kept
//! parsed; the other fields are kept as bytes, never decoded until someone
//! asks for the whole object.

use std::borrow::Cow;

use clientgo_apimachinery::protobuf_wire::{
    WireReader, WireValue, put_bytes, split_managed_fields,
};
use clientgo_apimachinery::{Compact, CompactMeta, MetaFields, OwnerRef, Protobuf};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::error::{DecodeError, Problem};
use crate::field;
use crate::message::Message;

/// An entry from `K`'s message: metadata read straight into a packed
/// [`CompactMeta`] (its strings copied once, from the message into the
/// packed text, with no `ObjectMeta` built on the way), every other field
/// kept as it came (without field 1), and `K`'s decoder handed to the
/// entry for its whole decode.
pub fn compact_from_message<K: Message>(
    message: &[u8],
) -> Result<Compact<K, Protobuf>, DecodeError> {
    let mut reader = WireReader::new(message);
    // The metadata's bytes (without managedFields); more than one when
    // field 1 repeats, which protobuf merges.
    let mut metas: Vec<Cow<'_, [u8]>> = Vec::with_capacity(1);
    let mut rest = Vec::with_capacity(message.len());
    let mut start = reader.position();
    while let Some((number, value)) = reader.next_field()? {
        let end = reader.position();
        if number == 1 {
            let meta = field::length_delimited(value).map_err(|e| e.within("object", 1))?;
            // managedFields stay bytes: a field 1 of their own in the
            // body, decoded only with the whole object.
            let (mut kept, mut managed) = (Vec::new(), Vec::new());
            let split = split_managed_fields(meta, &mut kept, &mut managed)
                .map_err(|e| DecodeError::from(e).within("object", 1))?;
            metas.push(if split {
                Cow::Owned(kept)
            } else {
                Cow::Borrowed(meta)
            });
            if !managed.is_empty() {
                put_bytes(&mut rest, 1, &managed);
            }
        } else {
            rest.extend_from_slice(&message[start..end]);
        }
        start = end;
    }
    let mut fields = MetaFields::default();
    for meta in &metas {
        read_metadata(&mut fields, meta).map_err(|e| e.within("object", 1))?;
    }
    // `rest` was sized for the whole message; the body keeps its length.
    Ok(
        Compact::from_packed(CompactMeta::pack(fields), Protobuf::message(rest))
            .with_message_decoder(decode_whole::<K>),
    )
}

/// Reads an `ObjectMeta` message into `fields`, borrowing its strings, as
/// the generated `ObjectMeta` decoder reads it (an empty string or a zero
/// generation is absent; a repeated field's last value wins; managedFields,
/// field 17, are skipped).
fn read_metadata<'a>(fields: &mut MetaFields<'a>, bytes: &'a [u8]) -> Result<(), DecodeError> {
    let mut reader = WireReader::new(bytes);
    while let Some((number, value)) = reader.next_field()? {
        let read = match number {
            1 => text_or_absent(&mut fields.name, value),
            2 => text_or_absent(&mut fields.generate_name, value),
            3 => text_or_absent(&mut fields.namespace, value),
            4 => text_or_absent(&mut fields.self_link, value),
            5 => text_or_absent(&mut fields.uid, value),
            6 => text_or_absent(&mut fields.resource_version, value),
            7 => field::int64_or_absent(&mut fields.generation, value),
            8 => field::message::<Time, _>(&mut fields.creation_timestamp, value, &reader),
            9 => field::message::<Time, _>(&mut fields.deletion_timestamp, value, &reader),
            10 => field::int64(&mut fields.deletion_grace_period_seconds, value),
            11 => map_entry(&mut fields.labels, value, &reader),
            12 => map_entry(&mut fields.annotations, value, &reader),
            13 => owner_reference(&mut fields.owner_references, value, &reader),
            14 => field::string(&mut fields.finalizers, value),
            _ => Ok(()),
        };
        read.map_err(|e| e.within("ObjectMeta", number))?;
    }
    Ok(())
}

/// A string field's text, borrowed (UTF-8 checked).
fn text(value: WireValue<'_>) -> Result<&str, DecodeError> {
    std::str::from_utf8(field::length_delimited(value)?)
        .map_err(|_| DecodeError::new(Problem::NotUtf8))
}

/// A `string` Go holds with `omitempty`: `""` is absent.
fn text_or_absent<'a>(slot: &mut Option<&'a str>, value: WireValue<'a>) -> Result<(), DecodeError> {
    let text = text(value)?;
    *slot = (!text.is_empty()).then_some(text);
    Ok(())
}

/// One entry of a `map<string, string>`: the key in field 1, the value in
/// field 2 (absent when the entry has none).
fn map_entry<'a>(
    slot: &mut Option<Vec<(&'a str, Option<&'a str>)>>,
    value: WireValue<'a>,
    reader: &WireReader<'a>,
) -> Result<(), DecodeError> {
    let mut entry = reader.nested(field::length_delimited(value)?);
    let (mut key, mut found) = ("", None);
    while let Some((number, field)) = entry.next_field()? {
        match number {
            1 => key = text(field).map_err(|e| e.within("map entry", 1))?,
            2 => found = Some(text(field).map_err(|e| e.within("map entry", 2))?),
            _ => {}
        }
    }
    slot.get_or_insert_default().push((key, found));
    Ok(())
}

/// One `OwnerReference` message, its strings borrowed, read as its
/// generated decoder reads it (a repeated field's last value wins).
fn owner_reference<'a>(
    slot: &mut Option<Vec<OwnerRef<'a>>>,
    value: WireValue<'a>,
    reader: &WireReader<'a>,
) -> Result<(), DecodeError> {
    let mut message = reader.nested(field::length_delimited(value)?);
    let mut owner = OwnerRef::default();
    while let Some((number, value)) = message.next_field()? {
        let read = match number {
            5 => text(value).map(|text| owner.api_version = text),
            1 => text(value).map(|text| owner.kind = text),
            3 => text(value).map(|text| owner.name = text),
            4 => text(value).map(|text| owner.uid = text),
            6 => field::boolean(&mut owner.controller, value),
            7 => field::boolean(&mut owner.block_owner_deletion, value),
            _ => Ok(()),
        };
        read.map_err(|e| e.within("OwnerReference", number))?;
    }
    slot.get_or_insert_default().push(owner);
    Ok(())
}

/// `K`'s decoder as a compact entry keeps it
/// ([`MessageDecoder`](clientgo_apimachinery::MessageDecoder)).
pub fn decode_whole<K: Message>(message: &[u8]) -> Result<K, String> {
    K::decode(message).map_err(|error| error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;
    use clientgo_apimachinery::Object;
    use k8s_openapi::api::core::v1::{Container, Pod, PodSpec};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    #[test]
    fn metadata_read_straight_into_packed_form_is_what_object_meta_reads() {
        use std::collections::BTreeMap;
        let labels = |pairs: &[(&str, &str)]| {
            Some(
                pairs
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect::<BTreeMap<_, _>>(),
            )
        };
        let first = Pod {
            metadata: ObjectMeta {
                name: Some("web".into()),
                namespace: Some("team".into()),
                generation: Some(3),
                labels: labels(&[("z", "1"), ("a", "2"), ("m", "3")]),
                annotations: labels(&[("note", "é")]),
                finalizers: Some(vec!["f".into()]),
                owner_references: Some(vec![Default::default()]),
                ..Default::default()
            },
            ..Default::default()
        };
        let second = Pod {
            metadata: ObjectMeta {
                labels: labels(&[("a", "again"), ("b", "")]),
                resource_version: Some("9".into()),
                ..Default::default()
            },
            ..Default::default()
        };
        // Two metadata fields (protobuf merges them: maps and lists grow,
        // strings are replaced), and a map entry without a value.
        let mut message = first.encode();
        message.extend(second.encode());
        message.extend([0x0a, 0x05, 0x5a, 0x03, 0x0a, 0x01, b'z']);
        let expected = Pod::decode(&message).unwrap().metadata;
        let entry: Compact<Pod, Protobuf> = compact_from_message(&message).unwrap();
        assert_eq!(entry.to_object_meta(), expected);
        assert_eq!(entry.labels().get("a"), Some("again"));
        // The valueless entry replaced z's value with "".
        assert_eq!(entry.labels().get("z"), Some(""));
        assert_eq!(entry.labels().len(), 4);
        // A string that is not UTF-8 is an error naming where.
        let bad = [0x0a, 0x03, 0x0a, 0x01, 0xff];
        let error = compact_from_message::<Pod>(&bad).unwrap_err().to_string();
        assert!(error.contains("ObjectMeta"), "{error}");
    }

    #[test]
    fn an_entry_read_back_from_a_record_decodes_once_its_codec_restores_it() {
        use clientgo_apimachinery::RecordCodec;
        let pod = Pod {
            metadata: ObjectMeta {
                name: Some("web".into()),
                ..Default::default()
            },
            spec: Some(PodSpec::default()),
            ..Default::default()
        };
        let entry: Compact<Pod, Protobuf> = compact_from_message(&pod.encode()).unwrap();
        assert!(entry.has_message_decoder(), "handed over by the codec");
        let mut record = Vec::new();
        entry.write_record(&mut record).unwrap();
        let mut back = Compact::<Pod, Protobuf>::read_record(&record).unwrap();
        let error = back.decode().unwrap_err().to_string();
        assert!(error.contains("no decoder"), "{error}");
        let codec = crate::codec::<Compact<Pod, Protobuf>>().unwrap();
        (codec.restore)(&mut back);
        assert_eq!(back.decode().unwrap().spec, pod.spec);
    }

    #[test]
    fn an_entry_keeps_the_message_without_its_metadata_and_decodes_whole() {
        crate::registered_types();
        let pod = Pod {
            metadata: ObjectMeta {
                name: Some("web".into()),
                namespace: Some("default".into()),
                labels: Some([("app".to_string(), "web".to_string())].into()),
                ..Default::default()
            },
            spec: Some(PodSpec {
                containers: vec![Container {
                    name: "app".into(),
                    image: Some("nginx".into()),
                    ..Default::default()
                }],
                ..Default::default()
            }),
            ..Default::default()
        };
        let message = pod.encode();
        let entry: Compact<Pod, Protobuf> = compact_from_message(&message).unwrap();
        assert_eq!(entry.name(), Some("web"));
        assert_eq!(entry.labels().get("app"), Some("web"));
        assert!(entry.heap_bytes() > 0);
        let Protobuf::Message(kept) = entry.body() else {
            panic!("a message")
        };
        assert!(kept.len() < message.len(), "the metadata is not kept twice");
        assert_eq!(*entry.decode().unwrap(), pod);
        assert!(compact_from_message::<Pod>(&message[..message.len() - 2]).is_err());
    }

    #[test]
    fn managed_fields_stay_bytes_until_the_whole_object_is_decoded() {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;
        crate::registered_types();
        let mut pod = Pod::default();
        pod.metadata.name = Some("web".into());
        pod.metadata.managed_fields = Some(vec![ManagedFieldsEntry {
            manager: Some("kubelet".into()),
            operation: Some("Update".into()),
            ..Default::default()
        }]);
        let entry: Compact<Pod, Protobuf> = compact_from_message(&pod.encode()).unwrap();
        assert!(entry.meta().managed_fields.is_none(), "not parsed");
        assert_eq!(entry.name(), Some("web"));
        assert_eq!(*entry.decode().unwrap(), pod, "given back whole");
    }
}
