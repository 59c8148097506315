//! Phase 3: the rules across attributes. Each rule is one function; each reports every violation it finds
//! (never only the first), spanned on the token at fault, naming the attribute and the fix.

use syn::spanned::Spanned;

use crate::attr::{Errors, error_at};
use crate::model::{Declaration, Model, Step};

/// Checks every rule.
pub fn check(model: &Model, errors: &mut Errors) {
    no_generics(model, errors);
    root_source(model, errors);
    foreign_parent(model, errors);
    root_has_status(model, errors);
    required_keys(model, errors);
    write_strategy(model, errors);
    finalizer(model, errors);
    one_step_per_child_kind(model, errors);
    stash_keys(model, errors);
    stash_order(model, errors);
    something_to_do(model, errors);
    non_empty_strings(model, errors);
    admission(model, errors);
    versions(model, errors);
}

/// With `#[version(..)]`, exactly one version is stored: one `#[version(.., storage)]` or this kind's own
/// with `#[reconciler(storage)]`; without, `storage` has nothing to choose from. A deprecation warning, when
/// written, is not empty. A `parent = ..` kind has no CRD of the operator's to declare versions of.
fn versions(model: &Model, errors: &mut Errors) {
    let hub = model.container.storage.is_present();
    if model.versions.is_empty() {
        if hub {
            errors.push(error_at(
                model.container.storage.span(),
                "reconciler",
                "`storage` chooses the stored version among several: declare the others with `#[version(v1::Kind)]`, or remove `storage` (a kind with one version stores it)",
            ));
        }
        return;
    }
    if model.container.parent.is_some() {
        for (span, _, _) in &model.versions {
            errors.push(error_at(
                *span,
                "version",
                "versions are declared on the operator's own kinds; a `parent = ..` kind has no CRD here",
            ));
        }
        return;
    }
    let mut stored = usize::from(hub);
    for (_, _, opts) in &model.versions {
        if opts.storage.is_present() {
            stored += 1;
            if stored > 1 {
                errors.push(error_at(
                    opts.storage.span(),
                    "version",
                    "a second storage version: the API server stores exactly one; keep `storage` on one version",
                ));
            }
        }
        if let Some(darling::util::Override::Explicit(w)) = &opts.deprecated
            && w.is_empty()
        {
            errors.push(error_at(
                w.span(),
                "version",
                "an empty warning: write it, or `deprecated` alone for the API server's default",
            ));
        }
    }
    if stored == 0 {
        errors.push(error_at(
            model.versions[0].0,
            "version",
            "no storage version: mark one with `#[version(.., storage)]`, or this kind's own with `#[reconciler(storage)]`",
        ));
    }
}

/// `#[admission(..)]` names a validator or a defaulter; `deletes` needs a validator; the failure policy is
/// `"Fail"` or `"Ignore"`; the timeout is 1 to 30 seconds (the API server's bounds).
fn admission(model: &Model, errors: &mut Errors) {
    for (span, opts, written) in &model.admission {
        // A key written with a typo or a bad value is already reported; `deletes` has its own message.
        let named = written.iter().any(|k| k == "validate" || k == "default");
        if !named && !opts.deletes.is_present() {
            errors.push(error_at(
                *span,
                "admission",
                "name a validator or a defaulter, as in `#[admission(validate = check_image)]` or `#[admission(default = fill_port)]`",
            ));
        }
        if opts.deletes.is_present() && opts.validate.is_none() {
            errors.push(error_at(
                opts.deletes.span(),
                "admission",
                "`deletes` sends deletes to the validator: name one with `validate = ..`",
            ));
        }
        if let Some(policy) = &opts.failure_policy
            && !matches!(policy.as_str(), "Fail" | "Ignore")
        {
            errors.push(error_at(
                policy.span(),
                "admission",
                format!(
                    "failure_policy is \"Fail\" or \"Ignore\", not {:?}",
                    policy.as_str()
                ),
            ));
        }
        if let Some(timeout) = &opts.timeout_seconds
            && !(1..=30).contains(&**timeout)
        {
            errors.push(error_at(
                timeout.span(),
                "admission",
                format!(
                    "timeout_seconds is 1 to 30 (the API server's bounds), not {}",
                    **timeout
                ),
            ));
        }
    }
}

