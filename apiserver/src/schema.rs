//! Enforcement of a CustomResourceDefinition version's structural schema (`schema.openAPIV3Schema`)
//! on custom objects, the way kube-apiserver's apiextensions-apiserver does it (Kubernetes 1.35):
//! pruning of unknown fields, defaulting, and OpenAPI validation with the server's 422 texts.
//!
//! The server's order on create and update is: [`Schema::prune`] (which also drops `null`s of
//! non-nullable fields without a default and coerces the `metadata` of embedded resources), then
//! [`Schema::apply_defaults`], then [`Schema::validate`]. Defaulting also runs when objects are read
//! from storage.
//!
//! What is emulated, and how:
//!
//! * Validation follows kube-openapi's validator: per value the type, `allOf`/`anyOf`/`oneOf`/`not`,
//!   string (`maxLength`, `minLength`, `pattern`, first failure only), `format`, number (`multipleOf`,
//!   `minimum`, `maximum`), array (`items`, `minItems`, `maxItems`, `uniqueItems`), `enum` and object
//!   (`minProperties`, `maxProperties`, `additionalProperties`, `properties`, `required`) checks, with
//!   identical messages deduplicated, then converted to field errors as the server does. Errors of
//!   `allOf`/`anyOf`/`oneOf`/`not` carry the field `<nil>`, exactly like the server's.
//! * Then, like the server's strategy, embedded resources (`x-kubernetes-embedded-resource`) are
//!   checked (`apiVersion`, `kind`, and `metadata.name`/`generateName`/`namespace`), then
//!   `x-kubernetes-list-type: set|map` uniqueness (`Duplicate value`).
//! * Integers given as `3.0` are accepted for `type: integer` (as the server does). Formats are only
//!   checked on strings, only for the formats the 1.35 server knows (`int32`/`int64` are never
//!   range-checked), and `pattern`s use Go's (RE2) semantics as far as the `regex` crate allows
//!   (`\d`, `\s`, `\w`, `\b` are ASCII-only as in Go).
//! * `x-kubernetes-validations` (CEL rules) are accepted but **never evaluated**.
//! * The root `apiVersion`, `kind` and `metadata` are never pruned, defaulted or validated here; the
//!   caller handles them.
//!
//! Known approximations: the real server walks Go maps, so the order of its errors varies between
//! requests, while here keys are visited in sorted order; the `email` and `uri` formats approximate
//! Go's `net/mail` and `net/url` parsers; embedded `metadata` is checked only for field types,
//! name, generateName and namespace (not labels, annotations, owner references).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::sync::OnceLock;

use regex::Regex;
use serde_json::{Map, Value};

// ------------------------------------------------------------------------------------------------
// Public types
// ------------------------------------------------------------------------------------------------

/// Why a schema could not be compiled (the server would reject such a CRD).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// A `pattern` is not a valid regular expression.
    #[error(
        "{path}.pattern: Invalid value: {}: must be a valid regular expression, but isn't: {message}",
        go_quote(.pattern)
    )]
    InvalidPattern {
        /// Location of the schema node, e.g. `openAPIV3Schema.properties[spec]`.
        path: String,
        /// The pattern as written in the schema.
        pattern: String,
        /// The regular expression compiler's complaint, e.g.
        /// ``error parsing regexp: unclosed character class: `[` ``.
        message: String,
    },
    /// Any other malformed or unsupported part of the schema.
    #[error("{path}: {message}")]
    Invalid {
        /// Location of the offending keyword, e.g. `openAPIV3Schema.properties[spec].type`.
        path: String,
        /// What is wrong with it, in the server's words where it has some, e.g.
        /// `Forbidden: $ref is not supported`.
        message: String,
    },
}

/// Server-side apply semantics of a list, from `x-kubernetes-list-type` and
/// `x-kubernetes-list-map-keys`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListType {
    /// Replaced as a whole (`atomic`, and every list without a list type).
    Atomic,
    /// A set of scalars (`set`).
    Set,
    /// An associative list keyed by these fields (`map`).
    Map(Vec<String>),
}

/// The kind of a field error, as apimachinery's `field.ErrorType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldErrorKind {
    /// `FieldValueRequired`: a required value is missing.
    Required,
    /// `FieldValueInvalid`: the value is malformed or out of bounds.
    Invalid,
    /// `FieldValueNotSupported`: the value is not one of the enumerated values.
    NotSupported,
    /// `FieldValueTooLong`: a string is longer than `maxLength`.
    TooLong,
    /// `FieldValueTooMany`: too many items or properties.
    TooMany,
    /// `FieldValueTypeInvalid`: the value has the wrong type (or format).
    TypeInvalid,
    /// `FieldValueDuplicate`: a duplicate in a `set` or `map` list.
    Duplicate,
}

impl FieldErrorKind {
    /// The `reason` of a `metav1.StatusCause` for this kind, e.g. `FieldValueRequired`.
    pub fn reason(self) -> &'static str {
        match self {
            FieldErrorKind::Required => "FieldValueRequired",
            FieldErrorKind::Invalid => "FieldValueInvalid",
            FieldErrorKind::NotSupported => "FieldValueNotSupported",
            FieldErrorKind::TooLong => "FieldValueTooLong",
            FieldErrorKind::TooMany => "FieldValueTooMany",
            FieldErrorKind::TypeInvalid => "FieldValueTypeInvalid",
            FieldErrorKind::Duplicate => "FieldValueDuplicate",
        }
    }

    /// The human-readable prefix of the error body, e.g. `Required value`.
    pub fn label(self) -> &'static str {
        match self {
            FieldErrorKind::Required => "Required value",
            FieldErrorKind::Invalid | FieldErrorKind::TypeInvalid => "Invalid value",
            FieldErrorKind::NotSupported => "Unsupported value",
            FieldErrorKind::TooLong => "Too long",
            FieldErrorKind::TooMany => "Too many",
            FieldErrorKind::Duplicate => "Duplicate value",
        }
    }
}

/// One validation failure, as apimachinery's `field.Error`.
///
/// Displays as the server prints it, e.g.
/// `spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// What went wrong.
    pub kind: FieldErrorKind,
    /// The field path, dotted from the root with list indexes (`spec.items[0].name`); `<nil>` for
    /// errors the server reports without a path (`allOf`, `anyOf`, `oneOf`, `not`).
    pub field: String,
    /// The explanation after the value.
    pub detail: String,
    /// The offending value as the server prints it; `None` when the server omits it
    /// (`Required value`, `Too long`).
    pub value: Option<Value>,
}

impl FieldError {
    /// A `Required value` error.
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> FieldError {
        FieldError {
            kind: FieldErrorKind::Required,
            field: field.into(),
            detail: detail.into(),
            value: None,
        }
    }

    /// An `Invalid value` error.
    pub fn invalid(
        field: impl Into<String>,
        value: Value,
        detail: impl Into<String>,
    ) -> FieldError {
        FieldError {
            kind: FieldErrorKind::Invalid,
            field: field.into(),
            detail: detail.into(),
            value: Some(value),
        }
    }

    /// A `Duplicate value` error.
    pub fn duplicate(field: impl Into<String>, value: Value) -> FieldError {
        FieldError {
            kind: FieldErrorKind::Duplicate,
            field: field.into(),
            detail: String::new(),
            value: Some(value),
        }
    }

    /// An `Unsupported value` error listing the supported values.
    pub fn not_supported(field: impl Into<String>, value: Value, supported: &[&str]) -> FieldError {
        let detail = if supported.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = supported.iter().map(|s| go_quote(s)).collect();
            format!("supported values: {}", quoted.join(", "))
        };
        FieldError {
            kind: FieldErrorKind::NotSupported,
            field: field.into(),
            detail,
            value: Some(value),
        }
    }

    /// The cause `reason` string of a `metav1.StatusCause`, e.g. `FieldValueRequired`.
    pub fn reason(&self) -> &'static str {
        self.kind.reason()
    }

    /// The message without the field path (the `message` of a `metav1.StatusCause`), e.g.
    /// `Required value` or `Invalid value: "x": ...`.
    pub fn body(&self) -> String {
        let mut s = self.kind.label().to_string();
        match self.kind {
            FieldErrorKind::Required | FieldErrorKind::TooLong => {}
            _ => {
                if let Some(v) = &self.value {
                    s.push_str(": ");
                    s.push_str(&go_bad_value(v));
                }
            }
        }
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

impl std::error::Error for FieldError {}

/// The `message` of the server's 422 `Invalid` status: `WebApp.example.dev "x" is invalid: <error>`
/// for one error, `... is invalid: [<error>, <error>]` for several (identical messages are listed
/// once), `... is invalid` for none. An empty `group` leaves out the `.group` suffix.
#[allow(dead_code, reason = "the server may build its Status message itself")]
pub fn invalid_message(kind: &str, group: &str, name: &str, errors: &[FieldError]) -> String {
    let gk = if group.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}.{group}")
    };
    let mut seen = HashSet::new();
    let msgs: Vec<String> = errors
        .iter()
        .map(|e| e.to_string())
        .filter(|m| seen.insert(m.clone()))
        .collect();
    match msgs.len() {
        0 => format!("{gk} {} is invalid", go_quote(name)),
        1 => format!("{gk} {} is invalid: {}", go_quote(name), msgs[0]),
        _ => format!("{gk} {} is invalid: [{}]", go_quote(name), msgs.join(", ")),
    }
}

// ------------------------------------------------------------------------------------------------
// Schema compilation
// ------------------------------------------------------------------------------------------------

/// A compiled structural schema (one CRD version's `schema.openAPIV3Schema`).
///
/// `x-kubernetes-validations` (CEL rules) are accepted and ignored: they are never evaluated.
#[derive(Debug, Clone)]
pub struct Schema {
    root: Node,
}

#[derive(Debug, Clone)]
struct Pattern {
    source: String,
    regex: Regex,
}

#[derive(Debug, Clone)]
enum Additional {
    Bool(bool),
    Schema(Box<Node>),
}

impl Additional {
    /// The structural schema of additional properties (`None` for `true`/`false`).
    fn schema(&self) -> Option<&Node> {
        match self {
            Additional::Bool(_) => None,
            Additional::Schema(s) => Some(s),
        }
    }
}

#[derive(Debug, Clone, Default)]
struct Node {
    types: Vec<String>,
    nullable: bool,
    /// The format after the server's post-processing (unsupported formats are dropped).
    format: String,
    maximum: Option<f64>,
    exclusive_maximum: bool,
    minimum: Option<f64>,
    exclusive_minimum: bool,
    max_length: Option<i64>,
    min_length: Option<i64>,
    pattern: Option<Pattern>,
    max_items: Option<i64>,
    min_items: Option<i64>,
    unique_items: bool,
    multiple_of: Option<f64>,
    max_properties: Option<i64>,
    min_properties: Option<i64>,
    required: Vec<String>,
    enumeration: Vec<Value>,
    default: Option<Value>,
    properties: BTreeMap<String, Node>,
    additional_properties: Option<Additional>,
    items: Option<Box<Node>>,
    all_of: Vec<Node>,
    any_of: Vec<Node>,
    one_of: Vec<Node>,
    not: Option<Box<Node>>,
    preserve_unknown_fields: bool,
    embedded_resource: bool,
    list_type: Option<String>,
    list_map_keys: Vec<String>,
    map_type: Option<String>,
}

const KNOWN_TYPES: &[&str] = &["object", "array", "string", "integer", "number", "boolean"];

/// String formats the 1.35 server validates (names normalized by dropping `-`).
const STRING_FORMATS: &[&str] = &[
    "bsonobjectid",
    "uri",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "cidr",
    "mac",
    "uuid",
    "uuid3",
    "uuid4",
    "uuid5",
    "isbn",
    "isbn10",
    "isbn13",
    "creditcard",
    "ssn",
    "hexcolor",
    "rgbcolor",
    "byte",
    "password",
    "date",
    "duration",
    "datetime",
    "k8sshortname",
    "k8slongname",
];

fn schema_err(path: &str, message: impl Into<String>) -> SchemaError {
    SchemaError::Invalid {
        path: path.to_string(),
        message: message.into(),
    }
}

fn get_bool(m: &Map<String, Value>, key: &str, path: &str) -> Result<bool, SchemaError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(schema_err(&format!("{path}.{key}"), "must be a boolean")),
    }
}

fn get_str(m: &Map<String, Value>, key: &str, path: &str) -> Result<Option<String>, SchemaError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(schema_err(&format!("{path}.{key}"), "must be a string")),
    }
}

fn get_f64(m: &Map<String, Value>, key: &str, path: &str) -> Result<Option<f64>, SchemaError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(f) if f.is_finite() => Ok(Some(f)),
            _ => Err(schema_err(
                &format!("{path}.{key}"),
                "must be a finite number",
            )),
        },
        Some(_) => Err(schema_err(&format!("{path}.{key}"), "must be a number")),
    }
}

fn get_i64(m: &Map<String, Value>, key: &str, path: &str) -> Result<Option<i64>, SchemaError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_i64() {
            Some(i) => Ok(Some(i)),
            None => Err(schema_err(&format!("{path}.{key}"), "must be an integer")),
        },
        Some(_) => Err(schema_err(&format!("{path}.{key}"), "must be an integer")),
    }
}

fn get_str_list(m: &Map<String, Value>, key: &str, path: &str) -> Result<Vec<String>, SchemaError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| match v {
                Value::String(s) => Ok(s.clone()),
                _ => Err(schema_err(
                    &format!("{path}.{key}"),
                    "must be a list of strings",
                )),
            })
            .collect(),
        Some(_) => Err(schema_err(
            &format!("{path}.{key}"),
            "must be a list of strings",
        )),
    }
}

fn get_schema_list(
    m: &Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<Vec<Node>, SchemaError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, v)| parse_node(v, &format!("{path}.{key}[{i}]")))
            .collect(),
        Some(_) => Err(schema_err(
            &format!("{path}.{key}"),
            "must be a list of schemas",
        )),
    }
}

fn parse_node(v: &Value, path: &str) -> Result<Node, SchemaError> {
    let Value::Object(m) = v else {
        return Err(schema_err(path, "must be a schema object"));
    };
    for key in [
        "id",
        "$schema",
        "additionalItems",
        "patternProperties",
        "definitions",
        "dependencies",
        "$ref",
    ] {
        let present = match m.get(key) {
            None | Some(Value::Null) => false,
            Some(Value::String(s)) => !s.is_empty(),
            Some(Value::Object(o)) => !o.is_empty() || key == "additionalItems",
            Some(_) => true,
        };
        if present {
            return Err(schema_err(
                &format!("{path}.{key}"),
                format!("Forbidden: {key} is not supported"),
            ));
        }
    }
    let mut n = Node::default();
    if let Some(t) = get_str(m, "type", path)?
        && !t.is_empty()
    {
        if t == "null" {
            return Err(schema_err(
                &format!("{path}.type"),
                "Forbidden: type cannot be set to null, use nullable as an alternative",
            ));
        }
        if !KNOWN_TYPES.contains(&t.as_str()) {
            return Err(schema_err(
                &format!("{path}.type"),
                format!(
                    "Unsupported value: {}: supported values: \"array\", \"boolean\", \"integer\", \"number\", \"object\", \"string\"",
                    go_quote(&t)
                ),
            ));
        }
        n.types = vec![t];
    }
    if get_bool(m, "x-kubernetes-int-or-string", path)? {
        n.types = vec!["integer".to_string(), "string".to_string()];
    }
    n.nullable = get_bool(m, "nullable", path)?;
    n.maximum = get_f64(m, "maximum", path)?;
    n.exclusive_maximum = get_bool(m, "exclusiveMaximum", path)?;
    n.minimum = get_f64(m, "minimum", path)?;
    n.exclusive_minimum = get_bool(m, "exclusiveMinimum", path)?;
    n.max_length = get_i64(m, "maxLength", path)?;
    n.min_length = get_i64(m, "minLength", path)?;
    if let Some(p) = get_str(m, "pattern", path)? {
        let regex =
            Regex::new(&translate_go_regex(&p)).map_err(|e| SchemaError::InvalidPattern {
                path: path.to_string(),
                pattern: p.clone(),
                message: regex_error_message(&e, &p),
            })?;
        n.pattern = Some(Pattern { source: p, regex });
    }
    n.max_items = get_i64(m, "maxItems", path)?;
    n.min_items = get_i64(m, "minItems", path)?;
    n.unique_items = get_bool(m, "uniqueItems", path)?;
    n.multiple_of = get_f64(m, "multipleOf", path)?;
    n.max_properties = get_i64(m, "maxProperties", path)?;
    n.min_properties = get_i64(m, "minProperties", path)?;
    n.required = get_str_list(m, "required", path)?;
    match m.get("enum") {
        None | Some(Value::Null) => {}
        Some(Value::Array(a)) => n.enumeration = a.clone(),
        Some(_) => return Err(schema_err(&format!("{path}.enum"), "must be a list")),
    }
    n.default = m.get("default").filter(|d| !d.is_null()).cloned();
    match m.get("properties") {
        None | Some(Value::Null) => {}
        Some(Value::Object(props)) => {
            for (k, v) in props {
                n.properties.insert(
                    k.clone(),
                    parse_node(v, &format!("{path}.properties[{k}]"))?,
                );
            }
        }
        Some(_) => {
            return Err(schema_err(
                &format!("{path}.properties"),
                "must be an object",
            ));
        }
    }
    n.additional_properties = match m.get("additionalProperties") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(b)) => Some(Additional::Bool(*b)),
        Some(v @ Value::Object(_)) => Some(Additional::Schema(Box::new(parse_node(
            v,
            &format!("{path}.additionalProperties"),
        )?))),
        Some(_) => {
            return Err(schema_err(
                &format!("{path}.additionalProperties"),
                "must be a boolean or a schema",
            ));
        }
    };
    n.items = match m.get("items") {
        None | Some(Value::Null) => None,
        Some(v @ Value::Object(_)) => Some(Box::new(parse_node(v, &format!("{path}.items"))?)),
        Some(Value::Array(_)) => {
            return Err(schema_err(
                &format!("{path}.items"),
                "Forbidden: items must be a schema object and not an array",
            ));
        }
        Some(_) => return Err(schema_err(&format!("{path}.items"), "must be a schema")),
    };
    n.all_of = get_schema_list(m, "allOf", path)?;
    n.any_of = get_schema_list(m, "anyOf", path)?;
    n.one_of = get_schema_list(m, "oneOf", path)?;
    n.not = match m.get("not") {
        None | Some(Value::Null) => None,
        Some(v) => Some(Box::new(parse_node(v, &format!("{path}.not"))?)),
    };
    n.preserve_unknown_fields = get_bool(m, "x-kubernetes-preserve-unknown-fields", path)?;
    n.embedded_resource = get_bool(m, "x-kubernetes-embedded-resource", path)?;
    n.list_type = get_str(m, "x-kubernetes-list-type", path)?;
    if let Some(t) = &n.list_type
        && !["atomic", "set", "map"].contains(&t.as_str())
    {
        return Err(schema_err(
            &format!("{path}.x-kubernetes-list-type"),
            format!(
                "Unsupported value: {}: supported values: \"atomic\", \"set\", \"map\"",
                go_quote(t)
            ),
        ));
    }
    n.list_map_keys = get_str_list(m, "x-kubernetes-list-map-keys", path)?;
    n.map_type = get_str(m, "x-kubernetes-map-type", path)?;
    if let Some(t) = &n.map_type
        && !["atomic", "granular"].contains(&t.as_str())
    {
        return Err(schema_err(
            &format!("{path}.x-kubernetes-map-type"),
            format!(
                "Unsupported value: {}: supported values: \"atomic\", \"granular\"",
                go_quote(t)
            ),
        ));
    }
    // The server drops formats it does not support for the node's type.
    let format = get_str(m, "format", path)?.unwrap_or_default();
    let single_type = if n.types.len() == 1 {
        n.types[0].as_str()
    } else {
        ""
    };
    n.format = match single_type {
        "" | "string" if STRING_FORMATS.contains(&normalize_format(&format).as_str()) => format,
        "integer" if format == "int32" || format == "int64" => format,
        "number" if format == "float" || format == "double" => format,
        _ => String::new(),
    };
    // x-kubernetes-validations (CEL) are deliberately ignored.
    Ok(n)
}

