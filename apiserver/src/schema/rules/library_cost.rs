//! The cost estimates registered for functions outside CEL's core: the lists and sets extensions'
//! (`checker.OverloadCostEstimate`) and Kubernetes' library (`library.CostEstimator.EstimateCallCost`),
//! each a cost (without the arguments') and maybe a result size.

use kube_cel::cel::common::ast::{Expr, LiteralValue};

use super::cost::{
    Coster, Est, LIST_CREATE, MAX_FORMAT_SIZE, MAX_NAME_FORMAT_REGEX_SIZE, Node, REGEX_LENGTH,
    STRING_TRAVERSAL, UNKNOWN, fixed,
};
use super::types::{CIDR, FORMAT, IP, QUANTITY, SEMVER, Type, URL};

impl Coster<'_> {
    /// The estimates the lists and sets extensions register for their overloads.
    pub(super) fn extension(
        &self,
        overload: &str,
        target: Option<&Node<'_>>,
        args: &[Node<'_>],
    ) -> Option<(Est, Option<Est>)> {
        let int_value = |n: &Node<'_>, default: u64| match n.expr.map(|e| &e.expr) {
            Some(Expr::Literal(LiteralValue::Int(i))) => u64::try_from(**i).unwrap_or(0),
            _ => default,
        };
        let list_call = |factor: f64, size: Est| {
            let cost = size.factor(factor).add(fixed(1)).add(fixed(LIST_CREATE));
            Some((cost, Some(size)))
        };
        match overload {
            "list_sets_contains_list"
            | "list_sets_intersects_list"
            | "list_sets_equivalent_list" => {
                if args.len() != 2 {
                    return None;
                }
                let factor = if overload == "list_sets_equivalent_list" {
                    2.0
                } else {
                    1.0
                };
                let c = self
                    .node_size(&args[0])
                    .mul(self.node_size(&args[1]))
                    .factor(factor)
                    .add(fixed(1));
                Some((c, None))
            }
            "list_slice" => {
                let t = target?;
                if args.len() != 2 {
                    return None;
                }
                let s = self.node_size(t);
                let (start, end) = (int_value(&args[0], 0), int_value(&args[1], s.max));
                list_call(1.0, fixed(end.wrapping_sub(start)))
            }
            "lists_range" if target.is_none() && args.len() == 1 => {
                list_call(1.0, fixed(int_value(&args[0], u64::MAX)))
            }
            "list_reverse" if args.is_empty() => list_call(1.0, self.node_size(target?)),
            "list_flatten" | "list_flatten_int" if args.len() <= 1 => {
                let t = target?;
                let depth = args.first().map_or(1, |a| int_value(a, u64::MAX));
                list_call(depth as f64, self.node_size(t))
            }
            "list_distinct" if args.is_empty() => {
                let s = self.node_size(target?);
                list_call(2.0, s.mul(s))
            }
            _ if overload.starts_with("list_")
                && overload.ends_with("_sort")
                && args.is_empty() =>
            {
                let s = self.node_size(target?);
                let factor = if overload == "list_string_sort" || overload == "list_bytes_sort" {
                    2.0 + STRING_TRAVERSAL
                } else {
                    2.0
                };
                list_call(factor, s.mul(s))
            }
            _ => None,
        }
    }

    /// Kubernetes' `library.CostEstimator.EstimateCallCost`.
    pub(super) fn kubernetes(
        &self,
        function: &str,
        overload: &str,
        target: Option<&Node<'_>>,
        args: &[Node<'_>],
    ) -> Option<(Est, Option<Est>)> {
        let one = Some((fixed(1), None));
        let sz = |n: &Node<'_>| self.node_size(n);
        match function {
            "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf" => {
                let t = target?;
                match t.ty.first_parameter() {
                    Some(elem) if matches!(t.ty, Type::List(_) | Type::Map(..)) => {
                        let mut el = fixed(1);
                        if matches!(elem, Type::String | Type::Bytes) {
                            let item = t.path.as_ref().and_then(|p| {
                                let mut p = p.clone();
                                p.push("@items".into());
                                self.schema_size(&p)
                            });
                            el = el.add(item.unwrap_or(UNKNOWN).factor(STRING_TRAVERSAL));
                        }
                        Some((sz(t).mul(el), None))
                    }
                    _ => Some((sz(t).factor(STRING_TRAVERSAL), None)),
                }
            }
            "url" | "jsonpatch.escapeKey" if args.len() == 1 => {
                let s = sz(&args[0]);
                Some((s.factor(STRING_TRAVERSAL), Some(s)))
            }
            "lowerAscii" | "upperAscii" | "substring" | "trim" => {
                let s = sz(target?);
                Some((s.factor(STRING_TRAVERSAL), Some(s)))
            }
            "replace" if args.len() >= 2 => {
                let s = sz(target?);
                let (from, with) = (sz(&args[0]), sz(&args[1]));
                let (mut count, mut kept) = (fixed(0), fixed(0));
                if from.min == 0 {
                    count.max = if s.max < u64::MAX { s.max + 1 } else { s.max };
                    kept.max = s.max;
                } else if with.max <= from.min {
                    count.max = 0;
                    kept.max = s.max;
                } else {
                    count.max = (s.max as f64 / from.min as f64).ceil() as u64;
                }
                if from.max == 0 {
                    count.min = if s.min < u64::MAX { s.min + 1 } else { s.min };
                    kept.min = s.min;
                } else if from.max <= with.min {
                    count.min = 0;
                    kept.min = s.min;
                } else {
                    count.min = (s.min as f64 / from.max as f64).ceil() as u64;
                }
                let r = count.mul(with).add(kept);
                Some((s.factor(2.0 * STRING_TRAVERSAL), Some(r)))
            }
            "split" => {
                let s = sz(target?);
                let max = match args.get(1).and_then(|a| a.expr).map(|e| &e.expr) {
                    Some(Expr::Literal(LiteralValue::Int(i))) => **i as u64,
                    _ => s.max,
                };
                Some((s.factor(2.0 * STRING_TRAVERSAL), Some(Est { min: 0, max })))
            }
            "join" => {
                let t = target?;
                let list = sz(t);
                let mut s = fixed(0);
                if matches!(t.ty, Type::List(_) | Type::Map(..)) {
                    let item = t
                        .path
                        .as_ref()
                        .and_then(|p| {
                            let mut p = p.clone();
                            p.push("@items".into());
                            self.schema_size(&p)
                        })
                        .unwrap_or(UNKNOWN);
                    s = list.mul(item);
                }
                if let Some(sep) = args.first() {
                    let seps = Est {
                        min: list.min.saturating_sub(1),
                        max: list.max.saturating_sub(1),
                    };
                    s = s.add(sz(sep).mul(seps));
                }
                Some((s.factor(STRING_TRAVERSAL), Some(s)))
            }
            "find" | "findAll" if !args.is_empty() => {
                let s = sz(target?);
                let str_cost = s.add(fixed(1)).factor(STRING_TRAVERSAL);
                let re = sz(&args[0]).factor(REGEX_LENGTH);
                Some((str_cost.mul(re), Some(Est { min: 0, max: s.max })))
            }
            "cidr" | "isIP" | "isCIDR" if !args.is_empty() => {
                Some((sz(&args[0]).factor(STRING_TRAVERSAL), None))
            }
            "ip" if overload == "cidr_ip" => one,
            "ip" if !args.is_empty() => Some((sz(&args[0]).factor(STRING_TRAVERSAL), None)),
            "ip.isCanonical" if !args.is_empty() => {
                Some((sz(&args[0]).factor(2.0 * STRING_TRAVERSAL), None))
            }
            "masked"
            | "prefixLength"
            | "family"
            | "isUnspecified"
            | "isLoopback"
            | "isLinkLocalMulticast"
            | "isLinkLocalUnicast"
            | "isGlobalUnicast" => one,
            "containsIP" | "containsCIDR" if !args.is_empty() => {
                let ip = Est { min: 4, max: 16 };
                let mut c = ip.add(ip).factor(STRING_TRAVERSAL);
                if function == "containsCIDR" {
                    c = c.add(ip.factor(STRING_TRAVERSAL)).add(fixed(1));
                }
                if overload == "cidr_contains_ip_string" || overload == "cidr_contains_cidr_string"
                {
                    c = c.add(sz(&args[0]).factor(STRING_TRAVERSAL));
                }
                Some((c, None))
            }
            "quantity" | "isQuantity" | "semver" | "isSemver" if !args.is_empty() => {
                Some((sz(&args[0]).factor(STRING_TRAVERSAL), None))
            }
            "validate" if !args.is_empty() => {
                let c = sz(&args[0])
                    .factor(STRING_TRAVERSAL)
                    .factor(MAX_NAME_FORMAT_REGEX_SIZE * REGEX_LENGTH);
                Some((c, None))
            }
            "format.named" | "sign" | "asInteger" | "isInteger" | "asApproximateFloat"
            | "isGreaterThan" | "isLessThan" | "compareTo" | "add" | "sub" | "major" | "minor"
            | "patch" | "getScheme" | "getHostname" | "getHost" | "getPort" | "getEscapedPath"
            | "getQuery" => one,
            "_==_" if args.len() == 2 => {
                let (l, r) = (&args[0], &args[1]);
                if l.ty.to_string() != r.ty.to_string() {
                    return None;
                }
                let name = l.ty.to_string();
                let is = |t: Type| t.to_string() == name;
                if is(IP) || is(CIDR) || is(QUANTITY) || is(SEMVER) {
                    return one;
                }
                if is(FORMAT) {
                    return Some((
                        Est {
                            min: 1,
                            max: MAX_FORMAT_SIZE,
                        }
                        .factor(STRING_TRAVERSAL),
                        None,
                    ));
                }
                if is(URL) {
                    let size = r.computed.unwrap_or(fixed(1));
                    return Some((
                        Est {
                            min: 1,
                            max: size.max,
                        }
                        .factor(STRING_TRAVERSAL),
                        None,
                    ));
                }
                None
            }
            _ => None,
        }
    }
}