/// The generated `impl Root` names the root type without parameters, and kube's `CustomResource` does not
/// support generic spec structs either, so generic inputs are refused outright.
fn no_generics(model: &Model, errors: &mut Errors) {
    let generics = &model.input.generics;
    if !generics.params.is_empty() {
        errors.push(error_at(
            generics.span(),
            "derive(Reconciler)",
            "generic types are not supported: derive on a concrete spec struct or root type",
        ));
    }
}

/// `#[reconciler(root)]` says the derive input is the root type; `#[kube(..)]` says the root is the struct kube
/// generates. Both at once is ambiguous.
fn root_source(model: &Model, errors: &mut Errors) {
    if model.container.root.is_present() && model.kube.is_some() {
        errors.push(error_at(
            model.container.root.span(),
            "reconciler",
            format!(
                "`root` says `{}` is the root kind, but `#[kube(..)]` generates the root kind: remove `root` to derive on the spec struct",
                model.input.ident
            ),
        ));
    }
}

/// `#[reconciler(parent = K)]` goes on a marker struct (not beside `#[kube(..)]`, whose kind is the parent,
/// nor with `root`), and a parent whose status is not written has no status to reflect children into and no
/// admission webhooks of the operator's.
fn foreign_parent(model: &Model, errors: &mut Errors) {
    let Some(parent) = &model.container.parent else {
        return;
    };
    let parent_span = parent.0.span();
    if model.kube.is_some() {
        errors.push(error_at(
            parent_span,
            "reconciler",
            "`parent` is for a kind whose status is not the operator's, on a marker struct; with `#[kube(..)]` the parent is the kind kube generates: remove `parent`",
        ));
    }
    if model.container.root.is_present() {
        errors.push(error_at(
            model.container.root.span(),
            "reconciler",
            "`root` and `parent` both name the parent kind: keep `parent = ..` on a marker struct, or `root` on your own kind",
        ));
    }
    for step in &model.steps {
        let (reflect, attr) = match step {
            Step::Child(c) => (
                c.reflect
                    .as_ref()
                    .map(|r| r.span())
                    .or(c.reflect_name.as_ref().map(|f| f.0.span())),
                "child",
            ),
            Step::Children(c) => (c.reflect.as_ref().map(|r| r.span()), "children"),
            _ => (None, ""),
        };
        if let Some(span) = reflect {
            errors.push(error_at(
                span,
                attr,
                "the parent's status is not written (`parent = ..`): there is no status to reflect into; read the child in a later step instead",
            ));
        }
    }
    for (span, _, _) in &model.admission {
        errors.push(error_at(
            *span,
            "admission",
            "admission webhooks are declared on the operator's own kinds; a `parent = ..` kind is not",
        ));
    }
}

/// The root reconciler writes `observedGeneration` and conditions into the parent's status, so a root kind
/// generated by kube needs `status = ".."` naming a type that implements `ReconcilerStatus`.
fn root_has_status(model: &Model, errors: &mut Errors) {
    let (Some(kube), Some(root)) = (&model.kube, &model.root) else {
        return;
    };
    if model.root_is_kubes() && root.status.is_none() {
        errors.push(error_at(
            kube.span.unwrap_or_else(proc_macro2::Span::call_site),
            "kube",
            format!(
                "the root kind `{}` needs a status: add `status = \"{}Status\"` to `#[kube(..)]`, a type implementing `kubewright::ReconcilerStatus`",
                root.ident, root.ident
            ),
        ));
    }
}

