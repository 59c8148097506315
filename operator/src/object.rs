//! Kubernetes objects written as literals: [`object!`](crate::object!) fills only the fields named, with no
//! `Some(..)`, no `..Default::default()` and no names of nested types.
//!
//! k8s-openapi's types hold every optional field as an `Option` and every nested object as its own struct, so
//! a desired Deployment written as a struct literal spends most of its lines on `Some`, on type names and on
//! `..Default::default()`. `object!` starts from the type's default and sets each field named:
//!
//! ```
//! use k8s_openapi::api::apps::v1::Deployment;
//! use kubewright::object;
//!
//! let image = "nginx:1.27".to_string();
//! let deployment = object!(Deployment {
//!     metadata: { name: "web", labels: { "app": "web" } },
//!     spec: {
//!         replicas: 2,
//!         selector: { match_labels: { "app": "web" } },
//!         template: {
//!             metadata: { labels: { "app": "web" } },
//!             spec: {
//!                 containers: [{ name: "app", image, ports: [{ container_port: 8080 }] }],
//!             },
//!         },
//!     },
//! });
//! let spec = deployment.spec.unwrap();
//! assert_eq!(spec.replicas, Some(2));
//! let pod = spec.template.spec.unwrap();
//! assert_eq!(pod.containers[0].image.as_deref(), Some("nginx:1.27"));
//! assert_eq!(pod.containers[0].ports.as_ref().unwrap()[0].container_port, 8080);
//! ```
//!
//! The value of a field is one of:
//! - `{ field: value, .. }`: the field's own type (inside `Some` when the field is optional), starting from
//!   its default; `{}` alone sets an optional field to its default (`empty_dir: {}`);
//! - `{ "key": value, .. }`: a map (labels, annotations, a ConfigMap's data), each key a string literal or
//!   an expression in brackets (`{ [NAME_LABEL]: name }`);
//! - `[item, ..]`: a list, each item a `{ .. }` of the list's element type, a `Type { .. }`, or a value;
//! - `Type { .. }`: an `object!` of that type, named by one identifier (imported; a path such as
//!   `v1::Type` is not taken here, so that `f(x.y)` stays a value);
//! - any other expression, converted to the field's type by [`IntoField`]: a value of the type itself, or of
//!   the type inside the field's `Option`, a `&str` for a `String`, an `i32` or a `&str` for an
//!   `IntOrString`, a `&str` for a `Quantity`. A block expression goes in parentheses (`({ .. })`), as a
//!   brace would start a nested object.
//!
//! `object!({ "key": value, .. })` alone is such a map, a `BTreeMap` of the types the caller asks for (the
//! labels a Deployment and its Service share):
//!
//! ```
//! use std::collections::BTreeMap;
//! use kubewright::object;
//!
//! const INSTANCE: &str = "app.kubernetes.io/instance";
//! fn labels(name: &str) -> BTreeMap<String, String> {
//!     object!({ "app.kubernetes.io/name": "web", [INSTANCE]: name })
//! }
//! assert_eq!(labels("a")[INSTANCE], "a");
//! ```
//!
//! A field that does not exist is the compiler's error on that field's name, and a value of the wrong type
//! names the field's type. Values are ordinary expressions, evaluated in order, so `?` works in them.
//!
//! The macro expands to plain assignments: `object!(Service { spec: { selector: labels } })` is
//! `let mut o = Service::default(); o.spec.get_or_insert_with(Default::default).selector = Some(labels); o`.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// A value that can be written into a field of type `T` in [`object!`](crate::object!).
///
/// Implemented for a value of `T` itself, for a value of `U` into an `Option<U>`, and for the conversions
/// Kubernetes' types call for: `&str` and `&String` into `String`, `i32`, `&str` and `String` into
/// `IntOrString`, `&str` and `String` into `Quantity` (each also into the `Option` of that type).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a value for a field of type `{T}`",
    label = "a value for a field of type `{T}` goes here",
    note = "`object!` takes a value of the field's type, of the type inside its `Option`, or a `&str` for a `String`, an `IntOrString` or a `Quantity`"
)]
pub trait IntoField<T> {
    /// The value, as the field's type.
    fn into_field(self) -> T;
}

impl<T> IntoField<T> for T {
    fn into_field(self) -> T {
        self
    }
}

impl<T> IntoField<Option<T>> for T {
    fn into_field(self) -> Option<T> {
        Some(self)
    }
}

