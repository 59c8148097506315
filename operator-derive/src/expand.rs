//! Phase 4: the generated code, and the pipeline that gets there.
//!
//! The output is one inherent `impl` on the root kind: the stash keys as associated constants, and
//! `reconciler()`, a chain of calls to the runtime's builder (`operator::__private` spells out the generic
//! parameters). Every path is absolute; calls that involve a function named in an attribute are spanned on
//! that function's path, so the compiler's signature errors point at the attribute.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{DeriveInput, Ident, LitStr};

use crate::attr;
use crate::fallback;
use crate::model::{Child, Children, Declaration, Model, Root, Step};
use crate::valid;

/// The derive, on `proc_macro2` tokens so that unit tests can call it.
pub fn derive(input: TokenStream) -> TokenStream {
    let input: DeriveInput = match syn::parse2(input) {
        Ok(input) => input,
        Err(e) => return e.into_compile_error(),
    };
    let mut errors = darling::Error::accumulator();
    let parsed = attr::parse(&input.attrs, &mut errors);
    let model = Model::build(&input, parsed);
    valid::check(&model, &mut errors);
    match errors.finish() {
        Ok(()) => expand(&model),
        Err(e) => fallback::expand(&model, e),
    }
}

/// The generated `impl` (nothing when the root kind is unknown: kube reports why).
fn expand(model: &Model) -> TokenStream {
    let Some(root) = &model.root else {
        return TokenStream::new();
    };
    let krate = &model.krate;
    let ident = &root.ident;
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
    // Kubernetes resource) is reported at the attribute.
    let steps: Vec<TokenStream> = model
        .steps
        .iter()
        .map(|s| {
            let call = step(model, root, s);
            quote_spanned!(step_span(s)=> .step(#call))
        })
        .collect();
    let steps = match &model.container.finalizer {
        Some(finalizer) => {
            let finalizer = LitStr::new(finalizer.as_str(), finalizer.span());
            quote! {
                .step(#krate::__private::with_finalizer(
                    #finalizer,
                    #krate::__private::steps::<#ident>("steps") #(#steps)*
                ))
            }
        }
        None => quote!(#(#steps)*),
    };
    quote! {
        #[automatically_derived]
        impl #ident {
            #(#consts)*

            #signature {
                #status_check
                #krate::__private::reconciler::<#ident>(#name)
                    #config
                    #(#declarations)*
                    #steps
            }
        }
    }
}

/// `pub fn reconciler(..) -> operator::Reconciler<Root>`, with its documentation.
pub fn signature(model: &Model, root: &Root) -> TokenStream {
    let krate = &model.krate;
    let ident = &root.ident;
    let vis = &root.vis;
    let doc = format!(
        "The reconciler of `{ident}` declared by `#[derive(Reconciler)]` on `{}`: run it with `operator::Operator::controller`.",
        model.input.ident
    );
    let data = model.container.data.as_ref().map(|d| {
        let ty = &d.0;
        quote!(data: #ty)
    });
    quote! {
        #[doc = #doc]
        #vis fn reconciler(#data) -> #krate::Reconciler<#ident>
    }
}

/// `pub const IMAGE: operator::StashKey<String> = ..;` per stash key (those with a usable name).
pub fn stash_consts(model: &Model, root: &Root) -> Vec<TokenStream> {
    let krate = &model.krate;
    let vis = &root.vis;
    let mut seen = std::collections::HashSet::new();
    model
        .stash
        .iter()
        // A duplicate is reported by `valid`; emitting it twice would add a second error.
        .filter(|entry| seen.insert(entry.name.to_string()))
        .filter_map(|entry| {
            let name = entry.name.to_string();
            let name = name.strip_prefix("r#").unwrap_or(&name);
            let constant: Ident = syn::parse_str(&name.to_uppercase()).ok()?;
            let constant = Ident::new(&constant.to_string(), entry.name.span());
            let ty = &entry.ty;
            let key = LitStr::new(name, entry.name.span());
            let doc = format!("Stash key `{name}`, declared by `#[stash({name}: ..)]`.");
            Some(quote! {
                #[doc = #doc]
                #vis const #constant: #krate::StashKey<#ty> = #krate::StashKey::new(#key);
            })
        })
        .collect()
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
        out.extend(quote!(.data(data)));
    }
    out
}

