//! Why a strategic merge patch could not be applied.

/// Why a strategic merge patch could not be applied.
///
/// The texts follow apimachinery's; [`PatchError::status_code`] tells which HTTP status
/// kube-apiserver answers with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    /// The kind does not support strategic merge patch (custom resources, aggregated APIs).
    /// The real server refuses the content type with 415 Unsupported Media Type.
    #[error(
        "the body of the request was in an unknown format - accepted media types include: \
         application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    )]
    Unsupported {
        /// API group of the refused object (`""` for core).
        group: String,
        /// Kind of the refused object.
        kind: String,
    },
    /// The patch body is not a JSON object.
    #[error("json: cannot unmarshal {found} into Go value of type map[string]interface {{}}")]
    NotAnObject {
        /// The JSON type that was found instead (`array`, `string`, `number`, `bool`).
        found: &'static str,
    },
    /// A `$deleteFromPrimitiveList` key is malformed.
    #[error("invalid patch format of primitive list")]
    BadPatchFormatForPrimitiveList,
    /// A `$retainKeys` directive is not a list, or the patch sets a key it does not retain.
    #[error("invalid patch format of retainKeys")]
    BadPatchFormatForRetainKeys,
    /// A `$setElementOrder` key is malformed.
    #[error("invalid patch format of setElementOrder list")]
    BadPatchFormatForSetElementOrderList,
    /// A list holds lists.
    #[error("lists of lists are not supported")]
    NoListOfLists,
    /// An item of a list merged by key lacks the key.
    #[error("map: {map} does not contain declared merge key: {key}")]
    NoMergeKey {
        /// The offending item, formatted like Go's `%v`.
        map: String,
        /// The merge key.
        key: String,
    },
    /// A `$patch` directive has an unknown value.
    #[error("unknown patch type: {directive} in map: {map}")]
    UnknownPatchType {
        /// The directive's value.
        directive: String,
        /// The map holding it, formatted like Go's `%v`.
        map: String,
    },
    /// `$patch: merge` appeared as a list item.
    #[error("merging lists cannot yet be specified in the patch")]
    MergingListsNotSupported,
    /// The items of a patch list are not in the order its `$setElementOrder` list gives.
    #[error("the order in patch list:\n{patch}\n doesn't match $setElementOrder list:\n{order}")]
    SetElementOrderMismatch {
        /// The patch list, formatted like Go's `%v`.
        patch: String,
        /// The `$setElementOrder` list, formatted like Go's `%v`.
        order: String,
    },
    /// A value has the wrong JSON type for its place (Go type names, as apimachinery prints them).
    #[error("expected a {expected}, but received a {actual}")]
    BadArgType {
        /// The Go type that was expected.
        expected: &'static str,
        /// The Go type that was found.
        actual: &'static str,
    },
    /// Any other failure of the merge, with apimachinery's text.
    #[error("{0}")]
    Other(String),
}

impl PatchError {
    /// The HTTP status kube-apiserver answers this error with: 415 for unsupported kinds,
    /// 400 for a body that is no object and for malformed parallel-list directives, 422 for
    /// lists of lists, and 500 for every other merge failure (the real server passes those
    /// through as plain errors, which become 500 statuses with an empty reason).
    pub fn status_code(&self) -> u16 {
        match self {
            PatchError::Unsupported { .. } => 415,
            PatchError::NotAnObject { .. }
            | PatchError::BadPatchFormatForPrimitiveList
            | PatchError::BadPatchFormatForRetainKeys
            | PatchError::BadPatchFormatForSetElementOrderList => 400,
            PatchError::NoListOfLists => 422,
            _ => 500,
        }
    }

    /// The `reason` of the `Status` the real server answers with (`""` means
    /// `StatusReasonUnknown`, which is what a plain error becomes).
    pub fn reason(&self) -> &'static str {
        match self.status_code() {
            415 => "UnsupportedMediaType",
            400 => "BadRequest",
            422 => "Invalid",
            _ => "",
        }
    }
}