/// Conversions into a type and into its `Option`.
macro_rules! into_field {
    ($($from:ty => $to:ty: |$v:ident| $convert:expr;)*) => {$(
        impl IntoField<$to> for $from {
            fn into_field(self) -> $to {
                let $v = self;
                $convert
            }
        }
        impl IntoField<Option<$to>> for $from {
            fn into_field(self) -> Option<$to> {
                let $v = self;
                Some($convert)
            }
        }
    )*};
}

into_field! {
    &str => String: |s| s.to_string();
    &String => String: |s| s.clone();
    i32 => IntOrString: |n| IntOrString::Int(n);
    &str => IntOrString: |s| IntOrString::String(s.to_string());
    String => IntOrString: |s| IntOrString::String(s);
    &str => Quantity: |s| Quantity(s.to_string());
    String => Quantity: |s| Quantity(s);
}

/// What the expansion of [`object!`](crate::object!) calls; not a public API.
#[doc(hidden)]
pub mod __private {
    use super::*;

    /// A field being filled in place.
    pub struct Field<'a, T>(pub &'a mut T);

    impl<'a, T: Default> Field<'a, Option<T>> {
        /// An optional field's value, set to the default first when absent.
        pub fn get(self) -> &'a mut T {
            self.0.get_or_insert_with(T::default)
        }
    }

    /// A field that is not optional: the field itself. (The inherent `get` of an `Option` field is found
    /// first; this trait's is found for every other type.)
    pub trait Required<'a, T> {
        /// The field.
        fn get(self) -> &'a mut T;
    }

    impl<'a, T> Required<'a, T> for Field<'a, T> {
        fn get(self) -> &'a mut T {
            self.0
        }
    }

    /// The default object of the type; what `object!` starts from (named, rather than `Default::default()`
    /// followed by assignments, which clippy's `field_reassign_with_default` would flag in the caller).
    pub fn default<T: Default>() -> T {
        T::default()
    }

    /// Appends the default element to a list and returns it, to be filled.
    pub fn push_default<T: Default>(items: &mut Vec<T>) -> &mut T {
        let at = items.len();
        items.push(T::default());
        &mut items[at]
    }

    /// Sets one entry of a map.
    pub fn insert<K: Ord, V>(
        map: &mut BTreeMap<K, V>,
        key: impl IntoField<K>,
        value: impl IntoField<V>,
    ) {
        map.insert(key.into_field(), value.into_field());
    }
}

/// A Kubernetes object (or any struct of `Default` fields) written as a literal of only the fields that
/// are set: see [the module](mod@crate::object) for the forms a value takes.
///
/// ```
/// use k8s_openapi::api::core::v1::Service;
/// use kubewright::object;
///
/// let port = 8080;
/// let service = object!(Service {
///     metadata: { name: "web" },
///     spec: {
///         selector: { "app": "web" },
///         ports: [{ name: "http", port, target_port: port }],
///     },
/// });
/// assert_eq!(service.metadata.name.as_deref(), Some("web"));
/// ```
#[macro_export]
macro_rules! object {
    ({ $($entries:tt)* }) => {{
        #[allow(unused_mut)]
        let mut map = ::std::collections::BTreeMap::new();
        {
            #[allow(unused_variables)]
            let entries = &mut map;
            $crate::__object_fields!(entries; $($entries)*);
        }
        map
    }};
    ($kind:path { $($fields:tt)* }) => {{
        #[allow(unused_imports)]
        use $crate::object::__private::Required as _;
        #[allow(unused_mut)]
        let mut object: $kind = $crate::object::__private::default();
        $crate::__object_fields!(object; $($fields)*);
        object
    }};
}

