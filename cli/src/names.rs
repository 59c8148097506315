//! The names a generated crate is made of, each checked against the Kubernetes and cargo rules it must follow
//! before anything is written: the API group, the API version, the kind and the crate's name.

use heck::ToSnakeCase;

/// A name that breaks a Kubernetes or cargo rule: what was given, and the rule, in the words of the tool that
/// enforces it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{value}` is not a valid {what}: {rule}")]
pub struct NameError {
    /// What the name is for (`API group`, `kind`, …).
    pub what: &'static str,
    /// The name given.
    pub value: String,
    /// The rule it breaks.
    pub rule: String,
}

impl NameError {
    fn new(what: &'static str, value: &str, rule: impl Into<String>) -> Self {
        Self {
            what,
            value: value.to_string(),
            rule: rule.into(),
        }
    }
}

/// Kubernetes' text of the RFC 1123 subdomain rule (`IsDNS1123Subdomain`).
const DNS1123_SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric \
characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for \
validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/// Kubernetes' text of the RFC 1035 label rule (`IsDNS1035Label`).
const DNS1035_LABEL: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start \
with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name', or 'abc-123', regex used \
for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

/// Whether `label` is one label of a DNS name: lowercase ASCII letters, digits and `-`, starting and ending
/// with a letter or digit.
fn is_dns_label(label: &str) -> bool {
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    label.starts_with(alnum)
        && label.ends_with(alnum)
        && label.chars().all(|c| alnum(c) || c == '-')
}

/// The API group of the kinds (`example.dev`): a CRD's `spec.group`, which Kubernetes requires to be an RFC 1123
/// subdomain with at least one dot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group(String);

impl Group {
    /// Checks `value` as kube-apiserver checks a CRD's `spec.group`.
    pub fn parse(value: &str) -> Result<Self, NameError> {
        let error = |rule: &str| Err(NameError::new("API group", value, rule));
        if value.len() > 253 {
            return error("must be no more than 253 characters");
        }
        if value.is_empty() || !value.split('.').all(is_dns_label) {
            return error(DNS1123_SUBDOMAIN);
        }
        if !value.contains('.') {
            return error(
                "should be a domain with at least one dot (Kubernetes' rule for a CustomResourceDefinition's \
                 spec.group), e.g. `example.dev`",
            );
        }
        Ok(Self(value.to_string()))
    }

    /// The group as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The API version of a kind (`v1`): a CRD version's `name`, an RFC 1035 label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiVersion(String);

impl ApiVersion {
    /// Checks `value` as kube-apiserver checks a CRD version's `name`.
    pub fn parse(value: &str) -> Result<Self, NameError> {
        let error = |rule: &str| Err(NameError::new("API version", value, rule));
        if value.len() > 63 {
            return error("must be no more than 63 characters");
        }
        if !value.starts_with(|c: char| c.is_ascii_lowercase()) || !is_dns_label(value) {
            return error(DNS1035_LABEL);
        }
        Ok(Self(value.to_string()))
    }

