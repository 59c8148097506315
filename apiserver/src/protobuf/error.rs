//! Why a protobuf body could not be read, and the magic prefix whose absence is the first reason.

/// The four bytes before every protobuf-encoded object.
pub(super) const MAGIC: &[u8; 4] = b"k8s\0";

/// Why a protobuf body could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ProtobufError {
    /// The body does not start with `k8s\0`.
    #[error(
        "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
    )]
    Magic,
    /// A message read as Go's generated code reads it (the envelope and `DeleteOptions`) is malformed, or
    /// names a type that cannot be read: Go's error text, as kube-apiserver answers it.
    #[error("{0}")]
    Unmarshal(String),
    /// The envelope or the object inside is not valid protobuf.
    #[error("failed to decode {what}: {source}")]
    Decode {
        /// The message being decoded.
        what: String,
        /// prost's error.
        source: prost::DecodeError,
    },
    /// The envelope names an encoding (such as gzip) that is not read.
    #[error("unsupported content encoding {0:?} in the protobuf envelope")]
    ContentEncoding(String),
    /// The envelope names a kind this server does not decode from protobuf.
    #[error(
        "the in-memory API server does not decode {kind} ({api_version}) from protobuf; send it as JSON or YAML (`kubectl create -f`)"
    )]
    UnknownKind {
        /// `typeMeta.apiVersion` of the envelope.
        api_version: String,
        /// `typeMeta.kind` of the envelope.
        kind: String,
    },
    /// The object sets a field the mapping to JSON does not carry.
    #[error(
        "the in-memory API server does not decode the field {field} from protobuf; send the object as JSON or YAML (`kubectl create -f`)"
    )]
    Unsupported {
        /// The JSON path of the field, such as `spec.template.spec.affinity`.
        field: String,
    },
    /// A body does not fit the message of its kind (an unknown field, a wrong wire type), or holds a type
    /// this server does not decode.
    #[error("cannot decode {at} from protobuf: {why}")]
    Undecodable {
        /// The message, or message and field.
        at: String,
        /// What does not fit.
        why: String,
    },
    /// An object's JSON does not fit its protobuf message (a field the message lacks, a value of another
    /// type), or holds a type this server does not encode.
    #[error("cannot encode {at} in protobuf: {why}")]
    Unencodable {
        /// The message, or message and field.
        at: String,
        /// What does not fit.
        why: String,
    },
}

impl ProtobufError {
    /// Whether the request itself is malformed (400) rather than something this server does not read (415).
    pub fn is_malformed(&self) -> bool {
        matches!(
            self,
            ProtobufError::Magic | ProtobufError::Decode { .. } | ProtobufError::Unmarshal(_)
        )
    }
}

/// Result of this module.
pub type Result<T> = std::result::Result<T, ProtobufError>;
