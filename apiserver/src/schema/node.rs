//! A structural schema node, as compiled from an `openAPIV3Schema` (see `compile.rs`), with its compiled
//! `x-kubernetes-validations`.

use std::collections::BTreeMap;

use regex::Regex;
use serde_json::Value;

use super::rules::rule::Rule;

#[derive(Debug, Clone)]
pub(super) struct Pattern {
    pub(super) source: String,
    pub(super) regex: Regex,
}

#[derive(Debug, Clone)]
pub(super) enum Additional {
    Bool(bool),
    Schema(Box<Node>),
}

impl Additional {
    /// The structural schema of additional properties (`None` for `true`/`false`).
    pub(super) fn schema(&self) -> Option<&Node> {
        match self {
            Additional::Bool(_) => None,
            Additional::Schema(s) => Some(s),
        }
    }
}

#[derive(Debug, Clone, Default)]
pub(super) struct Node {
    pub(super) types: Vec<String>,
    pub(super) nullable: bool,
    /// The format after the server's post-processing (unsupported formats are dropped).
    pub(super) format: String,
    pub(super) maximum: Option<f64>,
    pub(super) exclusive_maximum: bool,
    pub(super) minimum: Option<f64>,
    pub(super) exclusive_minimum: bool,
    pub(super) max_length: Option<i64>,
    pub(super) min_length: Option<i64>,
    pub(super) pattern: Option<Pattern>,
    pub(super) max_items: Option<i64>,
    pub(super) min_items: Option<i64>,
    pub(super) unique_items: bool,
    pub(super) multiple_of: Option<f64>,
    pub(super) max_properties: Option<i64>,
    pub(super) min_properties: Option<i64>,
    pub(super) required: Vec<String>,
    pub(super) enumeration: Vec<Value>,
    pub(super) default: Option<Value>,
    pub(super) properties: BTreeMap<String, Node>,
    pub(super) additional_properties: Option<Additional>,
    pub(super) items: Option<Box<Node>>,
    pub(super) all_of: Vec<Node>,
    pub(super) any_of: Vec<Node>,
    pub(super) one_of: Vec<Node>,
    pub(super) not: Option<Box<Node>>,
    pub(super) preserve_unknown_fields: bool,
    pub(super) embedded_resource: bool,
    pub(super) list_type: Option<String>,
    pub(super) list_map_keys: Vec<String>,
    pub(super) map_type: Option<String>,
    /// `x-kubernetes-validations`, compiled.
    pub(super) rules: Vec<Rule>,
}