/// A child step cannot compute anything without its desired-state function, a child set cannot tell its
/// children apart without `id`, and a watch cannot find parents without `map`.
fn required_keys(model: &Model, errors: &mut Errors) {
    for step in &model.steps {
        match step {
            Step::Child(c) if !c.written("desired") => errors.push(error_at(
                c.span,
                "child",
                "missing `desired = <function>`: the function computing the child, `fn(&Parent, &mut Context) -> kubewright::Result<Option<Child>>`",
            )),
            Step::Children(c) => {
                if !c.written("desired") {
                    errors.push(error_at(
                        c.span,
                        "children",
                        "missing `desired = <function>`: the function listing the children, `fn(&Parent, &mut Context) -> kubewright::Result<Vec<Child>>`",
                    ));
                }
                if !c.written("id") {
                    errors.push(error_at(
                        c.span,
                        "children",
                        "missing `id = <function>`: the function telling children apart, `fn(&Child) -> String` (e.g. a label's value)",
                    ));
                }
            }
            _ => {}
        }
    }
    for declaration in &model.declarations {
        if let Declaration::Watches {
            span,
            ty,
            written,
            map,
            by,
        } = declaration
        {
            let ty_name = ty
                .as_ref()
                .map(|t| quote::ToTokens::to_token_stream(t).to_string())
                .unwrap_or_else(|| "Kind".into());
            let has = |k: &str| written.iter().any(|w| w == k);
            if !has("map") && !has("by") {
                errors.push(error_at(
                    *span,
                    "watches",
                    format!(
                        "missing `by = <field>` (the spec field that names the watched object) or `map = <function>` (from a changed object to the parents to reconcile, `fn(Arc<{ty_name}>) -> Vec<ObjectRef<Parent>>`)"
                    ),
                ));
            }
            if let (Some(_), Some(by)) = (map, by) {
                errors.push(error_at(
                    by.0.span(),
                    "watches",
                    "`by` and `map` exclude each other: keep `by = <field>` for objects the spec names, or `map` for any other relation",
                ));
            }
            if let Some(by) = by {
                if ty.is_none() {
                    errors.push(error_at(
                        by.0.span(),
                        "watches",
                        format!(
                            "`by` needs the watched type first: `#[watches(ConfigMap, by = {})]`",
                            by.0
                        ),
                    ));
                }
                spec_field(model, by, errors);
            }
        }
    }
}

