//! Attribute values: function paths, types, the crate path and whole numbers, each read with darling's
//! `FromMeta` and spanned on the token at fault.

use darling::{Error, FromMeta};
use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Expr, Lit, Path, Type};

/// A path to a function, as in `desired = desired_deployment`. A string, a closure or any other expression
/// is an error that says so.
#[derive(Debug, Clone)]
pub struct FnPath(pub Path);

impl FnPath {
    /// The path as written (its tokens carry the user's spans).
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// The span of the path, for diagnostics and `quote_spanned!`.
    pub fn span(&self) -> Span {
        self.0.span()
    }

    /// The function's name: the last segment of the path.
    pub fn name(&self) -> String {
        self.0
            .segments
            .last()
            .map(|s| s.ident.unraw().to_string())
            .unwrap_or_default()
    }
}

impl FromMeta for FnPath {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        match expr {
            Expr::Path(p) if p.qself.is_none() && p.attrs.is_empty() => Ok(FnPath(p.path.clone())),
            Expr::Group(g) => Self::from_expr(&g.expr),
            Expr::Lit(syn::ExprLit {
                lit: Lit::Str(s), ..
            }) => Err(Error::custom(format!(
                "expected a path to a function, found a string: remove the quotes (`{0}`, not `\"{0}\"`)",
                s.value()
            ))
            .with_span(s)),
            Expr::Closure(_) => Err(Error::custom(
                "expected a path to a function, found a closure: define a function and name it here",
            )
            .with_span(expr)),
            _ => Err(Error::custom(
                "expected a path to a function, e.g. `desired_deployment` or `crate::desired::deployment`",
            )
            .with_span(expr)),
        }
    }

    fn from_word() -> darling::Result<Self> {
        Err(Error::custom(
            "expected `key = function`, e.g. `desired = desired_deployment`",
        ))
    }
}

/// Stash keys named as a list, as in `reads = [image, port]` (one key may go without brackets).
#[derive(Debug, Clone, Default)]
pub struct KeyList(pub Vec<syn::Ident>);

impl FromMeta for KeyList {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        let key = |e: &Expr| -> darling::Result<syn::Ident> {
            match e {
                Expr::Path(p) if p.qself.is_none() => {
                    p.path.get_ident().cloned().ok_or_else(|| {
                        Error::custom(
                            "expected a stash key declared in `#[stash(..)]`, e.g. `image`",
                        )
                        .with_span(e)
                    })
                }
                _ => Err(Error::custom(
                    "expected a stash key declared in `#[stash(..)]`, e.g. `image`",
                )
                .with_span(e)),
            }
        };
        match expr {
            Expr::Group(g) => Self::from_expr(&g.expr),
            Expr::Array(a) => {
                let mut errors = Error::accumulator();
                let keys = a
                    .elems
                    .iter()
                    .filter_map(|e| errors.handle(key(e)))
                    .collect();
                errors.finish_with(KeyList(keys))
            }
            _ => Ok(KeyList(vec![key(expr)?])),
        }
    }
}

/// A field of the spec named as a value, as in `by = config_map`.
#[derive(Debug, Clone)]
pub struct FieldName(pub syn::Ident);

impl FieldName {
    /// The field named by `expr`, a field of `of` (`"the spec"`), as in `example`.
    fn parse(expr: &Expr, of: &str, example: &str) -> darling::Result<Self> {
        match expr {
            Expr::Path(p) if p.qself.is_none() => match p.path.get_ident() {
                Some(ident) => Ok(FieldName(ident.clone())),
                None => Err(Error::custom(format!(
                    "expected the name of a field of {of}, e.g. `{example}`"
                ))
                .with_span(expr)),
            },
            Expr::Group(g) => Self::parse(&g.expr, of, example),
            Expr::Lit(syn::ExprLit {
                lit: Lit::Str(s), ..
            }) => Err(Error::custom(format!(
                "expected the name of a field of {of}, found a string: remove the quotes (`{0}`, not `\"{0}\"`)",
                s.value()
            ))
            .with_span(s)),
            _ => Err(Error::custom(format!(
                "expected the name of a field of {of}, e.g. `{example}`"
            ))
            .with_span(expr)),
        }
    }
}

impl FromMeta for FieldName {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        Self::parse(expr, "the spec", "by = config_map")
    }
}

/// A field of the status named as a value, as in `reflect_name = service`.
#[derive(Debug, Clone)]
pub struct StatusField(pub syn::Ident);

impl FromMeta for StatusField {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        FieldName::parse(expr, "the status", "reflect_name = service").map(|f| StatusField(f.0))
    }
}

/// A type given as a value, as in `data = Settings` (or `data = "Settings"`).
#[derive(Debug, Clone)]
pub struct TypeArg(pub Type);

impl FromMeta for TypeArg {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        match expr {
            Expr::Group(g) => Self::from_expr(&g.expr),
            Expr::Lit(syn::ExprLit {
                lit: Lit::Str(s), ..
            }) => s.parse::<Type>().map(TypeArg).map_err(|e| {
                Error::custom(format!("expected a type in this string: {e}")).with_span(s)
            }),
            other => syn::parse2::<Type>(quote::ToTokens::into_token_stream(other))
                .map(TypeArg)
                .map_err(|_| Error::custom("expected a type").with_span(other)),
        }
    }

    fn from_invalid_expr(value: &darling::ast::MetaNameValueInvalidExpr) -> darling::Result<Self> {
        syn::parse2::<Type>(value.value.clone())
            .map(TypeArg)
            .map_err(|_| Error::custom("expected a type").with_span(&value.value))
    }
}

/// A crate path, as in `crate = "::kubewright"`.
#[derive(Debug, Clone)]
pub struct CratePath(pub Path);

impl FromMeta for CratePath {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        match expr {
            Expr::Group(g) => Self::from_expr(&g.expr),
            Expr::Path(p) if p.qself.is_none() => Ok(CratePath(p.path.clone())),
            Expr::Lit(syn::ExprLit {
                lit: Lit::Str(s), ..
            }) => s.parse::<Path>().map(CratePath).map_err(|_| {
                Error::custom(format!(
                    "`{}` is not a path: write the path the runtime crate is reachable at, e.g. `crate = \"::kubewright\"`",
                    s.value()
                ))
                .with_span(s)
            }),
            other => Err(Error::custom(
                "expected the path of the runtime crate, e.g. `crate = \"::kubewright\"`",
            )
            .with_span(other)),
        }
    }
}

/// A whole number that fits in `T`, as in `concurrency = 4`.
#[derive(Debug, Clone, Copy)]
pub struct Number<T>(pub T);

impl<T: std::str::FromStr + num::Max> FromMeta for Number<T> {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        let invalid = || {
            Error::custom(format!(
                "expected a whole number from 0 to {}, without quotes",
                T::MAX
            ))
            .with_span(expr)
        };
        match expr {
            Expr::Group(g) => Self::from_expr(&g.expr),
            Expr::Lit(syn::ExprLit {
                lit: Lit::Int(i), ..
            }) => i
                .base10_digits()
                .parse::<T>()
                .map(Number)
                .map_err(|_| invalid()),
            _ => Err(invalid()),
        }
    }
}

/// The largest values of the number types [`Number`] is used with.
pub mod num {
    /// The largest value, for messages.
    pub trait Max {
        /// The largest value.
        const MAX: u64;
    }
    impl Max for u16 {
        const MAX: u64 = u16::MAX as u64;
    }
    impl Max for u64 {
        const MAX: u64 = u64::MAX;
    }
}