    /// The version as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Names a generated module uses unqualified (the derives, the status' `Condition`, the step's `Context`, the
/// standard prelude's types): a kind of that name would shadow it in its own module.
const TAKEN_BY_THE_MODULE: &[&str] = &[
    "Box",
    "Clone",
    "Condition",
    "Context",
    "CustomResource",
    "Debug",
    "Default",
    "Deserialize",
    "Err",
    "JsonSchema",
    "None",
    "Ok",
    "Option",
    "PartialEq",
    "Reconciler",
    "ReconcilerStatus",
    "Result",
    "Self",
    "Serialize",
    "Some",
    "String",
    "Vec",
];

/// Rust's keywords (strict and reserved, edition 2024): no crate or module can be named so.
const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate",
    "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl",
    "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
    "return", "self", "static", "struct", "super", "trait", "true", "try", "type", "typeof",
    "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

/// A kind (`Widget`): the name of the Rust type the derive generates and of the CRD's kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kind(String);

impl Kind {
    /// Checks `value` as a Rust type name in UpperCamelCase whose lowercase form is a CRD kind (an RFC 1035
    /// label), and whose module name is free.
    pub fn parse(value: &str) -> Result<Self, NameError> {
        let error = |rule: String| Err(NameError::new("kind", value, rule));
        if !value.starts_with(|c: char| c.is_ascii_uppercase())
            || !value.chars().all(|c| c.is_ascii_alphanumeric())
        {
            return error(
                "a kind names the Rust type of the resource and the CRD's kind, so it must be UpperCamelCase: an \
                 uppercase ASCII letter, then ASCII letters and digits (e.g. `Widget`, `WebApp`); Kubernetes \
                 requires the kind in lower case to be a DNS-1035 label"
                    .into(),
            );
        }
        if value.len() > 61 {
            return error(
                "must be no more than 61 characters, so that its plural (`spec.names.plural`, a DNS-1035 label) \
                 stays within 63"
                    .into(),
            );
        }
        if TAKEN_BY_THE_MODULE.contains(&value) {
            return error(format!(
                "the generated module uses `{value}` for another type (a derive, the status' Condition, the \
                 steps' Context or a standard type); pick another name"
            ));
        }
        let kind = Self(value.to_string());
        let module = kind.module();
        if KEYWORDS.contains(&module.as_str()) {
            return error(format!("its module `{module}` would be a Rust keyword"));
        }
        if ["lib", "main"].contains(&module.as_str()) {
            return error(format!(
                "its module would be `src/{module}.rs`, the crate's own {module}.rs"
            ));
        }
        Ok(kind)
    }

    /// The kind as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The module (and test file) of the kind: `WebApp` is `web_app`.
    pub fn module(&self) -> String {
        self.0.to_snake_case()
    }

    /// The kind in lower case, as kube names the CRD's singular (`webapp`).
    pub fn lower(&self) -> String {
        self.0.to_ascii_lowercase()
    }
}

/// Crate names cargo refuses besides keywords: the directories of its build output, and Rust's own libraries.
const RESERVED_CRATES: &[(&str, &str)] = &[
    ("alloc", "it conflicts with Rust's built-in `alloc` library"),
    ("core", "it conflicts with Rust's built-in `core` library"),
    (
        "proc_macro",
        "it conflicts with Rust's built-in `proc_macro` library",
    ),
    ("std", "it conflicts with Rust's built-in `std` library"),
    ("test", "it conflicts with Rust's built-in `test` library"),
    ("build", "it conflicts with cargo's build directory names"),
    ("deps", "it conflicts with cargo's build directory names"),
    (
        "examples",
        "it conflicts with cargo's build directory names",
    ),
    (
        "incremental",
        "it conflicts with cargo's build directory names",
    ),
];

/// The name of the generated crate (`my-operator`), which is also the operator's name in Kubernetes: its
/// Deployment, ServiceAccount and roles, and its namespace `NAME-system`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrateName(String);

impl CrateName {
    /// Checks `value` by cargo's rules for a package name, then as the name of Kubernetes objects.
    pub fn parse(value: &str) -> Result<Self, NameError> {
        let error = |rule: String| Err(NameError::new("crate name", value, rule));
        let Some(first) = value.chars().next() else {
            return error("cargo: a package name cannot be empty".into());
        };
        if let Some(c) = value
            .chars()
            .find(|c| !c.is_ascii_alphanumeric() && *c != '-' && *c != '_')
        {
            return error(format!(
                "cargo: invalid character `{c}` in package name: a package name holds letters, digits, `-` and `_`"
            ));
        }
        if first.is_ascii_digit() {
            return error("cargo: the name cannot start with a digit".into());
        }
        if KEYWORDS.contains(&value) {
            return error(
                "cargo: the name cannot be used as a package name, it is a Rust keyword".into(),
            );
        }
        if let Some((_, why)) = RESERVED_CRATES
            .iter()
            .find(|(name, _)| *name == value.replace('-', "_"))
        {
            return error(format!(
                "cargo: the name cannot be used as a package name, {why}"
            ));
        }
        if value.len() > 56 || !is_dns_label(value) {
            return error(
                "the operator is named after its crate, and its Deployment, ServiceAccount and namespace \
                 `NAME-system` need a Kubernetes name: a lowercase RFC 1123 label, of lower case alphanumeric \
                 characters or '-', starting and ending with an alphanumeric character, at most 63 characters \
                 (56 here, so that `-system` fits)"
                    .into(),
            );
        }
        Ok(Self(value.to_string()))
    }

