//! CEL types as cel-go's type checker knows them, their names in its error messages, and the
//! assignability (with type parameters) that overload resolution relies on.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::rc::Rc;

/// A CEL type.
#[derive(Clone, Debug)]
pub(crate) enum Type {
    Int,
    Uint,
    Double,
    String,
    Bool,
    Bytes,
    Null,
    Timestamp,
    Duration,
    Dyn,
    /// The type of an expression that failed to check (assignable to anything, as `dyn`).
    Error,
    List(Box<Type>),
    Map(Box<Type>, Box<Type>),
    /// An object of the schema.
    Object(Rc<Decl>),
    /// A type of Kubernetes' library, by its name; `true` for struct (object) types, else opaque.
    Named(&'static str, bool),
    Optional(Box<Type>),
    /// The type of a type, e.g. `type(int)` for the identifier `int`.
    Meta(Box<Type>),
    /// A type variable of overload resolution.
    Param(u32),
}

/// `kubernetes.Quantity`.
pub(super) const QUANTITY: Type = Type::Named("kubernetes.Quantity", true);
/// `kubernetes.URL`.
pub(super) const URL: Type = Type::Named("kubernetes.URL", true);
/// `net.IP`.
pub(super) const IP: Type = Type::Named("net.IP", false);
/// `net.CIDR`.
pub(super) const CIDR: Type = Type::Named("net.CIDR", false);
/// `kubernetes.NamedFormat`.
pub(super) const FORMAT: Type = Type::Named("kubernetes.NamedFormat", true);
/// `kubernetes.Semver`.
pub(super) const SEMVER: Type = Type::Named("kubernetes.Semver", true);

impl Type {
    /// Lists of `t`.
    pub(super) fn list(t: Type) -> Type {
        Type::List(Box::new(t))
    }

    /// Whether values of the type have a size known before evaluation (cel-go's `isScalar`).
    pub(super) fn is_scalar(&self) -> bool {
        match self {
            Type::Bool
            | Type::Double
            | Type::Duration
            | Type::Int
            | Type::Timestamp
            | Type::Uint => true,
            Type::Optional(t) => t.is_scalar(),
            _ => false,
        }
    }

    /// Whether field selection on the type costs (maps, structs and type parameters in cel-go).
    pub(super) fn selection_costs(&self) -> bool {
        matches!(
            self,
            Type::Map(..) | Type::Object(_) | Type::Named(_, true) | Type::Param(_)
        )
    }

    /// Whether this is `dyn` or the error type.
    pub(super) fn is_dyn_or_error(&self) -> bool {
        matches!(self, Type::Dyn | Type::Error)
    }

    /// The element type of a list (the first type parameter of a list or map).
    pub(super) fn first_parameter(&self) -> Option<&Type> {
        match self {
            Type::List(e) | Type::Optional(e) | Type::Meta(e) => Some(e),
            Type::Map(k, _) => Some(k),
            _ => None,
        }
    }

    fn same(&self, other: &Type) -> bool {
        match (self, other) {
            (Type::List(a), Type::List(b))
            | (Type::Optional(a), Type::Optional(b))
            | (Type::Meta(a), Type::Meta(b)) => a.same(b),
            (Type::Map(a, b), Type::Map(c, d)) => a.same(c) && b.same(d),
            (Type::Object(a), Type::Object(b)) => a.name == b.name,
            (Type::Named(a, _), Type::Named(b, _)) => a == b,
            (Type::Param(a), Type::Param(b)) => a == b,
            _ => std::mem::discriminant(self) == std::mem::discriminant(other),
        }
    }
}

/// The type as cel-go's checker formats it in its errors (`FormatCELType`).
impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Int => f.write_str("int"),
            Type::Uint => f.write_str("uint"),
            Type::Double => f.write_str("double"),
            Type::String => f.write_str("string"),
            Type::Bool => f.write_str("bool"),
            Type::Bytes => f.write_str("bytes"),
            Type::Null => f.write_str("null"),
            Type::Timestamp => f.write_str("timestamp"),
            Type::Duration => f.write_str("duration"),
            Type::Dyn => f.write_str("dyn"),
            Type::Error => f.write_str("*error*"),
            Type::List(e) => write!(f, "list({e})"),
            Type::Map(k, v) => write!(f, "map({k}, {v})"),
            Type::Object(d) => f.write_str(&d.name),
            Type::Named(n, _) => f.write_str(n),
            Type::Optional(t) => write!(f, "optional_type({t})"),
            Type::Meta(t) => write!(f, "type({t})"),
            Type::Param(p) => write!(f, "_var{p}"),
        }
    }
}

/// Bindings of type variables, shared by a whole expression (cel-go's mapping).
#[derive(Clone, Default)]
pub(super) struct Subst {
    bound: HashMap<u32, Type>,
    next: u32,
}

impl Subst {
    /// A fresh type variable.
    pub(super) fn fresh(&mut self) -> Type {
        self.next += 1;
        Type::Param(self.next)
    }

    /// `t` with its bound variables replaced; unbound ones become `dyn` when `to_dyn`.
    pub(super) fn apply(&self, t: &Type, to_dyn: bool) -> Type {
        match t {
            Type::Param(p) => match self.bound.get(p) {
                Some(b) => self.apply(b, to_dyn),
                None if to_dyn => Type::Dyn,
                None => t.clone(),
            },
            Type::List(e) => Type::List(Box::new(self.apply(e, to_dyn))),
            Type::Optional(e) => Type::Optional(Box::new(self.apply(e, to_dyn))),
            Type::Meta(e) => Type::Meta(Box::new(self.apply(e, to_dyn))),
            Type::Map(k, v) => Type::Map(
                Box::new(self.apply(k, to_dyn)),
                Box::new(self.apply(v, to_dyn)),
            ),
            _ => t.clone(),
        }
    }

