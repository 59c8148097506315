//! Tests of label and field selectors: helpers; one file per concept.

mod field;
mod label;
mod robustness;

use serde_json::{Map, Value, json};

use super::field::{FieldSelector, escape_value, unescape_value};
use super::label::LabelSelector;

fn labels(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => panic!("labels must be an object"),
    }
}

fn sel(s: &str) -> LabelSelector {
    LabelSelector::parse(s).unwrap_or_else(|e| panic!("{s:?} should parse: {e}"))
}

fn err(s: &str) -> String {
    match LabelSelector::parse(s) {
        Ok(v) => panic!("{s:?} should not parse, got {v}"),
        Err(e) => e.to_string(),
    }
}

fn m(s: &str, l: Value) -> bool {
    sel(s).matches(Some(&labels(l)))
}

const NAME_REGEX: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', \
    and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or \
    '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const VALUE_REGEX: &str = "a valid label must be an empty string or consist of alphanumeric \
    characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. \
    'MyValue',  or 'my_value',  or '12345', regex used for validation is \
    '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
