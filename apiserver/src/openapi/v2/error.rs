//! What can go wrong serving `/openapi/v2`.

/// Why the v2 document could not be served.
#[derive(Debug, thiserror::Error)]
pub enum V2Error {
    /// The document is not JSON the server can write.
    #[error("writing the OpenAPI v2 document as JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// A part of the document does not have the shape swagger 2.0 gives it.
    #[error("the OpenAPI v2 document at {at:?} is not {expected}")]
    Shape {
        /// Where, as a path or a name.
        at: String,
        /// What was expected there.
        expected: &'static str,
    },
}
