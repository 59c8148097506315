//! Kinds chosen when the operator runs: a slot declared in code with [`dynamic_kind!`](crate::dynamic_kind),
//! bound once, before the reconcilers are built, to a kind given as kube's [`ApiResource`] (from a flag, a
//! configuration file or discovery). Objects of it are [`Untyped<Slot>`](super::Untyped), converted from
//! and to kube's [`DynamicObject`].
//!
//! kube's `DynamicObject` cannot itself be a cached kind: its type does not name its kind (its
//! `Resource::DynamicType` is the `ApiResource`), while the runtime's caches, wiring and rules tell kinds
//! apart by type. The slot is that type; what it names is decided at run time.

use std::sync::OnceLock;

use kube::api::DynamicObject;
use kube::core::{ApiResource, TypeMeta};
use serde_json::Value;

use super::{Untyped, UntypedKind};

/// What a slot of [`dynamic_kind!`](crate::dynamic_kind) is bound to: an [`ApiResource`], set once.
#[derive(Debug, Default)]
pub struct Binding {
    resource: OnceLock<ApiResource>,
}

/// A [`Binding`] refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BindError {
    /// The slot is bound to another kind already (a slot names one kind for the life of the process).
    #[error("the run-time kind {slot} is bound to {bound} already and cannot be bound to {asked}")]
    Rebound {
        /// The slot.
        slot: &'static str,
        /// `apiVersion/kind` it is bound to.
        bound: String,
        /// `apiVersion/kind` asked for.
        asked: String,
    },
    /// The `ApiResource` lacks a kind, version or plural, or its `apiVersion` is not its group and version.
    #[error("the run-time kind {slot} cannot be bound to {resource:?}: {problem}")]
    Invalid {
        /// The slot.
        slot: &'static str,
        /// What was given.
        resource: String,
        /// What is wrong with it.
        problem: &'static str,
    },
}

fn describe(r: &ApiResource) -> String {
    format!("{}/{}", r.api_version, r.kind)
}

impl Binding {
    /// An unbound slot.
    pub const fn new() -> Self {
        Self {
            resource: OnceLock::new(),
        }
    }

    /// Binds the slot `slot` to `resource`; binding it again to the same kind does nothing.
    pub fn bind(&self, slot: &'static str, resource: &ApiResource) -> Result<(), BindError> {
        let invalid = |problem| BindError::Invalid {
            slot,
            resource: describe(resource),
            problem,
        };
        if resource.kind.is_empty() || resource.plural.is_empty() || resource.version.is_empty() {
            return Err(invalid("a kind, a version and a plural are needed"));
        }
        let api_version = if resource.group.is_empty() {
            resource.version.clone()
        } else {
            format!("{}/{}", resource.group, resource.version)
        };
        if api_version != resource.api_version {
            return Err(invalid("its apiVersion is not its group and version"));
        }
        let bound = self.resource.get_or_init(|| resource.clone());
        if bound == resource {
            Ok(())
        } else {
            Err(BindError::Rebound {
                slot,
                bound: describe(bound),
                asked: describe(resource),
            })
        }
    }

    /// The kind bound, if any.
    pub fn get(&self) -> Option<&ApiResource> {
        self.resource.get()
    }
}

/// A slot for a kind chosen at run time, declared with [`dynamic_kind!`](crate::dynamic_kind).
pub trait RunTimeKind: UntypedKind {
    /// The slot's name (its type's), which an unbound slot reports as its kind.
    const SLOT: &'static str;

    /// The slot's binding.
    fn binding() -> &'static Binding;

    /// Binds the slot to `resource` (see [`Binding::bind`]), before the reconcilers that use it are built.
    fn bind(resource: &ApiResource) -> Result<(), BindError> {
        Self::binding().bind(Self::SLOT, resource)
    }
}

/// The parts of a slot's [`UntypedKind`] implementation, read from its binding: an unbound slot has its own
/// name as kind and nothing else, which [`Caches::check_served`](crate::cache::Caches::check_served) refuses.
#[doc(hidden)]
pub fn __bound(binding: &'static Binding, slot: &'static str) -> [&'static str; 4] {
    match binding.get() {
        Some(r) => [&r.group, &r.version, &r.kind, &r.plural],
        None => ["", "", slot, ""],
    }
}

