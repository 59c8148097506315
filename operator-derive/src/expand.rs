//! Phase 4: the generated code when the attributes are valid.
//!
//! The output is one inherent `impl` on the root kind: the stash keys as associated constants, and
//! `reconciler()`, a chain of calls to the runtime's builder (`operator::__private` spells out the generic
//! parameters). Every path is absolute; calls that involve a function named in an attribute are spanned on
//! that function's path, so the compiler's signature errors point at the attribute.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, LitStr};

use crate::items::{signature, stash_consts};
use crate::model::{Child, Children, Declaration, Model, Root, Step};

/// The generated `impl` (nothing when the root kind is unknown: kube reports why).
pub fn expand(model: &Model) -> TokenStream {
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
