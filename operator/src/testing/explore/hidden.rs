//! Values the author hides from the comparison of settled states with [`Explore::normalize`](super::Explore::normalize)
//! (a generated password, a random suffix) stay checked: each must keep the value it was first written with. A run
//! notes every value the author's normalizers change in each object the operator writes, right after the write;
//! a later write that leaves another value there is a change. A perturbed run that changes a hidden value the
//! unperturbed run never changes (a password regenerated because a stale cache missed its Secret) is a finding.

use std::collections::{BTreeSet, HashMap};

use serde_json::Value;

use super::state::{self, Normalizer};

/// A hidden value that a write changed after it was first written.
#[derive(Debug, Clone)]
pub(super) struct Changed {
    /// `apiVersion Kind namespace/name`, as the settled state names the object.
    pub(super) object: String,
    /// Where in the object, as a JSON pointer (`/data/password`).
    pub(super) pointer: String,
    /// The write that changed it, counted from 1 over the run.
    pub(super) write: usize,
    /// That write, e.g. `apply Secret default/db`.
    pub(super) what: String,
}

impl Changed {
    /// What tells one hidden value from another across runs: the object and the pointer.
    pub(super) fn key(&self) -> (String, String) {
        (self.object.clone(), self.pointer.clone())
    }
}

/// The hidden values a run's writes left, and the changes to them.
pub(super) struct Hidden {
    normalizers: Vec<Normalizer>,
    /// By object, then pointer: the value first written.
    first: HashMap<String, HashMap<String, Value>>,
    changed: Vec<Changed>,
}

impl Hidden {
    pub(super) fn new(normalizers: Vec<Normalizer>) -> Self {
        Self {
            normalizers,
            first: HashMap::new(),
            changed: Vec::new(),
        }
    }

    /// Whether there is anything to watch: the author hides something.
    pub(super) fn watching(&self) -> bool {
        !self.normalizers.is_empty()
    }

    /// Notes the hidden values of `object` as the server holds it right after write `write` (`what`); a value
    /// unlike the one first written there is a change.
    pub(super) fn observe(&mut self, write: usize, what: &str, object: &Value) {
        let (identity, values) = hidden_values(object, &self.normalizers);
        let first = self.first.entry(identity.clone()).or_default();
        for (pointer, value) in values {
            match first.get(&pointer) {
                None => {
                    first.insert(pointer, value);
                }
                Some(before) if *before != value => {
                    first.insert(pointer.clone(), value);
                    self.changed.push(Changed {
                        object: identity.clone(),
                        pointer,
                        write,
                        what: what.to_string(),
                    });
                }
                Some(_) => {}
            }
        }
    }

    /// The changes, in the order of the writes.
    pub(super) fn changed(&self) -> Vec<Changed> {
        self.changed.clone()
    }
}

/// The changes of a perturbed run to hidden values the reference never changes, as the oracle's problems (the
/// first change of each value).
pub(super) fn problems(reference: &[Changed], ran: &[Changed]) -> Vec<String> {
    let allowed: BTreeSet<(String, String)> = reference.iter().map(Changed::key).collect();
    let mut told = BTreeSet::new();
    ran.iter()
        .filter(|c| !allowed.contains(&c.key()) && told.insert(c.key()))
        .map(|c| {
            format!(
                "write {} ({}) changed {} of {} after it was first written; `.normalize` hides that value from \
                 the comparison, and the unperturbed run never changes it",
                c.write, c.what, c.pointer, c.object
            )
        })
        .collect()
}

/// The object's identity as the settled state names it, and every value the author's normalizers change in
/// it (after the explorer's own normalization, as in the settled state), by JSON pointer.
fn hidden_values(object: &Value, normalizers: &[Normalizer]) -> (String, Vec<(String, Value)>) {
    let mut base = object.clone();
    state::normalize(&mut base, &HashMap::new());
    let mut masked = base.clone();
    for n in normalizers {
        n(&mut masked);
    }
    let mut out = Vec::new();
    differing(&base, &masked, &mut String::new(), &mut out);
    (state::identity(&base), out)
}

/// The values of `base` where `masked` differs from it (removed or replaced), down to the leaves both share.
fn differing(base: &Value, masked: &Value, at: &mut String, out: &mut Vec<(String, Value)>) {
    match (base, masked) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in a {
                let len = at.len();
                at.push('/');
                at.push_str(&k.replace('~', "~0").replace('/', "~1"));
                match b.get(k) {
                    Some(w) => differing(v, w, at, out),
                    None => out.push((at.clone(), v.clone())),
                }
                at.truncate(len);
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (v, w)) in a.iter().zip(b).enumerate() {
                let len = at.len();
                at.push_str(&format!("/{i}"));
                differing(v, w, at, out);
                at.truncate(len);
            }
        }
        (a, b) if a != b => out.push((at.clone(), a.clone())),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;

    fn password_hidden() -> Vec<Normalizer> {
        vec![Arc::new(|o: &mut Value| {
            if o["kind"] == "Secret" {
                o["data"]["password"] = json!("<random>");
            }
        })]
    }

    fn secret(password: &str, note: &str) -> Value {
        json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "db", "namespace": "default", "resourceVersion": note},
            "data": {"password": password, "user": note},
        })
    }

    #[test]
    fn a_hidden_value_that_changes_is_noted_and_others_are_not() {
        let mut hidden = Hidden::new(password_hidden());
        hidden.observe(1, "create Secret default/db", &secret("one", "a"));
        hidden.observe(2, "apply Secret default/db", &secret("one", "b"));
        assert!(hidden.changed().is_empty(), "{:?}", hidden.changed());
        hidden.observe(3, "apply Secret default/db", &secret("two", "b"));
        let changed = hidden.changed();
        assert_eq!(changed.len(), 1);
        assert_eq!(changed[0].pointer, "/data/password");
        assert_eq!(changed[0].object, "v1 Secret default/db");
        assert_eq!(changed[0].write, 3);
    }

    #[test]
    fn only_changes_the_reference_does_not_make_are_problems() {
        let mut reference = Hidden::new(password_hidden());
        reference.observe(1, "create Secret default/db", &secret("one", "a"));
        let mut ran = Hidden::new(password_hidden());
        ran.observe(1, "create Secret default/db", &secret("x", "a"));
        ran.observe(2, "apply Secret default/db", &secret("y", "a"));
        ran.observe(3, "apply Secret default/db", &secret("z", "a"));
        let problems = problems(&reference.changed(), &ran.changed());
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].starts_with("write 2 (apply Secret default/db) changed /data/password")
        );
        reference.observe(2, "apply Secret default/db", &secret("two", "a"));
        assert!(super::problems(&reference.changed(), &ran.changed()).is_empty());
    }

    #[test]
    fn a_removed_field_is_hidden_too() {
        let normalizers: Vec<Normalizer> = vec![Arc::new(|o: &mut Value| {
            if let Some(d) = o["data"].as_object_mut() {
                d.remove("password");
            }
        })];
        let (identity, values) = hidden_values(&secret("one", "a"), &normalizers);
        assert_eq!(identity, "v1 Secret default/db");
        assert_eq!(values, vec![("/data/password".to_string(), json!("one"))]);
    }
}