/// A compact, Go-like message for a pattern the `regex` crate rejects.
fn regex_error_message(e: &regex::Error, pattern: &str) -> String {
    let text = e.to_string();
    let reason = text
        .lines()
        .find_map(|l| l.strip_prefix("error: "))
        .or_else(|| text.lines().next())
        .unwrap_or("invalid pattern");
    format!("error parsing regexp: {reason}: `{pattern}`")
}

fn normalize_format(f: &str) -> String {
    f.replace('-', "")
}

fn is_meta_key(k: &str) -> bool {
    matches!(k, "apiVersion" | "kind" | "metadata")
}

fn sorted_keys(m: &Map<String, Value>) -> Vec<String> {
    let mut keys: Vec<String> = m.keys().cloned().collect();
    keys.sort();
    keys
}

impl Schema {
    /// Compiles a CRD version's `schema.openAPIV3Schema` (the JSON exactly as in the CRD).
    /// Regular expressions are compiled once, here. Fails on invalid patterns, `items` given as an
    /// array, unsupported keywords (`$ref`, `patternProperties`, ...) and malformed keywords.
    pub fn new(open_api_v3_schema: &Value) -> Result<Schema, SchemaError> {
        Ok(Schema {
            root: parse_node(open_api_v3_schema, "openAPIV3Schema")?,
        })
    }

    /// Applies `default`s as the server does on create/update and when reading: missing fields,
    /// and `null`s of non-nullable fields, get their default; defaults apply recursively, including
    /// inside defaulted values, `additionalProperties` values and list items (a `null` item of a
    /// non-nullable item schema with a default is replaced too).
    pub fn apply_defaults(&self, obj: &mut Value) {
        default_value(obj, &self.root, true);
    }

    /// Removes fields not in the schema, as the server does on decoding, and returns their paths
    /// (sorted, e.g. `spec.foo`, `spec.items[0].bar`) so that `fieldValidation=Strict` can reject
    /// them with `unknown field "spec.foo"`.
    ///
    /// Fields are kept under `x-kubernetes-preserve-unknown-fields` and `additionalProperties`;
    /// `x-kubernetes-embedded-resource` objects keep `apiVersion`, `kind` and `metadata`, and their
    /// `metadata` is reduced to `ObjectMeta` fields (unknown ones are reported as
    /// `spec.template.metadata.foo`, null and empty ones are dropped). `apiVersion`, `kind` and
    /// `metadata` at the root are never touched. Afterwards, `null`s of non-nullable fields without
    /// a default are removed (not reported), as the server does before defaulting.
    pub fn prune(&self, obj: &mut Value) -> Vec<String> {
        let mut tracker = Tracker::default();
        prune_rec(obj, Some(&self.root), true, &mut tracker);
        let mut pruned = tracker.unknown;
        pruned.sort();
        prune_nulls(obj, Some(&self.root), true);
        let mut coerced = Vec::new();
        coerce(obj, Some(&self.root), "", true, &mut coerced);
        coerced.sort();
        pruned.extend(coerced);
        pruned
    }

    /// Validates `obj` (normally pruned and defaulted first) and returns every error, in the
    /// server's order: OpenAPI schema errors, then embedded-resource errors, then list-type
    /// (`Duplicate value`) errors. `x-kubernetes-validations` are not evaluated.
    pub fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut out: Vec<FieldError> = validate_schema(&self.root, "", obj, true)
            .errors
            .into_iter()
            .map(to_field_error)
            .collect();
        embedded_validate(obj, Some(&self.root), "", true, &mut out);
        if let Value::Object(m) = obj {
            list_validate_map(m, &self.root, "", true, &mut out);
        }
        out
    }

    /// Server-side apply list semantics at `path` (field names from the root, list items elided,
    /// map keys included): from `x-kubernetes-list-type` and `x-kubernetes-list-map-keys`. Lists
    /// without a list type, and unknown paths, are [`ListType::Atomic`].
    pub fn list_type(&self, path: &[&str]) -> ListType {
        match self.node_at(path) {
            Some(n) => match n.list_type.as_deref() {
                Some("set") => ListType::Set,
                Some("map") => ListType::Map(n.list_map_keys.clone()),
                _ => ListType::Atomic,
            },
            None => ListType::Atomic,
        }
    }

    /// Whether the object at `path` (as for [`Schema::list_type`]) has
    /// `x-kubernetes-map-type: atomic`. For a list of maps, the item schema is asked.
    pub fn map_is_atomic(&self, path: &[&str]) -> bool {
        let mut node = self.node_at(path);
        while let Some(n) = node {
            if let Some(t) = &n.map_type {
                return t == "atomic";
            }
            node = n.items.as_deref();
        }
        false
    }

    /// The `default` of key field `key` of the items of the associative list at `path` (as for
    /// [`Schema::list_type`]).
    pub fn list_key_default(&self, path: &[&str], key: &str) -> Option<Value> {
        self.node_at(path)?
            .items
            .as_deref()?
            .properties
            .get(key)?
            .default
            .clone()
    }

    fn node_at(&self, path: &[&str]) -> Option<&Node> {
        let mut cur = &self.root;
        for seg in path {
            loop {
                if let Some(p) = cur.properties.get(*seg) {
                    cur = p;
                    break;
                }
                if let Some(ap) = cur
                    .additional_properties
                    .as_ref()
                    .and_then(Additional::schema)
                {
                    cur = ap;
                    break;
                }
                match cur.items.as_deref() {
                    Some(items) => cur = items,
                    None => return None,
                }
            }
        }
        Some(cur)
    }
}

// ------------------------------------------------------------------------------------------------
// Defaulting
// ------------------------------------------------------------------------------------------------

fn default_value(x: &mut Value, s: &Node, root: bool) {
    match x {
        Value::Object(m) => {
            for (k, prop) in &s.properties {
                if root && is_meta_key(k) {
                    continue;
                }
                if let Some(d) = &prop.default {
                    let missing = match m.get(k) {
                        None => true,
                        Some(Value::Null) => !prop.nullable,
                        Some(_) => false,
                    };
                    if missing {
                        m.insert(k.clone(), d.clone());
                    }
                }
            }
            for k in sorted_keys(m) {
                if root && is_meta_key(&k) {
                    continue;
                }
                let Some(v) = m.get_mut(&k) else { continue };
                if let Some(prop) = s.properties.get(&k) {
                    default_value(v, prop, false);
                } else if let Some(ap) = s
                    .additional_properties
                    .as_ref()
                    .and_then(Additional::schema)
                {
                    if v.is_null()
                        && !ap.nullable
                        && let Some(d) = &ap.default
                    {
                        *v = d.clone();
                    }
                    default_value(v, ap, false);
                }
            }
        }
        Value::Array(a) => {
            if let Some(items) = s.items.as_deref() {
                for v in a.iter_mut() {
                    if v.is_null()
                        && !items.nullable
                        && let Some(d) = &items.default
                    {
                        *v = d.clone();
                    }
                    default_value(v, items, false);
                }
            }
        }
        _ => {}
    }
}

// ------------------------------------------------------------------------------------------------
// Pruning
// ------------------------------------------------------------------------------------------------

/// Builds unknown-field paths the way the server does (`a.b[0].c`).
#[derive(Default)]
struct Tracker {
    path: String,
    stack: Vec<usize>,
    unknown: Vec<String>,
}

impl Tracker {
    fn push_key(&mut self, k: &str) {
        self.stack.push(self.path.len());
        if !self.path.is_empty() {
            self.path.push('.');
        }
        self.path.push_str(k);
    }

    fn push_index(&mut self, i: usize) {
        self.stack.push(self.path.len());
        self.path.push_str(&format!("[{i}]"));
    }

    fn pop(&mut self) {
        if let Some(l) = self.stack.pop() {
            self.path.truncate(l);
        }
    }

    fn record(&mut self, k: &str) {
        self.push_key(k);
        self.unknown.push(self.path.clone());
        self.pop();
    }
}

fn prune_rec(x: &mut Value, s: Option<&Node>, force_embedded: bool, tr: &mut Tracker) {
    if let Some(node) = s
        && node.preserve_unknown_fields
    {
        skip_prune(x, node, force_embedded, tr);
        return;
    }
    match x {
        Value::Object(m) => {
            let Some(node) = s else {
                for k in sorted_keys(m) {
                    tr.record(&k);
                }
                m.clear();
                return;
            };
            let embedded = force_embedded || node.embedded_resource;
            for k in sorted_keys(m) {
                if embedded && is_meta_key(&k) {
                    continue;
                }
                if let Some(prop) = node.properties.get(&k) {
                    if let Some(v) = m.get_mut(&k) {
                        tr.push_key(&k);
                        prune_rec(v, Some(prop), false, tr);
                        tr.pop();
                    }
                } else if let Some(ap) = &node.additional_properties {
                    if let Some(v) = m.get_mut(&k) {
                        tr.push_key(&k);
                        prune_rec(v, ap.schema(), false, tr);
                        tr.pop();
                    }
                } else {
                    if !is_meta_key(&k) || !tr.path.is_empty() {
                        tr.record(&k);
                    }
                    m.remove(&k);
                }
            }
        }
        Value::Array(a) => {
            let items = s.and_then(|n| n.items.as_deref());
            for (i, v) in a.iter_mut().enumerate() {
                tr.push_index(i);
                prune_rec(v, items, false, tr);
                tr.pop();
            }
        }
        _ => {}
    }
}

/// Pruning below `x-kubernetes-preserve-unknown-fields`: unknown fields stay, known ones are
/// pruned by their schema.
fn skip_prune(x: &mut Value, s: &Node, force_embedded: bool, tr: &mut Tracker) {
    match x {
        Value::Object(m) => {
            let embedded = force_embedded || s.embedded_resource;
            for k in sorted_keys(m) {
                if embedded && is_meta_key(&k) {
                    continue;
                }
                let Some(v) = m.get_mut(&k) else { continue };
                if let Some(prop) = s.properties.get(&k) {
                    tr.push_key(&k);
                    prune_rec(v, Some(prop), false, tr);
                    tr.pop();
                } else if let Some(ap) = &s.additional_properties {
                    tr.push_key(&k);
                    prune_rec(v, ap.schema(), false, tr);
                    tr.pop();
                }
            }
        }
        Value::Array(a) => {
            if let Some(items) = s.items.as_deref() {
                for (i, v) in a.iter_mut().enumerate() {
                    tr.push_index(i);
                    skip_prune(v, items, false, tr);
                    tr.pop();
                }
            }
        }
        _ => {}
    }
}

/// Removes `null`s of non-nullable fields that have no default (the server's
/// `PruneNonNullableNullsWithoutDefaults`); list items are kept.
fn prune_nulls(x: &mut Value, s: Option<&Node>, root: bool) {
    match x {
        Value::Object(m) => {
            for k in sorted_keys(m) {
                if root && is_meta_key(&k) {
                    continue;
                }
                let schema = s.and_then(|n| {
                    n.properties.get(&k).or_else(|| {
                        n.additional_properties
                            .as_ref()
                            .and_then(Additional::schema)
                    })
                });
                let drop = matches!(m.get(&k), Some(Value::Null))
                    && schema.is_some_and(|sc| !sc.nullable && sc.default.is_none());
                if drop {
                    m.remove(&k);
                } else if let Some(v) = m.get_mut(&k) {
                    prune_nulls(v, schema, false);
                }
            }
        }
        Value::Array(a) => {
            let items = s.and_then(|n| n.items.as_deref());
            for v in a.iter_mut() {
                prune_nulls(v, items, false);
            }
        }
        _ => {}
    }
}

/// `ObjectMeta` fields kept in the `metadata` of embedded resources.
const OBJECT_META_FIELDS: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

/// Coerces the `metadata` of embedded resources to `ObjectMeta` (the server round-trips it).
fn coerce(x: &mut Value, s: Option<&Node>, pth: &str, root: bool, out: &mut Vec<String>) {
    let Some(s) = s else { return };
    match x {
        Value::Object(m) => {
            if s.embedded_resource
                && !root
                && let Some(meta) = m.get_mut("metadata")
            {
                coerce_object_meta(meta, &child(pth, "metadata"), out);
            }
            for k in sorted_keys(m) {
                if root && is_meta_key(&k) {
                    continue;
                }
                let Some(v) = m.get_mut(&k) else { continue };
                if let Some(prop) = s.properties.get(&k) {
                    coerce(v, Some(prop), &child(pth, &k), false, out);
                } else if let Some(ap) = &s.additional_properties {
                    coerce(v, ap.schema(), &key_path(pth, &k), false, out);
                }
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter_mut().enumerate() {
                coerce(v, s.items.as_deref(), &index_path(pth, i), false, out);
            }
        }
        _ => {}
    }
}

fn coerce_object_meta(meta: &mut Value, pth: &str, out: &mut Vec<String>) {
    match meta {
        Value::Null => *meta = Value::Object(Map::new()),
        Value::Object(m) => {
            if !object_meta_decodes(m) {
                // The server fails the request here; validation reports the problem.
                return;
            }
            for k in sorted_keys(m) {
                if !OBJECT_META_FIELDS.contains(&k.as_str()) {
                    out.push(format!("{pth}.{k}"));
                    m.remove(&k);
                    continue;
                }
                let empty = match m.get(&k) {
                    Some(Value::Null) => true,
                    Some(Value::String(s)) => s.is_empty(),
                    Some(Value::Number(n)) => k == "generation" && n.as_f64() == Some(0.0),
                    Some(Value::Array(a)) => a.is_empty(),
                    Some(Value::Object(o)) => o.is_empty(),
                    _ => false,
                };
                if empty {
                    m.remove(&k);
                }
            }
        }
        _ => {}
    }
}

fn object_meta_decodes(m: &Map<String, Value>) -> bool {
    object_meta_decode_error(m).is_none()
}

/// The error of decoding `metadata` into `ObjectMeta`, in Go's words (first failing field).
fn object_meta_decode_error(m: &Map<String, Value>) -> Option<String> {
    let field_err = |value: &str, field: &str, ty: &str| {
        Some(format!(
            "json: cannot unmarshal {value} into Go struct field ObjectMeta.{field} of type {ty}"
        ))
    };
    for k in sorted_keys(m) {
        let Some(v) = m.get(&k) else { continue };
        if v.is_null() {
            continue;
        }
        match k.as_str() {
            "name" | "generateName" | "namespace" | "selfLink" | "uid" | "resourceVersion"
                if !v.is_string() =>
            {
                return field_err(go_json_type(v), &k, "string");
            }
            "generation" | "deletionGracePeriodSeconds" => match v {
                Value::Number(n) => {
                    if n.as_i64().is_none() {
                        return field_err(&format!("number {n}"), &k, "int64");
                    }
                }
                _ => return field_err(go_json_type(v), &k, "int64"),
            },
            "labels" | "annotations" => match v {
                Value::Object(o) => {
                    for item in o.values() {
                        if !item.is_string() && !item.is_null() {
                            return field_err(go_json_type(item), &k, "string");
                        }
                    }
                }
                _ => return field_err(go_json_type(v), &k, "map[string]string"),
            },
            "finalizers" => match v {
                Value::Array(a) => {
                    for item in a {
                        if !item.is_string() && !item.is_null() {
                            return field_err(go_json_type(item), &k, "string");
                        }
                    }
                }
                _ => return field_err(go_json_type(v), &k, "[]string"),
            },
            "ownerReferences" if !v.is_array() => {
                return field_err(go_json_type(v), &k, "[]v1.OwnerReference");
            }
            "managedFields" if !v.is_array() => {
                return field_err(go_json_type(v), &k, "[]v1.ManagedFieldsEntry");
            }
            "creationTimestamp" | "deletionTimestamp" if !v.is_string() => {
                return Some(format!(
                    "json: cannot unmarshal {} into Go value of type string",
                    go_json_type(v)
                ));
            }
            _ => {}
        }
    }
    None
}

fn go_json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

// ------------------------------------------------------------------------------------------------
// Field paths (apimachinery's field.Path)
// ------------------------------------------------------------------------------------------------

fn child(p: &str, k: &str) -> String {
    if p.is_empty() {
        k.to_string()
    } else {
        format!("{p}.{k}")
    }
}

fn key_path(p: &str, k: &str) -> String {
    format!("{p}[{k}]")
}

fn index_path(p: &str, i: usize) -> String {
    format!("{p}[{i}]")
}

// ------------------------------------------------------------------------------------------------
// OpenAPI validation (kube-openapi's validator)
// ------------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Code {
    InvalidType,
    Required,
    TooLong,
    TooShort,
    Pattern,
    Enum,
    MultipleOf,
    Max,
    Min,
    Unique,
    MaxItems,
    MinItems,
    TooFewProperties,
    TooManyProperties,
    Unallowed,
    MultipleOfMustBePositive,
}