/// The fields of an [`object!`]: one assignment per field, in order.
#[doc(hidden)]
#[macro_export]
macro_rules! __object_fields {
    ($o:ident;) => {};
    ($o:ident; $field:ident : { $($inner:tt)* } $(, $($rest:tt)*)?) => {
        {
            #[allow(unused_variables)]
            let field = $crate::object::__private::Field(&mut $o.$field).get();
            $crate::__object_fields!(field; $($inner)*);
        }
        $crate::__object_fields!($o; $($($rest)*)?);
    };
    ($o:ident; $field:ident : [ $($items:tt)* ] $(, $($rest:tt)*)?) => {
        {
            #[allow(unused_variables)]
            let items = $crate::object::__private::Field(&mut $o.$field).get();
            $crate::__object_items!(items; $($items)*);
        }
        $crate::__object_fields!($o; $($($rest)*)?);
    };
    ($o:ident; $field:ident : $kind:ident { $($inner:tt)* } $(, $($rest:tt)*)?) => {
        $o.$field = $crate::object::IntoField::into_field($crate::object!($kind { $($inner)* }));
        $crate::__object_fields!($o; $($($rest)*)?);
    };
    ($o:ident; $field:ident : $value:expr $(, $($rest:tt)*)?) => {
        $o.$field = $crate::object::IntoField::into_field($value);
        $crate::__object_fields!($o; $($($rest)*)?);
    };
    ($o:ident; $field:ident $(, $($rest:tt)*)?) => {
        $o.$field = $crate::object::IntoField::into_field($field);
        $crate::__object_fields!($o; $($($rest)*)?);
    };
    ($o:ident; $key:literal : $value:expr $(, $($rest:tt)*)?) => {
        $crate::object::__private::insert($o, $key, $value);
        $crate::__object_fields!($o; $($($rest)*)?);
    };
    ($o:ident; [ $key:expr ] : $value:expr $(, $($rest:tt)*)?) => {
        $crate::object::__private::insert($o, $key, $value);
        $crate::__object_fields!($o; $($($rest)*)?);
    };
}

