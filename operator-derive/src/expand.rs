//! Phase 4: the generated code when the attributes are valid.
//!
//! The output is one inherent `impl` on the root kind: the stash keys as associated constants, and
//! `reconciler()`, a chain of calls to the runtime's builder (`kubewright::__private` spells out the generic
//! parameters). Every path is absolute; calls that involve a function named in an attribute are spanned on
//! that function's path, so the compiler's signature errors point at the attribute.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, LitStr};

use crate::items::{declared, signature, stash_consts, versions_signature, webhooks_signature};
use crate::model::{Child, Children, Declaration, Model, Root, Step};

/// The generated `impl` (nothing when the root kind is unknown: kube reports why).
pub fn expand(model: &Model) -> TokenStream {
    let Some(root) = &model.root else {
        return TokenStream::new();
    };
    let krate = &model.krate;
    let ident = &root.ident;
    let parent = root.parent_at(krate, proc_macro2::Span::call_site());
    let consts = stash_consts(model, root);
    let signature = signature(model, root);
    let status_check = root.status.as_ref().map(|status| {
        quote_spanned! {status.span()=>
            const _: () = #krate::__private::assert_status::<#status>();
        }
    });
    let name = match &model.container.name {
        Some(name) => {
            let name = LitStr::new(name.as_str(), name.span());
            quote!(::core::option::Option::Some(#name))
        }
        None => quote!(::core::option::Option::None),
    };
    let config = config(model);
    let declarations = model.declarations.iter().map(|d| declaration(model, d));
    // Each `.step(..)` is spanned on its function, so that a bound the step fails (a child that is not a
    // Kubernetes resource) is reported at the attribute. With two child steps or more, those are built first
    // into locals, which `kind_checks` compares.
    let locals = child_locals(model);
    let mut bindings = Vec::new();
    let steps: Vec<TokenStream> = model
        .steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let call = step(model, root, s);
            let value = match locals.iter().find(|(index, _)| *index == i) {
                Some((_, local)) => {
                    bindings.push(quote!(let #local = #call;));
                    local.to_token_stream()
                }
                None => call,
            };
            quote_spanned!(step_span(s)=> .step(#value))
        })
        .collect();
    let checks = kind_checks(model, &locals);
    let steps = match &model.container.finalizer {
        Some(finalizer) => {
            let finalizer = LitStr::new(finalizer.as_str(), finalizer.span());
            quote! {
                .step(#krate::__private::with_finalizer(
                    #finalizer,
                    #krate::__private::steps::<#parent>("steps") #(#steps)*
                ))
            }
        }
        None => quote!(#(#steps)*),
    };
    let webhooks = webhooks(model, root);
    let versions = versions(model, root);
    let declared = declared(model, root);
    quote! {
        #[automatically_derived]
        impl #ident {
            #(#consts)*

            #webhooks

            #versions

            #signature {
                #status_check
                #(#bindings)*
                #(#checks)*
                #krate::__private::reconciler::<#parent>(#name)
                    #config
                    #(#declarations)*
                    #steps
            }
        }

        #declared
    }
}

/// The child steps (their index among the steps) and the locals they are built into, when there are two or
/// more: only then is there a pair to compare.
fn child_locals(model: &Model) -> Vec<(usize, Ident)> {
    let children: Vec<usize> = model
        .steps
        .iter()
        .enumerate()
        .filter(|(_, s)| matches!(s, Step::Child(_) | Step::Children(_)))
        .map(|(i, _)| i)
        .collect();
    if children.len() < 2 {
        return Vec::new();
    }
    children
        .into_iter()
        .map(|i| {
            (
                i,
                format_ident!("__operator_step_{}", i, span = Span::mixed_site()),
            )
        })
        .collect()
}

/// One step per child kind, when kinds are inferred (see `valid::one_step_per_child_kind`): for each pair of
/// child steps, a call that compiles only when their kinds differ, spanned on the second step's attribute.
fn kind_checks(model: &Model, locals: &[(usize, Ident)]) -> Vec<TokenStream> {
    let mut checks = Vec::new();
    for (j, (second, b)) in locals.iter().enumerate() {
        let span = match &model.steps[*second] {
            Step::Child(c) => c.span,
            Step::Children(c) => c.span,
            _ => continue,
        };
        let krate = krate_at(model, span);
        for (_, a) in &locals[..j] {
            checks.push(quote_spanned!(span=>
                #krate::__private::one_step_per_child_kind(&#a, &#b);
            ));
        }
    }
    checks
}

/// Container options as builder calls.
fn config(model: &Model) -> TokenStream {
    let krate = &model.krate;
    let c = &model.container;
    let mut out = TokenStream::new();
    if let Some(n) = &c.concurrency {
        let n = n.0;
        out.extend(quote!(.concurrency(#n)));
    }
    if let Some(ms) = &c.debounce_ms {
        let ms = ms.0;
        out.extend(quote!(.debounce(#krate::__private::millis(#ms))));
    }
    if let Some(m) = &c.field_manager {
        let m = LitStr::new(m.as_str(), m.span());
        out.extend(quote!(.field_manager(#m)));
    }
    if c.one_action_per_pass.is_present() {
        out.extend(quote!(.one_action_per_pass(true)));
    }
    if c.data.is_some() {
        out.extend(quote!(.data_opt(::core::convert::Into::into(data))));
    }
    out
}

/// `#[owns]`, `#[tracks]` and `#[watches]` as builder calls, spanned on the type, the mapper or the field.
fn declaration(model: &Model, d: &Declaration) -> TokenStream {
    match d {
        Declaration::Owns(ty) => quote_spanned!(ty.span()=> .owns::<#ty>()),
        Declaration::Tracks(ty) => quote_spanned!(ty.span()=> .tracks::<#ty>()),
        Declaration::Watches { ty, map, by, .. } => {
            if let (Some(ty), Some(by)) = (ty, by) {
                let field = &by.0;
                let krate = krate_at(model, field.span());
                // With `#[kube(..)]` the derive is on the spec; with `#[reconciler(root)]`, on the root itself.
                let read = if model.kube.is_some() {
                    quote_spanned!(field.span()=> &parent.spec.#field)
                } else {
                    quote_spanned!(field.span()=> &parent.#field)
                };
                return quote_spanned!(field.span()=>
                    .references::<#ty>(|parent: &_| #krate::__private::reference_names(#read))
                );
            }
            let Some(map) = map else {
                return TokenStream::new();
            };
            let map_path = map.path();
            let krate = krate_at(model, map.span());
            // The root named, so a function of the wrong shape is reported with the parent type it must return.
            let root = model
                .root
                .as_ref()
                .map(|r| r.parent_at(&model.krate, map.span()))
                .unwrap_or_else(|| quote!(_));
            let ty = ty
                .as_ref()
                .map(|t| t.to_token_stream())
                .unwrap_or_else(|| quote!(_));
            quote_spanned!(map.span()=>
                .watches_with::<#ty>(#krate::__private::mapper::<#ty, #root, _, _>(#map_path))
            )
        }
    }
}

/// The span a step's errors are reported at: its (desired) function.
fn step_span(step: &Step) -> proc_macro2::Span {
    match step {
        Step::Child(c) => c.desired.as_ref().map_or(c.span, |d| d.span()),
        Step::Children(c) => c.desired.as_ref().map_or(c.span, |d| d.span()),
        Step::Sync(f) | Step::Finalize(_, f) => f.span(),
    }
}

/// The runtime crate's path with every token spanned on `span`: a call whose tokens all carry the span of
/// the function in the attribute has its errors reported there (a call starting with a token of the derive's
/// own span would be reported on the derive).
fn krate_at(model: &Model, span: proc_macro2::Span) -> TokenStream {
    model
        .krate
        .to_token_stream()
        .into_iter()
        .map(|mut t| {
            t.set_span(span);
            t
        })
        .collect()
}

/// One step as a runtime value.
fn step(model: &Model, root: &Root, step: &Step) -> TokenStream {
    match step {
        Step::Child(c) => child(model, root, c),
        Step::Children(c) => children(model, root, c),
        Step::Sync(f) => {
            let krate = krate_at(model, f.span());
            let ident = root.parent_at(&model.krate, f.span());
            let name = LitStr::new(&f.name(), f.span());
            let path = f.path();
            quote_spanned!(f.span()=> #krate::__private::sync::<#ident, _, _>(#name, #path))
        }
        Step::Finalize(_, f) => {
            let krate = krate_at(model, f.span());
            let ident = root.parent_at(&model.krate, f.span());
            let name = LitStr::new(&f.name(), f.span());
            let path = f.path();
            quote_spanned!(f.span()=> #krate::__private::finalize::<#ident, _, _>(#name, #path))
        }
    }
}

/// The child type, or `_` to infer it, spanned on the desired function so that a child that is not a
/// Kubernetes resource is reported there.
fn child_type(ty: Option<&syn::Type>, span: proc_macro2::Span) -> TokenStream {
    match ty {
        Some(ty) => ty.to_token_stream(),
        None => quote_spanned!(span=> _),
    }
}

fn child(model: &Model, root: &Root, c: &Child) -> TokenStream {
    let Some(desired) = &c.desired else {
        return TokenStream::new();
    };
    let krate = krate_at(model, desired.span());
    let ident = root.parent_at(&model.krate, desired.span());
    let ty = child_type(c.ty.as_ref(), desired.span());
    let path = desired.path();
    let mut out =
        quote_spanned!(desired.span()=> #krate::__private::child::<#ident, #ty, _, _>(#path));
    if c.generate_name {
        out.extend(quote!(.generate_name()));
    }
    match c.strategy.as_ref().map(|s| s.as_str()) {
        Some("update") => out.extend(quote!(.strategy(#krate::__private::update()))),
        Some("create") => out.extend(quote!(.strategy(#krate::__private::create_only()))),
        _ if c.strategy.is_some() || c.force.is_some() => {
            let force = c.force.as_ref().is_none_or(|f| **f);
            out.extend(quote!(.strategy(#krate::__private::apply(#force))));
        }
        _ => {}
    }
    if let Some(m) = &c.field_manager {
        let m = LitStr::new(m.as_str(), m.span());
        out.extend(quote!(.field_manager(#m)));
    }
    if let Some(cond) = &c.condition {
        let cond = LitStr::new(cond.as_str(), cond.span());
        out.extend(quote!(.condition(#cond)));
    }
    if let Some(s) = &c.sanitize {
        let p = s.path();
        out.extend(quote_spanned!(s.span()=> .sanitize(#p)));
    }
    if let Some(r) = &c.ready {
        let p = r.path();
        out.extend(quote_spanned!(r.span()=> .ready(#p)));
    }
    if let Some(r) = &c.reflect {
        let p = r.path();
        out.extend(quote_spanned!(r.span()=> .reflect_status(#p)));
    }
    if let Some(field) = &c.reflect_name {
        let field = &field.0;
        out.extend(quote_spanned!(field.span()=> .reflect_name(|status| &mut status.#field)));
    }
    out
}

fn children(model: &Model, root: &Root, c: &Children) -> TokenStream {
    let (Some(desired), Some(id)) = (&c.desired, &c.id) else {
        return TokenStream::new();
    };
    let krate = krate_at(model, desired.span());
    let ident = root.parent_at(&model.krate, desired.span());
    let ty = child_type(c.ty.as_ref(), desired.span());
    let (desired_path, id_path) = (desired.path(), id.path());
    let span = desired.span();
    let id_arg = quote_spanned!(id.span()=> #id_path);
    let mut out = quote_spanned!(span=> #krate::__private::children::<#ident, #ty, _, _, _>(#desired_path, #id_arg));
    match c.strategy.as_ref().map(|s| s.as_str()) {
        Some("create") => out.extend(quote!(.strategy(#krate::__private::set_create_only()))),
        _ if c.strategy.is_some() || c.force.is_some() => {
            let force = c.force.as_ref().is_none_or(|f| **f);
            out.extend(quote!(.strategy(#krate::__private::set_apply(#force))));
        }
        _ => {}
    }
    if let Some(r) = &c.retain {
        let p = r.path();
        out.extend(quote_spanned!(r.span()=> .retain(#p)));
    }
    if let Some(cond) = &c.condition {
        let cond = LitStr::new(cond.as_str(), cond.span());
        out.extend(quote!(.condition(#cond)));
    }
    if let Some(r) = &c.ready {
        let p = r.path();
        out.extend(quote_spanned!(r.span()=> .ready(#p)));
    }
    if let Some(r) = &c.reflect {
        let p = r.path();
        out.extend(quote_spanned!(r.span()=> .reflect_status(#p)));
    }
    out
}

/// `webhooks()`: the builder calls of every `#[admission(..)]`, each spanned on what it comes from.
fn webhooks(model: &Model, root: &Root) -> Option<TokenStream> {
    let signature = webhooks_signature(model, root)?;
    let krate = &model.krate;
    let ident = &root.ident;
    let calls = model.admission.iter().map(|(_, opts, _)| {
        let validate = opts.validate.as_ref().map(|f| {
            let path = f.path();
            quote_spanned!(f.span()=> .validate(#path))
        });
        let default = opts.default.as_ref().map(|f| {
            let path = f.path();
            quote_spanned!(f.span()=> .default(#path))
        });
        let deletes = opts
            .deletes
            .is_present()
            .then(|| quote!(.validate_deletes()));
        let policy = opts.failure_policy.as_ref().map(|p| {
            let variant = format_ident!("{}", p.as_str(), span = p.span());
            quote!(.failure_policy(#krate::admission::FailurePolicy::#variant))
        });
        let timeout = opts.timeout_seconds.as_ref().map(|t| {
            let t = **t;
            quote!(.timeout_seconds(#t))
        });
        quote!(#validate #default #deletes #policy #timeout)
    });
    Some(quote! {
        #signature {
            #krate::admission::Webhooks::<#ident>::new() #(#calls)*
        }
    })
}

/// `versions()`: a `.version::<V>()` call per `#[version(V, ..)]`, spanned on `V` so that a missing
/// conversion is reported there, and the storage version and deprecations.
fn versions(model: &Model, root: &Root) -> Option<TokenStream> {
    let signature = versions_signature(model, root)?;
    let krate = &model.krate;
    let ident = &root.ident;
    let version_of = |ty: &dyn ToTokens| quote!(<#ty as #krate::kube::Resource>::version(&()));
    let hub_storage = model.container.storage.is_present().then(|| {
        let v = version_of(ident);
        quote!(.storage(#v))
    });
    let calls = model.versions.iter().filter_map(|(_, ty, opts)| {
        let ty = ty.as_ref()?;
        let v = version_of(ty);
        let storage = opts.storage.is_present().then(|| quote!(.storage(#v)));
        let deprecated = opts.deprecated.as_ref().map(|d| {
            let warning = match d {
                darling::util::Override::Explicit(w) => LitStr::new(w.as_str(), w.span()),
                darling::util::Override::Inherit => LitStr::new("", ty.span()),
            };
            quote!(.deprecated(#v, #warning))
        });
        Some(quote_spanned!(ty.span()=> .version::<#ty>() #storage #deprecated))
    });
    Some(quote! {
        #signature {
            #krate::conversion::Versions::<#ident>::new() #hub_storage #(#calls)*
        }
    })
}