#[derive(Debug, Clone)]
struct VErr {
    code: Code,
    name: String,
    message: String,
    /// The error's value; `None` is Go's nil.
    value: Option<Value>,
    /// The limit for `maxLength`, `maxItems`, `maxProperties`.
    valid: i64,
    /// The allowed values of an `enum`.
    values: Vec<Value>,
}

#[derive(Debug, Clone)]
enum OErr {
    /// A validation error about a named value.
    Validation(VErr),
    /// An `allOf`/`anyOf`/`oneOf`/`not` error (reported without a field path).
    Composite(String),
}

impl OErr {
    fn message(&self) -> &str {
        match self {
            OErr::Validation(v) => &v.message,
            OErr::Composite(m) => m,
        }
    }
}

fn verr(code: Code, name: &str, message: String, value: Option<Value>, valid: i64) -> OErr {
    OErr::Validation(VErr {
        code,
        name: name.to_string(),
        message,
        value,
        valid,
        values: Vec::new(),
    })
}

/// A validation result: errors (deduplicated by message) and the number of checks run, which
/// decides whose errors are reported when no `anyOf`/`oneOf` branch matches.
#[derive(Default)]
struct VResult {
    errors: Vec<OErr>,
    seen: HashSet<String>,
    mc: usize,
}

impl VResult {
    fn add(&mut self, e: OErr) {
        if self.seen.insert(e.message().to_string()) {
            self.errors.push(e);
        }
    }

    fn merge(&mut self, other: VResult) {
        for e in other.errors {
            self.add(e);
        }
        self.mc += other.mc;
    }

    fn is_valid(&self) -> bool {
        self.errors.is_empty()
    }

    fn single(e: OErr) -> VResult {
        let mut r = VResult::default();
        r.add(e);
        r
    }
}

/// A JSON number as the server decodes it: integers that fit in int64 stay integers, everything
/// else is a float64.
#[derive(Debug, Clone, Copy)]
enum Num {
    Int(i64),
    Float(f64),
}

fn num(n: &serde_json::Number) -> Num {
    match n.as_i64() {
        Some(i) => Num::Int(i),
        None => Num::Float(n.as_f64().unwrap_or(0.0)),
    }
}

/// Go's `int64(f)` (amd64: out-of-range values give the minimum).
fn go_f64_to_i64(f: f64) -> i64 {
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if f.is_nan() || !(-LIMIT..LIMIT).contains(&f) {
        i64::MIN
    } else {
        f as i64
    }
}

/// go-openapi's `swag.IsFloat64AJSONInteger`.
fn is_float64_json_integer(f: f64) -> bool {
    const MAX: f64 = 9_007_199_254_740_991.0;
    if !f.is_finite() || !(-MAX..=MAX).contains(&f) {
        return false;
    }
    if f.trunc() == f {
        return true;
    }
    if f < 0.0 {
        // Go's float64(uint64(f)) is huge for negative f: the relative error is about 1.
        return false;
    }
    let g = f.trunc();
    let diff = (f - g).abs();
    if g == 0.0 {
        return false;
    }
    diff / (f.abs() + g.abs()) < 1e-9
}

fn type_info(data: &Value) -> (&'static str, &'static str) {
    match data {
        Value::Null => ("null", ""),
        Value::Bool(_) => ("boolean", ""),
        Value::String(_) => ("string", ""),
        Value::Number(n) => match num(n) {
            Num::Int(_) => ("integer", "int64"),
            Num::Float(_) => ("number", "float64"),
        },
        Value::Array(_) => ("array", ""),
        Value::Object(_) => ("object", ""),
    }
}

fn invalid_type(path: &str, type_name: &str, value: &str) -> OErr {
    verr(
        Code::InvalidType,
        path,
        format!(
            "{path} in body must be of type {type_name}: {}",
            go_quote(value)
        ),
        Some(Value::String(value.to_string())),
        0,
    )
}

fn validate_schema(node: &Node, path: &str, data: &Value, root: bool) -> VResult {
    let mut r = VResult::default();
    if data.is_null() {
        r.merge(type_validator(node, path, data));
        r.merge(enum_validator(node, path, data));
        return r;
    }
    if !node.types.is_empty() || !node.format.is_empty() {
        r.merge(type_validator(node, path, data));
        r.mc += 1;
    }
    r.merge(props_validator(node, path, data));
    r.mc += 1;
    if let Value::String(s) = data {
        r.merge(string_validator(node, path, s));
        r.mc += 1;
        if !node.format.is_empty()
            && STRING_FORMATS.contains(&normalize_format(&node.format).as_str())
        {
            if !validates_format(&node.format, s) {
                r.add(invalid_type(path, &node.format, s));
            }
            r.mc += 1;
        }
    }
    if let Value::Number(n) = data {
        r.merge(number_validator(node, path, data, num(n)));
        r.mc += 1;
    }
    if let Value::Array(a) = data {
        r.merge(slice_validator(node, path, a));
        r.mc += 1;
    }
    r.merge(enum_validator(node, path, data));
    r.mc += 1;
    if let Value::Object(m) = data {
        r.merge(object_validator(node, path, m, root));
        r.mc += 1;
    }
    r.mc += 1;
    r
}

fn type_validator(node: &Node, path: &str, data: &Value) -> VResult {
    let ok = VResult {
        mc: 1,
        ..VResult::default()
    };
    let has = |t: &str| node.types.iter().any(|x| x == t);
    if data.is_null() {
        if !node.types.is_empty() && !has("null") && !node.nullable {
            return VResult::single(invalid_type(path, &node.types.join(","), "null"));
        }
        return ok;
    }
    let (sch, fmt) = type_info(data);
    let float_int = match data {
        Value::Number(n) => match num(n) {
            Num::Float(f) => is_float64_json_integer(f) && has("integer"),
            Num::Int(_) => false,
        },
        _ => false,
    };
    let int_float = sch == "integer" && has("number");
    let string_or_slice = data.is_string() || data.is_array();
    let has_format = !node.format.is_empty();
    let type_or_format_matches = has(sch) || fmt == node.format || float_int || int_float;
    if has_format && !string_or_slice && !type_or_format_matches {
        return VResult::single(invalid_type(path, &node.format, fmt));
    }
    let numeric = has("number") || has("integer");
    if has_format && string_or_slice && !numeric {
        return ok;
    }
    if !(has(sch) || float_int || int_float) {
        return VResult::single(invalid_type(path, &node.types.join(","), sch));
    }
    ok
}

fn props_validator(node: &Node, path: &str, data: &Value) -> VResult {
    let mut main = VResult::default();
    let quoted = go_quote(path);
    if !node.any_of.is_empty() {
        let mut best: Option<VResult> = None;
        let mut first_success: Option<VResult> = None;
        for branch in &node.any_of {
            let r = validate_schema(branch, path, data, false);
            if r.is_valid() {
                best = None;
                first_success = Some(r);
                break;
            }
            if best.as_ref().is_none_or(|b| r.mc > b.mc) {
                best = Some(r);
            }
        }
        if first_success.is_none() {
            main.add(OErr::Composite(format!(
                "{quoted} must validate at least one schema (anyOf)"
            )));
        }
        if let Some(b) = best {
            main.merge(b);
        } else if let Some(f) = first_success {
            main.merge(f);
        }
    }
    if !node.one_of.is_empty() {
        let mut best: Option<VResult> = None;
        let mut first_success: Option<VResult> = None;
        let mut validated = 0usize;
        for branch in &node.one_of {
            let r = validate_schema(branch, path, data, false);
            if r.is_valid() {
                validated += 1;
                best = None;
                if first_success.is_none() {
                    first_success = Some(r);
                }
                continue;
            }
            if validated == 0 && best.as_ref().is_none_or(|b| r.mc > b.mc) {
                best = Some(r);
            }
        }
        if validated != 1 {
            let extra = if validated == 0 {
                "Found none valid".to_string()
            } else {
                format!("Found {validated} valid alternatives")
            };
            main.add(OErr::Composite(format!(
                "{quoted} must validate one and only one schema (oneOf). {extra}"
            )));
            if let Some(b) = best {
                main.merge(b);
            }
        } else if let Some(f) = first_success {
            main.merge(f);
        }
    }
    if !node.all_of.is_empty() {
        let mut validated = 0usize;
        for branch in &node.all_of {
            let r = validate_schema(branch, path, data, false);
            if r.is_valid() {
                validated += 1;
            }
            main.merge(r);
        }
        if validated != node.all_of.len() {
            let extra = if validated == 0 {
                ". None validated"
            } else {
                ""
            };
            main.add(OErr::Composite(format!(
                "{quoted} must validate all the schemas (allOf){extra}"
            )));
        }
    }
    if let Some(not) = &node.not
        && validate_schema(not, path, data, false).is_valid()
    {
        main.add(OErr::Composite(format!(
            "{quoted} must not validate the schema (not)"
        )));
    }
    main.mc += 1;
    main
}

fn string_validator(node: &Node, path: &str, s: &str) -> VResult {
    let len = s.chars().count() as i64;
    let value = Some(Value::String(s.to_string()));
    if let Some(max) = node.max_length
        && len > max
    {
        return VResult::single(verr(
            Code::TooLong,
            path,
            format!("{path} in body should be at most {max} chars long"),
            value,
            max,
        ));
    }
    if let Some(min) = node.min_length
        && len < min
    {
        return VResult::single(verr(
            Code::TooShort,
            path,
            format!("{path} in body should be at least {min} chars long"),
            value,
            min,
        ));
    }
    if let Some(p) = &node.pattern
        && !p.regex.is_match(s)
    {
        return VResult::single(verr(
            Code::Pattern,
            path,
            format!("{path} in body should match '{}'", p.source),
            value,
            0,
        ));
    }
    VResult::default()
}

fn number_validator(node: &Node, path: &str, data: &Value, n: Num) -> VResult {
    let mut res = VResult::default();
    let mut multiple = VResult::default();
    let mut minimum = VResult::default();
    let mut maximum = VResult::default();
    if let Some(factor) = node.multiple_of {
        match n {
            Num::Int(v) => {
                let f = go_f64_to_i64(factor);
                if f <= 0 {
                    multiple.add(verr(
                        Code::MultipleOfMustBePositive,
                        path,
                        format!("factor MultipleOf declared for {path} must be positive: {f}"),
                        Some(Value::from(f)),
                        0,
                    ));
                } else if v.wrapping_div(f).wrapping_mul(f) != v {
                    multiple.add(verr(
                        Code::MultipleOf,
                        path,
                        format!("{path} in body should be a multiple of {f}"),
                        Some(data.clone()),
                        0,
                    ));
                }
            }
            Num::Float(v) => {
                if factor <= 0.0 {
                    multiple.add(verr(
                        Code::MultipleOfMustBePositive,
                        path,
                        format!(
                            "factor MultipleOf declared for {path} must be positive: {}",
                            go_float_v(factor)
                        ),
                        serde_json::Number::from_f64(factor).map(Value::Number),
                        0,
                    ));
                } else {
                    let mult = if factor < 1.0 {
                        1.0 / factor * v
                    } else {
                        v / factor
                    };
                    if !is_float64_json_integer(mult) {
                        multiple.add(verr(
                            Code::MultipleOf,
                            path,
                            format!(
                                "{path} in body should be a multiple of {}",
                                go_float_v(factor)
                            ),
                            Some(data.clone()),
                            0,
                        ));
                    }
                }
            }
        }
    }
    if let Some(max) = node.maximum {
        let excl = node.exclusive_maximum;
        let word = if excl {
            "less than"
        } else {
            "less than or equal to"
        };
        let failed = match n {
            Num::Int(v) => {
                let m = go_f64_to_i64(max);
                ((!excl && v > m) || (excl && v >= m)).then(|| m.to_string())
            }
            Num::Float(v) => ((!excl && v > max) || (excl && v >= max)).then(|| go_float_v(max)),
        };
        if let Some(limit) = failed {
            maximum.add(verr(
                Code::Max,
                path,
                format!("{path} in body should be {word} {limit}"),
                Some(data.clone()),
                0,
            ));
        }
    }
    if let Some(min) = node.minimum {
        let excl = node.exclusive_minimum;
        let word = if excl {
            "greater than"
        } else {
            "greater than or equal to"
        };
        let failed = match n {
            Num::Int(v) => {
                let m = go_f64_to_i64(min);
                ((!excl && v < m) || (excl && v <= m)).then(|| m.to_string())
            }
            Num::Float(v) => ((!excl && v < min) || (excl && v <= min)).then(|| go_float_v(min)),
        };
        if let Some(limit) = failed {
            minimum.add(verr(
                Code::Min,
                path,
                format!("{path} in body should be {word} {limit}"),
                Some(data.clone()),
                0,
            ));
        }
    }
    res.merge(multiple);
    res.merge(minimum);
    res.merge(maximum);
    res.mc += 1;
    res
}

fn slice_validator(node: &Node, path: &str, a: &[Value]) -> VResult {
    let mut r = VResult::default();
    if let Some(items) = node.items.as_deref() {
        for (i, v) in a.iter().enumerate() {
            r.merge(validate_schema(items, &index_path(path, i), v, false));
        }
    }
    let size = a.len() as i64;
    if let Some(min) = node.min_items
        && size < min
    {
        r.add(verr(
            Code::MinItems,
            path,
            format!("{path} in body should have at least {min} items"),
            Some(Value::from(size)),
            min,
        ));
    }
    if let Some(max) = node.max_items
        && size > max
    {
        r.add(verr(
            Code::MaxItems,
            path,
            format!("{path} in body should have at most {max} items"),
            Some(Value::from(size)),
            max,
        ));
    }
    if node.unique_items {
        let dup = a
            .iter()
            .enumerate()
            .any(|(i, v)| a[..i].iter().any(|u| go_deep_equal(v, u)));
        if dup {
            r.add(verr(
                Code::Unique,
                path,
                format!("{path} in body shouldn't contain duplicates"),
                None,
                0,
            ));
        }
    }
    r.mc += 1;
    r
}

fn enum_validator(node: &Node, path: &str, data: &Value) -> VResult {
    if node.enumeration.is_empty() || node.enumeration.iter().any(|e| go_enum_match(data, e)) {
        return VResult::default();
    }
    VResult::single(OErr::Validation(VErr {
        code: Code::Enum,
        name: path.to_string(),
        message: format!(
            "{path} in body should be one of {}",
            go_json(&Value::Array(node.enumeration.clone()))
        ),
        value: Some(data.clone()),
        valid: 0,
        values: node.enumeration.clone(),
    }))
}

fn object_validator(node: &Node, path: &str, m: &Map<String, Value>, root: bool) -> VResult {
    let mut r = VResult::default();
    let size = m.len() as i64;
    if let Some(min) = node.min_properties
        && size < min
    {
        r.add(verr(
            Code::TooFewProperties,
            path,
            format!("{path} in body should have at least {min} properties"),
            Some(Value::from(size)),
            min,
        ));
    }
    if let Some(max) = node.max_properties
        && size > max
    {
        r.add(verr(
            Code::TooManyProperties,
            path,
            format!("{path} in body should have at most {max} properties"),
            Some(Value::from(size)),
            max,
        ));
    }
    let keys = sorted_keys(m);
    let skip = |k: &str| root && is_meta_key(k);
    match &node.additional_properties {
        Some(Additional::Bool(false)) => {
            for k in keys
                .iter()
                .filter(|k| !skip(k) && !node.properties.contains_key(*k))
            {
                r.add(verr(
                    Code::Unallowed,
                    path,
                    format!("{path}.{k} in body is a forbidden property"),
                    Some(Value::String(k.clone())),
                    0,
                ));
            }
        }
        Some(Additional::Schema(ap)) => {
            for k in keys
                .iter()
                .filter(|k| !skip(k) && !node.properties.contains_key(*k))
            {
                if let Some(v) = m.get(k) {
                    r.merge(validate_schema(ap, &format!("{path}.{k}"), v, false));
                }
            }
        }
        _ => {}
    }
    for (name, prop) in &node.properties {
        if skip(name) {
            continue;
        }
        if let Some(v) = m.get(name) {
            r.merge(validate_schema(prop, &child(path, name), v, false));
        }
    }
    for k in &node.required {
        if !skip(k) && !m.contains_key(k) {
            r.add(verr(
                Code::Required,
                &format!("{path}.{k}"),
                format!("{path}.{k} in body is required"),
                None,
                0,
            ));
        }
    }
    r
}

/// Whether `data` matches an `enum` value, with Go's reflect conversion semantics.
fn go_enum_match(data: &Value, e: &Value) -> bool {
    match (data, e) {
        (Value::Null, _) | (_, Value::Null) => false,
        (Value::Number(a), Value::Number(b)) => match (num(a), num(b)) {
            (Num::Int(x), Num::Int(y)) => x == y,
            (Num::Int(x), Num::Float(y)) => (x as f64) == y,
            (Num::Float(x), Num::Int(y)) => go_f64_to_i64(x) == y,
            (Num::Float(x), Num::Float(y)) => x == y,
        },
        (Value::Number(a), Value::String(s)) => match num(a) {
            Num::Int(x) => {
                let c = u32::try_from(x)
                    .ok()
                    .and_then(char::from_u32)
                    .unwrap_or('\u{FFFD}');
                s.chars().eq(std::iter::once(c))
            }
            Num::Float(_) => false,
        },
        (Value::String(a), Value::String(b)) => a == b,
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::Array(_), Value::Array(_)) | (Value::Object(_), Value::Object(_)) => {
            go_deep_equal(data, e)
        }
        _ => false,
    }
}