    /// Whether a value of type `from` may be passed where `to` is expected, binding variables on
    /// success only.
    pub(super) fn assignable(&mut self, to: &Type, from: &Type) -> bool {
        let mut trial = self.clone();
        if trial.unify(to, from) {
            *self = trial;
            true
        } else {
            false
        }
    }

    fn unify(&mut self, to: &Type, from: &Type) -> bool {
        if let Type::Param(p) = to {
            if let Some(b) = self.bound.get(p).cloned() {
                return self.unify(&b, from);
            }
            if let Type::Param(q) = from
                && q == p
            {
                return true;
            }
            if self.occurs(*p, from) {
                return false;
            }
            self.bound.insert(*p, from.clone());
            return true;
        }
        if let Type::Param(q) = from {
            if let Some(b) = self.bound.get(q).cloned() {
                return self.unify(to, &b);
            }
            if self.occurs(*q, to) {
                return false;
            }
            self.bound.insert(*q, to.clone());
            return true;
        }
        if to.is_dyn_or_error() || from.is_dyn_or_error() {
            return true;
        }
        match (to, from) {
            (Type::List(a), Type::List(b))
            | (Type::Optional(a), Type::Optional(b))
            | (Type::Meta(a), Type::Meta(b)) => self.unify(a, b),
            (Type::Map(a, b), Type::Map(c, d)) => self.unify(a, c) && self.unify(b, d),
            (Type::Object(_) | Type::Named(_, true), Type::Null) => true,
            _ => to.same(from),
        }
    }

    fn occurs(&self, p: u32, t: &Type) -> bool {
        match t {
            Type::Param(q) if *q == p => true,
            Type::Param(q) => self.bound.get(q).is_some_and(|b| self.occurs(p, b)),
            Type::List(e) | Type::Optional(e) | Type::Meta(e) => self.occurs(p, e),
            Type::Map(k, v) => self.occurs(p, k) || self.occurs(p, v),
            _ => false,
        }
    }
}

// A CEL type and its declaration refer to each other (an object's type is its declaration), so both are
// declared here; `decls.rs` builds declarations from schema nodes.

/// A declared CEL type with its size bounds (apiserver's `DeclType`).
#[derive(Debug)]
pub(crate) struct Decl {
    /// What the value is.
    pub(super) kind: DeclKind,
    /// The most elements (characters, bytes, items, properties) a value may have.
    pub(super) max_elements: u64,
    /// The fewest bytes a value takes once serialized.
    pub(super) min_size: i64,
    /// The type's name in error messages (objects only).
    pub(super) name: String,
}

/// The shape of a [`Decl`].
#[derive(Debug)]
pub(super) enum DeclKind {
    /// A value of a CEL scalar type (or `dyn` for int-or-string).
    Scalar(Type),
    /// A list of the items' declaration.
    List(Rc<Decl>),
    /// A map from strings to the values' declaration.
    Map(Rc<Decl>),
    /// An object with declared fields (escaped names).
    Object(BTreeMap<String, Rc<Decl>>),
}

impl Decl {
    /// An object type named `name` (as cel-go's messages name it) with the declared `fields`, for an
    /// environment's own types (the admission request's); its sizes are not bounded.
    pub(crate) fn object(name: &str, fields: Vec<(&str, Rc<Decl>)>) -> Rc<Decl> {
        let fields = fields
            .into_iter()
            .map(|(field, d)| (field.to_string(), d))
            .collect();
        Rc::new(Decl {
            kind: DeclKind::Object(fields),
            max_elements: 0,
            min_size: 0,
            name: name.to_string(),
        })
    }

    /// A field of the CEL type `t` (a scalar, `dyn`, a list or map, an object's type), sizes not bounded.
    pub(crate) fn of(t: Type) -> Rc<Decl> {
        Rc::new(scalar(t, 0, 0))
    }

    /// The CEL type of values of this declaration.
    pub(super) fn cel_type(self: &Rc<Self>) -> Type {
        match &self.kind {
            DeclKind::Scalar(t) => t.clone(),
            DeclKind::List(e) => Type::list(e.cel_type()),
            DeclKind::Map(v) => Type::Map(Box::new(Type::String), Box::new(v.cel_type())),
            DeclKind::Object(_) => Type::Object(self.clone()),
        }
    }

    /// The declaration of a field of an object.
    pub(super) fn field(&self, name: &str) -> Option<&Rc<Decl>> {
        match &self.kind {
            DeclKind::Object(fields) => fields.get(name),
            _ => None,
        }
    }

    /// The declaration of list items or map values.
    pub(super) fn element(&self) -> Option<&Rc<Decl>> {
        match &self.kind {
            DeclKind::List(e) | DeclKind::Map(e) => Some(e),
            _ => None,
        }
    }

    /// Whether map keys exist (a map).
    pub(super) fn has_keys(&self) -> bool {
        matches!(self.kind, DeclKind::Map(_))
    }
}

pub(super) fn scalar(t: Type, min_size: i64, max_elements: i64) -> Decl {
    Decl {
        kind: DeclKind::Scalar(t),
        max_elements: zero_if_negative(max_elements),
        min_size,
        name: String::new(),
    }
}

pub(super) fn zero_if_negative(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}
