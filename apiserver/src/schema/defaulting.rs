//! Defaulting: `default`s applied to missing fields and to `null`s of non-nullable fields.

use serde_json::Value;

use super::compile::is_meta_key;
use super::go_format::sorted_keys;
use super::node::{Additional, Node};

pub(super) fn default_value(x: &mut Value, s: &Node, root: bool) {
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