/// Go's `reflect.DeepEqual` on decoded JSON (int64 and float64 never equal).
fn go_deep_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => match (num(x), num(y)) {
            (Num::Int(p), Num::Int(q)) => p == q,
            (Num::Float(p), Num::Float(q)) => p == q,
            _ => false,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| go_deep_equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| go_deep_equal(v, w)))
        }
        _ => false,
    }
}

fn to_field_error(e: OErr) -> FieldError {
    let v = match e {
        OErr::Composite(message) => {
            return FieldError {
                kind: FieldErrorKind::Invalid,
                field: "<nil>".to_string(),
                detail: message,
                value: Some(Value::String(String::new())),
            };
        }
        OErr::Validation(v) => v,
    };
    let field = if v.name.is_empty() || v.name == "." {
        "<nil>".to_string()
    } else {
        v.name.strip_prefix('.').unwrap_or(&v.name).to_string()
    };
    let or_empty = |value: Option<Value>| Some(value.unwrap_or(Value::String(String::new())));
    match v.code {
        Code::Required => FieldError::required(field, ""),
        Code::Enum => {
            let supported: Vec<String> = v
                .values
                .iter()
                .map(|x| match x {
                    Value::String(s) => s.clone(),
                    other => go_json(other),
                })
                .collect();
            let supported: Vec<&str> = supported.iter().map(String::as_str).collect();
            FieldError::not_supported(field, v.value.unwrap_or(Value::Null), &supported)
        }
        Code::TooLong => {
            let detail = match v.valid {
                1 => "may not be more than 1 byte".to_string(),
                n if n >= 0 => format!("may not be more than {n} bytes"),
                _ => "value is too long".to_string(),
            };
            FieldError {
                kind: FieldErrorKind::TooLong,
                field,
                detail,
                value: None,
            }
        }
        Code::MaxItems | Code::TooManyProperties => {
            let actual = v.value.as_ref().and_then(Value::as_i64).unwrap_or(-1);
            let detail = match v.valid {
                1 => "must have at most 1 item".to_string(),
                n if n >= 0 => format!("must have at most {n} items"),
                _ => "has too many items".to_string(),
            };
            let value = (actual >= 0).then(|| Value::from(actual));
            FieldError {
                kind: FieldErrorKind::TooMany,
                field,
                detail,
                value,
            }
        }
        Code::InvalidType => FieldError {
            kind: FieldErrorKind::TypeInvalid,
            field,
            detail: v.message,
            value: or_empty(v.value),
        },
        Code::TooShort
        | Code::Pattern
        | Code::MultipleOf
        | Code::Max
        | Code::Min
        | Code::Unique
        | Code::MinItems
        | Code::TooFewProperties
        | Code::Unallowed
        | Code::MultipleOfMustBePositive => FieldError {
            kind: FieldErrorKind::Invalid,
            field,
            detail: v.message,
            value: or_empty(v.value),
        },
    }
}

// ------------------------------------------------------------------------------------------------
// Embedded resources (x-kubernetes-embedded-resource)
// ------------------------------------------------------------------------------------------------

fn embedded_validate(
    x: &Value,
    s: Option<&Node>,
    pth: &str,
    root: bool,
    out: &mut Vec<FieldError>,
) {
    let Some(s) = s else { return };
    match x {
        Value::Object(m) => {
            if s.embedded_resource && !root {
                validate_embedded_resource(m, pth, out);
            }
            for k in sorted_keys(m) {
                if root && is_meta_key(&k) {
                    continue;
                }
                let Some(v) = m.get(&k) else { continue };
                if let Some(prop) = s.properties.get(&k) {
                    embedded_validate(v, Some(prop), &child(pth, &k), false, out);
                } else if let Some(ap) = &s.additional_properties {
                    embedded_validate(v, ap.schema(), &key_path(pth, &k), false, out);
                }
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                embedded_validate(v, s.items.as_deref(), &index_path(pth, i), false, out);
            }
        }
        _ => {}
    }
}

fn validate_embedded_resource(m: &Map<String, Value>, pth: &str, out: &mut Vec<FieldError>) {
    if !m.contains_key("apiVersion") {
        out.push(FieldError::required(child(pth, "apiVersion"), ""));
    }
    if !m.contains_key("kind") {
        out.push(FieldError::required(child(pth, "kind"), ""));
    }
    for k in sorted_keys(m) {
        let Some(v) = m.get(&k) else { continue };
        match k.as_str() {
            "apiVersion" => match v {
                Value::String(s) if s.is_empty() => {
                    out.push(FieldError::invalid(
                        child(pth, "apiVersion"),
                        v.clone(),
                        "must not be empty",
                    ));
                }
                Value::String(s) => {
                    if s != "/" && s.matches('/').count() > 1 {
                        out.push(FieldError::invalid(
                            child(pth, "apiVersion"),
                            v.clone(),
                            format!("unexpected GroupVersion string: {s}"),
                        ));
                    }
                }
                _ => out.push(FieldError::invalid(
                    child(pth, "apiVersion"),
                    v.clone(),
                    "must be a string",
                )),
            },
            "kind" => match v {
                Value::String(s) if s.is_empty() => {
                    out.push(FieldError::invalid(
                        child(pth, "kind"),
                        v.clone(),
                        "must not be empty",
                    ));
                }
                Value::String(s) => {
                    let errs = dns1035_label_errors(&s.to_lowercase());
                    if !errs.is_empty() {
                        out.push(FieldError::invalid(
                            child(pth, "kind"),
                            v.clone(),
                            format!(
                                "may have mixed case, but should otherwise match: {}",
                                errs.join(",")
                            ),
                        ));
                    }
                }
                _ => out.push(FieldError::invalid(
                    child(pth, "kind"),
                    v.clone(),
                    "must be a string",
                )),
            },
            "metadata" => validate_embedded_meta(v, &child(pth, "metadata"), out),
            _ => {}
        }
    }
}

fn validate_embedded_meta(v: &Value, pth: &str, out: &mut Vec<FieldError>) {
    let m = match v {
        Value::Null => return,
        Value::Object(m) => m,
        other => {
            out.push(FieldError::invalid(
                pth,
                other.clone(),
                format!(
                    "json: cannot unmarshal {} into Go value of type v1.ObjectMeta",
                    go_json_type(other)
                ),
            ));
            return;
        }
    };
    if let Some(e) = object_meta_decode_error(m) {
        out.push(FieldError::invalid(pth, v.clone(), e));
        return;
    }
    let get = |k: &str| m.get(k).and_then(Value::as_str).unwrap_or("");
    let generate_name = get("generateName");
    if !generate_name.is_empty() {
        for msg in path_segment_errors(generate_name, true) {
            out.push(FieldError::invalid(
                child(pth, "generateName"),
                Value::from(generate_name),
                msg,
            ));
        }
    }
    let name = get("name");
    if !name.is_empty() {
        for msg in path_segment_errors(name, false) {
            out.push(FieldError::invalid(
                child(pth, "name"),
                Value::from(name),
                msg,
            ));
        }
    }
    let namespace = get("namespace");
    if !namespace.is_empty() {
        for msg in dns1123_label_errors(namespace) {
            out.push(FieldError::invalid(
                child(pth, "namespace"),
                Value::from(namespace),
                msg,
            ));
        }
    }
}

fn path_segment_errors(name: &str, prefix: bool) -> Vec<String> {
    if !prefix && (name == "." || name == "..") {
        return vec![format!("may not be '{name}'")];
    }
    ["/", "%"]
        .iter()
        .filter(|c| name.contains(*c))
        .map(|c| format!("may not contain '{c}'"))
        .collect()
}

fn regex_error(msg: &str, re: &str, examples: &[&str]) -> String {
    let mut s = format!("{msg} (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            s.push_str(" or ");
        }
        s.push_str(&format!("'{e}', "));
    }
    s.push_str(&format!("regex used for validation is '{re}')"));
    s
}

fn dns1035_label_errors(v: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if v.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    if !re_match(dns1035_re(), v) {
        errs.push(regex_error(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
            "[a-z]([-a-z0-9]*[a-z0-9])?",
            &["my-name", "abc-123"],
        ));
    }
    errs
}

fn dns1123_label_errors(v: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if v.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    if !re_match(dns1123_label_re(), v) {
        if re_match(dns1123_subdomain_re(), v) {
            errs.push("must not contain dots".to_string());
        } else {
            errs.push(regex_error(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
                "[a-z0-9]([-a-z0-9]*[a-z0-9])?",
                &["my-name", "123-abc"],
            ));
        }
    }
    errs
}

// ------------------------------------------------------------------------------------------------
// List types (x-kubernetes-list-type: set | map)
// ------------------------------------------------------------------------------------------------

fn list_validate_map(
    m: &Map<String, Value>,
    s: &Node,
    pth: &str,
    root: bool,
    out: &mut Vec<FieldError>,
) {
    let keys = sorted_keys(m);
    if let Some(ap) = s
        .additional_properties
        .as_ref()
        .and_then(Additional::schema)
    {
        for k in keys.iter().filter(|k| !(root && is_meta_key(k))) {
            if let Some(v) = m.get(k) {
                list_validate(v, ap, &key_path(pth, k), out);
            }
        }
    }
    for k in keys.iter().filter(|k| !(root && is_meta_key(k))) {
        if let (Some(sub), Some(v)) = (s.properties.get(k), m.get(k)) {
            list_validate(v, sub, &child(pth, k), out);
        }
    }
}

fn list_validate(x: &Value, s: &Node, pth: &str, out: &mut Vec<FieldError>) {
    match x {
        Value::Array(a) => {
            match s.list_type.as_deref() {
                Some("set") => {
                    for i in non_unique_indices(a.iter().map(Some)) {
                        out.push(FieldError::duplicate(index_path(pth, i), a[i].clone()));
                    }
                }
                Some("map") => validate_list_map(s, a, pth, out),
                _ => {}
            }
            if let Some(items) = s.items.as_deref() {
                for (i, v) in a.iter().enumerate() {
                    list_validate(v, items, &index_path(pth, i), out);
                }
            }
        }
        Value::Object(m) => list_validate_map(m, s, pth, false, out),
        _ => {}
    }
}

/// Indexes of the second occurrence of each repeated value (`None` is an unspecified key, equal
/// only to other unspecified keys). Compound values compare by their JSON encoding, scalars by
/// Go equality (so `1` and `1.0` differ).
fn non_unique_indices<'a>(values: impl Iterator<Item = Option<&'a Value>>) -> Vec<usize> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    for (i, v) in values.enumerate() {
        let key = match v {
            None => "u".to_string(),
            Some(v @ (Value::Object(_) | Value::Array(_))) => format!("c{}", go_json(v)),
            Some(Value::Null) => "n".to_string(),
            Some(Value::Bool(b)) => format!("b{b}"),
            Some(Value::String(s)) => format!("s{s}"),
            Some(Value::Number(n)) => match num(n) {
                Num::Int(x) => format!("i{x}"),
                Num::Float(f) => format!("f{}", go_float_v(if f == 0.0 { 0.0 } else { f })),
            },
        };
        let count = seen.entry(key).or_insert(0);
        *count += 1;
        if *count == 2 {
            out.push(i);
        }
    }
    out
}

fn validate_list_map(s: &Node, a: &[Value], pth: &str, out: &mut Vec<FieldError>) {
    for (i, x) in a.iter().enumerate() {
        if !x.is_object() && !x.is_null() {
            out.push(FieldError::invalid(
                index_path(pth, i),
                x.clone(),
                "must be an object for an array of list-type map",
            ));
            return;
        }
    }
    if a.len() <= 1 {
        return;
    }
    if let [key_field] = s.list_map_keys.as_slice() {
        let keys: Vec<Option<&Value>> = a
            .iter()
            .map(|x| x.as_object().and_then(|o| o.get(key_field)))
            .collect();
        for i in non_unique_indices(keys.iter().copied()) {
            let mut dup = Map::new();
            if let Some(k) = keys[i] {
                dup.insert(key_field.clone(), k.clone());
            }
            out.push(FieldError::duplicate(
                index_path(pth, i),
                Value::Object(dup),
            ));
        }
        return;
    }
    let keys: Vec<Value> = a
        .iter()
        .map(|x| {
            let mut key = Map::new();
            if let Some(o) = x.as_object() {
                for f in &s.list_map_keys {
                    if let Some(v) = o.get(f) {
                        key.insert(f.clone(), v.clone());
                    }
                }
            }
            Value::Object(key)
        })
        .collect();
    for i in non_unique_indices(keys.iter().map(Some)) {
        out.push(FieldError::duplicate(index_path(pth, i), keys[i].clone()));
    }
}

// ------------------------------------------------------------------------------------------------
// Go formatting (fmt, strconv, encoding/json)
// ------------------------------------------------------------------------------------------------

/// A field error's value as apimachinery prints it: `%v` for numbers and booleans, `%q` for
/// strings, JSON for everything else.
fn go_bad_value(v: &Value) -> String {
    match v {
        Value::Number(n) => match num(n) {
            Num::Int(i) => i.to_string(),
            Num::Float(f) => go_float_v(f),
        },
        Value::Bool(b) => b.to_string(),
        Value::String(s) => go_quote(s),
        other => go_json(other),
    }
}

/// Shortest decimal digits and decimal exponent of a positive finite float.
fn float_digits(f: f64) -> (String, i32) {
    let s = format!("{f:e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((s.as_str(), "0"));
    (
        mantissa.chars().filter(char::is_ascii_digit).collect(),
        exp.parse().unwrap_or(0),
    )
}

fn fmt_e(digits: &str, exp: i32) -> String {
    let (first, rest) = digits.split_at(digits.len().min(1));
    let mut s = if first.is_empty() {
        "0".to_string()
    } else {
        first.to_string()
    };
    if !rest.is_empty() {
        s.push('.');
        s.push_str(rest);
    }
    s.push_str(&format!(
        "e{}{:02}",
        if exp < 0 { '-' } else { '+' },
        exp.abs()
    ));
    s
}

fn fmt_f(digits: &str, exp: i32) -> String {
    let dp = exp + 1;
    let nd = digits.len() as i32;
    if dp <= 0 {
        format!("0.{}{digits}", "0".repeat((-dp) as usize))
    } else if dp >= nd {
        format!("{digits}{}", "0".repeat((dp - nd) as usize))
    } else {
        format!("{}.{}", &digits[..dp as usize], &digits[dp as usize..])
    }
}

/// Go's `%v` of a float64 (`strconv.FormatFloat(f, 'g', -1, 64)`): `1e+06`, `0.5`, `123456`.
fn go_float_v(f: f64) -> String {
    if f.is_nan() {
        return "NaN".to_string();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.to_string();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let (digits, exp) = float_digits(f.abs());
    let body = if !(-4..6).contains(&exp) {
        fmt_e(&digits, exp)
    } else {
        fmt_f(&digits, exp)
    };
    if f < 0.0 { format!("-{body}") } else { body }
}

/// Go's `encoding/json` rendering of a float64.
fn go_float_json(f: f64) -> String {
    if !f.is_finite() {
        return "null".to_string();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let abs = f.abs();
    let (digits, exp) = float_digits(abs);
    let body = if !(1e-6..1e21).contains(&abs) {
        let e = fmt_e(&digits, exp);
        match e.find("e-0") {
            Some(i) if e.len() == i + 4 => format!("{}e-{}", &e[..i], &e[i + 3..]),
            _ => e,
        }
    } else {
        fmt_f(&digits, exp)
    };
    if f < 0.0 { format!("-{body}") } else { body }
}

/// Go's `json.Marshal` of decoded JSON (sorted keys, HTML-safe escaping).
fn go_json(v: &Value) -> String {
    let mut out = String::new();
    write_go_json(v, &mut out);
    out
}

fn write_go_json(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match num(n) {
            Num::Int(i) => out.push_str(&i.to_string()),
            Num::Float(f) => out.push_str(&go_float_json(f)),
        },
        Value::String(s) => write_go_json_string(s, out),
        Value::Array(a) => {
            out.push('[');
            for (i, item) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_json(item, out);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (i, k) in sorted_keys(m).iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_json_string(k, out);
                out.push(':');
                if let Some(item) = m.get(k) {
                    write_go_json(item, out);
                }
            }
            out.push('}');
        }
    }
}

fn write_go_json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Go's `unicode.IsPrint`.
fn is_go_print(c: char) -> bool {
    if c.is_ascii() {
        return (' '..='~').contains(&c);
    }
    let mut buf = [0u8; 4];
    re_match(printable_re(), c.encode_utf8(&mut buf))
}

/// Go's `strconv.Quote` (`%q`).
fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if is_go_print(c) => out.push(c),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

// ------------------------------------------------------------------------------------------------
// Regular expressions
// ------------------------------------------------------------------------------------------------

/// Declares a function returning a regular expression that is compiled on first use.
macro_rules! lazy_regex {
    ($name:ident = $pattern:expr) => {
        fn $name() -> Option<&'static Regex> {
            static CELL: OnceLock<Option<Regex>> = OnceLock::new();
            CELL.get_or_init(|| Regex::new(&$pattern).ok()).as_ref()
        }
    };
}

/// One IPv4 octet, as in govalidator's `RGBcolor`.
const OCTET: &str = "(?:0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])";
/// Go's `\s*`.
const GO_SPACES: &str = "[\\t\\n\\f\\r ]*";

