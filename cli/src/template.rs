//! The templates of a generated crate (`cli/templates/`, compiled into the binary) and how they are filled:
//! each `{{key}}` replaced by its value, with no other syntax.

use std::collections::BTreeMap;

use crate::names::{ApiVersion, CrateName, Group, Kind};

/// A file of the generated crate: its path inside the crate, and its template.
#[derive(Debug, Clone, Copy)]
pub struct Template {
    /// The file's path in the crate, itself a template (`src/{{kind_module}}.rs`).
    pub path: &'static str,
    /// The file's text, with `{{key}}` placeholders.
    pub text: &'static str,
    /// Whether the file is a script to make executable.
    pub executable: bool,
}

const fn file(path: &'static str, text: &'static str) -> Template {
    Template {
        path,
        text,
        executable: false,
    }
}

/// The files `new` writes besides those of the first kind ([`KIND`]).
pub const CRATE: &[Template] = &[
    file(
        "Cargo.toml",
        include_str!("../templates/crate/Cargo.toml.tmpl"),
    ),
    file(
        "README.md",
        include_str!("../templates/crate/README.md.tmpl"),
    ),
    file(
        "Dockerfile",
        include_str!("../templates/crate/Dockerfile.tmpl"),
    ),
    file(
        ".dockerignore",
        include_str!("../templates/crate/dockerignore.tmpl"),
    ),
    file(
        ".gitignore",
        include_str!("../templates/crate/gitignore.tmpl"),
    ),
    Template {
        path: ".ci/run",
        text: include_str!("../templates/crate/ci-run.tmpl"),
        executable: true,
    },
    file("src/lib.rs", include_str!("../templates/crate/lib.rs.tmpl")),
    file(
        "src/main.rs",
        include_str!("../templates/crate/main.rs.tmpl"),
    ),
];

/// The files of one kind: its module and its tests (`new` writes them for the first kind, `create api` for
/// each one added).
pub const KIND: &[Template] = &[
    file(
        "src/{{kind_module}}.rs",
        include_str!("../templates/kind/kind.rs.tmpl"),
    ),
    file(
        "tests/{{kind_module}}.rs",
        include_str!("../templates/kind/test.rs.tmpl"),
    ),
];

/// The values of the placeholders.
#[derive(Debug, Clone, Default)]
pub struct Values(BTreeMap<&'static str, String>);

impl Values {
    /// The values every template may use: the crate's and the kind's names.
    pub fn new(name: &CrateName, group: &Group, version: &ApiVersion, kind: &Kind) -> Self {
        let mut values = Self::default();
        values
            .set("crate_name", name.as_str())
            .set("crate_ident", name.ident())
            .set("group", group.as_str())
            .set("version", version.as_str())
            .set("kind", kind.as_str())
            .set("kind_module", kind.module())
            .set("kind_lower", kind.lower())
            .set(
                "image",
                format!("{}/{}:latest", group.as_str(), name.as_str()),
            );
        values
    }

    /// Sets `key`'s value.
    pub fn set(&mut self, key: &'static str, value: impl Into<String>) -> &mut Self {
        self.0.insert(key, value.into());
        self
    }

    /// `text` with every `{{key}}` of a known key replaced by its value (values are not filled again).
    pub fn fill(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find("{{") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            match after
                .find("}}")
                .and_then(|end| Some((self.0.get(&after[..end])?, end)))
            {
                Some((value, end)) => {
                    out.push_str(value);
                    rest = &after[end + 2..];
                }
                None => {
                    out.push_str("{{");
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        out
    }
}

/// A file to write: its path in the crate and its content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// The path, relative to the crate's directory.
    pub path: String,
    /// The text.
    pub text: String,
    /// Whether to make it executable.
    pub executable: bool,
}

/// `templates` filled with `values`.
pub fn render(templates: &[Template], values: &Values) -> Vec<Rendered> {
    templates
        .iter()
        .map(|t| Rendered {
            path: values.fill(t.path),
            text: values.fill(t.text),
            executable: t.executable,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values() -> Values {
        let mut values = Values::new(
            &CrateName::parse("my-operator").expect("name"),
            &Group::parse("example.dev").expect("group"),
            &ApiVersion::parse("v1").expect("version"),
            &Kind::parse("WebApp").expect("kind"),
        );
        values
            .set("kubewright_path", "\"/k/operator\"")
            .set("kubewright_root", "/k");
        values
    }

    #[test]
    fn placeholders_are_replaced_once_and_unknown_ones_kept() {
        let mut values = Values::default();
        values.set("a", "{{b}}").set("b", "B");
        assert_eq!(values.fill("x{{a}}y{{b}}z{{c}}{{"), "x{{b}}yBz{{c}}{{");
    }

    #[test]
    fn every_placeholder_of_every_template_has_a_value() {
        let values = values();
        for file in render(CRATE, &values).iter().chain(&render(KIND, &values)) {
            assert!(!file.path.contains("{{"), "{}", file.path);
            assert!(
                !file.text.contains("{{"),
                "{} keeps a placeholder",
                file.path
            );
        }
        let kind = render(KIND, &values);
        assert_eq!(kind[0].path, "src/web_app.rs");
        assert!(kind[0].text.contains("pub struct WebAppSpec"));
        assert!(kind[1].text.contains("use my_operator::web_app::{ WebApp,"));
    }
}
