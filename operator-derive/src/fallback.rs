//! Phase 5: what the derive emits when the attributes are wrong: every error, plus stub items with the
//! signatures the valid expansion would have had (`reconciler()` and the stash keys), so that code using them
//! compiles on and the author sees the mistakes in the attributes, not fifty follow-on errors.

use proc_macro2::TokenStream;
use quote::quote;

use crate::items::{declared, signature, stash_consts, versions_signature, webhooks_signature};
use crate::model::Model;

/// The errors and the stubs.
pub fn expand(model: &Model, errors: darling::Error) -> TokenStream {
    let errors = errors.write_errors();
    let Some(root) = &model.root else {
        return errors;
    };
    // An `impl` of a generic type without its parameters would only add errors.
    if !model.input.generics.params.is_empty() {
        return errors;
    }
    // Without a status the root kind cannot be a parent: naming
    // `Reconciler<Root>` would only add errors.
    let usable = !model.root_is_kubes() || root.status.is_some();
    let ident = &root.ident;
    let consts = stash_consts(model, root);
    let reconciler = usable.then(|| {
        let signature = signature(model, root);
        quote! {
            #signature {
                ::core::unimplemented!("#[derive(Reconciler)] failed; see the errors on its attributes")
            }
        }
    });
    let webhooks = webhooks_signature(model, root).map(|signature| {
        quote! {
            #signature {
                ::core::unimplemented!("#[derive(Reconciler)] failed; see the errors on its attributes")
            }
        }
    });
    let versions = versions_signature(model, root).map(|signature| {
        quote! {
            #signature {
                ::core::unimplemented!("#[derive(Reconciler)] failed; see the errors on its attributes")
            }
        }
    });
    let declared = usable.then(|| declared(model, root)).flatten();
    quote! {
        #errors

        #[automatically_derived]
        impl #ident {
            #(#consts)*
            #reconciler
            #webhooks
            #versions
        }

        #declared
    }
}