lazy_regex!(printable_re = "^[\\p{L}\\p{M}\\p{N}\\p{P}\\p{S}]$");
lazy_regex!(uuid_re = "(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$");
lazy_regex!(uuid3_re = "(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$");
lazy_regex!(
    uuid4_re = "(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$"
);
lazy_regex!(
    uuid5_re = "(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$"
);
lazy_regex!(hostname_single_re = "^[a-zA-Z0-9\\p{S}\\p{L}]-?[a-zA-Z0-9\\p{S}\\p{L}]*$");
lazy_regex!(
    hostname_label_re =
        "^[a-zA-Z0-9\\p{S}\\p{L}]([a-zA-Z0-9\\p{S}\\p{L}\\-]*[a-zA-Z0-9\\p{S}\\p{L}])?$"
);
lazy_regex!(hostname_tld_re = "^[a-zA-Z\\p{L}]+$");
lazy_regex!(hexcolor_re = "^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$");
lazy_regex!(
    rgbcolor_re = format!(
        "^rgb\\({GO_SPACES}{OCTET}{GO_SPACES},{GO_SPACES}{OCTET}{GO_SPACES},{GO_SPACES}{OCTET}{GO_SPACES}\\)$"
    )
);
lazy_regex!(
    base64_re = "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$"
);
lazy_regex!(ssn_re = "^[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}$");
lazy_regex!(isbn10_re = "^(?:[0-9]{9}X|[0-9]{10})$");
lazy_regex!(isbn13_re = "^(?:[0-9]{13})$");
lazy_regex!(
    creditcard_re = "^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11})$"
);
lazy_regex!(
    datetime_re = "^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$"
);
lazy_regex!(duration_re = "([0-9]+)[\\t\\n\\f\\r ]*([A-Za-zµ]+)");
lazy_regex!(dns1035_re = "^[a-z]([-a-z0-9]*[a-z0-9])?$");
lazy_regex!(dns1123_label_re = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$");
lazy_regex!(
    dns1123_subdomain_re = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
);

fn re_match(re: Option<&Regex>, s: &str) -> bool {
    re.is_some_and(|r| r.is_match(s))
}

/// Rewrites a Go (RE2) pattern for the `regex` crate: `\d`, `\s`, `\w` and `\b` are ASCII-only
/// in Go, `[` inside a class is literal unless it starts a POSIX class, `&` and `~` are literal in
/// classes, `\Q...\E` quotes, and a `{` that does not start a repetition is literal.
fn translate_go_regex(p: &str) -> String {
    let chars: Vec<char> = p.chars().collect();
    let mut out = String::with_capacity(p.len() + 8);
    let mut i = 0;
    let mut in_class = false;
    let mut class_start = false;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && i + 1 < chars.len() {
            let d = chars[i + 1];
            if d == 'Q' && !in_class {
                let rest: String = chars[i + 2..].iter().collect();
                let (quoted, consumed) = match rest.find("\\E") {
                    Some(end) => (rest[..end].to_string(), end + 2),
                    None => (rest.clone(), rest.len()),
                };
                out.push_str(&regex::escape(&quoted));
                i += 2 + rest[..consumed].chars().count();
                continue;
            }
            let replacement = match (d, in_class) {
                ('d', false) => Some("[0-9]"),
                ('d', true) => Some("0-9"),
                ('D', _) => Some("[^0-9]"),
                ('s', false) => Some("[\\t\\n\\f\\r ]"),
                ('s', true) => Some("\\t\\n\\f\\r "),
                ('S', _) => Some("[^\\t\\n\\f\\r ]"),
                ('w', false) => Some("[0-9A-Za-z_]"),
                ('w', true) => Some("0-9A-Za-z_"),
                ('W', _) => Some("[^0-9A-Za-z_]"),
                ('b', false) => Some("(?-u:\\b)"),
                ('B', false) => Some("(?-u:\\B)"),
                _ => None,
            };
            match replacement {
                Some(r) => out.push_str(r),
                None => {
                    out.push(c);
                    out.push(d);
                }
            }
            class_start = false;
            i += 2;
            continue;
        }
        if in_class {
            match c {
                ']' if !class_start => {
                    in_class = false;
                    out.push(']');
                }
                '[' if chars.get(i + 1) == Some(&':') => {
                    // A POSIX class such as [:alpha:]: copy it through its closing ":]".
                    let mut j = i + 2;
                    while j + 1 < chars.len() && !(chars[j] == ':' && chars[j + 1] == ']') {
                        j += 1;
                    }
                    let end = (j + 2).min(chars.len());
                    out.extend(&chars[i..end]);
                    i = end;
                    class_start = false;
                    continue;
                }
                '[' | '&' | '~' => {
                    out.push('\\');
                    out.push(c);
                }
                _ => out.push(c),
            }
            class_start = false;
        } else {
            match c {
                '[' => {
                    in_class = true;
                    class_start = true;
                    out.push('[');
                    if chars.get(i + 1) == Some(&'^') {
                        out.push('^');
                        i += 1;
                    }
                }
                '{' if !is_repetition(&chars[i..]) => out.push_str("\\{"),
                _ => out.push(c),
            }
        }
        i += 1;
    }
    out
}

/// Whether `s` starts with `{n}`, `{n,}` or `{n,m}`.
fn is_repetition(s: &[char]) -> bool {
    let mut i = 1;
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < s.len() && s[*i].is_ascii_digit() {
            *i += 1;
        }
        *i > start
    };
    if !digits(&mut i) {
        return false;
    }
    if s.get(i) == Some(&',') {
        i += 1;
        digits(&mut i);
    }
    s.get(i) == Some(&'}')
}

// ------------------------------------------------------------------------------------------------
// String formats
// ------------------------------------------------------------------------------------------------

/// Whether `s` is valid for `format` (one of [`STRING_FORMATS`], in any spelling with dashes).
fn validates_format(format: &str, s: &str) -> bool {
    match normalize_format(format).as_str() {
        "bsonobjectid" => s.len() == 24 && s.bytes().all(|b| b.is_ascii_hexdigit()),
        "uri" => is_request_uri(s),
        "email" => is_email(s),
        "hostname" => is_hostname(s),
        "ipv4" => parse_ip(s, true) && s.contains('.'),
        "ipv6" => parse_ip(s, false) && s.contains(':'),
        "cidr" => is_cidr(s),
        "mac" => is_mac(s),
        "uuid" => re_match(uuid_re(), s),
        "uuid3" => re_match(uuid3_re(), s),
        "uuid4" => re_match(uuid4_re(), s),
        "uuid5" => re_match(uuid5_re(), s),
        "isbn" => is_isbn(s, 10) || is_isbn(s, 13),
        "isbn10" => is_isbn(s, 10),
        "isbn13" => is_isbn(s, 13),
        "creditcard" => is_credit_card(s),
        "ssn" => s.len() == 11 && re_match(ssn_re(), s),
        "hexcolor" => re_match(hexcolor_re(), s),
        "rgbcolor" => re_match(rgbcolor_re(), s),
        "byte" => re_match(base64_re(), s),
        "date" => is_date(s),
        "duration" => is_duration(s),
        "datetime" => is_date_time(s),
        "k8sshortname" => s.len() <= 63 && re_match(dns1123_label_re(), s),
        "k8slongname" => s.len() <= 253 && re_match(dns1123_subdomain_re(), s),
        _ => true,
    }
}

/// kube-openapi's `IsHostname`: its regular expression (a single label with at most one `-`
/// right after the first character, or dot-separated labels ending in a top-level domain of 2 to
/// 63 letters), spelled out to avoid compiling large Unicode repetitions.
fn is_hostname(s: &str) -> bool {
    let chars = s.chars().count();
    let single = re_match(hostname_single_re(), s)
        && chars.saturating_sub(1 + usize::from(s.chars().nth(1) == Some('-'))) <= 62;
    let dotted = || {
        let Some((labels, tld)) = s.rsplit_once('.') else {
            return false;
        };
        (2..=63).contains(&tld.chars().count())
            && re_match(hostname_tld_re(), tld)
            && labels
                .split('.')
                .all(|l| l.chars().count() <= 63 && re_match(hostname_label_re(), l))
    };
    (single || dotted()) && s.len() <= 255 && s.split('.').all(|p| p.len() <= 63)
}

/// Go's `time.Parse("2006-01-02", s)` succeeds.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let digits = |r: std::ops::Range<usize>| -> Option<u32> {
        b[r].iter().try_fold(0u32, |acc, c| {
            c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0'))
        })
    };
    let (Some(year), Some(month), Some(day)) = (digits(0..4), digits(5..7), digits(8..10)) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// kube-openapi's `IsDateTime`.
fn is_date_time(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_lowercase();
    let parts: Vec<&str> = lower.split('t').collect();
    if parts.len() < 2 || !is_date(parts[0]) {
        return false;
    }
    let Some(caps) = datetime_re().and_then(|r| r.captures(parts[1])) else {
        return false;
    };
    let part = |i: usize| caps.get(i).map_or("", |m| m.as_str());
    part(1) <= "23" && part(2) <= "59" && part(3) <= "59"
}

/// kube-openapi's `ParseDuration`: Go's `time.ParseDuration`, or `<n> <unit>` groups.
fn is_duration(s: &str) -> bool {
    if go_parse_duration(s) {
        return true;
    }
    const UNITS: &[&[&str]] = &[
        &["ns", "nano"],
        &["us", "µs", "micro"],
        &["ms", "milli"],
        &["s", "sec"],
        &["m", "min"],
        &["h", "hr", "hour"],
        &["d", "day"],
        &["w", "wk", "week"],
    ];
    let Some(re) = duration_re() else {
        return false;
    };
    let mut ok = false;
    for caps in re.captures_iter(s) {
        let factor = caps.get(1).map_or("", |m| m.as_str());
        if factor.parse::<i64>().is_err() {
            return false;
        }
        let unit = caps.get(2).map_or("", |m| m.as_str()).to_lowercase();
        for variants in UNITS {
            let last = variants.len() - 1;
            for (i, v) in variants.iter().enumerate() {
                if (i == last && unit.starts_with(v)) || unit == *v {
                    ok = true;
                }
            }
        }
    }
    ok
}

/// Go's `time.ParseDuration` succeeds.
fn go_parse_duration(s: &str) -> bool {
    let neg = s.starts_with('-');
    let mut s = s.strip_prefix(['-', '+']).unwrap_or(s);
    if s == "0" {
        return true;
    }
    if s.is_empty() {
        return false;
    }
    let limit: u128 = 1 << 63;
    let mut total: u128 = 0;
    while !s.is_empty() {
        let int_len = s.bytes().take_while(u8::is_ascii_digit).count();
        let mut value: u128 = 0;
        for b in s[..int_len].bytes() {
            value = value * 10 + u128::from(b - b'0');
            if value > limit {
                return false;
            }
        }
        s = &s[int_len..];
        let mut frac_len = 0;
        let mut frac = "";
        if let Some(rest) = s.strip_prefix('.') {
            frac_len = rest.bytes().take_while(u8::is_ascii_digit).count();
            frac = &rest[..frac_len];
            s = &rest[frac_len..];
        }
        if int_len == 0 && frac_len == 0 {
            return false;
        }
        let unit_len = s
            .find(|c: char| c == '.' || c.is_ascii_digit())
            .unwrap_or(s.len());
        let unit = match &s[..unit_len] {
            "ns" => 1u128,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return false,
        };
        s = &s[unit_len..];
        let mut v = value * unit;
        if !frac.is_empty() {
            let f: f64 = format!("0.{frac}").parse().unwrap_or(0.0);
            v += (f * unit as f64) as u128;
        }
        total += v;
        if total > limit {
            return false;
        }
    }
    neg || total < limit
}

/// IPv4 per Go: `sloppy` is Go 1.16's parser (leading zeros allowed), otherwise `net/netip`'s.
fn parse_ipv4(s: &str, sloppy: bool) -> bool {
    let parts: Vec<&str> = s.split('.').collect();
    parts.len() == 4
        && parts.iter().all(|p| {
            if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                return false;
            }
            if !sloppy && (p.len() > 3 || (p.len() > 1 && p.starts_with('0'))) {
                return false;
            }
            let trimmed = p.trim_start_matches('0');
            trimmed.len() <= 3 && trimmed.parse::<u32>().unwrap_or(0) <= 255
        })
}

/// IPv6 per Go (see [`parse_ipv4`] for `sloppy`).
fn parse_ipv6(s: &str, sloppy: bool) -> bool {
    if !sloppy && s.contains('%') {
        return false;
    }
    let mut b = s.as_bytes();
    let mut ellipsis: Option<usize> = None;
    if b.len() >= 2 && b[0] == b':' && b[1] == b':' {
        ellipsis = Some(0);
        b = &b[2..];
        if b.is_empty() {
            return true;
        }
    }
    let mut i = 0;
    while i < 16 {
        let mut n: u32 = 0;
        let mut c = 0;
        while c < b.len() && b[c].is_ascii_hexdigit() {
            n = n * 16 + char::from(b[c]).to_digit(16).unwrap_or(0);
            c += 1;
            if n >= 0xFF_FFFF {
                return false;
            }
        }
        if c == 0 || n > 0xFFFF || (!sloppy && c > 4 && b.get(c) != Some(&b'.')) {
            return false;
        }
        if b.get(c) == Some(&b'.') {
            if (ellipsis.is_none() && i != 12) || i + 4 > 16 {
                return false;
            }
            if !std::str::from_utf8(b).is_ok_and(|v4| parse_ipv4(v4, sloppy)) {
                return false;
            }
            b = &[];
            i += 4;
            break;
        }
        i += 2;
        b = &b[c..];
        if b.is_empty() {
            break;
        }
        if b[0] != b':' || b.len() == 1 {
            return false;
        }
        b = &b[1..];
        if b[0] == b':' {
            if ellipsis.is_some() {
                return false;
            }
            ellipsis = Some(i);
            b = &b[1..];
            if b.is_empty() {
                break;
            }
        }
    }
    if !b.is_empty() {
        return false;
    }
    if i < 16 {
        ellipsis.is_some()
    } else {
        ellipsis.is_none()
    }
}

/// Go's `net.ParseIP` (or the sloppy variant) succeeds.
fn parse_ip(s: &str, sloppy: bool) -> bool {
    for b in s.bytes() {
        match b {
            b'.' => return parse_ipv4(s, sloppy),
            b':' => return parse_ipv6(s, sloppy),
            _ => {}
        }
    }
    false
}

/// `ParseCIDRSloppy` succeeds.
fn is_cidr(s: &str) -> bool {
    let Some((addr, mask)) = s.split_once('/') else {
        return false;
    };
    let bits = if parse_ipv4(addr, true) {
        32
    } else if parse_ipv6(addr, true) {
        128
    } else {
        return false;
    };
    !mask.is_empty()
        && mask.len() < 8
        && mask.bytes().all(|b| b.is_ascii_digit())
        && mask.parse::<u32>().is_ok_and(|n| n <= bits)
}

/// Go's `net.ParseMAC` succeeds.
fn is_mac(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 14 {
        return false;
    }
    let hex2 = |x: &[u8]| x.len() == 2 && x.iter().all(u8::is_ascii_hexdigit);
    if b[2] == b':' || b[2] == b'-' {
        if !(b.len() + 1).is_multiple_of(3) {
            return false;
        }
        let n = (b.len() + 1) / 3;
        if n != 6 && n != 8 && n != 20 {
            return false;
        }
        (0..n).all(|i| hex2(&b[i * 3..i * 3 + 2]) && (i + 1 == n || b[i * 3 + 2] == b[2]))
    } else if b[4] == b'.' {
        if !(b.len() + 1).is_multiple_of(5) {
            return false;
        }
        let n = 2 * (b.len() + 1) / 5;
        if n != 6 && n != 8 && n != 20 {
            return false;
        }
        (0..n / 2).all(|i| {
            let x = i * 5;
            hex2(&b[x..x + 2]) && hex2(&b[x + 2..x + 4]) && (i + 1 == n / 2 || b[x + 4] == b[4])
        })
    } else {
        false
    }
}

fn is_isbn(s: &str, version: u32) -> bool {
    let sanitized: Vec<u8> = s
        .bytes()
        .filter(|b| !matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ' | b'-'))
        .collect();
    let Ok(sanitized) = String::from_utf8(sanitized) else {
        return false;
    };
    let d = sanitized.as_bytes();
    let digit = |i: usize| i32::from(d[i]) - i32::from(b'0');
    if version == 10 {
        if !re_match(isbn10_re(), &sanitized) {
            return false;
        }
        let mut sum: i32 = (0..9).map(|i| (i as i32 + 1) * digit(i)).sum();
        sum += if d[9] == b'X' { 100 } else { 10 * digit(9) };
        sum % 11 == 0
    } else {
        if !re_match(isbn13_re(), &sanitized) {
            return false;
        }
        let sum: i32 = (0..12)
            .map(|i| if i % 2 == 0 { digit(i) } else { 3 * digit(i) })
            .sum();
        digit(12) - ((10 - sum % 10) % 10) == 0
    }
}

fn is_credit_card(s: &str) -> bool {
    let sanitized: String = s.chars().filter(char::is_ascii_digit).collect();
    if !re_match(creditcard_re(), &sanitized) {
        return false;
    }
    let mut sum = 0u32;
    let mut double = false;
    for c in sanitized.bytes().rev() {
        let mut n = u32::from(c - b'0');
        if double {
            n *= 2;
            sum += if n >= 10 { n % 10 + 1 } else { n };
        } else {
            sum += n;
        }
        double = !double;
    }
    sum.is_multiple_of(10)
}

fn is_email_atext(c: char, dot: bool, permissive: bool) -> bool {
    match c {
        '.' => dot,
        '(' | ')' | '[' | ']' | ';' | '@' | '\\' | ',' => permissive,
        '<' | '>' | '"' | ':' => false,
        c => ('!'..='~').contains(&c) || !c.is_ascii(),
    }
}

fn is_dot_atom(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('.')
        && !s.ends_with('.')
        && !s.contains("..")
        && s.chars().all(|c| is_email_atext(c, true, false))
}

/// `local-part@domain`: a dot-atom or non-empty quoted string, then a dot-atom or domain literal.
fn is_addr_spec(s: &str) -> bool {
    let domain = if let Some(rest) = s.strip_prefix('"') {
        let mut escaped = false;
        let mut end = None;
        for (i, c) in rest.char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => {
                    end = Some(i);
                    break;
                }
                _ => {}
            }
        }
        let Some(end) = end else { return false };
        if end == 0 {
            return false;
        }
        match rest[end + 1..].strip_prefix('@') {
            Some(domain) => domain,
            None => return false,
        }
    } else {
        match s.split_once('@') {
            Some((local, domain)) if is_dot_atom(local) => domain,
            _ => return false,
        }
    };
    let domain = domain.trim_start_matches([' ', '\t']);
    if let Some(lit) = domain.strip_prefix('[') {
        return lit
            .strip_suffix(']')
            .is_some_and(|inner| !inner.contains(['[', ']', '\\']));
    }
    is_dot_atom(domain)
}

