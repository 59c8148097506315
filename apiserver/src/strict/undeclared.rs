//! The fields of a server-side apply configuration that the kind's schema does not declare, named as
//! structured-merge-diff names them (`.spec.foo`, `.spec.containers[name="app"].bogus`).

use serde_json::Value;

use crate::managed_fields::{ListType, Schema};
use crate::registry::ResourceType;

/// The undeclared fields of `applied`, in structured-merge-diff's path form.
pub fn undeclared(rt: &ResourceType, applied: &Value, schema: &dyn Schema) -> Vec<String> {
    crate::validation::undeclared_paths(rt, applied)
        .iter()
        .map(|p| smd_path(p, applied, schema))
        .collect()
}

/// One step of a dotted path.
enum Step {
    Field(String),
    Index(usize),
}

fn steps(dotted: &str) -> Vec<Step> {
    let mut out = Vec::new();
    let mut field = String::new();
    let mut chars = dotted.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '.' => {
                if !field.is_empty() {
                    out.push(Step::Field(std::mem::take(&mut field)));
                }
            }
            '[' => {
                if !field.is_empty() {
                    out.push(Step::Field(std::mem::take(&mut field)));
                }
                let mut n = String::new();
                for d in chars.by_ref() {
                    if d == ']' {
                        break;
                    }
                    n.push(d);
                }
                out.push(Step::Index(n.parse().unwrap_or(0)));
            }
            c => field.push(c),
        }
    }
    if !field.is_empty() {
        out.push(Step::Field(field));
    }
    out
}

/// A dotted path (`spec.containers[0].x`) in structured-merge-diff's form, items of associative lists named
/// by their keys (`[name="app"]`) and items of sets by their value (`[="a"]`).
fn smd_path(dotted: &str, obj: &Value, schema: &dyn Schema) -> String {
    let mut out = String::new();
    let mut fields: Vec<String> = Vec::new();
    let mut at = Some(obj);
    for step in steps(dotted) {
        match step {
            Step::Field(f) => {
                out.push('.');
                out.push_str(&f);
                at = at.and_then(|v| v.get(&f));
                fields.push(f);
            }
            Step::Index(i) => {
                let item = at.and_then(|v| v.get(i));
                let names: Vec<&str> = fields.iter().map(String::as_str).collect();
                let element = match (schema.list_type(&names), item) {
                    (ListType::Map(keys), Some(item)) if !keys.is_empty() => {
                        let mut keys = keys.clone();
                        keys.sort();
                        let parts: Vec<String> = keys
                            .iter()
                            .map(|k| format!("{k}={}", item.get(k).unwrap_or(&Value::Null)))
                            .collect();
                        format!("[{}]", parts.join(","))
                    }
                    (ListType::Set, Some(item)) => format!("[={item}]"),
                    _ => format!("[{i}]"),
                };
                out.push_str(&element);
                at = item;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    struct Containers;
    impl Schema for Containers {
        fn list_type(&self, path: &[&str]) -> ListType {
            if path == ["spec", "containers"] {
                ListType::Map(vec!["name".into()])
            } else {
                ListType::Atomic
            }
        }
    }

    #[test]
    fn items_of_associative_lists_are_named_by_their_keys() {
        let obj = json!({"spec": {"containers": [{"name": "app", "x": 1}], "args": ["a"]}});
        assert_eq!(
            smd_path("spec.containers[0].x", &obj, &Containers),
            r#".spec.containers[name="app"].x"#
        );
        assert_eq!(smd_path("spec.foo", &obj, &Containers), ".spec.foo");
    }
}
