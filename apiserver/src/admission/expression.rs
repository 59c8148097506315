//! Compiling a `matchConditions` expression when a webhook configuration is written, as kube-apiserver's
//! CEL compiler for admission does: parsed, then type-checked by the CRD rules' port of cel-go's checker
//! ([`check_cel`]) in the admission environment, and required to be a `bool` (`object.spec.enabled` is
//! `dyn`, which kube-apiserver refuses).
//!
//! The environment declares `object` and `oldObject` (`dyn`), `request` (`kubernetes.AdmissionRequest`,
//! as `BuildRequestType` declares it), `namespaceObject` (`kubernetes.Namespace`, as
//! `BuildNamespaceType` does), `authorizer` and `authorizer.requestResource` (the authorizer library's
//! types); `params` is not declared for webhooks. The functions are the CRD rules' (CEL's standard
//! functions, the extensions and Kubernetes' libraries, the authorizer's among them).
//!
//! kube-apiserver estimates no static cost for a match condition: its cost limit applies when it runs.

use std::rc::Rc;

use crate::cel::program::Program;

use crate::cel::errors::parse_error;
use crate::schema::{CelDecl as Decl, CelType as Type, check_cel};

/// `kubernetes.authorization.Authorizer`.
const AUTHORIZER: Type = Type::Named("kubernetes.authorization.Authorizer", true);
/// `kubernetes.authorization.ResourceCheck`.
const RESOURCE_CHECK: Type = Type::Named("kubernetes.authorization.ResourceCheck", true);

/// Lists of strings.
fn strings() -> Type {
    Type::List(Box::new(Type::String))
}

/// Maps of strings to `v`.
fn map_to(v: Type) -> Type {
    Type::Map(Box::new(Type::String), Box::new(v))
}

/// An object type's field of the CEL type `t`.
fn field(name: &'static str, t: Type) -> (&'static str, Rc<Decl>) {
    (name, Decl::of(t))
}

/// `kubernetes.AdmissionRequest`, with the fields `BuildRequestType` declares.
fn request_type() -> Type {
    let gvk = Type::Object(Decl::object(
        "kubernetes.GroupVersionKind",
        vec![
            field("group", Type::String),
            field("version", Type::String),
            field("kind", Type::String),
        ],
    ));
    let gvr = Type::Object(Decl::object(
        "kubernetes.GroupVersionResource",
        vec![
            field("group", Type::String),
            field("version", Type::String),
            field("resource", Type::String),
        ],
    ));
    let user_info = Type::Object(Decl::object(
        "kubernetes.UserInfo",
        vec![
            field("username", Type::String),
            field("uid", Type::String),
            field("groups", strings()),
            field("extra", map_to(strings())),
        ],
    ));
    Type::Object(Decl::object(
        "kubernetes.AdmissionRequest",
        vec![
            field("kind", gvk.clone()),
            field("resource", gvr.clone()),
            field("subResource", Type::String),
            field("requestKind", gvk),
            field("requestResource", gvr),
            field("requestSubResource", Type::String),
            field("name", Type::String),
            field("namespace", Type::String),
            field("operation", Type::String),
            field("userInfo", user_info),
            field("dryRun", Type::Bool),
            field("options", Type::Dyn),
        ],
    ))
}

/// `kubernetes.Namespace`, with the fields `BuildNamespaceType` declares.
fn namespace_type() -> Type {
    let spec = Type::Object(Decl::object(
        "kubernetes.NamespaceSpec",
        vec![field("finalizers", strings())],
    ));
    let condition = Type::Object(Decl::object(
        "kubernetes.NamespaceCondition",
        vec![
            field("status", Type::String),
            field("type", Type::String),
            field("lastTransitionTime", Type::Timestamp),
            field("message", Type::String),
            field("reason", Type::String),
        ],
    ));
    let status = Type::Object(Decl::object(
        "kubernetes.NamespaceStatus",
        vec![
            field("conditions", Type::List(Box::new(condition))),
            field("phase", Type::String),
        ],
    ));
    let metadata = Type::Object(Decl::object(
        "kubernetes.NamespaceMetadata",
        vec![
            field("name", Type::String),
            field("generateName", Type::String),
            field("namespace", Type::String),
            field("labels", map_to(Type::String)),
            field("annotations", map_to(Type::String)),
            field("UID", Type::String),
            field("creationTimestamp", Type::Timestamp),
            field("deletionGracePeriodSeconds", Type::Int),
            field("deletionTimestamp", Type::Timestamp),
            field("generation", Type::Int),
            field("resourceVersion", Type::String),
            field("finalizers", strings()),
        ],
    ));
    Type::Object(Decl::object(
        "kubernetes.Namespace",
        vec![
            field("metadata", metadata),
            field("spec", spec),
            field("status", status),
        ],
    ))
}