/// An approximation of Go's `net/mail.ParseAddress`.
fn is_email(s: &str) -> bool {
    let t = s.trim_matches([' ', '\t']);
    if is_addr_spec(t) {
        return true;
    }
    let Some(rest) = t.strip_suffix('>') else {
        return false;
    };
    let Some(lt) = rest.rfind('<') else {
        return false;
    };
    let name = rest[..lt].trim_matches([' ', '\t']);
    let addr = rest[lt + 1..].trim_start_matches([' ', '\t']);
    let name_ok = name.is_empty()
        || name.split([' ', '\t']).filter(|w| !w.is_empty()).all(|w| {
            (w.starts_with('"') && w.ends_with('"') && w.len() >= 2)
                || w.chars().all(|c| is_email_atext(c, true, true))
        });
    name_ok && is_addr_spec(addr)
}

/// An approximation of Go's `url.ParseRequestURI` succeeding.
fn is_request_uri(s: &str) -> bool {
    if s.is_empty() || s.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return false;
    }
    if s == "*" {
        return true;
    }
    // Scheme.
    let mut scheme = "";
    let mut rest = s;
    for (i, c) in s.char_indices() {
        match c {
            'a'..='z' | 'A'..='Z' => {}
            '0'..='9' | '+' | '-' | '.' if i > 0 => {}
            ':' if i == 0 => return false,
            ':' => {
                scheme = &s[..i];
                rest = &s[i + 1..];
                break;
            }
            _ => break,
        }
    }
    if rest.ends_with('?') && rest.matches('?').count() == 1 {
        rest = &rest[..rest.len() - 1];
    } else if let Some((before, _)) = rest.split_once('?') {
        rest = before;
    }
    if !rest.starts_with('/') {
        return !scheme.is_empty();
    }
    if !scheme.is_empty()
        && let Some(after) = rest.strip_prefix("//")
    {
        let (authority, path) = match after.find('/') {
            Some(i) => (&after[..i], &after[i..]),
            None => (after, ""),
        };
        if !is_authority(authority) {
            return false;
        }
        rest = path;
    }
    unescapes(rest, false)
}

fn is_authority(a: &str) -> bool {
    let (userinfo, host) = match a.rfind('@') {
        Some(i) => (Some(&a[..i]), &a[i + 1..]),
        None => (None, a),
    };
    let port_ok = |p: &str| {
        p.is_empty()
            || p.strip_prefix(':')
                .is_some_and(|d| d.bytes().all(|b| b.is_ascii_digit()))
    };
    if host.starts_with('[') {
        match host.rfind(']') {
            Some(i) if port_ok(&host[i + 1..]) => {}
            _ => return false,
        }
    } else if let Some(i) = host.rfind(':')
        && !port_ok(&host[i..])
    {
        return false;
    }
    if !unescapes(host, true) {
        return false;
    }
    match userinfo {
        None => true,
        Some(u) => {
            u.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._:~!$&'()*+,;=%@".contains(c))
                && unescapes(u, false)
        }
    }
}