/// The field `by` names exists on the struct the derive is on (the spec, or the root type with
/// `#[reconciler(root)]`).
fn spec_field(model: &Model, by: &crate::attr::FieldName, errors: &mut Errors) {
    let syn::Data::Struct(data) = &model.input.data else {
        return;
    };
    let fields: Vec<String> = data
        .fields
        .iter()
        .filter_map(|f| f.ident.as_ref().map(|i| i.to_string()))
        .collect();
    if !fields.iter().any(|f| by.0 == f) {
        errors.push(error_at(
            by.0.span(),
            "watches",
            format!(
                "no field `{}` in `{}`; its fields: {}",
                by.0,
                model.input.ident,
                fields
                    .iter()
                    .map(|f| format!("`{f}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
}

/// A child is written by server-side apply (the default, forced unless `force = false`), by merge-then-update
/// (`strategy = "update"`) or created once and never written again (`strategy = "create"`); `force` means
/// nothing to the last two. A child set is applied or created once: it has no merge-then-update.
fn write_strategy(model: &Model, errors: &mut Errors) {
    for step in &model.steps {
        let (attr, strategy, force, known, meanings): (_, _, _, &[&str], _) = match step {
            Step::Child(c) => (
                "child",
                &c.strategy,
                &c.force,
                &["apply", "update", "create"],
                "\"apply\" (server-side apply, the default), \"update\" (merge into the live object and replace it) or \"create\" (create once, never write again)",
            ),
            Step::Children(c) => (
                "children",
                &c.strategy,
                &c.force,
                &["apply", "create"],
                "\"apply\" (server-side apply, the default) or \"create\" (create each child once, never write it again)",
            ),
            _ => continue,
        };
        let not_apply = match strategy {
            Some(s) if s.as_str() == "apply" => None,
            Some(s) if known.contains(&s.as_str()) => Some(s.as_str()),
            Some(s) => {
                let unknown = darling::Error::unknown_value_with_alts(s.as_str(), known);
                errors.push(error_at(
                    s.span(),
                    attr,
                    format!("{unknown}; `strategy` is {meanings}"),
                ));
                None
            }
            None => None,
        };
        if let (Some(strategy), Some(force)) = (not_apply, force) {
            errors.push(error_at(
                force.span(),
                attr,
                format!(
                    "`force` applies to server-side apply only: remove it, or remove `strategy = \"{strategy}\"`"
                ),
            ));
        }
    }
}

/// `#[finalize(f)]` runs while the parent is being deleted, which only happens under a finalizer the reconciler
/// adds (`#[reconciler(finalizer = "example.dev/cleanup")]`); a finalizer without a `#[finalize]` step would
/// only delay deletion. Finalizer names are qualified (`domain/name`), as Kubernetes expects.
fn finalizer(model: &Model, errors: &mut Errors) {
    let finalize: Vec<_> = model
        .steps
        .iter()
        .filter_map(|s| match s {
            Step::Finalize(span, _) => Some(*span),
            _ => None,
        })
        .collect();
    match &model.container.finalizer {
        None => {
            for span in finalize {
                errors.push(error_at(
                    span,
                    "finalize",
                    "cleanup runs under a finalizer: add `#[reconciler(finalizer = \"<your domain>/cleanup\")]`",
                ));
            }
        }
        Some(name) => {
            if finalize.is_empty() {
                errors.push(error_at(
                    name.span(),
                    "reconciler",
                    "`finalizer` without a `#[finalize(<function>)]` step only delays deletion: add the cleanup step, or remove `finalizer`",
                ));
            }
            let qualified = name.split_once('/').is_some_and(|(domain, rest)| {
                domain.contains('.') && !rest.is_empty() && !rest.contains('/')
            });
            if !qualified {
                errors.push(error_at(
                    name.span(),
                    "reconciler",
                    format!(
                        "finalizer `{}` is not a qualified name: write `<domain>/<name>`, e.g. `example.dev/cleanup`",
                        name.as_str()
                    ),
                ));
            }
        }
    }
}

/// Each child step deletes the children of its kind it does not want, so two steps managing the same kind
/// would delete each other's children on every pass. Here when both name the type (the same tokens); when a
/// kind is inferred from a desired function, which the derive cannot see, the expansion asks the compiler
/// (`kubewright::__private::one_step_per_child_kind`, see `expand::kind_checks`).
fn one_step_per_child_kind(model: &Model, errors: &mut Errors) {
    let mut seen: Vec<&syn::Type> = Vec::new();
    for step in &model.steps {
        let ty = match step {
            Step::Child(c) => c.ty.as_ref(),
            Step::Children(c) => c.ty.as_ref(),
            _ => None,
        };
        let Some(ty) = ty else { continue };
        if seen.contains(&ty) {
            errors.push(error_at(
                ty.span(),
                if matches!(step, Step::Child(_)) { "child" } else { "children" },
                format!(
                    "a second step for `{}`: each child step deletes the children of its kind it does not want, so two would fight; use one `#[children(..)]` for several objects of one kind",
                    quote::ToTokens::to_token_stream(ty)
                ),
            ));
        } else {
            seen.push(ty);
        }
    }
}

/// Stash keys become associated constants (`image` becomes `Root::IMAGE`), so names are snake_case and unique.
fn stash_keys(model: &Model, errors: &mut Errors) {
    let mut seen: Vec<String> = Vec::new();
    for entry in &model.stash {
        let name = entry.name.to_string();
        if !name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            || name.starts_with(|c: char| c.is_ascii_digit())
        {
            errors.push(error_at(
                entry.name.span(),
                "stash",
                format!(
                    "stash key `{name}` is not snake_case: keys become constants (`image_tag` becomes `IMAGE_TAG`)"
                ),
            ));
        }
        if seen.contains(&name) {
            errors.push(error_at(
                entry.name.span(),
                "stash",
                format!("stash key `{name}` is declared twice: give each key its own name"),
            ));
        } else {
            seen.push(name);
        }
    }
}

/// The stash keys steps declare they read (`reads = [..]`) and store (`stores = [..]`) are declared in
/// `#[stash]`, and each key read is stored by a step that runs before: an earlier step while the parent lives;
/// while it is being deleted only `#[finalize]` steps run, last declared first, so a later `#[finalize]`.
fn stash_order(model: &Model, errors: &mut Errors) {
    let declared: Vec<String> = model.stash.iter().map(|e| e.name.to_string()).collect();
    let step_name = |step: &Step| -> String {
        match step {
            Step::Child(c) => c.desired.as_ref().map(|f| f.name()),
            Step::Children(c) => c.desired.as_ref().map(|f| f.name()),
            Step::Sync(f) | Step::Finalize(_, f) => Some(f.name()),
        }
        .unwrap_or_else(|| "this step".into())
    };
    let attribute = |step: &Step| match step {
        Step::Child(_) => "child",
        Step::Children(_) => "children",
        Step::Sync(_) => "sync",
        Step::Finalize(..) => "finalize",
    };
    for (i, (step, flow)) in model.steps.iter().zip(&model.flows).enumerate() {
        for key in flow.reads.iter().chain(&flow.stores) {
            if !declared.contains(&key.to_string()) {
                let known = if declared.is_empty() {
                    "none is declared".to_string()
                } else {
                    format!(
                        "declared: {}",
                        declared
                            .iter()
                            .map(|d| format!("`{d}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                errors.push(error_at(
                    key.span(),
                    attribute(step),
                    format!(
                        "`{key}` is not a stash key: declare it with `#[stash({key}: Type)]` ({known})"
                    ),
                ));
            }
        }
        let finalizing = matches!(step, Step::Finalize(..));
        for key in &flow.reads {
            if !declared.contains(&key.to_string()) {
                continue;
            }
            let stores = |j: usize| model.flows[j].stores.iter().any(|k| k == key);
            let runs_before = |j: usize| {
                let other_finalizes = matches!(model.steps[j], Step::Finalize(..));
                if finalizing {
                    other_finalizes && j > i
                } else {
                    !other_finalizes && j < i
                }
            };
            let storers: Vec<usize> = (0..model.steps.len()).filter(|&j| stores(j)).collect();
            if storers.iter().any(|&j| runs_before(j)) {
                continue;
            }
            let reader = step_name(step);
            let message = match storers.first() {
                Some(&j) if finalizing => format!(
                    "`{key}` is read by `{reader}` while the parent is deleted, but `{}` does not store it before: only `#[finalize]` steps run then, last declared first; store it in a `#[finalize]` declared below this one",
                    step_name(&model.steps[j])
                ),
                Some(&j) => format!(
                    "`{key}` is read by `{reader}` before `{}` stores it: declare `#[{}({}, ..)]` above this step",
                    step_name(&model.steps[j]),
                    attribute(&model.steps[j]),
                    step_name(&model.steps[j])
                ),
                None => format!(
                    "`{key}` is read by `{reader}`, but no step declares `stores = [{key}]`: add it to the step that stores the value, above this one"
                ),
            };
            errors.push(error_at(key.span(), attribute(step), message));
        }
    }
}

/// A reconciler with no step and no declared kind only writes `Ready` and `observedGeneration`: almost
/// certainly attributes were forgotten. (Attributes written but unreadable are reported on their own.)
fn something_to_do(model: &Model, errors: &mut Errors) {
    // An attribute that could not be read (already reported) is not a forgotten one.
    let written = model.input.attrs.iter().any(|a| {
        [
            "child", "children", "owns", "tracks", "watches", "sync", "finalize",
        ]
        .iter()
        .any(|name| a.path().is_ident(name))
    });
    if !written && model.steps.is_empty() && model.declarations.is_empty() {
        errors.push(error_at(
            model.input.ident.span(),
            "derive(Reconciler)",
            "no steps: add at least one of `#[child(desired = ..)]`, `#[children(..)]`, `#[sync(..)]`, `#[owns(..)]`, `#[tracks(..)]`, `#[watches(..)]`",
        ));
    }
}

/// Names, field managers and condition types end up in the API; an empty one is refused there, or worse,
/// accepted and confusing. Field managers are limited to 128 characters.
fn non_empty_strings(model: &Model, errors: &mut Errors) {
    let c = &model.container;
    let mut check = |attr: &str, key: &str, value: Option<&darling::util::SpannedValue<String>>| {
        if let Some(v) = value
            && v.trim().is_empty()
        {
            errors.push(error_at(
                v.span(),
                attr,
                format!("`{key}` is empty: give it a value, or remove it for the default"),
            ));
        }
    };
    check("reconciler", "name", c.name.as_ref());
    check("reconciler", "field_manager", c.field_manager.as_ref());
    for step in &model.steps {
        match step {
            Step::Child(ch) => {
                check("child", "field_manager", ch.field_manager.as_ref());
                check("child", "condition", ch.condition.as_ref());
            }
            Step::Children(ch) => check("children", "condition", ch.condition.as_ref()),
            _ => {}
        }
    }
    let managers = [c.field_manager.as_ref()]
        .into_iter()
        .chain(model.steps.iter().map(|s| match s {
            Step::Child(ch) => ch.field_manager.as_ref(),
            _ => None,
        }));
    for m in managers.flatten() {
        if m.len() > 128 {
            errors.push(error_at(
                m.span(),
                "reconciler",
                "a field manager has at most 128 characters",
            ));
        }
    }
}