    /// The name as written (`my-operator`).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The library's name in Rust paths (`my_operator`).
    pub fn ident(&self) -> String {
        self.0.replace('-', "_")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule<T: std::fmt::Debug>(parsed: Result<T, NameError>) -> String {
        parsed.expect_err("an invalid name").to_string()
    }

    #[test]
    fn a_group_is_a_domain_with_a_dot() {
        assert_eq!(
            Group::parse("example.dev").map(|g| g.0),
            Ok("example.dev".into())
        );
        assert!(Group::parse("batch.tutorial.kubebuilder.io").is_ok());
        assert!(rule(Group::parse("example")).contains("at least one dot"));
        for bad in [
            "",
            "Example.dev",
            "example..dev",
            "-example.dev",
            "example.dev-",
            "ex_ample.dev",
        ] {
            assert!(
                rule(Group::parse(bad)).contains("RFC 1123 subdomain"),
                "{bad}"
            );
        }
        let long = format!("{}.dev", "a.".repeat(126));
        assert!(rule(Group::parse(&long)).contains("253 characters"));
    }

    #[test]
    fn a_version_is_a_dns_1035_label() {
        assert!(ApiVersion::parse("v1").is_ok());
        assert!(ApiVersion::parse("v1beta2").is_ok());
        for bad in ["", "1", "V1", "v1.2", "v1-"] {
            assert!(
                rule(ApiVersion::parse(bad)).contains("DNS-1035 label"),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_kind_is_upper_camel_case_ascii() {
        let kind = Kind::parse("WebApp").expect("valid");
        assert_eq!(
            (kind.module(), kind.lower()),
            ("web_app".into(), "webapp".into())
        );
        assert_eq!(
            Kind::parse("Widget2").map(|k| k.module()),
            Ok("widget2".into())
        );
        for bad in [
            "", "widget", "web-app", "Web_App", "2Widget", "Wídget", "Web App",
        ] {
            assert!(rule(Kind::parse(bad)).contains("UpperCamelCase"), "{bad}");
        }
        assert!(rule(Kind::parse(&format!("W{}", "x".repeat(61)))).contains("61 characters"));
    }

    #[test]
    fn a_kind_cannot_shadow_what_its_module_uses_or_be_a_keyword_module() {
        assert!(rule(Kind::parse("Condition")).contains("another type"));
        assert!(rule(Kind::parse("String")).contains("another type"));
        assert!(rule(Kind::parse("Type")).contains("Rust keyword"));
        assert!(rule(Kind::parse("Main")).contains("src/main.rs"));
    }

    #[test]
    fn a_crate_name_follows_cargo_then_kubernetes() {
        let name = CrateName::parse("my-operator").expect("valid");
        assert_eq!(name.ident(), "my_operator");
        assert!(rule(CrateName::parse("")).contains("cannot be empty"));
        assert!(rule(CrateName::parse("my operator")).contains("invalid character ` `"));
        assert!(rule(CrateName::parse("my.operator")).contains("invalid character `.`"));
        assert!(rule(CrateName::parse("1operator")).contains("cannot start with a digit"));
        assert!(rule(CrateName::parse("fn")).contains("Rust keyword"));
        assert!(rule(CrateName::parse("test")).contains("built-in `test` library"));
        assert!(rule(CrateName::parse("proc-macro")).contains("built-in `proc_macro` library"));
        assert!(rule(CrateName::parse("deps")).contains("build directory"));
        for bad in ["My-operator", "my_operator", "operator-", &"o".repeat(57)] {
            assert!(
                rule(CrateName::parse(bad)).contains("RFC 1123 label"),
                "{bad}"
            );
        }
        assert!(CrateName::parse(&"o".repeat(56)).is_ok());
    }
}