/// The variables a webhook's match condition may read, with their types.
fn variables() -> Vec<(String, Type)> {
    vec![
        ("object".into(), Type::Dyn),
        ("oldObject".into(), Type::Dyn),
        ("namespaceObject".into(), namespace_type()),
        ("request".into(), request_type()),
        ("authorizer".into(), AUTHORIZER),
        ("authorizer.requestResource".into(), RESOURCE_CHECK),
    ]
}

/// A type's name as cel-go's `Type.String()` gives it in `must evaluate to bool but got ...` (its
/// checker's messages format some types differently: `null`, `timestamp`, `duration`).
fn output_name(t: &Type) -> String {
    match t {
        Type::Null => "null_type".into(),
        Type::Timestamp => "google.protobuf.Timestamp".into(),
        Type::Duration => "google.protobuf.Duration".into(),
        other => other.to_string(),
    }
}

/// Compiles a match condition's expression (already trimmed); `Err` with kube-apiserver's detail
/// (`compilation failed: ERROR: ...`, `must evaluate to bool but got dyn`).
pub(crate) fn check(expression: &str) -> Result<(), String> {
    let program = Program::compile(expression)
        .map_err(|e| format!("compilation failed: {}", parse_error(&e.to_string())))?;
    match check_cel(expression, program.expression(), variables()) {
        Err(errors) => Err(format!("compilation failed: {}", errors.join("\n"))),
        Ok(Some(t)) if !matches!(t, Type::Bool) => {
            Err(format!("must evaluate to bool but got {}", output_name(&t)))
        }
        Ok(_) => Ok(()),
    }
}

/// What a policy's expression must evaluate to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wanted {
    Bool,
    String,
    Any,
}

/// Compiles an expression of a `ValidatingAdmissionPolicy` (already trimmed): the webhooks' environment
/// with `params` (`dyn`, declared when the policy has a `paramKind`) and `variables` (an object whose
/// fields are the variables declared before, each of the type [`variable_type`] gives its expression's);
/// the expression's type as a variable of that type is declared, or `Err` with kube-apiserver's detail.
pub(crate) fn check_policy(
    expression: &str,
    params: bool,
    variables_declared: &[(String, Type)],
    wanted: Wanted,
) -> Result<Type, String> {
    let program = Program::compile(expression)
        .map_err(|e| format!("compilation failed: {}", parse_error(&e.to_string())))?;
    let mut declared = variables();
    if params {
        declared.push(("params".into(), Type::Dyn));
    }
    let fields: Vec<(&str, Rc<Decl>)> = variables_declared
        .iter()
        .map(|(n, t)| (n.as_str(), Decl::of(t.clone())))
        .collect();
    declared.push((
        "variables".into(),
        Type::Object(Decl::object("kubernetes.variables", fields)),
    ));
    match check_cel(expression, program.expression(), declared) {
        Err(errors) => Err(format!("compilation failed: {}", errors.join("\n"))),
        Ok(Some(t)) => {
            let ok = match wanted {
                Wanted::Bool => matches!(t, Type::Bool),
                Wanted::String => matches!(t, Type::String),
                Wanted::Any => true,
            };
            if ok {
                Ok(variable_type(&t))
            } else {
                let name = if wanted == Wanted::Bool {
                    "bool"
                } else {
                    "string"
                };
                Err(format!(
                    "must evaluate to {name} but got {}",
                    output_name(&t)
                ))
            }
        }
        Ok(None) => Ok(Type::Dyn),
    }
}

