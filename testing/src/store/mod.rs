//! The etcd-like object store: one `Storage` type, its stored objects and
//! their encodings, its writes and its reads.
//!
//! | file | what |
//! |---|---|
//! | `object.rs` | `ObjectKey`; `StoredObject`, one version, and its JSON and protobuf encodings |
//! | `storage.rs` | `Storage`: its state, revisions, history, the one commit path; `StorageOptions`, `StorageEvent`, `EventType`, `ReadAt`, `Preconditions` |
//! | `writes.rs` | create, update, delete: kube-apiserver's write rules |
//! | `field_owners.rs` | server-side apply's field managers: conflicts, force, fields given up |
//! | `reads.rs` | lists, pages (`ListPage`, `PageRequest`) and watches (`StorageWatch`) |

pub(crate) mod field_owners;
pub(crate) mod object;
pub(crate) mod reads;
pub(crate) mod storage;
pub(crate) mod writes;
