//! gnostic's `openapi.v2` protobuf messages (the `openapi_v2.Document` kube-apiserver serves and client-go
//! decodes), generated with prost-build 0.14 from `openapiv2/OpenAPIv2.proto` of `github.com/google/gnostic-models`
//! v0.7.0 (the version Kubernetes 1.35 uses), with `google.protobuf.Any` compiled alongside rather than
//! taken from another crate (`compile_well_known_types`, its comments disabled: their examples in other
//! languages would run as doctests). The two `.rs` files are that output, unchanged.

#![allow(missing_docs, dead_code, clippy::all, clippy::pedantic)]

/// The `openapi` protobuf package.
pub mod openapi {
    /// `openapi.v2`.
    pub mod v2 {
        include!("openapi.v2.rs");
    }
}

/// The `google` protobuf package.
pub mod google {
    /// `google.protobuf`: `Any`, which `openapi.v2.Any` wraps.
    pub mod protobuf {
        include!("google.protobuf.rs");
    }
}
