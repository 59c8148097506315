//! The items both expansions emit, the valid one ([`crate::expand`]) and the stubs ([`crate::fallback`]):
//! the `reconciler()` signature and the stash key constants, so that the two cannot drift apart.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Ident, LitStr};

use crate::model::{Model, Root};

/// `pub fn reconciler(..) -> kubewright::Reconciler<Root>`, with its documentation.
pub fn signature(model: &Model, root: &Root) -> TokenStream {
    let krate = &model.krate;
    let ident = &root.ident;
    let vis = &root.vis;
    let parent = root.parent_at(krate, proc_macro2::Span::call_site());
    let kind = match &root.parent {
        Some(ty) => quote!(#ty).to_string(),
        None => ident.to_string(),
    };
    let doc = format!(
        "The reconciler of `{kind}` declared by `#[derive(Reconciler)]` on `{}`: run it with `kubewright::Operator::controller`.",
        model.input.ident
    );
    // Optional: a binary that only prints manifests passes `None` (steps then read `None` from `cx.data()`).
    let data = model.container.data.as_ref().map(|d| {
        let ty = &d.0;
        quote!(data: impl ::core::convert::Into<::core::option::Option<#ty>>)
    });
    quote! {
        #[doc = #doc]
        #vis fn reconciler(#data) -> #krate::Reconciler<#parent>
    }
}

/// `pub const IMAGE: kubewright::StashKey<String> = ..;` per stash key (those with a usable name).
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

/// `pub fn webhooks() -> kubewright::admission::Webhooks<Root>`, with its documentation, when the input has
/// `#[admission(..)]`.
pub fn webhooks_signature(model: &Model, root: &Root) -> Option<TokenStream> {
    // Refused with a foreign parent (`valid::foreign_parent`).
    if model.admission.is_empty() || root.parent.is_some() {
        return None;
    }
    let krate = &model.krate;
    let ident = &root.ident;
    let vis = &root.vis;
    let doc = format!(
        "The admission webhooks of `{ident}` declared by `#[admission(..)]` on `{}`: serve them with `kubewright::admission::WebhookServer::kind`.",
        model.input.ident
    );
    Some(quote! {
        #[doc = #doc]
        #vis fn webhooks() -> #krate::admission::Webhooks<#ident>
    })
}

/// `pub fn versions() -> kubewright::conversion::Versions<Root>`, with its documentation, when the input has
/// `#[version(..)]`.
pub fn versions_signature(model: &Model, root: &Root) -> Option<TokenStream> {
    // Refused with a foreign parent (`valid::versions`).
    if model.versions.is_empty() || root.parent.is_some() {
        return None;
    }
    let krate = &model.krate;
    let ident = &root.ident;
    let vis = &root.vis;
    let doc = format!(
        "The versions of `{ident}` declared by `#[version(..)]` on `{}`: serve them with `kubewright::cli::App::versions`.",
        model.input.ident
    );
    Some(quote! {
        #[doc = #doc]
        #vis fn versions() -> #krate::conversion::Versions<#ident>
    })
}

/// `impl kubewright::Declared for Root`, which hands `reconciler()` and `webhooks()` to `App::operate`, when
/// the reconciler takes no `data` (an operator binary must pass that itself). For a marker with
/// `#[reconciler(parent = K)]`, `impl kubewright::cli::Operate for Marker` instead, through the runtime's
/// macro (nothing without its `cli` feature): `App::operate` then runs its reconciler, with no CRD.
pub fn declared(model: &Model, root: &Root) -> Option<TokenStream> {
    if model.container.data.is_some() {
        return None;
    }
    let krate = &model.krate;
    let ident = &root.ident;
    if root.parent.is_some() {
        return model
            .input
            .generics
            .params
            .is_empty()
            .then(|| quote!(#krate::__operate_marker!(#ident);));
    }
    let webhooks = if model.admission.is_empty() {
        quote!(::core::option::Option::None)
    } else {
        quote!(::core::option::Option::Some(#ident::webhooks()))
    };
    let versions = (!model.versions.is_empty()).then(|| {
        quote! {
            fn declared_versions() -> ::core::option::Option<#krate::conversion::Versions<#ident>> {
                ::core::option::Option::Some(#ident::versions())
            }
        }
    });
    Some(quote! {
        #[automatically_derived]
        impl #krate::Declared for #ident {
            fn declared_reconciler() -> #krate::Reconciler<#ident> {
                #ident::reconciler()
            }
            fn declared_webhooks() -> ::core::option::Option<#krate::admission::Webhooks<#ident>> {
                #webhooks
            }
            #versions
        }
    })
}
