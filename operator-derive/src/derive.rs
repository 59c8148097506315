//! The pipeline: parse the attributes, build the model, check the rules, then emit the expansion, or on
//! error the fallback. It sits above every phase; no phase depends on it.

use proc_macro2::TokenStream;
use syn::DeriveInput;

use crate::model::Model;
use crate::{attr, expand, fallback, valid};

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
        Ok(()) => expand::expand(&model),
        Err(e) => fallback::expand(&model, e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

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
            "pub const IMAGE : :: kubewright :: StashKey < String > = :: kubewright :: StashKey :: new (\"image\")",
            "pub fn reconciler () -> :: kubewright :: Reconciler < WebApp >",
            ":: kubewright :: __private :: assert_status :: < WebAppStatus > ()",
            ". concurrency (4u16)",
            ". tracks :: < ConfigMap > ()",
            ":: kubewright :: __private :: child :: < WebApp , _ , _ , _ > (desired_deployment) . reflect_status (reflect_deployment)",
            ":: kubewright :: __private :: child :: < WebApp , Service , _ , _ > (desired_service) . strategy (:: kubewright :: __private :: update ())",
        ] {
            assert!(out.contains(expected), "missing `{expected}` in\n{out}");
        }
        // The tracks declaration comes before the steps; the steps keep declaration order.
        assert!(out.find("desired_deployment") < out.find("desired_service"));
        // Two child steps: built into locals, whose kinds the compiler compares.
        assert!(
            out.contains(":: kubewright :: __private :: one_step_per_child_kind (& __operator_step_0 , & __operator_step_1) ;"),
            "{out}"
        );
        assert!(
            out.contains(". step (__operator_step_0) . step (__operator_step_1)"),
            "{out}"
        );
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
            ". step (crate :: rt :: __private :: with_finalizer (\"example.dev/cleanup\" , crate :: rt :: __private :: steps :: < Thing > (\"steps\") . step (crate :: rt :: __private :: sync :: < Thing , _ , _ > (\"resolve\" , resolve)) . step (crate :: rt :: __private :: finalize :: < Thing , _ , _ > (\"release\" , release))))"
        ), "{out}");
        assert!(!out.contains(":: kubewright ::"), "{out}");
    }

    #[test]
    fn new_child_keys_become_builder_calls() {
        let out = expand(quote! {
            #[reconciler(root)]
            #[child(Secret, desired = desired_secret, strategy = "create", ready = secret_ready)]
            #[children(desired = desired_namespaces, id = entry, ready = namespace_ready)]
            #[child(ConfigMap, desired = desired_config)]
            struct Tenant;
        });
        assert!(!out.contains("compile_error"), "{out}");
        for expected in [
            "(desired_secret) . strategy (:: kubewright :: __private :: create_only ()) . ready (secret_ready)",
            ":: kubewright :: __private :: children :: < Tenant , _ , _ , _ , _ > (desired_namespaces , entry) . ready (namespace_ready)",
            // Three child steps: every pair is compared.
            "one_step_per_child_kind (& __operator_step_0 , & __operator_step_1) ;",
            "one_step_per_child_kind (& __operator_step_0 , & __operator_step_2) ;",
            "one_step_per_child_kind (& __operator_step_1 , & __operator_step_2) ;",
        ] {
            assert!(out.contains(expected), "missing `{expected}` in\n{out}");
        }
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
            out.contains("pub fn reconciler () -> :: kubewright :: Reconciler < WebApp >"),
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