/// Go's `url` unescaping succeeds (`host` mode also rejects characters not allowed in hosts).
fn unescapes(s: &str, host: bool) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                if i + 2 >= b.len() {
                    return false;
                }
                if !b[i + 1].is_ascii_hexdigit() || !b[i + 2].is_ascii_hexdigit() {
                    return false;
                }
                if host
                    && char::from(b[i + 1]).to_digit(16).unwrap_or(0) < 8
                    && &s[i..i + 3] != "%25"
                {
                    return false;
                }
                i += 3;
                continue;
            }
            c if host && c < 0x80 => {
                let allowed = c.is_ascii_alphanumeric() || b"-_.~!$&'()*+,;=:[]<>\"".contains(&c);
                if !allowed {
                    return false;
                }
            }
            _ => {}
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn webapp() -> Schema {
        Schema::new(&json!({
            "type": "object",
            "properties": {
                "apiVersion": {"type": "string"},
                "kind": {"type": "string"},
                "metadata": {"type": "object"},
                "spec": {
                    "type": "object",
                    "required": ["image"],
                    "properties": {
                        "image": {"type": "string"},
                        "replicas": {"type": "integer", "minimum": 0, "default": 1},
                        "port": {"type": "integer", "default": 8080},
                        "configMap": {"type": "string"}
                    }
                },
                "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
            }
        }))
        .unwrap()
    }

    fn webapp_obj(spec: Value) -> Value {
        json!({"apiVersion": "example.dev/v1", "kind": "WebApp", "metadata": {"name": "x"}, "spec": spec})
    }

    /// A root schema whose `spec` has the given properties.
    fn spec_schema(props: Value) -> Schema {
        Schema::new(&json!({
            "type": "object",
            "properties": {"spec": {"type": "object", "properties": props}}
        }))
        .unwrap()
    }

    fn strings(errors: &[FieldError]) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    /// Validates `{"spec": spec}` against `spec_schema(props)` without pruning or defaulting.
    fn check(props: Value, spec: Value) -> Vec<String> {
        strings(&spec_schema(props).validate(&json!({"spec": spec})))
    }

    fn sorted(mut v: Vec<String>) -> Vec<String> {
        v.sort();
        v
    }

    // ---- the WebApp schema -------------------------------------------------------------------

    #[test]
    fn webapp_defaults_then_validates() {
        let s = webapp();
        let mut obj = webapp_obj(json!({"image": "nginx"}));
        assert!(s.prune(&mut obj).is_empty());
        s.apply_defaults(&mut obj);
        assert_eq!(
            obj["spec"],
            json!({"image": "nginx", "replicas": 1, "port": 8080})
        );
        assert_eq!(obj["metadata"], json!({"name": "x"}));
        assert!(s.validate(&obj).is_empty());
    }

    #[test]
    fn webapp_keeps_given_values() {
        let s = webapp();
        let mut obj =
            webapp_obj(json!({"image": "nginx", "replicas": 0, "port": 80, "configMap": "cm"}));
        s.apply_defaults(&mut obj);
        assert_eq!(
            obj["spec"],
            json!({"image": "nginx", "replicas": 0, "port": 80, "configMap": "cm"})
        );
        assert!(s.validate(&obj).is_empty());
    }

    #[test]
    fn required_value() {
        let s = webapp();
        let mut obj = webapp_obj(json!({}));
        s.apply_defaults(&mut obj);
        let errors = s.validate(&obj);
        assert_eq!(strings(&errors), ["spec.image: Required value"]);
        assert_eq!(errors[0].reason(), "FieldValueRequired");
        assert_eq!(errors[0].kind, FieldErrorKind::Required);
        assert_eq!(errors[0].field, "spec.image");
        assert_eq!(errors[0].body(), "Required value");
        assert_eq!(errors[0].value, None);
    }

    #[test]
    fn type_error_message() {
        let s = webapp();
        let errors = s.validate(&webapp_obj(json!({"image": "nginx", "replicas": "three"})));
        assert_eq!(
            strings(&errors),
            [
                r#"spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string""#
            ]
        );
        assert_eq!(errors[0].reason(), "FieldValueTypeInvalid");
        assert_eq!(errors[0].value, Some(json!("string")));
        let errors = s.validate(&webapp_obj(json!({"image": 5})));
        assert_eq!(
            strings(&errors),
            [
                r#"spec.image: Invalid value: "integer": spec.image in body must be of type string: "integer""#
            ]
        );
        let errors = s.validate(&webapp_obj(json!("nope")));
        assert_eq!(
            strings(&errors),
            [r#"spec: Invalid value: "string": spec in body must be of type object: "string""#]
        );
        for (v, t) in [
            (json!(true), "boolean"),
            (json!([]), "array"),
            (json!({}), "object"),
            (json!(1.5), "number"),
        ] {
            let errors = s.validate(&webapp_obj(json!({"image": v})));
            assert_eq!(
                strings(&errors),
                [format!(
                    r#"spec.image: Invalid value: "{t}": spec.image in body must be of type string: "{t}""#
                )]
            );
        }
    }

    #[test]
    fn minimum_message() {
        let s = webapp();
        let errors = s.validate(&webapp_obj(json!({"image": "nginx", "replicas": -1})));
        assert_eq!(
            strings(&errors),
            [
                "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0"
            ]
        );
        assert_eq!(errors[0].reason(), "FieldValueInvalid");
        assert_eq!(errors[0].value, Some(json!(-1)));
    }

    #[test]
    fn integer_accepts_integral_floats_only() {
        let s = webapp();
        assert!(
            s.validate(&webapp_obj(json!({"image": "nginx", "replicas": 3.0})))
                .is_empty()
        );
        assert_eq!(
            strings(&s.validate(&webapp_obj(json!({"image": "nginx", "replicas": 1.5})))),
            [
                r#"spec.replicas: Invalid value: "number": spec.replicas in body must be of type integer: "number""#
            ]
        );
        assert_eq!(
            strings(&s.validate(&webapp_obj(json!({"image": "nginx", "replicas": -1.5})))),
            [
                r#"spec.replicas: Invalid value: "number": spec.replicas in body must be of type integer: "number""#,
                "spec.replicas: Invalid value: -1.5: spec.replicas in body should be greater than or equal to 0",
            ]
        );
        // Numbers are accepted where a number is expected.
        assert!(check(json!({"n": {"type": "number"}}), json!({"n": 3})).is_empty());
    }

    #[test]
    fn several_errors_at_once_and_invalid_message() {
        let s = webapp();
        let mut obj = webapp_obj(json!({"replicas": -1, "port": "http"}));
        s.apply_defaults(&mut obj);
        let errors = s.validate(&obj);
        assert_eq!(
            strings(&errors),
            [
                r#"spec.port: Invalid value: "string": spec.port in body must be of type integer: "string""#,
                "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0",
                "spec.image: Required value",
            ]
        );
        assert_eq!(
            invalid_message("WebApp", "example.dev", "x", &errors[2..]),
            r#"WebApp.example.dev "x" is invalid: spec.image: Required value"#
        );
        assert_eq!(
            invalid_message("WebApp", "example.dev", "x", &errors[1..]),
            r#"WebApp.example.dev "x" is invalid: [spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0, spec.image: Required value]"#
        );
        let twice = [errors[2].clone(), errors[2].clone()];
        assert_eq!(
            invalid_message("WebApp", "", "x", &twice),
            r#"WebApp "x" is invalid: spec.image: Required value"#
        );
        assert_eq!(
            invalid_message("WebApp", "example.dev", "x", &[]),
            r#"WebApp.example.dev "x" is invalid"#
        );
    }

    // ---- defaulting --------------------------------------------------------------------------

    #[test]
    fn defaults_nested_in_defaults_lists_and_maps() {
        let s = spec_schema(json!({
            "template": {
                "type": "object",
                "default": {},
                "properties": {
                    "size": {"type": "integer", "default": 3},
                    "inner": {"type": "object", "default": {"x": 1}, "properties": {"y": {"type": "string", "default": "why"}}}
                }
            },
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "default": {"name": "dflt"},
                    "properties": {"name": {"type": "string"}, "weight": {"type": "integer", "default": 10}}
                }
            },
            "byName": {
                "type": "object",
                "additionalProperties": {"type": "object", "properties": {"on": {"type": "boolean", "default": true}}}
            }
        }));
        let mut obj = json!({"spec": {"items": [{"name": "a"}, {"name": "b", "weight": 2}, null], "byName": {"k": {}}}});
        s.apply_defaults(&mut obj);
        assert_eq!(
            obj,
            json!({"spec": {
                "template": {"size": 3, "inner": {"x": 1, "y": "why"}},
                "items": [{"name": "a", "weight": 10}, {"name": "b", "weight": 2}, {"name": "dflt", "weight": 10}],
                "byName": {"k": {"on": true}}
            }})
        );
    }

    #[test]
    fn defaults_replace_non_nullable_nulls_only() {
        let s = spec_schema(json!({
            "a": {"type": "string", "default": "A"},
            "b": {"type": "string", "nullable": true, "default": "B"}
        }));
        let mut obj = json!({"spec": {"a": null, "b": null}});
        s.apply_defaults(&mut obj);
        assert_eq!(obj, json!({"spec": {"a": "A", "b": null}}));
    }

    #[test]
    fn defaults_never_touch_root_metadata() {
        let s = Schema::new(&json!({
            "type": "object",
            "properties": {
                "metadata": {"type": "object", "properties": {"name": {"type": "string", "default": "dflt"}}},
                "kind": {"type": "string", "default": "Other"},
                "spec": {"type": "object", "default": {}}
            }
        }))
        .unwrap();
        let mut obj = json!({"metadata": {}, "kind": "WebApp"});
        s.apply_defaults(&mut obj);
        assert_eq!(obj, json!({"metadata": {}, "kind": "WebApp", "spec": {}}));
    }

    // ---- individual rules --------------------------------------------------------------------

    #[test]
    fn enum_messages() {
        let props = json!({"x": {"type": "string", "enum": ["a", "b"]}, "n": {"type": "number", "enum": [1, 2.5, "z"]}});
        assert!(check(props.clone(), json!({"x": "a", "n": 2.5})).is_empty());
        let errors = spec_schema(props.clone()).validate(&json!({"spec": {"x": "foo"}}));
        assert_eq!(
            strings(&errors),
            [r#"spec.x: Unsupported value: "foo": supported values: "a", "b""#]
        );
        assert_eq!(errors[0].reason(), "FieldValueNotSupported");
        assert_eq!(
            check(props.clone(), json!({"n": 3})),
            [r#"spec.n: Unsupported value: 3: supported values: "1", "2.5", "z""#]
        );
        assert_eq!(
            check(props, json!({"x": true})),
            [
                r#"spec.x: Invalid value: "boolean": spec.x in body must be of type string: "boolean""#,
                r#"spec.x: Unsupported value: true: supported values: "a", "b""#,
            ]
        );
    }

    #[test]
    fn enum_uses_go_conversions() {
        // The server converts the value to the enum value's Go type before comparing.
        let props =
            json!({"n": {"type": "number", "enum": [1]}, "f": {"type": "integer", "enum": [2.0]}});
        assert!(check(props.clone(), json!({"n": 1.0})).is_empty());
        assert!(check(props.clone(), json!({"n": 1.7})).is_empty());
        assert!(check(props, json!({"f": 2})).is_empty());
        let nullable = json!({"x": {"type": "string", "nullable": true, "enum": ["a"]}});
        assert_eq!(
            check(nullable, json!({"x": null})),
            [r#"spec.x: Unsupported value: null: supported values: "a""#]
        );
    }

    #[test]
    fn bounds_messages() {
        let props = json!({
            "max": {"type": "integer", "maximum": 10},
            "xmax": {"type": "integer", "maximum": 10, "exclusiveMaximum": true},
            "xmin": {"type": "integer", "minimum": 0, "exclusiveMinimum": true},
            "f": {"type": "number", "maximum": 1000000, "minimum": 0.5}
        });
        assert!(
            check(
                props.clone(),
                json!({"max": 10, "xmax": 9, "xmin": 1, "f": 0.5})
            )
            .is_empty()
        );
        assert_eq!(
            check(props.clone(), json!({"max": 11, "xmax": 10, "xmin": 0})),
            [
                "spec.max: Invalid value: 11: spec.max in body should be less than or equal to 10",
                "spec.xmax: Invalid value: 10: spec.xmax in body should be less than 10",
                "spec.xmin: Invalid value: 0: spec.xmin in body should be greater than 0",
            ]
        );
        assert_eq!(
            check(props.clone(), json!({"f": 2000000.5})),
            [
                "spec.f: Invalid value: 2.0000005e+06: spec.f in body should be less than or equal to 1e+06"
            ]
        );
        assert_eq!(
            check(props, json!({"f": 0.25})),
            ["spec.f: Invalid value: 0.25: spec.f in body should be greater than or equal to 0.5"]
        );
    }

    #[test]
    fn integer_bounds_are_truncated_like_the_server() {
        // For integer values the server compares against int64(bound).
        let props = json!({"n": {"type": "integer", "minimum": 0.5, "maximum": 10.9}});
        assert!(check(props.clone(), json!({"n": 0})).is_empty());
        assert_eq!(
            check(props, json!({"n": 11})),
            ["spec.n: Invalid value: 11: spec.n in body should be less than or equal to 10"]
        );
    }

    #[test]
    fn multiple_of_messages() {
        let props = json!({"i": {"type": "integer", "multipleOf": 2}, "f": {"type": "number", "multipleOf": 0.1}});
        assert!(check(props.clone(), json!({"i": -4, "f": 0.3})).is_empty());
        assert_eq!(
            check(props, json!({"i": 5, "f": 0.35})),
            [
                "spec.f: Invalid value: 0.35: spec.f in body should be a multiple of 0.1",
                "spec.i: Invalid value: 5: spec.i in body should be a multiple of 2",
            ]
        );
    }

    #[test]
    fn string_messages() {
        let props = json!({
            "max": {"type": "string", "maxLength": 3, "pattern": "^[a-z]+$"},
            "one": {"type": "string", "maxLength": 1},
            "min": {"type": "string", "minLength": 2},
            "pat": {"type": "string", "pattern": "^[a-z]+$"}
        });
        assert!(
            check(
                props.clone(),
                json!({"max": "abc", "min": "ab", "pat": "xyz"})
            )
            .is_empty()
        );
        assert!(
            check(
                json!({"u": {"type": "string", "maxLength": 3}}),
                json!({"u": "ééé"})
            )
            .is_empty()
        );
        let errors = spec_schema(props.clone()).validate(&json!({"spec": {"max": "ABCD"}}));
        // Only the first failing string check is reported.
        assert_eq!(
            strings(&errors),
            ["spec.max: Too long: may not be more than 3 bytes"]
        );
        assert_eq!(errors[0].reason(), "FieldValueTooLong");
        assert_eq!(errors[0].body(), "Too long: may not be more than 3 bytes");
        assert_eq!(
            check(props.clone(), json!({"one": "ab"})),
            ["spec.one: Too long: may not be more than 1 byte"]
        );
        assert_eq!(
            check(props.clone(), json!({"min": "a"})),
            [r#"spec.min: Invalid value: "a": spec.min in body should be at least 2 chars long"#]
        );
        assert_eq!(
            check(props, json!({"pat": "A1"})),
            [r#"spec.pat: Invalid value: "A1": spec.pat in body should match '^[a-z]+$'"#]
        );
    }

    #[test]
    fn patterns_have_go_semantics() {
        let props = json!({
            "d": {"type": "string", "pattern": "^\\d+$"},
            "w": {"type": "string", "pattern": "^[\\w-]+$"},
            "b": {"type": "string", "pattern": "\\bfoo\\b"},
            "brace": {"type": "string", "pattern": "^a{$"},
            "posix": {"type": "string", "pattern": "^[[:alpha:]]+$"},
            "quote": {"type": "string", "pattern": "^\\Q1+1\\E$"},
            "bracket": {"type": "string", "pattern": "^[a[]+$"}
        });
        assert!(check(
            props.clone(),
            json!({"d": "123", "w": "a-b_c", "b": "a foo b", "brace": "a{", "posix": "abc", "quote": "1+1", "bracket": "a[a"})
        )
        .is_empty());
        assert_eq!(check(props.clone(), json!({"d": "١٢٣"})).len(), 1);
        assert_eq!(check(props.clone(), json!({"w": "é"})).len(), 1);
        assert_eq!(check(props, json!({"b": "éfoo"})).len(), 0);
    }

    #[test]
    fn format_messages() {
        let props = json!({
            "t": {"type": "string", "format": "date-time"},
            "b": {"type": "string", "format": "byte"},
            "u": {"type": "string", "format": "uuid"},
            "d": {"type": "string", "format": "date"},
            "i32": {"type": "integer", "format": "int32"},
            "i64": {"type": "integer", "format": "int64"},
            "odd": {"type": "string", "format": "no-such-format"},
            "ip": {"type": "string", "format": "ipv4"},
            "short": {"type": "string", "format": "k8s-short-name"}
        });
        assert!(check(
            props.clone(),
            json!({
                "t": "2024-01-31T23:59:59.123+01:00", "b": "aGVsbG8=", "u": "123e4567-e89b-12d3-a456-426614174000",
                "d": "2024-02-29", "i32": 3000000000i64, "i64": 1, "odd": "anything", "ip": "010.1.1.1", "short": "a-b"
            })
        )
        .is_empty());
        let errors = spec_schema(props.clone()).validate(&json!({"spec": {"t": "yesterday"}}));
        assert_eq!(
            strings(&errors),
            [
                r#"spec.t: Invalid value: "yesterday": spec.t in body must be of type date-time: "yesterday""#
            ]
        );
        assert_eq!(errors[0].reason(), "FieldValueTypeInvalid");
        assert_eq!(
            check(
                props.clone(),
                json!({"b": "not base64!", "u": "nope", "d": "2023-02-29", "ip": "1.2.3", "short": "A"})
            ),
            [
                r#"spec.b: Invalid value: "not base64!": spec.b in body must be of type byte: "not base64!""#,
                r#"spec.d: Invalid value: "2023-02-29": spec.d in body must be of type date: "2023-02-29""#,
                r#"spec.ip: Invalid value: "1.2.3": spec.ip in body must be of type ipv4: "1.2.3""#,
                r#"spec.short: Invalid value: "A": spec.short in body must be of type k8s-short-name: "A""#,
                r#"spec.u: Invalid value: "nope": spec.u in body must be of type uuid: "nope""#,
            ]
        );
        // A non-string value for a string with a format is rejected with the format's name.
        assert_eq!(
            check(props.clone(), json!({"t": 5})),
            [
                r#"spec.t: Invalid value: "int64": spec.t in body must be of type date-time: "int64""#
            ]
        );
        // ... while an array slips through the server's type check.
        assert!(check(props, json!({"t": ["x"]})).is_empty());
    }

    #[test]
    fn array_messages() {
        let props = json!({
            "min": {"type": "array", "minItems": 1, "items": {"type": "string"}},
            "max": {"type": "array", "maxItems": 2},
            "one": {"type": "array", "maxItems": 1},
            "uniq": {"type": "array", "uniqueItems": true}
        });
        assert!(
            check(
                props.clone(),
                json!({"min": ["a"], "max": [1, 2], "uniq": [1, 1.0, "1"]})
            )
            .is_empty()
        );
        let errors =
            spec_schema(props.clone()).validate(&json!({"spec": {"max": ["a", "b", "c"]}}));
        assert_eq!(
            strings(&errors),
            ["spec.max: Too many: 3: must have at most 2 items"]
        );
        assert_eq!(errors[0].reason(), "FieldValueTooMany");
        assert_eq!(errors[0].value, Some(json!(3)));
        assert_eq!(
            check(props.clone(), json!({"one": [1, 2]})),
            ["spec.one: Too many: 2: must have at most 1 item"]
        );
        assert_eq!(
            check(props.clone(), json!({"min": []})),
            ["spec.min: Invalid value: 0: spec.min in body should have at least 1 items"]
        );
        assert_eq!(
            check(props, json!({"uniq": [{"a": 1}, {"a": 1}]})),
            [r#"spec.uniq: Invalid value: "": spec.uniq in body shouldn't contain duplicates"#]
        );
    }

    #[test]
    fn item_paths() {
        let props = json!({"items": {"type": "array", "items": {
            "type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}
        }}});
        assert_eq!(
            check(props, json!({"items": [{"name": 1}, {}, {"name": "ok"}]})),
            [
                r#"spec.items[0].name: Invalid value: "integer": spec.items[0].name in body must be of type string: "integer""#,
                "spec.items[1].name: Required value",
            ]
        );
    }

    #[test]
    fn object_messages() {
        let props = json!({
            "max": {"type": "object", "maxProperties": 1, "additionalProperties": {"type": "string"}},
            "min": {"type": "object", "minProperties": 2, "additionalProperties": {"type": "string"}},
            "labels": {"type": "object", "additionalProperties": {"type": "integer"}},
            "closed": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false}
        });
        assert!(check(props.clone(), json!({"max": {"a": "1"}, "min": {"a": "1", "b": "2"}, "labels": {"x": 1}, "closed": {"a": "x"}})).is_empty());
        assert_eq!(
            check(props.clone(), json!({"max": {"a": "1", "b": "2"}})),
            ["spec.max: Too many: 2: must have at most 1 item"]
        );
        assert_eq!(
            check(props.clone(), json!({"min": {"a": "1"}})),
            ["spec.min: Invalid value: 1: spec.min in body should have at least 2 properties"]
        );
        assert_eq!(
            check(props.clone(), json!({"labels": {"x": "y"}})),
            [
                r#"spec.labels.x: Invalid value: "string": spec.labels.x in body must be of type integer: "string""#
            ]
        );
        assert_eq!(
            check(props, json!({"closed": {"a": "x", "b": 1}})),
            [r#"spec.closed: Invalid value: "b": spec.closed.b in body is a forbidden property"#]
        );
    }

    #[test]
    fn nullable_and_null() {
        let props = json!({"n": {"type": "string", "nullable": true}, "s": {"type": "string"}});
        assert!(check(props.clone(), json!({"n": null})).is_empty());
        assert_eq!(
            check(props.clone(), json!({"s": null})),
            [r#"spec.s: Invalid value: "null": spec.s in body must be of type string: "null""#]
        );
        // Pruning drops the null of a non-nullable field without default, as the server does.
        let s = spec_schema(props);
        let mut obj = json!({"spec": {"n": null, "s": null}});
        assert!(s.prune(&mut obj).is_empty());
        assert_eq!(obj, json!({"spec": {"n": null}}));
        assert!(s.validate(&obj).is_empty());
        // Null list items stay and fail.
        let list = json!({"l": {"type": "array", "items": {"type": "string"}}});
        let s = spec_schema(list);
        let mut obj = json!({"spec": {"l": ["a", null]}});
        s.prune(&mut obj);
        assert_eq!(
            strings(&s.validate(&obj)),
            [
                r#"spec.l[1]: Invalid value: "null": spec.l[1] in body must be of type string: "null""#
            ]
        );
    }

    #[test]
    fn int_or_string() {
        let props = json!({"port": {"x-kubernetes-int-or-string": true}, "np": {"x-kubernetes-int-or-string": true, "nullable": true}});
        assert!(check(props.clone(), json!({"port": 80, "np": null})).is_empty());
        assert!(check(props.clone(), json!({"port": "http"})).is_empty());
        assert_eq!(
            check(props.clone(), json!({"port": true})),
            [
                r#"spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean""#
            ]
        );
        assert_eq!(
            check(props, json!({"port": null})),
            [
                r#"spec.port: Invalid value: "null": spec.port in body must be of type integer,string: "null""#
            ]
        );
    }

    #[test]
    fn int_or_string_with_any_of_matches_the_server() {
        // The same cases as the server's own tests.
        let s = Schema::new(&json!({"type": "object", "properties": {"field": {
            "nullable": true, "x-kubernetes-int-or-string": true,
            "anyOf": [{"type": "integer"}, {"type": "string"}]
        }}}))
        .unwrap();
        for ok in [
            json!({}),
            json!({"field": null}),
            json!({"field": 42}),
            json!({"field": "foo"}),
        ] {
            assert!(s.validate(&ok).is_empty(), "{ok}");
        }
        assert_eq!(
            sorted(strings(&s.validate(&json!({"field": true})))),
            [
                r#"<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)"#,
                r#"field: Invalid value: "boolean": field in body must be of type integer,string: "boolean""#,
                r#"field: Invalid value: "boolean": field in body must be of type integer: "boolean""#,
            ]
        );
        let s = Schema::new(&json!({"type": "object", "properties": {"field": {
            "nullable": true, "x-kubernetes-int-or-string": true,
            "allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}]
        }}}))
        .unwrap();
        let errors = s.validate(&json!({"field": 1.2}));
        assert_eq!(
            sorted(strings(&errors)),
            [
                r#"<nil>: Invalid value: "": "field" must validate all the schemas (allOf). None validated"#,
                r#"<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)"#,
                r#"field: Invalid value: "number": field in body must be of type integer,string: "number""#,
                r#"field: Invalid value: "number": field in body must be of type integer: "number""#,
            ]
        );
        assert!(
            errors
                .iter()
                .any(|e| e.field == "<nil>" && e.reason() == "FieldValueInvalid")
        );
    }

    #[test]
    fn composition_messages() {
        let props = json!({
            "any": {"type": "integer", "anyOf": [{"minimum": 5}, {"maximum": 1}]},
            "one": {"type": "integer", "oneOf": [{"minimum": 0}, {"maximum": 10}]},
            "all": {"type": "integer", "allOf": [{"minimum": 0}, {"maximum": 10}]},
            "not": {"type": "integer", "not": {"minimum": 100}}
        });
        assert!(
            check(
                props.clone(),
                json!({"any": 0, "one": 20, "all": 5, "not": 5})
            )
            .is_empty()
        );
        assert_eq!(
            check(props.clone(), json!({"any": 3})),
            [
                r#"<nil>: Invalid value: "": "spec.any" must validate at least one schema (anyOf)"#,
                "spec.any: Invalid value: 3: spec.any in body should be greater than or equal to 5",
            ]
        );
        assert_eq!(
            check(props.clone(), json!({"one": 5})),
            [
                r#"<nil>: Invalid value: "": "spec.one" must validate one and only one schema (oneOf). Found 2 valid alternatives"#
            ]
        );
        assert_eq!(
            check(props.clone(), json!({"all": 11})),
            [
                "spec.all: Invalid value: 11: spec.all in body should be less than or equal to 10",
                r#"<nil>: Invalid value: "": "spec.all" must validate all the schemas (allOf)"#,
            ]
        );
        assert_eq!(
            check(props.clone(), json!({"not": 200})),
            [r#"<nil>: Invalid value: "": "spec.not" must not validate the schema (not)"#]
        );
        let none =
            json!({"one": {"type": "integer", "oneOf": [{"minimum": 10}, {"maximum": -10}]}});
        assert_eq!(
            check(none, json!({"one": 0})),
            [
                r#"<nil>: Invalid value: "": "spec.one" must validate one and only one schema (oneOf). Found none valid"#,
                "spec.one: Invalid value: 0: spec.one in body should be greater than or equal to 10",
            ]
        );
        // Composition also applies to nested value validations.
        let nested = json!({"o": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}});
        assert!(check(nested.clone(), json!({"o": {"a": "x"}})).is_empty());
        assert_eq!(
            check(nested, json!({"o": {}})),
            [
                r#"<nil>: Invalid value: "": "spec.o" must validate one and only one schema (oneOf). Found none valid"#,
                "spec.o.a: Required value",
            ]
        );
    }

    #[test]
    fn cel_rules_are_ignored() {
        let props = json!({"a": {"type": "integer", "x-kubernetes-validations": [{"rule": "self > 10", "message": "too small"}]}});
        assert!(check(props, json!({"a": 1})).is_empty());
    }

    // ---- list types --------------------------------------------------------------------------

    fn list_schema() -> Schema {
        spec_schema(json!({
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "properties": {
                    "name": {"type": "string"}, "port": {"type": "integer"},
                    "subs": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "integer"}}
                }}},
            "pairs": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name", "protocol"],
                "items": {"type": "object", "properties": {"name": {"type": "string"}, "protocol": {"type": "string"}}}},
            "plain": {"type": "array", "items": {"type": "string"}},
            "atomic": {"type": "array", "x-kubernetes-list-type": "atomic", "items": {"type": "string"}},
            "selector": {"type": "object", "x-kubernetes-map-type": "atomic", "additionalProperties": {"type": "string"}},
            "maps": {"type": "object", "additionalProperties": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}}
        }))
    }

    #[test]
    fn list_set_duplicates() {
        let s = list_schema();
        let errors =
            s.validate(&json!({"spec": {"tags": ["a", "b", "a", "a", "b"], "plain": ["a", "a"]}}));
        assert_eq!(
            strings(&errors),
            [
                r#"spec.tags[2]: Duplicate value: "a""#,
                r#"spec.tags[4]: Duplicate value: "b""#
            ]
        );
        assert_eq!(errors[0].reason(), "FieldValueDuplicate");
        assert_eq!(
            strings(&s.validate(&json!({"spec": {"maps": {"k": ["x", "x"]}}}))),
            [r#"spec.maps[k][1]: Duplicate value: "x""#]
        );
    }

    #[test]
    fn list_map_duplicates() {
        let s = list_schema();
        assert!(
            s.validate(
                &json!({"spec": {"ports": [{"name": "a", "port": 1}, {"name": "b", "port": 1}]}})
            )
            .is_empty()
        );
        assert_eq!(
            strings(&s.validate(&json!({"spec": {"ports": [{"name": "a", "port": 1}, {"name": "a", "port": 2}, {"port": 3}, {}]}}))),
            [r#"spec.ports[1]: Duplicate value: {"name":"a"}"#, "spec.ports[3]: Duplicate value: {}"]
        );
        assert_eq!(
            strings(&s.validate(&json!({"spec": {"pairs": [
                {"name": "a", "protocol": "TCP"}, {"name": "a", "protocol": "UDP"}, {"protocol": "TCP", "name": "a"}
            ]}}))),
            [r#"spec.pairs[2]: Duplicate value: {"name":"a","protocol":"TCP"}"#]
        );
        assert_eq!(
            strings(&s.validate(&json!({"spec": {"ports": [{"name": "a", "subs": [1, 1]}]}}))),
            ["spec.ports[0].subs[1]: Duplicate value: 1"]
        );
        assert_eq!(
            strings(&s.validate(&json!({"spec": {"ports": [{"name": "a"}, "b"]}}))),
            [
                r#"spec.ports[1]: Invalid value: "string": spec.ports[1] in body must be of type object: "string""#,
                r#"spec.ports[1]: Invalid value: "b": must be an object for an array of list-type map"#,
            ]
        );
    }

    #[test]
    fn list_and_map_types_by_path() {
        let s = list_schema();
        assert_eq!(s.list_type(&["spec", "tags"]), ListType::Set);
        assert_eq!(
            s.list_type(&["spec", "ports"]),
            ListType::Map(vec!["name".into()])
        );
        assert_eq!(
            s.list_type(&["spec", "pairs"]),
            ListType::Map(vec!["name".into(), "protocol".into()])
        );
        assert_eq!(s.list_type(&["spec", "ports", "subs"]), ListType::Set);
        assert_eq!(s.list_type(&["spec", "plain"]), ListType::Atomic);
        assert_eq!(s.list_type(&["spec", "atomic"]), ListType::Atomic);
        assert_eq!(s.list_type(&["spec", "maps", "anykey"]), ListType::Set);
        assert_eq!(s.list_type(&["spec", "nope", "deeper"]), ListType::Atomic);
        assert_eq!(s.list_type(&[]), ListType::Atomic);
        assert!(s.map_is_atomic(&["spec", "selector"]));
        assert!(!s.map_is_atomic(&["spec"]));
        assert!(!s.map_is_atomic(&["spec", "maps"]));
        assert!(!s.map_is_atomic(&["spec", "unknown"]));
    }

    // ---- pruning -----------------------------------------------------------------------------

    #[test]
    fn prunes_unknown_fields_and_reports_paths() {
        let s = Schema::new(&json!({
            "type": "object",
            "properties": {
                "spec": {"type": "object", "properties": {
                    "image": {"type": "string"},
                    "items": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "nested": {"type": "object", "properties": {"kind": {"type": "string"}}}
                }},
                "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                    "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}}}
            }
        }))
        .unwrap();
        let mut obj = json!({
            "apiVersion": "example.dev/v1", "kind": "WebApp", "metadata": {"name": "x", "whatever": 1},
            "spec": {"image": "i", "foo": 1, "items": [{"name": "a", "extra": true}], "labels": {"any": "thing"},
                "nested": {"kind": "K", "apiVersion": "v1", "metadata": {}}},
            "status": {"free": {"form": [1, 2]}, "known": {"a": "x", "b": "y"}},
            "top": 1
        });
        let pruned = s.prune(&mut obj);
        assert_eq!(
            pruned,
            [
                "spec.foo",
                "spec.items[0].extra",
                "spec.nested.apiVersion",
                "spec.nested.metadata",
                "status.known.b",
                "top"
            ]
        );
        assert_eq!(
            obj,
            json!({
                "apiVersion": "example.dev/v1", "kind": "WebApp", "metadata": {"name": "x", "whatever": 1},
                "spec": {"image": "i", "items": [{"name": "a"}], "labels": {"any": "thing"}, "nested": {"kind": "K"}},
                "status": {"free": {"form": [1, 2]}, "known": {"a": "x"}}
            })
        );
        assert!(s.prune(&mut obj).is_empty());
    }

    #[test]
    fn root_type_meta_survives_schemas_that_do_not_mention_it() {
        let s = Schema::new(&json!({"type": "object", "properties": {"spec": {"type": "object"}}}))
            .unwrap();
        let mut obj =
            json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": "n"}, "spec": {"x": 1}});
        assert_eq!(s.prune(&mut obj), ["spec.x"]);
        assert_eq!(
            obj,
            json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": "n"}, "spec": {}})
        );
    }

    #[test]
    fn embedded_resources_keep_type_and_object_meta() {
        let s = spec_schema(json!({
            "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                "properties": {"spec": {"type": "object", "properties": {"a": {"type": "string"}}}}},
            "raw": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}
        }));
        let mut obj = json!({"spec": {
            "template": {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "p", "labels": {"a": "b"}, "bogus": 1, "annotations": {}, "uid": null,
                    "generation": 0, "deletionGracePeriodSeconds": 0},
                "spec": {"a": "x", "b": "y"}, "extra": 1},
            "raw": {"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"}, "metadata": null}
        }});
        let pruned = s.prune(&mut obj);
        assert_eq!(
            pruned,
            [
                "spec.template.extra",
                "spec.template.spec.b",
                "spec.template.metadata.bogus"
            ]
        );
        assert_eq!(
            obj,
            json!({"spec": {
                "template": {"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": "p", "labels": {"a": "b"}, "deletionGracePeriodSeconds": 0}, "spec": {"a": "x"}},
                "raw": {"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"}, "metadata": {}}
            }})
        );
        assert!(s.validate(&obj).is_empty());
    }

    #[test]
    fn embedded_resource_validation() {
        let s = spec_schema(json!({
            "template": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true},
            "list": {"type": "array", "items": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}
        }));
        assert_eq!(
            strings(&s.validate(&json!({"spec": {"template": {}}}))),
            [
                "spec.template.apiVersion: Required value",
                "spec.template.kind: Required value"
            ]
        );
        assert_eq!(
            strings(&s.validate(&json!({"spec": {"list": [{"apiVersion": "a/b/c", "kind": 5, "metadata": {"name": "a/b", "namespace": "Bad"}}]}}))),
            [
                r#"spec.list[0].apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c"#,
                "spec.list[0].kind: Invalid value: 5: must be a string",
                r#"spec.list[0].metadata.name: Invalid value: "a/b": may not contain '/'"#,
                r#"spec.list[0].metadata.namespace: Invalid value: "Bad": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"#,
            ]
        );
        assert_eq!(
            strings(&s.validate(&json!({"spec": {"template": {"apiVersion": "", "kind": "my_kind", "metadata": {"labels": "x"}}}}))),
            [
                r#"spec.template.apiVersion: Invalid value: "": must not be empty"#,
                r#"spec.template.kind: Invalid value: "my_kind": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"#,
                r#"spec.template.metadata: Invalid value: {"labels":"x"}: json: cannot unmarshal string into Go struct field ObjectMeta.labels of type map[string]string"#,
            ]
        );
        assert!(s.validate(&json!({"spec": {"template": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "ok"}}}})).is_empty());
    }

    #[test]
    fn additional_properties_false_keeps_scalars_but_prunes_inside_objects() {
        // The server prunes values of `additionalProperties: false` against no schema at all.
        let s = spec_schema(json!({"o": {"type": "object", "additionalProperties": false}}));
        let mut obj = json!({"spec": {"o": {"x": 1, "y": {"z": 1}}}});
        assert_eq!(s.prune(&mut obj), ["spec.o.y.z"]);
        assert_eq!(obj, json!({"spec": {"o": {"x": 1, "y": {}}}}));
    }

    // ---- schema compilation ------------------------------------------------------------------

    #[test]
    fn schema_errors() {
        let err = Schema::new(
            &json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "["}}}),
        )
        .unwrap_err();
        assert!(
            matches!(&err, SchemaError::InvalidPattern { path, pattern, .. } if path == "openAPIV3Schema.properties[a]" && pattern == "[")
        );
        assert!(
            err.to_string()
                .starts_with("openAPIV3Schema.properties[a].pattern: Invalid value: \"[\"")
        );
        assert_eq!(
            err.to_string(),
            "openAPIV3Schema.properties[a].pattern: Invalid value: \"[\": must be a valid regular expression, but isn't: error parsing regexp: unclosed character class: `[`"
        );
        let err =
            Schema::new(&json!({"type": "array", "items": [{"type": "string"}]})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "openAPIV3Schema.items: Forbidden: items must be a schema object and not an array"
        );
        let err = Schema::new(&json!({"properties": {"a": {"$ref": "#/x"}}})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "openAPIV3Schema.properties[a].$ref: Forbidden: $ref is not supported"
        );
        for bad in [
            json!("string"),
            json!({"type": "array", "items": [{"type": "string"}]}),
            json!({"$ref": "#/definitions/x"}),
            json!({"type": "foo"}),
            json!({"type": ["string"]}),
            json!({"type": "null"}),
            json!({"type": "object", "definitions": {"a": {}}}),
            json!({"type": "object", "properties": {"a": 1}}),
            json!({"type": "object", "patternProperties": {"a": {}}}),
            json!({"type": "array", "x-kubernetes-list-type": "bag"}),
            json!({"type": "integer", "minimum": "zero"}),
            json!({"type": "string", "maxLength": 1.5}),
        ] {
            assert!(Schema::new(&bad).is_err(), "{bad}");
        }
        assert!(Schema::new(&json!({})).is_ok());
    }

    // ---- formatting helpers ------------------------------------------------------------------

    #[test]
    fn go_formatting() {
        assert_eq!(
            go_quote("a\"b\\\n\t\u{7}\u{7f}é\u{a0}\u{1F600}"),
            "\"a\\\"b\\\\\\n\\t\\a\\x7fé\\u00a0\u{1F600}\""
        );
        assert_eq!(go_float_v(1e6), "1e+06");
        assert_eq!(go_float_v(123456.0), "123456");
        assert_eq!(go_float_v(1234567.0), "1.234567e+06");
        assert_eq!(go_float_v(0.0001), "0.0001");
        assert_eq!(go_float_v(0.00001), "1e-05");
        assert_eq!(go_float_v(-1.5), "-1.5");
        assert_eq!(go_float_v(3.0), "3");
        assert_eq!(go_float_json(1e21), "1e+21");
        assert_eq!(go_float_json(1e20), "100000000000000000000");
        assert_eq!(go_float_json(1e-7), "1e-7");
        assert_eq!(go_float_json(0.5), "0.5");
        assert_eq!(
            go_json(&json!({"b": [1, 2.5, null, true], "a": "<&>\u{1}"})),
            r#"{"a":"\u003c\u0026\u003e\u0001","b":[1,2.5,null,true]}"#
        );
        assert_eq!(
            go_bad_value(&json!(18446744073709551615u64)),
            "1.8446744073709552e+19"
        );
        let e = FieldError::not_supported("f", json!("x"), &["a", "b\"c"]);
        assert_eq!(
            e.to_string(),
            r#"f: Unsupported value: "x": supported values: "a", "b\"c""#
        );
        assert_eq!(
            FieldError::duplicate("f[1]", json!(null)).to_string(),
            "f[1]: Duplicate value: null"
        );
        assert_eq!(
            FieldError::invalid("f", json!(false), "bad").reason(),
            "FieldValueInvalid"
        );
    }

    #[test]
    fn string_format_checks() {
        assert!(validates_format("date-time", "2024-01-01t10:00:00Z"));
        assert!(validates_format("datetime", "2024-01-01T10:00:00.5-07:00"));
        assert!(!validates_format("date-time", "2024-01-01T24:00:00Z"));
        assert!(!validates_format("date-time", "2024-01-01"));
        assert!(!validates_format("date", "2024-1-01"));
        assert!(validates_format("byte", "aGk="));
        assert!(!validates_format("byte", ""));
        assert!(validates_format("uuid", "123E4567E89B12D3A456426614174000"));
        assert!(validates_format(
            "uuid4",
            "123e4567-e89b-42d3-a456-426614174000"
        ));
        assert!(!validates_format(
            "uuid4",
            "123e4567-e89b-12d3-a456-426614174000"
        ));
        assert!(validates_format("ipv4", "192.168.0.1"));
        assert!(validates_format("ipv4", "::ffff:1.2.3.4"));
        assert!(!validates_format("ipv4", "256.1.1.1"));
        assert!(validates_format("ipv6", "fe80::1"));
        assert!(validates_format("ipv6", "::"));
        assert!(!validates_format("ipv6", "fe80::1%eth0"));
        assert!(!validates_format("ipv6", "1:2:3:4:5:6:7:8:9"));
        assert!(!validates_format("ipv6", "1.2.3.4"));
        assert!(validates_format("cidr", "10.0.0.0/8"));
        assert!(validates_format("cidr", "fd00::/64"));
        assert!(!validates_format("cidr", "10.0.0.0/33"));
        assert!(!validates_format("cidr", "10.0.0.0"));
        assert!(validates_format("mac", "01:23:45:67:89:ab"));
        assert!(validates_format("mac", "0123.4567.89ab"));
        assert!(!validates_format("mac", "01:23:45:67:89"));
        assert!(!validates_format("mac", "01:23-45:67:89:ab"));
        assert!(validates_format("hostname", "example.com"));
        assert!(validates_format("hostname", "localhost"));
        assert!(!validates_format("hostname", "-bad.com"));
        assert!(validates_format("duration", "1h30m"));
        assert!(validates_format("duration", "-1.5s"));
        assert!(validates_format("duration", "3 days"));
        assert!(!validates_format("duration", "5 parsecs"));
        assert!(!validates_format("duration", ""));
        assert!(validates_format("email", "a.b@example.com"));
        assert!(validates_format("email", "Jane Doe <jane@example.com>"));
        assert!(!validates_format("email", "not-an-email"));
        assert!(!validates_format("email", "a..b@example.com"));
        assert!(validates_format("uri", "https://example.com/a?b=c"));
        assert!(validates_format("uri", "/relative/path"));
        assert!(validates_format("uri", "mailto:a@b"));
        assert!(!validates_format("uri", "relative/path"));
        assert!(!validates_format("uri", "http://exa mple.com/"));
        assert!(!validates_format("uri", "http://host:port/"));
        assert!(!validates_format("uri", "/bad%zz"));
        assert!(validates_format("isbn", "978-0321751041"));
        assert!(validates_format("isbn10", "0321751043"));
        assert!(!validates_format("isbn13", "9780321751042"));
        assert!(validates_format("creditcard", "4111 1111 1111 1111"));
        assert!(!validates_format("creditcard", "4111 1111 1111 1112"));
        assert!(validates_format("ssn", "123-45-6789"));
        assert!(validates_format("hexcolor", "#ffF"));
        assert!(validates_format("rgbcolor", "rgb(255, 0,10)"));
        assert!(!validates_format("rgbcolor", "rgb(256,0,0)"));
        assert!(validates_format("bsonobjectid", "507f1f77bcf86cd799439011"));
        assert!(validates_format("k8s-long-name", "a.b-c"));
        assert!(!validates_format("k8s-long-name", "a.-"));
        assert!(validates_format("password", ""));
    }

    #[test]
    fn hostname_matches_the_reference_pattern() {
        let hn = "a-zA-Z0-9\\p{S}\\p{L}";
        let reference = regex::RegexBuilder::new(&format!(
            "^([{hn}]((-?[{hn}]{{0,62}})?)|([{hn}](([{hn}\\-]{{0,61}}[{hn}])?)(\\.)){{1,}}([a-zA-Z\\p{{L}}]){{2,63}})$"
        ))
        .size_limit(256 << 20)
        .build()
        .unwrap();
        let long = "a".repeat(63);
        let longer = "a".repeat(64);
        let mut inputs: Vec<String> = [
            "",
            "a",
            "-",
            "a-",
            "-a",
            "a-b",
            "a-b-c",
            "a--b",
            "ab-cd",
            "localhost",
            "x.y",
            "a.bc",
            "a.b1",
            "a.b-c",
            "example.com",
            "sub.example.com",
            "a-.com",
            "-a.com",
            "a-b.com",
            "a--b.com",
            "a..com",
            ".com",
            "com.",
            "münchen.de",
            "☃.net",
            "a☃b.com",
            "a.☃☃",
            "$.com",
            "a b.com",
            "a_b.com",
            "1.2.3.4",
            "a.b.c.d.ef",
        ]
        .iter()
        .map(ToString::to_string)
        .collect();
        inputs.extend([
            long.clone(),
            longer.clone(),
            format!("a-{long}"),
            format!("a-{}", "b".repeat(62)),
            format!("{long}.com"),
            format!("{longer}.com"),
            format!("a.{}", "c".repeat(63)),
            format!("a.{}", "c".repeat(64)),
            format!("a{}a.com", "-".repeat(61)),
        ]);
        for input in &inputs {
            let expected = reference.is_match(input)
                && input.len() <= 255
                && input.split('.').all(|p| p.len() <= 63);
            assert_eq!(is_hostname(input), expected, "{input:?}");
        }
    }

    // ---- robustness --------------------------------------------------------------------------

    #[test]
    fn no_panic_on_odd_schemas_and_values() {
        let schemas = [
            json!({}),
            json!({"type": "object"}),
            json!({"type": "array"}),
            json!({"x-kubernetes-preserve-unknown-fields": true}),
            json!({"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}),
            json!({"type": "object", "additionalProperties": true}),
            json!({"type": "object", "additionalProperties": false, "minProperties": -1, "maxProperties": 0}),
            json!({"type": "string", "format": "date-time", "minLength": -5, "maxLength": 0, "enum": []}),
            json!({"type": "integer", "format": "int32", "multipleOf": 0.5, "minimum": -1e300, "maximum": 1e300}),
            json!({"type": "number", "multipleOf": 1e-300, "exclusiveMinimum": true}),
            json!({"type": "array", "x-kubernetes-list-type": "map", "items": {"type": "object"}}),
            json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["a", "b"], "minItems": 99, "uniqueItems": true}),
            json!({"type": "object", "required": ["a", "a"], "properties": {"a": {"type": "object", "default": {"b": null}, "nullable": true,
                "properties": {"b": {"type": "array", "default": [null], "items": {"type": "string", "default": "d"}}}}}}),
            json!({"allOf": [{}, {"not": {}}], "anyOf": [{"anyOf": [{"oneOf": [{}, {}]}]}], "oneOf": [{"enum": [null, {"a": [1.5]}]}]}),
            json!({"type": "object", "properties": {"spec": {"x-kubernetes-int-or-string": true, "pattern": "^(a|b)*$", "format": "ipv6"}},
                "additionalProperties": {"type": "array", "items": {"type": "array", "x-kubernetes-list-type": "set"}}}),
        ];
        let values = [
            json!(null),
            json!(0),
            json!(-0.0),
            json!(18446744073709551615u64),
            json!(-9223372036854775808i64),
            json!(1.7976931348623157e308),
            json!("é\u{0}\u{10FFFF}"),
            json!([]),
            json!([null, [null, [null]], {"": {}}]),
            json!({"spec": null, "apiVersion": 1, "kind": [], "metadata": "m", "a": {"b": [1, 1, {"a": 1}, {"a": 1}]}}),
            json!({"spec": {"a": 1}, "x": [[1, 1], [1, 1]], "y": [{"a": 1, "b": 2}, null, {"a": 1, "b": 2}, "s"]}),
            json!({"a": null, "b": {"c": [null, "x"]}}),
        ];
        for schema in &schemas {
            let s = Schema::new(schema).unwrap();
            for value in &values {
                let mut v = value.clone();
                let _ = s.prune(&mut v);
                s.apply_defaults(&mut v);
                for e in s.validate(&v).iter().chain(s.validate(value).iter()) {
                    let _ = (e.to_string(), e.reason(), e.body());
                }
                let _ = invalid_message("K", "g", "n", &s.validate(value));
                for path in [&[][..], &["spec"][..], &["a", "b", "c"][..], &[""][..]] {
                    let _ = (s.list_type(path), s.map_is_atomic(path));
                }
            }
        }
        for p in [
            "[",
            "a{",
            "\\Q",
            "[[:",
            "[]",
            "[^]]",
            "x{2,1}",
            "\\",
            "(?P<n>a)",
            "[a-\\d]",
            "\\pL{1,2}",
        ] {
            let _ = Schema::new(&json!({"type": "string", "pattern": p}));
        }
        for f in [
            "ipv6",
            "ipv4",
            "cidr",
            "mac",
            "uri",
            "email",
            "duration",
            "datetime",
            "date",
            "isbn",
            "creditcard",
            "hostname",
        ] {
            for s in [
                "",
                ":",
                "::",
                "%",
                "%%",
                "/",
                "[",
                "1.2.3.4/",
                "a@",
                "@",
                "<>",
                "\"",
                "\"\"@x",
                "9".repeat(40).as_str(),
                "é::1",
                "1:2:3:4:5:6:1.2.3.4",
            ] {
                let _ = validates_format(f, s);
            }
        }
    }
}