/// Declares a slot for a kind chosen at run time: `Slot, Namespaced` (or `Cluster`). Bind it with
/// [`RunTimeKind::bind`] before building the reconcilers that use it; [`Untyped<Slot>`](super::Untyped) is
/// then an object of the bound kind. The scope is declared in code (kube's typed `Api` needs it): a kind
/// bound with another scope than the cluster serves is refused before the operator writes anything.
///
/// ```
/// use kube::api::{ApiResource, DynamicObject};
/// use kubewright::untyped::{RunTimeKind, Untyped};
///
/// kubewright::dynamic_kind! {
///     /// The kind `--target` names.
///     pub Target, Namespaced
/// }
///
/// // e.g. from a flag, or kube's discovery:
/// let resource = ApiResource {
///     group: "gateway.networking.k8s.io".into(),
///     version: "v1".into(),
///     api_version: "gateway.networking.k8s.io/v1".into(),
///     kind: "HTTPRoute".into(),
///     plural: "httproutes".into(),
/// };
/// Target::bind(&resource).unwrap();
/// let route = Untyped::<Target>::from(DynamicObject::new("web", &resource));
/// assert_eq!(<Untyped<Target> as kube::Resource>::plural(&()), "httproutes");
/// assert_eq!(DynamicObject::from(route).types.unwrap().kind, "HTTPRoute");
/// ```
#[macro_export]
macro_rules! dynamic_kind {
    ($(#[$meta:meta])* $vis:vis $name:ident, $scope:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        $vis struct $name;

        impl $crate::untyped::RunTimeKind for $name {
            const SLOT: &'static str = ::core::stringify!($name);
            fn binding() -> &'static $crate::untyped::Binding {
                static BINDING: $crate::untyped::Binding = $crate::untyped::Binding::new();
                &BINDING
            }
        }

        impl $crate::untyped::UntypedKind for $name {
            fn group() -> &'static str {
                $crate::untyped::__bound(<Self as $crate::untyped::RunTimeKind>::binding(), ::core::stringify!($name))[0]
            }
            fn version() -> &'static str {
                $crate::untyped::__bound(<Self as $crate::untyped::RunTimeKind>::binding(), ::core::stringify!($name))[1]
            }
            fn kind() -> &'static str {
                $crate::untyped::__bound(<Self as $crate::untyped::RunTimeKind>::binding(), ::core::stringify!($name))[2]
            }
            fn plural() -> &'static str {
                $crate::untyped::__bound(<Self as $crate::untyped::RunTimeKind>::binding(), ::core::stringify!($name))[3]
            }
            type Scope = $crate::__untyped_scope!($scope);
        }
    };
}

impl<K: UntypedKind> From<DynamicObject> for Untyped<K> {
    /// The object's metadata and fields; its `apiVersion` and `kind` are `K`'s from now on.
    fn from(object: DynamicObject) -> Self {
        let data = match object.data {
            Value::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        let mut untyped = Untyped::new("", Value::Object(data));
        untyped.metadata = object.metadata;
        untyped
    }
}

impl<K: UntypedKind> From<Untyped<K>> for DynamicObject {
    fn from(object: Untyped<K>) -> Self {
        let api_version = <Untyped<K> as kube::Resource>::api_version(&()).into_owned();
        DynamicObject {
            types: Some(TypeMeta {
                api_version,
                kind: K::kind().to_string(),
            }),
            metadata: object.metadata,
            data: Value::Object(object.data),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::dynamic_kind! {
        Slot, Namespaced
    }
    crate::dynamic_kind! {
        Unbound, Cluster
    }

    fn resource(kind: &str, plural: &str) -> ApiResource {
        ApiResource {
            group: "example.dev".into(),
            version: "v1".into(),
            api_version: "example.dev/v1".into(),
            kind: kind.into(),
            plural: plural.into(),
        }
    }

    #[test]
    fn a_slot_names_the_kind_it_is_bound_to_once() {
        assert_eq!(
            (Unbound::kind(), Unbound::plural(), Unbound::group()),
            ("Unbound", "", "")
        );
        Slot::bind(&resource("Widget", "widgets")).unwrap();
        Slot::bind(&resource("Widget", "widgets")).unwrap();
        assert_eq!(
            (Slot::group(), Slot::version(), Slot::kind(), Slot::plural()),
            ("example.dev", "v1", "Widget", "widgets")
        );
        assert_eq!(
            <Untyped<Slot> as kube::Resource>::api_version(&()),
            "example.dev/v1"
        );
        assert_eq!(
            Slot::bind(&resource("Gadget", "gadgets")).unwrap_err(),
            BindError::Rebound {
                slot: "Slot",
                bound: "example.dev/v1/Widget".into(),
                asked: "example.dev/v1/Gadget".into(),
            }
        );
        let mut wrong = resource("Widget", "widgets");
        wrong.api_version = "v1".into();
        assert!(matches!(
            Unbound::bind(&wrong),
            Err(BindError::Invalid { .. })
        ));
        assert!(matches!(
            Unbound::bind(&resource("", "x")),
            Err(BindError::Invalid { .. })
        ));
    }

    #[test]
    fn objects_convert_from_and_to_dynamic_objects() {
        let r = resource("Thing", "things");
        crate::dynamic_kind! { Things, Namespaced }
        Things::bind(&r).unwrap();
        let mut object = DynamicObject::new("a", &r).within("default");
        object.data = serde_json::json!({"spec": {"size": 3}});
        let untyped = Untyped::<Things>::from(object.clone());
        assert_eq!(untyped.metadata.namespace.as_deref(), Some("default"));
        assert_eq!(untyped.data["spec"]["size"], 3);
        let back = DynamicObject::from(untyped);
        assert_eq!(back, object);
    }
}
