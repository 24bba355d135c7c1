//! `Compact<K, Protobuf>` entries straight from a protobuf message: the
//! metadata (field 1 of every resource message) is decoded and kept
//! parsed; the other fields are kept as bytes, never decoded until someone
//! asks for the whole object.

use clientgo_apimachinery::protobuf_wire::{
    WireReader, WireValue, put_bytes, split_managed_fields,
};
use clientgo_apimachinery::{Compact, Protobuf};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::error::DecodeError;
use crate::field;
use crate::message::Message;

/// An entry from `K`'s message: metadata parsed, every other field kept as
/// it came (without field 1), and `K`'s decoder handed to the entry for
/// its whole decode.
pub fn compact_from_message<K: Message>(
    message: &[u8],
) -> Result<Compact<K, Protobuf>, DecodeError> {
    let mut reader = WireReader::new(message);
    let mut metadata = ObjectMeta::default();
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
            let kept: &[u8] = if split { &kept } else { meta };
            let meta_reader = WireReader::new(kept);
            field::message::<ObjectMeta, _>(&mut metadata, WireValue::Bytes(kept), &meta_reader)
                .map_err(|e| e.within("object", 1))?;
            if !managed.is_empty() {
                put_bytes(&mut rest, 1, &managed);
            }
        } else {
            rest.extend_from_slice(&message[start..end]);
        }
        start = end;
    }
    Ok(
        Compact::from_parts(metadata, Protobuf::Message(rest.into_boxed_slice()))
            .with_message_decoder(decode_whole::<K>),
    )
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