/// The items of a list in an [`object!`], appended in order.
#[doc(hidden)]
#[macro_export]
macro_rules! __object_items {
    ($v:ident;) => {};
    ($v:ident; { $($inner:tt)* } $(, $($rest:tt)*)?) => {
        {
            #[allow(unused_variables)]
            let item = $crate::object::__private::push_default($v);
            $crate::__object_fields!(item; $($inner)*);
        }
        $crate::__object_items!($v; $($($rest)*)?);
    };
    ($v:ident; $kind:ident { $($inner:tt)* } $(, $($rest:tt)*)?) => {
        $v.push($crate::object::IntoField::into_field($crate::object!($kind { $($inner)* })));
        $crate::__object_items!($v; $($($rest)*)?);
    };
    ($v:ident; $value:expr $(, $($rest:tt)*)?) => {
        $v.push($crate::object::IntoField::into_field($value));
        $crate::__object_items!($v; $($($rest)*)?);
    };
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
    use k8s_openapi::api::core::v1::{
        ConfigMap, Container, ContainerPort, EmptyDirVolumeSource, PodSpec, PodTemplateSpec,
        Service, ServicePort, ServiceSpec, Volume,
    };
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

    use super::*;

    fn labels() -> BTreeMap<String, String> {
        BTreeMap::from([("app".to_string(), "web".to_string())])
    }

    #[test]
    fn an_object_equals_the_struct_literal_it_stands_for() {
        let image = "nginx:1.27".to_string();
        let annotations: Option<BTreeMap<String, String>> = None;
        let made = object!(Deployment {
            metadata: { name: "web", labels: labels() },
            spec: {
                replicas: 2,
                selector: { match_labels: labels() },
                template: {
                    metadata: { labels: labels(), annotations },
                    spec: {
                        containers: [{
                            name: "app",
                            image: image.clone(),
                            ports: [{ name: "http", container_port: 8080 }],
                        }],
                    },
                },
            },
        });
        let written = Deployment {
            metadata: ObjectMeta {
                name: Some("web".into()),
                labels: Some(labels()),
                ..Default::default()
            },
            spec: Some(DeploymentSpec {
                replicas: Some(2),
                selector: LabelSelector {
                    match_labels: Some(labels()),
                    ..Default::default()
                },
                template: PodTemplateSpec {
                    metadata: Some(ObjectMeta {
                        labels: Some(labels()),
                        ..Default::default()
                    }),
                    spec: Some(PodSpec {
                        containers: vec![Container {
                            name: "app".into(),
                            image: Some(image),
                            ports: Some(vec![ContainerPort {
                                name: Some("http".into()),
                                container_port: 8080,
                                ..Default::default()
                            }]),
                            ..Default::default()
                        }],
                        ..Default::default()
                    }),
                },
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(made, written);
    }

    #[test]
    fn values_convert_to_the_field_type_and_typed_items_and_maps_fill_in() {
        let port = 8080;
        let name = String::from("web");
        let service = object!(Service {
            metadata: { name: &name, annotations: { "a": "1", "b": name.clone() } },
            spec: {
                selector: labels(),
                ports: [
                    ServicePort { name: "http", port, target_port: port },
                    { name: "admin", port: 9090, target_port: "admin" },
                ],
            },
        });
        assert_eq!(
            service,
            Service {
                metadata: ObjectMeta {
                    name: Some("web".into()),
                    annotations: Some(BTreeMap::from([
                        ("a".to_string(), "1".to_string()),
                        ("b".to_string(), "web".to_string())
                    ])),
                    ..Default::default()
                },
                spec: Some(ServiceSpec {
                    selector: Some(labels()),
                    ports: Some(vec![
                        ServicePort {
                            name: Some("http".into()),
                            port: 8080,
                            target_port: Some(IntOrString::Int(8080)),
                            ..Default::default()
                        },
                        ServicePort {
                            name: Some("admin".into()),
                            port: 9090,
                            target_port: Some(IntOrString::String("admin".into())),
                            ..Default::default()
                        },
                    ]),
                    ..Default::default()
                }),
                ..Default::default()
            }
        );
    }

    #[test]
    fn map_keys_are_literals_or_expressions_in_brackets() {
        const TEAM: &str = "example.dev/team";
        let team = String::from("core");
        let cm = object!(ConfigMap {
            metadata: { labels: { [TEAM]: &team, ["example.dev/".to_string() + "tier"]: "1" } },
            data: { "role": "developer" },
        });
        assert_eq!(
            cm.metadata.labels,
            Some(BTreeMap::from([
                (TEAM.to_string(), "core".to_string()),
                ("example.dev/tier".to_string(), "1".to_string()),
            ]))
        );
        assert_eq!(
            cm.data,
            Some(BTreeMap::from([(
                "role".to_string(),
                "developer".to_string()
            )]))
        );
    }

    #[test]
    fn a_map_alone_takes_the_types_its_use_asks_for() {
        const TEAM: &str = "example.dev/team";
        let labels: BTreeMap<String, String> =
            object!({ [TEAM]: "core", "tier": String::from("1") });
        assert_eq!(labels[TEAM], "core");
        assert_eq!(labels["tier"], "1");
        let ports: BTreeMap<String, IntOrString> = object!({ "http": 8080, "admin": "admin-port" });
        assert_eq!(ports["http"], IntOrString::Int(8080));
        assert_eq!(ports["admin"], IntOrString::String("admin-port".into()));
        let empty: BTreeMap<String, String> = object!({});
        assert!(empty.is_empty());
    }

    #[test]
    fn an_empty_nested_object_sets_an_optional_field_to_its_default() {
        let pod = object!(PodSpec {
            volumes: [{ name: "scratch", empty_dir: {} }],
        });
        assert_eq!(
            pod.volumes,
            Some(vec![Volume {
                name: "scratch".into(),
                empty_dir: Some(EmptyDirVolumeSource::default()),
                ..Default::default()
            }])
        );
        assert_eq!(object!(ConfigMap {}), ConfigMap::default());
    }

    #[test]
    fn values_are_evaluated_in_order_and_may_use_the_question_mark() {
        fn made(replicas: &str) -> Result<Deployment, std::num::ParseIntError> {
            Ok(object!(Deployment {
                spec: { replicas: replicas.parse::<i32>()? },
            }))
        }
        assert_eq!(made("3").unwrap().spec.unwrap().replicas, Some(3));
        assert!(made("three").is_err());
    }

    #[test]
    fn function_calls_with_fields_and_literals_as_arguments_are_values() {
        fn port(p: Option<i32>) -> i32 {
            p.unwrap_or(8080)
        }
        struct App {
            port: Option<i32>,
        }
        let app = App { port: None };
        let service = object!(Service {
            spec: { ports: [{ port: port(app.port), target_port: port(Some(9090)) }] },
        });
        let ports = service.spec.unwrap().ports.unwrap();
        assert_eq!(ports[0].port, 8080);
        assert_eq!(ports[0].target_port, Some(IntOrString::Int(9090)));
    }

    #[test]
    fn a_field_named_twice_keeps_the_last_value_and_a_nested_one_merges() {
        let d = object!(Deployment {
            metadata: { name: "a" },
            metadata: { namespace: "ns" },
            spec: { replicas: 1, replicas: 2 },
        });
        assert_eq!(d.metadata.name.as_deref(), Some("a"));
        assert_eq!(d.metadata.namespace.as_deref(), Some("ns"));
        assert_eq!(d.spec.unwrap().replicas, Some(2));
    }
}
