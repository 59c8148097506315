//! Tests of attribute parsing: every form, and every error reported at once.

use proc_macro2::TokenStream;
use quote::quote;

use super::opts::{Item, Parsed};
use super::*;

fn parse_attrs(tokens: TokenStream) -> (Parsed, Vec<String>) {
    let input: syn::DeriveInput = syn::parse2(quote! { #tokens struct S; }).expect("test input");
    let mut errors = Error::accumulator();
    let parsed = parse(&input.attrs, &mut errors);
    let messages = errors
        .into_inner()
        .into_iter()
        .flat_map(|e| e.flatten())
        .map(|e| e.to_string())
        .collect();
    (parsed, messages)
}

#[test]
fn leading_types_and_keys() {
    let (parsed, errors) = parse_attrs(quote! {
        #[child(Deployment, desired = d, generate_name)]
        #[child(generate_name, desired = d)]
        #[children(desired = ds, id = id)]
        #[watches(ConfigMap, map = m)]
    });
    assert!(errors.is_empty(), "{errors:?}");
    let kinds: Vec<(bool, bool)> = parsed
        .items
        .iter()
        .map(|i| match i {
            Item::Child { ty, opts, .. } => (ty.is_some(), opts.generate_name.is_present()),
            Item::Children { ty, .. } | Item::Watches { ty, .. } => (ty.is_some(), false),
            _ => (false, false),
        })
        .collect();
    assert_eq!(
        kinds,
        [(true, true), (false, true), (false, false), (true, false)]
    );
}

#[test]
fn errors_are_all_collected_and_name_the_attribute() {
    let (_, errors) = parse_attrs(quote! {
        #[child(desird = d)]
        #[child(desired = "d")]
        #[sync(a, b)]
        #[owns("Secret")]
        #[reconciler(concurrency = "many", nme = "x")]
    });
    assert_eq!(errors.len(), 6, "{errors:#?}");
    assert!(
        errors[0].starts_with("`#[child]`: Unknown field: `desird`. Did you mean `desired`?"),
        "{}",
        errors[0]
    );
    assert!(
        errors[1].contains("found a string: remove the quotes (`d`, not `\"d\"`)"),
        "{}",
        errors[1]
    );
    assert!(
        errors[2].contains("one function per `#[sync]`"),
        "{}",
        errors[2]
    );
    assert!(
        errors[3].starts_with("`#[owns]`: expected a type, found a string"),
        "{}",
        errors[3]
    );
    assert!(
        errors[4..].iter().all(|e| e.starts_with("`#[reconciler")),
        "{errors:?}"
    );
}

#[test]
fn kube_keys_are_read_leniently() {
    let (parsed, errors) = parse_attrs(quote! {
        #[kube(group = "g", version = "v1", kind = "WebApp", namespaced, status = "WebAppStatus",
               printcolumn = r#"{"name":"x"}"#, validation = Rule::new("self.x > 0"))]
    });
    assert!(errors.is_empty());
    let kube = parsed.kube.expect("kube");
    assert_eq!(kube.kind.map(|k| k.value()).as_deref(), Some("WebApp"));
    assert!(kube.namespaced);
    assert!(kube.status.is_some());
}

#[test]
fn stash_entries() {
    let (parsed, errors) = parse_attrs(quote! { #[stash(image: String, ports: Vec<u16>)] });
    assert!(errors.is_empty());
    assert!(matches!(&parsed.items[0], Item::Stash(e) if e.len() == 2));
    let (_, errors) = parse_attrs(quote! { #[stash(image String)] });
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].contains("expected `: Type` after `image`"),
        "{}",
        errors[0]
    );
}

/// The `KEYS` lists are what darling reads: each key is known to its receiver.
#[test]
fn key_lists_match_the_receivers() {
    fn known<T: FromMeta>(keys: &[&str]) {
        for key in keys {
            let tokens: TokenStream = format!("{key} = 0").parse().expect("tokens");
            let items = NestedMeta::parse_meta_list(tokens).expect("a key");
            if let Err(e) = T::from_list(&items) {
                assert!(!e.to_string().contains("Unknown field"), "{key}: {e}");
            }
        }
    }
    known::<ContainerOpts>(ContainerOpts::KEYS);
    known::<ChildOpts>(ChildOpts::KEYS);
    known::<ChildrenOpts>(ChildrenOpts::KEYS);
    known::<WatchesOpts>(WatchesOpts::KEYS);
    known::<AdmissionOpts>(AdmissionOpts::KEYS);
    known::<VersionOpts>(VersionOpts::KEYS);
}

#[test]
fn a_typo_keeps_the_other_keys_and_a_missing_key_is_reported_with_it() {
    let (parsed, errors) = parse_attrs(quote! {
        #[reconciler(data = Settings, concurency = 2)]
        #[children(desired = ds, reflct = r)]
    });
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert!(parsed.container.data.is_some());
    let Some(Item::Children { opts, written, .. }) = parsed.items.first() else {
        panic!("{:?}", parsed.items)
    };
    assert!(opts.desired.is_some());
    // `reflct` is a typo of `reflect`: counted as written, so it is not also "missing".
    assert_eq!(written, &["desired", "reflect"]);
}

#[test]
fn a_bad_value_drops_only_its_key() {
    let (parsed, errors) = parse_attrs(quote! {
        #[child(desired = "d", reflect = r, reflect = r2)]
    });
    assert_eq!(errors.len(), 2, "{errors:#?}");
    let Some(Item::Child { opts, written, .. }) = parsed.items.first() else {
        panic!("{:?}", parsed.items)
    };
    assert!(opts.desired.is_none());
    assert_eq!(opts.reflect.as_ref().map(|r| r.name()), Some("r".into()));
    assert_eq!(written, &["desired", "reflect", "reflect"]);
}
