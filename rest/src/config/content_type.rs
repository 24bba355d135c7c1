//! [`ContentType`]: which encoding a client asks the API server for
//! (client-go's `rest.Config.ContentType` and `AcceptContentTypes`).

/// The `Accept` header of a protobuf request: protobuf, or JSON when the
/// server cannot give protobuf for the resource (as client-go sends it).
pub const PROTOBUF_ACCEPT: &str = "application/vnd.kubernetes.protobuf, application/json";

/// Which encoding responses are asked in.
///
/// The default is [`Protobuf`](ContentType::Protobuf), as client-go's
/// since 1.35: its typed clients of built-in types ask for protobuf
/// whenever the configuration names no content type
/// (`gentype.PrefersProtobuf`). It applies only where a protobuf decoder
/// exists:
///
/// - lists and watches of built-in types (k8s-openapi types with a
///   message, see `clientgo-protobuf`) by informers and listers-watchers
///   ask with [`PROTOBUF_ACCEPT`];
/// - custom resources, dynamic objects and metadata-only requests stay
///   JSON, as in client-go (the API server has no protobuf for them);
/// - a server that answers JSON anyway, or refuses with 406 or 415, gets
///   JSON for that resource from then on;
/// - request bodies (create, update, patch) and single-object answers stay
///   JSON.
///
/// [`Json`](ContentType::Json) forces JSON everywhere.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ContentType {
    /// `application/json` for everything.
    Json,
    /// `application/vnd.kubernetes.protobuf` for built-in types, JSON for
    /// the rest and as the fallback (the default).
    #[default]
    Protobuf,
}
