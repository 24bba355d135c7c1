//! `decoded_indexers`: index functions over whole objects for an
//! informer of [`Compact`] objects, decoding each object once, at ingest.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use clientgo_apimachinery::{ApiObject, Compact, CompactBody, Object};
use clientgo_store::{IndexFunc, IndexFuncError, Indexers};
use serde::de::DeserializeOwned;

static GROUPS: AtomicU64 = AtomicU64::new(0);

/// The values of every function of one group for one entry.
struct GroupValues {
    group: u64,
    values: Box<[Result<Vec<String>, String>]>,
}

/// Turns index functions over `K` into index functions over
/// `Compact<K, B>` that share one decode per object.
///
/// Index functions over metadata need none of this: they take
/// `&Compact<K, B>` and read its parsed metadata without decoding. For a
/// function that reads the rest of the object (a pod's
/// `spec.nodeName`), the store calls it when an object arrives and again
/// on the old object at each update and delete (as client-go's indexer
/// does). Here, the first call for an entry decodes it once, runs every
/// function of the group on that decode and keeps the values with the
/// entry ([`Compact::memo`]); every later call, for any index of the
/// group, reads them. So each object version is decoded once, at ingest,
/// whatever the number of indexes.
///
/// An object that does not decode fails every index of the group with an
/// [`IndexFuncError`] naming it, as any failing index function does.
/// Functions added later in another group are computed without being
/// kept (an entry keeps one group's values).
pub(crate) fn decoded_indexers<K, B>(
    functions: impl IntoIterator<Item = (String, IndexFunc<K>)>,
) -> Indexers<Compact<K, B>>
where
    K: ApiObject,
    B: CompactBody,
{
    let group = GROUPS.fetch_add(1, Ordering::Relaxed);
    let (names, functions): (Vec<String>, Vec<IndexFunc<K>>) = functions.into_iter().unzip();
    let functions: Arc<[IndexFunc<K>]> = functions.into();
    names
        .into_iter()
        .enumerate()
        .map(|(position, name)| {
            let functions = Arc::clone(&functions);
            let index: IndexFunc<Compact<K, B>> = Arc::new(move |compact: &Compact<K, B>| {
                let kept = compact.memo(|| GroupValues {
                    group,
                    values: values_of(compact, &functions),
                });
                let values = match kept {
                    Some(kept) if kept.group == group => kept.values[position].clone(),
                    // The entry keeps another group's values: this one
                    // function, unkept.
                    _ => values_of(compact, &functions[position..=position])
                        .into_vec()
                        .swap_remove(0),
                };
                values.map_err(IndexFuncError)
            });
            (name, index)
        })
        .collect()
}

fn values_of<K, B>(
    compact: &Compact<K, B>,
    functions: &[IndexFunc<K>],
) -> Box<[Result<Vec<String>, String>]>
where
    K: DeserializeOwned + Object + 'static,
    B: CompactBody,
{
    match compact.decode() {
        Ok(object) => {
            let values = functions
                .iter()
                .map(|function| function(&object).map_err(|error| error.0))
                .collect();
            compact.release(object);
            values
        }
        Err(error) => {
            let error = error.to_string();
            functions.iter().map(|_| Err(error.clone())).collect()
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use clientgo_apimachinery::Json;
    use k8s_openapi::api::core::v1::ConfigMap;

    fn by_value(key: &'static str) -> IndexFunc<ConfigMap> {
        Arc::new(move |map: &ConfigMap| {
            Ok(map
                .data
                .as_ref()
                .and_then(|data| data.get(key))
                .cloned()
                .into_iter()
                .collect())
        })
    }

    #[test]
    fn every_index_of_a_group_reads_one_kept_computation() {
        let indexers: Indexers<Compact<ConfigMap, Json>> = decoded_indexers([
            ("by-a".to_string(), by_value("a")),
            ("by-b".to_string(), by_value("b")),
        ]);
        let entry = Compact::<ConfigMap>::from_json(
            r#"{"metadata":{"name":"m","namespace":"n"},"data":{"a":"1","b":"2"}}"#,
        )
        .unwrap();
        assert_eq!(indexers["by-a"](&entry).unwrap(), ["1"]);
        assert_eq!(indexers["by-b"](&entry).unwrap(), ["2"]);
        let kept = entry.memo(|| GroupValues {
            group: u64::MAX,
            values: Box::new([]),
        });
        assert_eq!(kept.unwrap().values.len(), 2, "the group's values are kept");

        // Another group on the same entry still answers, without keeping.
        let other: Indexers<Compact<ConfigMap, Json>> =
            decoded_indexers([("by-a-again".to_string(), by_value("a"))]);
        assert_eq!(other["by-a-again"](&entry).unwrap(), ["1"]);
    }

    #[test]
    fn an_object_that_does_not_decode_fails_its_indexes_naming_it() {
        let indexers: Indexers<Compact<ConfigMap, Json>> =
            decoded_indexers([("by-a".to_string(), by_value("a"))]);
        let entry = Compact::<ConfigMap>::from_json(
            r#"{"metadata":{"name":"m","namespace":"n"},"data":{"a":7}}"#,
        )
        .unwrap();
        let error = indexers["by-a"](&entry).unwrap_err();
        assert!(error.0.contains("n/m"), "{error:?}");
    }
}
