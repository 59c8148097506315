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
//! * `x-kubernetes-validations` (CEL rules) are compiled with the schema (a rule that does not parse
//!   makes the CRD invalid) and evaluated by [`Schema::validate_rules`] after the checks above, unless one
//!   of their errors is blocking (a wrong type, a missing required field, an unsupported value, a bound
//!   exceeded), exactly as the server does; see `rules/` for what is evaluated and how.
//! * The root `apiVersion`, `kind` and `metadata` are never pruned, defaulted or validated here; the
//!   caller handles them.
//!
//! Known approximations: rules are parsed and type-checked only as far as the schema pins types down
//! (undefined fields, comparisons of mismatched types, rules that are not bools), so another type error is
//! refused by the server when the CRD is created and here only fails when it is evaluated; the server's cost
//! estimate (which refuses rules over unbounded lists, maps and strings) is not made. The real server walks Go maps, so the order of its errors varies between
//! requests, while here keys are visited in sorted order; the `email` and `uri` formats approximate
//! Go's `net/mail` and `net/url` parsers; embedded `metadata` is checked only for field types,
//! name, generateName and namespace (not labels, annotations, owner references).

mod compile;
mod defaulting;
mod embedded;
mod errors;
mod formats;
pub(crate) mod go_format;
mod go_regex;
mod list_types;
mod node;
mod pruning;
mod ratcheting;
mod rules;
#[cfg(test)]
mod tests;
mod validation;
mod verdict;

use serde_json::Value;

use compile::parse_node;
use defaulting::default_value;
pub(crate) use embedded::dns1035_label_errors;
use embedded::embedded_validate;
pub use errors::{FieldError, ListType, SchemaError};
use list_types::list_validate_map;
use node::{Additional, Node};
use pruning::{Tracker, coerce, prune_nulls, prune_rec};
pub(crate) use rules::{Decl as CelDecl, Type as CelType, check_declared as check_cel};
use validation::{to_field_error, validate_schema};

/// A compiled structural schema (one CRD version's `schema.openAPIV3Schema`), with its CEL rules.
#[derive(Debug, Clone)]
pub struct Schema {
    root: Node,
}
impl Schema {
    /// Compiles a CRD version's `schema.openAPIV3Schema` (the JSON exactly as in the CRD).
    /// Regular expressions are compiled once, here. Fails on invalid patterns, `items` given as an
    /// array, unsupported keywords (`$ref`, `patternProperties`, ...) and malformed keywords.
    pub fn new(open_api_v3_schema: &Value) -> Result<Schema, SchemaError> {
        let root = parse_node(open_api_v3_schema, "openAPIV3Schema")?;
        let over_budget = rules::budget_errors(&root);
        if !over_budget.is_empty() {
            return Err(SchemaError::Rules(over_budget));
        }
        Ok(Schema { root })
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
    /// (`Duplicate value`) errors. `x-kubernetes-validations` are evaluated by [`Schema::validate_rules`].
    pub fn validate(&self, obj: &Value) -> Vec<FieldError> {
        self.validate_update(obj, None)
    }

    /// [`Schema::validate`] on an update of `old` (when given): OpenAPI schema errors under values the
    /// update left unchanged are ratcheted away (see `ratcheting.rs`).
    pub fn validate_update(&self, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let mut errors = validate_schema(&self.root, "", obj, true).errors;
        if let Some(old) = old {
            errors = ratcheting::ratchet(errors, &self.root, obj, old);
        }
        let mut out: Vec<FieldError> = errors.into_iter().map(to_field_error).collect();
        embedded_validate(obj, Some(&self.root), "", true, &mut out);
        if let Value::Object(m) = obj {
            list_validate_map(m, &self.root, "", true, &mut out);
        }
        out
    }

    /// Evaluates the `x-kubernetes-validations` rules on `obj` (with the stored `old` object on update),
    /// after the checks that found `earlier` errors: when one of those is blocking, no rule runs and the
    /// server's `some validation rules were not checked` error is returned instead. Returns the errors,
    /// and the warnings of rules that failed on values the update left unchanged (ratcheting: such an
    /// object is still accepted, as by the server).
    pub fn validate_rules(
        &self,
        obj: &Value,
        old: Option<&Value>,
        earlier: &[FieldError],
    ) -> (Vec<FieldError>, Vec<String>) {
        // The server has no CEL validator for a schema without rules, and so no blocking error.
        if !rules::has_rules(&self.root) {
            return (Vec::new(), Vec::new());
        }
        if earlier.iter().any(rules::is_blocking) {
            return (vec![rules::blocking_error()], Vec::new());
        }
        let (errors, ratcheted) = rules::validate(&self.root, obj, old);
        (errors, ratcheted.into_iter().map(|r| r.0).collect())
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
