//! The functions a CRD rule may call, with their overloads as kube-apiserver 1.35 declares them: CEL's
//! standard functions and operators (with cross-type numeric comparisons and optional types), the
//! strings (version 2), sets and lists (version 3) extensions, and Kubernetes' libraries (lists, regex,
//! urls, ip, cidr, quantity, format, semver, and the authorizer's, which only expressions declaring
//! `authorizer` can reach).

use super::types::{Subst, Type};

/// A parameter or result type of an overload, named as the CEL types they stand for (`Str` for
/// `string`, `Ts` and `Dur` for timestamps and durations); `A` and `B` are type parameters, `Named` a type
/// of Kubernetes' library (its name, and whether it is a struct).
#[derive(Clone, Copy)]
pub(super) enum P {
    Int,
    Uint,
    Double,
    Str,
    Bool,
    Bytes,
    Ts,
    Dur,
    Dyn,
    A,
    B,
    ListOf(&'static P),
    MapOf(&'static P, &'static P),
    Opt(&'static P),
    TypeOf(&'static P),
    Named(&'static str, bool),
}

/// One overload: its id, whether it is called on a receiver (the first parameter), its parameters
/// and its result.
pub(super) struct Overload {
    /// cel-go's overload id (the cost estimates are keyed by it).
    pub(super) id: String,
    /// Called on a receiver, which is the first parameter.
    pub(super) member: bool,
    /// The parameters' types.
    pub(super) params: Vec<P>,
    /// The result's type.
    pub(super) result: P,
}

/// Instantiates `p` with the overload's type variables.
pub(super) fn instantiate(p: &P, a: &Type, b: &Type) -> Type {
    match p {
        P::Int => Type::Int,
        P::Uint => Type::Uint,
        P::Double => Type::Double,
        P::Str => Type::String,
        P::Bool => Type::Bool,
        P::Bytes => Type::Bytes,
        P::Ts => Type::Timestamp,
        P::Dur => Type::Duration,
        P::Dyn => Type::Dyn,
        P::A => a.clone(),
        P::B => b.clone(),
        P::ListOf(e) => Type::list(instantiate(e, a, b)),
        P::MapOf(k, v) => Type::Map(
            Box::new(instantiate(k, a, b)),
            Box::new(instantiate(v, a, b)),
        ),
        P::Opt(e) => Type::Optional(Box::new(instantiate(e, a, b))),
        P::TypeOf(e) => Type::Meta(Box::new(instantiate(e, a, b))),
        P::Named(n, s) => Type::Named(n, *s),
    }
}

/// Fresh type variables for one overload.
pub(super) fn fresh_pair(s: &mut Subst) -> (Type, Type) {
    (s.fresh(), s.fresh())
}

const LA: P = P::ListOf(&P::A);
const LS: P = P::ListOf(&P::Str);
const MAB: P = P::MapOf(&P::A, &P::B);
const OA: P = P::Opt(&P::A);
const Q: P = P::Named("kubernetes.Quantity", true);
const U: P = P::Named("kubernetes.URL", true);
const I: P = P::Named("net.IP", false);
const C: P = P::Named("net.CIDR", false);
const F: P = P::Named("kubernetes.NamedFormat", true);
const SV: P = P::Named("kubernetes.Semver", true);
const AUTHZ: P = P::Named("kubernetes.authorization.Authorizer", true);
const PATH_CHECK: P = P::Named("kubernetes.authorization.PathCheck", true);
const GROUP_CHECK: P = P::Named("kubernetes.authorization.GroupCheck", true);
const RESOURCE_CHECK: P = P::Named("kubernetes.authorization.ResourceCheck", true);
const DECISION: P = P::Named("kubernetes.authorization.Decision", true);

fn g(id: impl Into<String>, params: &[P], result: P) -> Overload {
    Overload {
        id: id.into(),
        member: false,
        params: params.to_vec(),
        result,
    }
}

fn m(id: impl Into<String>, params: &[P], result: P) -> Overload {
    Overload {
        id: id.into(),
        member: true,
        params: params.to_vec(),
        result,
    }
}

/// The formats of `format.<name>()`.
const FORMATS: &[&str] = &[
    "dns1123Label",
    "dns1123Subdomain",
    "dns1035Label",
    "qualifiedName",
    "dns1123LabelPrefix",
    "dns1123SubdomainPrefix",
    "dns1035LabelPrefix",
    "labelValue",
    "uri",
    "uuid",
    "byte",
    "date",
    "datetime",
];

/// Lists of the element type `t`.
fn l(t: P) -> P {
    match t {
        P::Int => P::ListOf(&P::Int),
        P::Uint => P::ListOf(&P::Uint),
        P::Double => P::ListOf(&P::Double),
        P::Bool => P::ListOf(&P::Bool),
        P::Dur => P::ListOf(&P::Dur),
        P::Ts => P::ListOf(&P::Ts),
        P::Str => P::ListOf(&P::Str),
        P::Bytes => P::ListOf(&P::Bytes),
        _ => P::ListOf(&P::Dyn),
    }
}

/// One overload per comparable type (the lists libraries' templated overloads), named as they are.
fn comparable(overload: impl Fn(P, &str) -> Overload) -> Vec<Overload> {
    [
        (P::Int, "int"),
        (P::Uint, "uint"),
        (P::Double, "double"),
        (P::Bool, "bool"),
        (P::Dur, "duration"),
        (P::Ts, "timestamp"),
        (P::Str, "string"),
        (P::Bytes, "bytes"),
    ]
    .into_iter()
    .map(|(t, name)| overload(t, name))
    .collect()
}

/// The overloads of the function `name`; `None` when no such function is declared.
pub(super) fn overloads(name: &str) -> Option<Vec<Overload>> {
    use P::*;
    let ordered = |op: &'static str| -> Vec<Overload> {
        let ids: &[(&'static str, P, P)] = match op {
            "<" => &[
                ("less_bool", Bool, Bool),
                ("less_int64", Int, Int),
                ("less_int64_double", Int, Double),
                ("less_int64_uint64", Int, Uint),
                ("less_uint64", Uint, Uint),
                ("less_uint64_double", Uint, Double),
                ("less_uint64_int64", Uint, Int),
                ("less_double", Double, Double),
                ("less_double_int64", Double, Int),
                ("less_double_uint64", Double, Uint),
                ("less_string", Str, Str),
                ("less_bytes", Bytes, Bytes),
                ("less_timestamp", Ts, Ts),
                ("less_duration", Dur, Dur),
            ],
            _ => &[],
        };
        let prefix = match name {
            "_<_" => "less",
            "_<=_" => "less_equals",
            "_>_" => "greater",
            _ => "greater_equals",
        };
        ids.iter()
            .map(|(id, a, b)| {
                let rest = id.strip_prefix("less").unwrap_or(id);
                g(format!("{prefix}{rest}"), &[*a, *b], Bool)
            })
            .collect()
    };
    let list = match name {
        "_==_" => vec![g("equals", &[A, A], Bool)],
        "_!=_" => vec![g("not_equals", &[A, A], Bool)],
        "_<_" | "_<=_" | "_>_" | "_>=_" => ordered("<"),
        "_&&_" => vec![g("logical_and", &[Bool, Bool], Bool)],
        "_||_" => vec![g("logical_or", &[Bool, Bool], Bool)],
        "!_" => vec![g("logical_not", &[Bool], Bool)],
        "@not_strictly_false" => vec![g("not_strictly_false", &[Bool], Bool)],
        "_?_:_" => vec![g("conditional", &[Bool, A, A], A)],
        "-_" => vec![
            g("negate_int64", &[Int], Int),
            g("negate_double", &[Double], Double),
        ],
        "_+_" => vec![
            g("add_int64", &[Int, Int], Int),
            g("add_uint64", &[Uint, Uint], Uint),
            g("add_double", &[Double, Double], Double),
            g("add_string", &[Str, Str], Str),
            g("add_bytes", &[Bytes, Bytes], Bytes),
            g("add_list", &[LA, LA], LA),
            g("add_timestamp_duration", &[Ts, Dur], Ts),
            g("add_duration_timestamp", &[Dur, Ts], Ts),
            g("add_duration_duration", &[Dur, Dur], Dur),
        ],
        "_-_" => vec![
            g("subtract_int64", &[Int, Int], Int),
            g("subtract_uint64", &[Uint, Uint], Uint),
            g("subtract_double", &[Double, Double], Double),
            g("subtract_timestamp_timestamp", &[Ts, Ts], Dur),
            g("subtract_timestamp_duration", &[Ts, Dur], Ts),
            g("subtract_duration_duration", &[Dur, Dur], Dur),
        ],
        "_*_" | "_/_" => {
            let (a, b, c) = if name == "_*_" {
                ("multiply_int64", "multiply_uint64", "multiply_double")
            } else {
                ("divide_int64", "divide_uint64", "divide_double")
            };
            vec![
                g(a, &[Int, Int], Int),
                g(b, &[Uint, Uint], Uint),
                g(c, &[Double, Double], Double),
            ]
        }
        "_%_" => vec![
            g("modulo_int64", &[Int, Int], Int),
            g("modulo_uint64", &[Uint, Uint], Uint),
        ],
        "_[_]" => vec![
            g("index_list", &[LA, Int], A),
            g("index_map", &[MAB, A], B),
            g("optional_list_index_int", &[P::Opt(&LA), Int], OA),
            g("optional_map_index_value", &[P::Opt(&MAB), A], P::Opt(&B)),
        ],
        "_[?_]" => vec![
            g("list_optindex_optional_int", &[LA, Int], OA),
            g(
                "optional_list_optindex_optional_int",
                &[P::Opt(&LA), Int],
                OA,
            ),
            g("map_optindex_optional_value", &[MAB, A], P::Opt(&B)),
            g(
                "optional_map_optindex_optional_value",
                &[P::Opt(&MAB), A],
                P::Opt(&B),
            ),
        ],
        "@in" => vec![g("in_list", &[A, LA], Bool), g("in_map", &[A, MAB], Bool)],
        "size" => vec![
            g("size_string", &[Str], Int),
            g("size_bytes", &[Bytes], Int),
            g("size_list", &[LA], Int),
            g("size_map", &[MAB], Int),
            m("string_size", &[Str], Int),
            m("bytes_size", &[Bytes], Int),
            m("list_size", &[LA], Int),
            m("map_size", &[MAB], Int),
        ],
        "int" => vec![
            g("int64_to_int64", &[Int], Int),
            g("uint64_to_int64", &[Uint], Int),
            g("double_to_int64", &[Double], Int),
            g("string_to_int64", &[Str], Int),
            g("timestamp_to_int64", &[Ts], Int),
        ],
        "uint" => vec![
            g("uint64_to_uint64", &[Uint], Uint),
            g("int64_to_uint64", &[Int], Uint),
            g("double_to_uint64", &[Double], Uint),
            g("string_to_uint64", &[Str], Uint),
        ],
        "double" => vec![
            g("double_to_double", &[Double], Double),
            g("int64_to_double", &[Int], Double),
            g("uint64_to_double", &[Uint], Double),
            g("string_to_double", &[Str], Double),
        ],
        "string" => vec![
            g("string_to_string", &[Str], Str),
            g("int64_to_string", &[Int], Str),
            g("uint64_to_string", &[Uint], Str),
            g("double_to_string", &[Double], Str),
            g("bool_to_string", &[Bool], Str),
            g("bytes_to_string", &[Bytes], Str),
            g("timestamp_to_string", &[Ts], Str),
            g("duration_to_string", &[Dur], Str),
            g("ip_to_string", &[I], Str),
            g("cidr_to_string", &[C], Str),
        ],
        "bytes" => vec![
            g("bytes_to_bytes", &[Bytes], Bytes),
            g("string_to_bytes", &[Str], Bytes),
        ],
        "bool" => vec![
            g("bool_to_bool", &[Bool], Bool),
            g("string_to_bool", &[Str], Bool),
        ],
        "duration" => vec![
            g("duration_to_duration", &[Dur], Dur),
            g("string_to_duration", &[Str], Dur),
        ],
        "timestamp" => vec![
            g("timestamp_to_timestamp", &[Ts], Ts),
            g("string_to_timestamp", &[Str], Ts),
            g("int64_to_timestamp", &[Int], Ts),
        ],
        "dyn" => vec![g("to_dyn", &[A], Dyn)],
        "type" => vec![g("type", &[A], P::TypeOf(&A))],
        "contains" => vec![m("contains_string", &[Str, Str], Bool)],
        "startsWith" => vec![m("starts_with_string", &[Str, Str], Bool)],
        "endsWith" => vec![m("ends_with_string", &[Str, Str], Bool)],
        "matches" => vec![
            g("matches", &[Str, Str], Bool),
            m("matches_string", &[Str, Str], Bool),
        ],
        "getFullYear" | "getMonth" | "getDayOfYear" | "getDayOfMonth" | "getDate"
        | "getDayOfWeek" => {
            let id = format!("timestamp_to_{}", name.trim_start_matches("get"));
            vec![
                m(format!("{id}_with_tz"), &[Ts, Str], Int),
                m(id, &[Ts], Int),
            ]
        }
        "getHours" | "getMinutes" | "getSeconds" | "getMilliseconds" => {
            let unit = name.trim_start_matches("get");
            vec![
                m(format!("timestamp_to_{unit}"), &[Ts], Int),
                m(format!("timestamp_to_{unit}_with_tz"), &[Ts, Str], Int),
                m(format!("duration_to_{unit}"), &[Dur], Int),
            ]
        }
        // The strings extension, version 2.
        "charAt" => vec![m("string_char_at_int", &[Str, Int], Str)],
        "indexOf" => vec![
            m("string_index_of_string", &[Str, Str], Int),
            m("string_index_of_string_int", &[Str, Str, Int], Int),
            m("list_a_index_of_int", &[LA, A], Int),
        ],
        "lastIndexOf" => vec![
            m("string_last_index_of_string", &[Str, Str], Int),
            m("string_last_index_of_string_int", &[Str, Str, Int], Int),
            m("list_a_last_index_of_int", &[LA, A], Int),
        ],
        "lowerAscii" => vec![m("string_lower_ascii", &[Str], Str)],
        "upperAscii" => vec![m("string_upper_ascii", &[Str], Str)],
        "trim" => vec![m("string_trim", &[Str], Str)],
        "replace" => vec![
            m("string_replace_string_string", &[Str, Str, Str], Str),
            m(
                "string_replace_string_string_int",
                &[Str, Str, Str, Int],
                Str,
            ),
        ],
        "split" => vec![
            m("string_split_string", &[Str, Str], LS),
            m("string_split_string_int", &[Str, Str, Int], LS),
        ],
        "substring" => vec![
            m("string_substring_int", &[Str, Int], Str),
            m("string_substring_int_int", &[Str, Int, Int], Str),
        ],
        "join" => vec![
            m("list_join", &[LS], Str),
            m("list_join_string", &[LS, Str], Str),
        ],
        "format" => vec![m("string_format", &[Str, P::ListOf(&Dyn)], Str)],
        "strings.quote" => vec![g("strings_quote", &[Str], Str)],
        // The sets extension.
        "sets.contains" => vec![g("list_sets_contains_list", &[LA, LA], Bool)],
        "sets.equivalent" => vec![g("list_sets_equivalent_list", &[LA, LA], Bool)],
        "sets.intersects" => vec![g("list_sets_intersects_list", &[LA, LA], Bool)],
        // The lists extension, version 3.
        "slice" => vec![m("list_slice", &[LA, Int, Int], LA)],
        "flatten" => vec![
            m("list_flatten", &[P::ListOf(&LA)], LA),
            m("list_flatten_int", &[P::ListOf(&Dyn), Int], P::ListOf(&Dyn)),
        ],
        "lists.range" => vec![g("lists_range", &[Int], P::ListOf(&Int))],
        "distinct" => vec![m("list_distinct", &[LA], LA)],
        "reverse" => vec![m("list_reverse", &[LA], LA)],
        "sort" => comparable(|t, name| m(format!("list_{name}_sort"), &[l(t)], l(t))),
        "first" => vec![m("list_first", &[LA], OA)],
        "last" => vec![m("list_last", &[LA], OA)],
        // Kubernetes' lists library.
        "isSorted" => comparable(|t, name| m(format!("list_{name}_is_sorted_bool"), &[l(t)], Bool)),
        "sum" => vec![
            m("list_int_sum", &[P::ListOf(&Int)], Int),
            m("list_uint_sum", &[P::ListOf(&Uint)], Uint),
            m("list_double_sum", &[P::ListOf(&Double)], Double),
            m("list_duration_sum", &[P::ListOf(&Dur)], Dur),
        ],
        "min" | "max" => comparable(|t, n| m(format!("list_{n}_{name}_{n}"), &[l(t)], t)),
        // Regex.
        "find" => vec![m("string_find_string", &[Str, Str], Str)],
        "findAll" => vec![
            m("string_find_all_string", &[Str, Str], LS),
            m("string_find_all_string_int", &[Str, Str, Int], LS),
        ],
        // URLs.
        "url" => vec![g("string_to_url", &[Str], U)],
        "isURL" => vec![g("is_url_string", &[Str], Bool)],
        "getScheme" => vec![m("url_get_scheme", &[U], Str)],
        "getHost" => vec![m("url_get_host", &[U], Str)],
        "getHostname" => vec![m("url_get_hostname", &[U], Str)],
        "getPort" => vec![m("url_get_port", &[U], Str)],
        "getEscapedPath" => vec![m("url_get_escaped_path", &[U], Str)],
        "getQuery" => vec![m("url_get_query", &[U], P::MapOf(&Str, &LS))],
        // IP and CIDR.
        "ip" => vec![g("string_to_ip", &[Str], I), m("cidr_ip", &[C], I)],
        "isIP" => vec![g("is_ip", &[Str], Bool)],
        "ip.isCanonical" => vec![g("ip_is_canonical", &[Str], Bool)],
        "family" => vec![m("ip_family", &[I], Int)],
        "isUnspecified" => vec![m("ip_is_unspecified", &[I], Bool)],
        "isLoopback" => vec![m("ip_is_loopback", &[I], Bool)],
        "isLinkLocalMulticast" => vec![m("ip_is_link_local_multicast", &[I], Bool)],
        "isLinkLocalUnicast" => vec![m("ip_is_link_local_unicast", &[I], Bool)],
        "isGlobalUnicast" => vec![m("ip_is_global_unicast", &[I], Bool)],
        "cidr" => vec![g("string_to_cidr", &[Str], C)],
        "isCIDR" => vec![g("is_cidr", &[Str], Bool)],
        "containsIP" => vec![
            m("cidr_contains_ip_string", &[C, Str], Bool),
            m("cidr_contains_ip_ip", &[C, I], Bool),
        ],
        "containsCIDR" => vec![
            m("cidr_contains_cidr_string", &[C, Str], Bool),
            m("cidr_contains_cidr", &[C, C], Bool),
        ],
        "prefixLength" => vec![m("cidr_prefix_length", &[C], Int)],
        "masked" => vec![m("cidr_masked", &[C], C)],
        // Quantities.
        "quantity" => vec![g("string_to_quantity", &[Str], Q)],
        "isQuantity" => vec![g("is_quantity_string", &[Str], Bool)],
        "sign" => vec![g("quantity_sign", &[Q], Int)],
        "asApproximateFloat" => vec![m("quantity_get_float", &[Q], Double)],
        "asInteger" => vec![m("quantity_get_int", &[Q], Int)],
        "isInteger" => vec![m("quantity_is_integer", &[Q], Bool)],
        "add" => vec![
            m("quantity_add", &[Q, Q], Q),
            m("quantity_add_int", &[Q, Int], Q),
        ],
        "sub" => vec![
            m("quantity_sub", &[Q, Q], Q),
            m("quantity_sub_int", &[Q, Int], Q),
        ],
        "isGreaterThan" => vec![
            m("quantity_is_greater_than", &[Q, Q], Bool),
            m("semver_is_greater_than", &[SV, SV], Bool),
        ],
        "isLessThan" => vec![
            m("quantity_is_less_than", &[Q, Q], Bool),
            m("semver_is_less_than", &[SV, SV], Bool),
        ],
        "compareTo" => vec![
            m("quantity_compare_to", &[Q, Q], Int),
            m("semver_compare_to", &[SV, SV], Int),
        ],
        // Semver.
        "semver" => vec![
            g("string_to_semver", &[Str], SV),
            g("string_bool_to_semver", &[Str, Bool], SV),
        ],
        "isSemver" => vec![
            g("is_semver_string", &[Str], Bool),
            g("is_semver_string_bool", &[Str, Bool], Bool),
        ],
        "major" => vec![m("semver_major", &[SV], Int)],
        "minor" => vec![m("semver_minor", &[SV], Int)],
        "patch" => vec![m("semver_patch", &[SV], Int)],
        // The authorizer (with its selectors).
        "path" => vec![m("authorizer_path", &[AUTHZ, Str], PATH_CHECK)],
        "group" => vec![m("authorizer_group", &[AUTHZ, Str], GROUP_CHECK)],
        "serviceAccount" => vec![m("authorizer_serviceaccount", &[AUTHZ, Str, Str], AUTHZ)],
        "resource" => vec![m(
            "groupcheck_resource",
            &[GROUP_CHECK, Str],
            RESOURCE_CHECK,
        )],
        "subresource" => vec![m(
            "resourcecheck_subresource",
            &[RESOURCE_CHECK, Str],
            RESOURCE_CHECK,
        )],
        "namespace" => vec![m(
            "resourcecheck_namespace",
            &[RESOURCE_CHECK, Str],
            RESOURCE_CHECK,
        )],
        "name" => vec![m(
            "resourcecheck_name",
            &[RESOURCE_CHECK, Str],
            RESOURCE_CHECK,
        )],
        "fieldSelector" => vec![m(
            "authorizer_fieldselector",
            &[RESOURCE_CHECK, Str],
            RESOURCE_CHECK,
        )],
        "labelSelector" => vec![m(
            "authorizer_labelselector",
            &[RESOURCE_CHECK, Str],
            RESOURCE_CHECK,
        )],
        "check" => vec![
            m("pathcheck_check", &[PATH_CHECK, Str], DECISION),
            m("resourcecheck_check", &[RESOURCE_CHECK, Str], DECISION),
        ],
        "errored" => vec![m("decision_errored", &[DECISION], Bool)],
        "error" => vec![m("decision_error", &[DECISION], Str)],
        "allowed" => vec![m("decision_allowed", &[DECISION], Bool)],
        "reason" => vec![m("decision_reason", &[DECISION], Str)],
        // Formats.
        "format.named" => vec![g("format-named", &[Str], P::Opt(&F))],
        "validate" => vec![m("format-validate", &[F, Str], P::Opt(&LS))],
        // Optional types.
        "optional.of" => vec![g("optional_of", &[A], OA)],
        "optional.ofNonZeroValue" => vec![g("optional_ofNonZeroValue", &[A], OA)],
        "optional.none" => vec![g("optional_none", &[], OA)],
        "hasValue" => vec![m("optional_hasValue", &[OA], Bool)],
        "value" => vec![m("optional_value", &[OA], A)],
        "or" => vec![m("optional_or_optional", &[OA, OA], OA)],
        "orValue" => vec![m("optional_orValue_value", &[OA, A], A)],
        // The two-variable comprehensions' map insertion.
        "cel.@mapInsert" => vec![
            g("@mapInsert_map_key_value", &[MAB, A, B], MAB),
            g("@mapInsert_map_map", &[MAB, MAB], MAB),
        ],
        "optional.unwrap" => vec![g("optional_unwrap", &[P::ListOf(&OA)], LA)],
        "unwrapOpt" => vec![m("optional_unwrapOpt", &[P::ListOf(&OA)], LA)],
        _ => {
            let format = name.strip_prefix("format.")?;
            if !FORMATS.contains(&format) {
                return None;
            }
            vec![g(name, &[], F)]
        }
    };
    Some(list)
}

/// The identifiers that name types (`int`, `list`, ...), with the type they denote.
pub(super) fn type_ident(name: &str) -> Option<Type> {
    Some(Type::Meta(Box::new(match name {
        "int" => Type::Int,
        "uint" => Type::Uint,
        "double" => Type::Double,
        "string" => Type::String,
        "bool" => Type::Bool,
        "bytes" => Type::Bytes,
        "null_type" => Type::Null,
        "list" => Type::list(Type::Dyn),
        "map" => Type::Map(Box::new(Type::Dyn), Box::new(Type::Dyn)),
        "type" => Type::Meta(Box::new(Type::Dyn)),
        "google.protobuf.Timestamp" => Type::Timestamp,
        "google.protobuf.Duration" => Type::Duration,
        _ => return None,
    })))
}