/// The type a policy's variable is declared with, from its expression's (apiserver's
/// `convertCelTypeToDeclType`): primitive types, and lists and maps of them, as they are; any other
/// (objects, Kubernetes' library types) `dyn`.
pub(crate) fn variable_type(t: &Type) -> Type {
    match t {
        Type::Bool
        | Type::Bytes
        | Type::Double
        | Type::Duration
        | Type::Int
        | Type::Null
        | Type::String
        | Type::Timestamp
        | Type::Uint => t.clone(),
        Type::List(e) => Type::List(Box::new(variable_type(e))),
        Type::Map(k, v) => Type::Map(Box::new(variable_type(k)), Box::new(variable_type(v))),
        _ => Type::Dyn,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bool_expressions_compile() {
        for e in [
            "object.metadata.name == 'a'",
            "has(object.spec) && object.spec.x > 1",
            "request.userInfo.groups.exists(g, g == 'system:masters')",
            "'system:masters' in request.userInfo.groups",
            "request.operation == 'CREATE' || request.dryRun",
            "authorizer.group('apps').resource('deployments').check('get').allowed()",
            "object.data.all(k, k.startsWith('a'))",
            "size(request.userInfo.extra) == 0",
            "authorizer.requestResource.check('get').allowed()",
            "authorizer.serviceAccount('ns', 'sa').path('/healthz').check('get').reason() == ''",
            "has(object.metadata.labels) && quantity('1Gi').isGreaterThan(quantity('1Mi'))",
            "isURL('https://a/b') && url('https://a').getHost() == 'a' && ip('10.0.0.1').family() == 4",
            "namespaceObject.metadata.labels['a'] == 'b' && namespaceObject.status.conditions.all(c, c.lastTransitionTime > timestamp('2020-01-01T00:00:00Z'))",
        ] {
            assert_eq!(check(e), Ok(()), "{e}");
        }
    }

    #[test]
    fn other_types_are_refused() {
        assert_eq!(
            check("object.spec.paused"),
            Err("must evaluate to bool but got dyn".into())
        );
        assert_eq!(check("1"), Err("must evaluate to bool but got int".into()));
        assert_eq!(
            check("request.userInfo.groups"),
            Err("must evaluate to bool but got list(string)".into())
        );
        assert_eq!(
            check("request.userInfo"),
            Err("must evaluate to bool but got kubernetes.UserInfo".into())
        );
    }

    #[test]
    fn undeclared_names_and_fields_are_refused() {
        assert_eq!(
            check("params.x == 1"),
            Err("compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x == 1\n | ^".into())
        );
        assert_eq!(
            check("request.dryRun == 'true' || request.operation < 1"),
            Err("compilation failed: ERROR: <input>:1:16: found no matching overload for '_==_' applied to '(bool, string)'\n | request.dryRun == 'true' || request.operation < 1\n | ...............^\nERROR: <input>:1:47: found no matching overload for '_<_' applied to '(string, int)'\n | request.dryRun == 'true' || request.operation < 1\n | ..............................................^".into())
        );
        assert_eq!(
            check("request.foo == 'a' && self.x"),
            Err("compilation failed: ERROR: <input>:1:8: undefined field 'foo'\n | request.foo == 'a' && self.x\n | .......^\nERROR: <input>:1:23: undeclared reference to 'self' (in container '')\n | request.foo == 'a' && self.x\n | ......................^".into())
        );
    }

    #[test]
    fn functions_and_operands_are_type_checked() {
        let error = |e: &str, column: usize, what: &str| {
            Err(format!(
                "compilation failed: ERROR: <input>:1:{column}: {what}\n | {e}\n | {}^",
                ".".repeat(column - 1)
            ))
        };
        let e = "nope(object)";
        assert_eq!(
            check(e),
            error(e, 5, "undeclared reference to 'nope' (in container '')")
        );
        let e = "request.name.startsWith(1)";
        assert_eq!(
            check(e),
            error(
                e,
                24,
                "found no matching overload for 'startsWith' applied to 'string.(int)'"
            )
        );
        let e = "!request.name";
        assert_eq!(
            check(e),
            error(
                e,
                1,
                "found no matching overload for '!_' applied to '(string)'"
            )
        );
        let e = "request.dryRun && request.name";
        assert_eq!(
            check(e),
            error(e, 26, "expected type 'bool' but found 'string'")
        );
        let e = "1 + 'a' == 2";
        assert_eq!(
            check(e),
            error(
                e,
                3,
                "found no matching overload for '_+_' applied to '(int, string)'"
            )
        );
        let e = "duration('1s') + 1 == duration('2s')";
        assert_eq!(
            check(e),
            error(
                e,
                16,
                "found no matching overload for '_+_' applied to '(duration, int)'"
            )
        );
        assert_eq!(
            check("namespaceObject.metadata.creationTimestamp"),
            Err("must evaluate to bool but got google.protobuf.Timestamp".into())
        );
        let e = "'a' in request.dryRun";
        assert_eq!(
            check(e),
            error(
                e,
                5,
                "found no matching overload for '@in' applied to '(string, bool)'"
            )
        );
        let e = "authorizer.foo == 1";
        assert_eq!(
            check(e),
            error(
                e,
                11,
                "unexpected failed resolution of 'kubernetes.authorization.Authorizer'"
            )
        );
    }

    #[test]
    fn the_optional_syntax_is_checked() {
        assert!(check("object.metadata.?labels.hasValue()").is_ok());
        assert!(check("request.?userInfo.?username.orValue('') != ''").is_ok());
        let e = check("request.?nope.hasValue()").unwrap_err();
        assert!(e.contains("undefined field 'nope'"), "{e}");
    }

    #[test]
    fn parse_errors_are_cel_go_s() {
        let e = check("object.x ==").unwrap_err();
        assert!(
            e.starts_with("compilation failed: ERROR: <input>:1:"),
            "{e}"
        );
    }
}