/// `#[owns]`, `#[tracks]` and `#[watches]` as builder calls, spanned on the type or the mapper.
fn declaration(_model: &Model, d: &Declaration) -> TokenStream {
    match d {
        Declaration::Owns(ty) => quote_spanned!(ty.span()=> .owns::<#ty>()),
        Declaration::Tracks(ty) => quote_spanned!(ty.span()=> .tracks::<#ty>()),
        Declaration::Watches { ty, map, .. } => {
            let Some(map) = map else {
                return TokenStream::new();
            };
            let map_path = map.path();
            match ty {
                Some(ty) => quote_spanned!(map.span()=> .watches::<#ty>(#map_path)),
                None => quote_spanned!(map.span()=> .watches(#map_path)),
            }
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

/// The root kind's name, spanned on `span` (where errors about a step's types are reported).
fn root_at(root: &Root, span: proc_macro2::Span) -> Ident {
    Ident::new(&root.ident.to_string(), span)
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
            let ident = root_at(root, f.span());
            let name = LitStr::new(&f.name(), f.span());
            let path = f.path();
            quote_spanned!(f.span()=> #krate::__private::sync::<#ident, _>(#name, #path))
        }
        Step::Finalize(_, f) => {
            let krate = krate_at(model, f.span());
            let ident = root_at(root, f.span());
            let name = LitStr::new(&f.name(), f.span());
            let path = f.path();
            quote_spanned!(f.span()=> #krate::__private::finalize::<#ident, _>(#name, #path))
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
    let ident = root_at(root, desired.span());
    let ty = child_type(c.ty.as_ref(), desired.span());
    let path = desired.path();
    let mut out =
        quote_spanned!(desired.span()=> #krate::__private::child::<#ident, #ty, _>(#path));
    if c.generate_name {
        out.extend(quote!(.generate_name()));
    }
    let update = c.strategy.as_ref().is_some_and(|s| s.as_str() == "update");
    if update {
        out.extend(quote!(.strategy(#krate::__private::update())));
    } else if c.strategy.is_some() || c.force.is_some() {
        let force = c.force.as_ref().is_none_or(|f| **f);
        out.extend(quote!(.strategy(#krate::__private::apply(#force))));
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
    if let Some(r) = &c.reflect {
        let p = r.path();
        out.extend(quote_spanned!(r.span()=> .reflect_status(#p)));
    }
    out
}

fn children(model: &Model, root: &Root, c: &Children) -> TokenStream {
    let (Some(desired), Some(id)) = (&c.desired, &c.id) else {
        return TokenStream::new();
    };
    let krate = krate_at(model, desired.span());
    let ident = root_at(root, desired.span());
    let ty = child_type(c.ty.as_ref(), desired.span());
    let (desired_path, id_path) = (desired.path(), id.path());
    let span = desired.span();
    let id_arg = quote_spanned!(id.span()=> #id_path);
    let mut out = quote_spanned!(span=> #krate::__private::children::<#ident, #ty, _, _>(#desired_path, #id_arg));
    if let Some(cond) = &c.condition {
        let cond = LitStr::new(cond.as_str(), cond.span());
        out.extend(quote!(.condition(#cond)));
    }
    if let Some(r) = &c.reflect {
        let p = r.path();
        out.extend(quote_spanned!(r.span()=> .reflect_status(#p)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(tokens: TokenStream) -> String {
        derive(tokens).to_string()
    }

    #[test]
    fn a_valid_spec_struct_expands_to_builder_calls() {
        let out = expand(quote! {
            #[kube(group = "example.dev", version = "v1", kind = "WebApp", namespaced, status = "WebAppStatus")]
            #[reconciler(name = "webapp-controller", concurrency = 4)]
            #[tracks(ConfigMap)]
            #[child(desired = desired_deployment, reflect = reflect_deployment)]
            #[child(Service, desired = desired_service, strategy = "update")]
            #[stash(image: String)]
            pub struct WebAppSpec { image: String }
        });
        assert!(!out.contains("compile_error"), "{out}");
        for expected in [
            "impl WebApp",
            "pub const IMAGE : :: operator :: StashKey < String > = :: operator :: StashKey :: new (\"image\")",
            "pub fn reconciler () -> :: operator :: Reconciler < WebApp >",
            ":: operator :: __private :: assert_status :: < WebAppStatus > ()",
            ". concurrency (4u16)",
            ". tracks :: < ConfigMap > ()",
            ":: operator :: __private :: child :: < WebApp , _ , _ > (desired_deployment) . reflect_status (reflect_deployment)",
            ":: operator :: __private :: child :: < WebApp , Service , _ > (desired_service) . strategy (:: operator :: __private :: update ())",
        ] {
            assert!(out.contains(expected), "missing `{expected}` in\n{out}");
        }
        // The tracks declaration comes before the steps; the steps keep declaration order.
        assert!(out.find("desired_deployment") < out.find("desired_service"));
    }

    #[test]
    fn a_finalizer_wraps_every_step() {
        let out = expand(quote! {
            #[reconciler(root, finalizer = "example.dev/cleanup", crate = "crate::rt")]
            #[sync(resolve)]
            #[finalize(release)]
            struct Thing;
        });
        assert!(!out.contains("compile_error"), "{out}");
        assert!(out.contains("impl Thing"), "{out}");
        assert!(out.contains(
            ". step (crate :: rt :: __private :: with_finalizer (\"example.dev/cleanup\" , crate :: rt :: __private :: steps :: < Thing > (\"steps\") . step (crate :: rt :: __private :: sync :: < Thing , _ > (\"resolve\" , resolve)) . step (crate :: rt :: __private :: finalize :: < Thing , _ > (\"release\" , release))))"
        ), "{out}");
        assert!(!out.contains(":: operator ::"), "{out}");
    }

    #[test]
    fn errors_come_with_stubs() {
        let out = expand(quote! {
            #[kube(group = "example.dev", version = "v1", kind = "WebApp", status = "WebAppStatus")]
            #[child(desird = f)]
            #[stash(image: String)]
            pub struct WebAppSpec {}
        });
        assert!(out.contains("compile_error"), "{out}");
        assert!(
            out.contains("pub fn reconciler () -> :: operator :: Reconciler < WebApp >"),
            "{out}"
        );
        assert!(out.contains("pub const IMAGE"), "{out}");
    }

    /// The size of what the derive emits for the `webapp` example's `WebApp` (reported in the issue): formatted
    /// with rustfmt when it is installed, otherwise counted as token lines (one item or call per line).
    #[test]
    fn the_webapp_expansion_is_small() {
        let out = derive(quote! {
            #[kube(group = "example.dev", version = "v1", kind = "WebApp", namespaced, status = "WebAppStatus")]
            #[reconciler(name = "webapp-controller")]
            #[tracks(ConfigMap)]
            #[child(desired = desired_deployment, reflect = reflect_deployment)]
            #[child(desired = desired_service, reflect = reflect_service)]
            pub struct WebAppSpec {}
        })
        .to_string();
        assert!(!out.contains("compile_error"), "{out}");
        let formatted = std::process::Command::new("rustfmt")
            .args(["--edition", "2024", "--emit", "stdout"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .ok()
            .and_then(|mut child| {
                use std::io::Write;
                child.stdin.take()?.write_all(out.as_bytes()).ok()?;
                let output = child.wait_with_output().ok()?;
                output
                    .status
                    .success()
                    .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
            });
        let lines = match &formatted {
            Some(text) => text.lines().filter(|l| !l.trim().is_empty()).count(),
            None => out.matches(['{', ';', '.']).count(),
        };
        println!(
            "the derive emits {lines} lines for WebApp ({}):\n{}",
            if formatted.is_some() {
                "rustfmt"
            } else {
                "token count"
            },
            formatted.as_deref().unwrap_or(&out)
        );
        assert!(lines < 40, "{lines} lines");
    }
}
