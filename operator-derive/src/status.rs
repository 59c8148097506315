//! `#[derive(ReconcilerStatus)]`: the conditions and observed generation of a status struct, found by name.
//!
//! The fields are `conditions` (a `Vec<Condition>`) and `observed_generation` (an `Option<i64>`), or the fields
//! marked `#[status(conditions)]` and `#[status(observed_generation)]`. `#[status(crate = path)]` on the struct
//! names the runtime crate when it is re-exported.

use darling::ast::Data;
use darling::util::Ignored;
use darling::{FromDeriveInput, FromField};
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

/// The struct, as darling reads it.
#[derive(FromDeriveInput)]
#[darling(attributes(status), supports(struct_named))]
struct StatusInput {
    ident: syn::Ident,
    generics: syn::Generics,
    data: Data<Ignored, StatusField>,
    /// The runtime crate's path.
    #[darling(rename = "crate")]
    krate: Option<syn::Path>,
}

/// One field, with its markers.
#[derive(FromField)]
#[darling(attributes(status))]
struct StatusField {
    ident: Option<syn::Ident>,
    ty: syn::Type,
    #[darling(default)]
    conditions: bool,
    #[darling(default)]
    observed_generation: bool,
}

/// The field that plays `role`: the one marked with it, else the one named like it. Several marked is an
/// error on the second marker.
fn pick<'a>(
    fields: &'a [StatusField],
    role: &str,
    marked: impl Fn(&StatusField) -> bool,
    errors: &mut darling::error::Accumulator,
) -> Option<&'a StatusField> {
    let mut chosen: Option<&StatusField> = None;
    for f in fields.iter().filter(|f| marked(f)) {
        if chosen.is_some() {
            errors.push(
                darling::Error::custom(format!(
                    "two fields are marked `#[status({role})]`: keep one"
                ))
                .with_span(&f.ident.as_ref().map_or_else(|| f.ty.span(), |i| i.span())),
            );
        } else {
            chosen = Some(f);
        }
    }
    chosen.or_else(|| {
        fields
            .iter()
            .find(|f| f.ident.as_ref().is_some_and(|i| i == role))
    })
}

/// Expands the derive, or its errors.
pub(crate) fn derive(input: TokenStream) -> TokenStream {
    let input: syn::DeriveInput = match syn::parse2(input) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error(),
    };
    let parsed = match StatusInput::from_derive_input(&input) {
        Ok(p) => p,
        Err(e) => return e.write_errors(),
    };
    let fields = match &parsed.data {
        Data::Struct(s) => s.fields.as_slice(),
        Data::Enum(_) => &[],
    };
    let mut errors = darling::Error::accumulator();
    let conditions = pick(fields, "conditions", |f| f.conditions, &mut errors);
    let generation = pick(
        fields,
        "observed_generation",
        |f| f.observed_generation,
        &mut errors,
    );
    let ident = &parsed.ident;
    if conditions.is_none() {
        errors.push(
            darling::Error::custom(
                "`#[derive(ReconcilerStatus)]` needs the conditions: add `pub conditions: Vec<Condition>` \
                 (with `#[serde(default)]`), or mark the field that holds them `#[status(conditions)]`",
            )
            .with_span(ident),
        );
    }
    if generation.is_none() {
        errors.push(
            darling::Error::custom(
                "`#[derive(ReconcilerStatus)]` needs the observed generation: add \
                 `pub observed_generation: Option<i64>`, or mark the field that holds it \
                 `#[status(observed_generation)]`",
            )
            .with_span(ident),
        );
    }
    if let Err(e) = errors.finish() {
        // The trait is still implemented, so that its uses report nothing more than this.
        let stub = stub(&parsed);
        let errors = e.write_errors();
        return quote!(#errors #stub);
    }
    let (Some(conditions), Some(generation)) = (conditions, generation) else {
        return TokenStream::new();
    };
    let krate = krate(&parsed);
    let (impl_generics, ty_generics, where_clause) = parsed.generics.split_for_impl();
    let c = conditions.ident.as_ref();
    let g = generation.ident.as_ref();
    // Spanned at the fields, so a field of the wrong type is reported where it is declared.
    let c_ty = &conditions.ty;
    let g_ty = &generation.ty;
    let conditions_ref = quote_spanned!(c_ty.span()=> &self.#c);
    let conditions_mut = quote_spanned!(c_ty.span()=> &mut self.#c);
    let generation_get = quote_spanned!(g_ty.span()=> self.#g);
    let generation_set = quote_spanned!(g_ty.span()=> self.#g = generation);
    quote! {
        #[automatically_derived]
        impl #impl_generics #krate::ReconcilerStatus for #ident #ty_generics #where_clause {
            fn conditions(&self) -> &[#krate::__private::Condition] {
                #conditions_ref
            }
            fn conditions_mut(&mut self) -> &mut ::std::vec::Vec<#krate::__private::Condition> {
                #conditions_mut
            }
            fn observed_generation(&self) -> ::std::option::Option<i64> {
                #generation_get
            }
            fn set_observed_generation(&mut self, generation: ::std::option::Option<i64>) {
                #generation_set;
            }
        }
    }
}

fn krate(parsed: &StatusInput) -> TokenStream {
    match &parsed.krate {
        Some(p) => quote!(#p),
        None => quote!(::kubewright),
    }
}

/// An implementation that compiles whatever the fields are, emitted beside the errors.
fn stub(parsed: &StatusInput) -> TokenStream {
    let krate = krate(parsed);
    let ident = &parsed.ident;
    let (impl_generics, ty_generics, where_clause) = parsed.generics.split_for_impl();
    quote! {
        #[automatically_derived]
        impl #impl_generics #krate::ReconcilerStatus for #ident #ty_generics #where_clause {
            fn conditions(&self) -> &[#krate::__private::Condition] {
                ::std::unimplemented!()
            }
            fn conditions_mut(&mut self) -> &mut ::std::vec::Vec<#krate::__private::Condition> {
                ::std::unimplemented!()
            }
            fn observed_generation(&self) -> ::std::option::Option<i64> {
                ::std::unimplemented!()
            }
            fn set_observed_generation(&mut self, _: ::std::option::Option<i64>) {
                ::std::unimplemented!()
            }
        }
    }
}
