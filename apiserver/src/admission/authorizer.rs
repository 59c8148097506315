//! The `authorizer` variable of match conditions (Kubernetes' CEL authz library) for a server that
//! authorizes every request: `authorizer.group(g).resource(r)[.subresource(s)][.namespace(n)][.name(n)]`,
//! `authorizer.path(p)`, `authorizer.serviceAccount(ns, name)` and `authorizer.requestResource`, checked with
//! `.check(verb)`, whose decision is always allowed (`allowed()` true, `errored()` false, `reason()` and
//! `error()` empty).

use std::sync::Arc;

use kube_cel::cel::extractors::This;
use kube_cel::cel::objects::{Key, Opaque};
use kube_cel::cel::{Context, ExecutionError, ResolveResult, Value as Cel};

use crate::cel::values::map;

/// The stages of an authorization check, as the library's types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Group,
    Resource,
    Path,
    Decision,
}

/// One value of the authz library.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Authz(Stage);

impl Opaque for Authz {
    fn runtime_type_name(&self) -> &str {
        match self.0 {
            Stage::Group => "kubernetes.authorization.GroupCheck",
            Stage::Resource => "kubernetes.authorization.ResourceCheck",
            Stage::Path => "kubernetes.authorization.PathCheck",
            Stage::Decision => "kubernetes.authorization.Decision",
        }
    }
}

/// The key marking the `authorizer` value (a map, so that `authorizer.requestResource` selects).
const MARKER: &str = "@authorizer";

/// The value of the `authorizer` variable.
pub(crate) fn value() -> Cel {
    map([
        (MARKER.to_string(), Cel::Bool(true)),
        (
            "requestResource".to_string(),
            Cel::Opaque(Arc::new(Authz(Stage::Resource))),
        ),
    ])
}

/// Registers the library's functions in `ctx`.
pub(crate) fn register(ctx: &mut Context<'_>) {
    ctx.add_function("group", |This(t): This<Cel>, _g: Arc<String>| {
        on_authorizer(&t, "group")?;
        Ok(stage(Stage::Group))
    });
    ctx.add_function("path", |This(t): This<Cel>, _p: Arc<String>| {
        on_authorizer(&t, "path")?;
        Ok(stage(Stage::Path))
    });
    ctx.add_function(
        "serviceAccount",
        |This(t): This<Cel>, _ns: Arc<String>, _name: Arc<String>| -> ResolveResult {
            on_authorizer(&t, "serviceAccount")?;
            Ok(value())
        },
    );
    ctx.add_function("resource", |This(t): This<Cel>, _r: Arc<String>| {
        on(&t, Stage::Group, "resource")?;
        Ok(stage(Stage::Resource))
    });
    for function in [
        "subresource",
        "namespace",
        "name",
        "fieldSelector",
        "labelSelector",
    ] {
        ctx.add_function(
            function,
            move |This(t): This<Cel>, _v: Arc<String>| -> ResolveResult {
                on(&t, Stage::Resource, function)?;
                Ok(stage(Stage::Resource))
            },
        );
    }
    ctx.add_function("check", |This(t): This<Cel>, _verb: Arc<String>| {
        if !matches!(&t, Cel::Opaque(o) if o.downcast_ref::<Authz>().is_some_and(|a| matches!(a.0, Stage::Resource | Stage::Path)))
        {
            return Err(ExecutionError::function_error("check", "no such overload"));
        }
        Ok(stage(Stage::Decision))
    });
    ctx.add_function("allowed", |This(t): This<Cel>| {
        on(&t, Stage::Decision, "allowed")?;
        Ok(Cel::Bool(true))
    });
    ctx.add_function("errored", |This(t): This<Cel>| {
        on(&t, Stage::Decision, "errored")?;
        Ok(Cel::Bool(false))
    });
    for function in ["reason", "error"] {
        ctx.add_function(function, move |This(t): This<Cel>| -> ResolveResult {
            on(&t, Stage::Decision, function)?;
            Ok(Cel::String(Arc::new(String::new())))
        });
    }
}

fn stage(s: Stage) -> Cel {
    Cel::Opaque(Arc::new(Authz(s)))
}

fn on_authorizer(target: &Cel, function: &str) -> Result<(), ExecutionError> {
    match target {
        Cel::Map(m) if m.map.contains_key(&Key::from(MARKER.to_string())) => Ok(()),
        _ => Err(ExecutionError::function_error(function, "no such overload")),
    }
}

fn on(target: &Cel, want: Stage, function: &str) -> Result<(), ExecutionError> {
    match target {
        Cel::Opaque(o) if o.downcast_ref::<Authz>().is_some_and(|a| a.0 == want) => Ok(()),
        _ => Err(ExecutionError::function_error(function, "no such overload")),
    }
}
