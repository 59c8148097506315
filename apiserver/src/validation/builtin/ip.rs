//! IP addresses and CIDRs as kube-apiserver reads the legacy fields (`netutils.ParseIPSloppy` and
//! `ParseCIDRSloppy`: IPv4 octets may have leading zeros, read as decimal), with apimachinery's messages
//! (`IsValidIPForLegacyField`, `IsValidCIDRForLegacyField`, without the `StrictIPCIDRValidation` gate, off
//! in 1.35) and the core group's `ValidateEndpointIP`.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::field::{Errors, FieldError};

/// `ParseIPSloppy`: an address, IPv4 octets read as decimal even with leading zeros.
pub(super) fn parse_sloppy(s: &str) -> Option<IpAddr> {
    if s.contains(':') {
        return s.parse::<Ipv6Addr>().ok().map(IpAddr::V6);
    }
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() != 4 {
        return None;
    }
    let mut octets = [0u8; 4];
    for (o, p) in octets.iter_mut().zip(&parts) {
        if p.is_empty() || p.len() > 3 || !p.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        *o = p.parse().ok()?;
    }
    Some(IpAddr::V4(Ipv4Addr::from(octets)))
}

/// `ParseCIDRSloppy`: an address and a prefix length within its family's bits.
pub(super) fn parse_cidr_sloppy(s: &str) -> Option<(IpAddr, u8)> {
    let (ip, bits) = s.split_once('/')?;
    let ip = parse_sloppy(ip)?;
    if bits.is_empty() || bits.len() > 3 || !bits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let bits: u8 = bits.parse().ok()?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    (bits <= max).then_some((ip, bits))
}

/// `IsValidIPForLegacyField`: `value` is an address, or one of `old` (kept as it was).
pub(super) fn legacy_ip(path: &str, value: &str, old: &[&str]) -> Errors {
    if old.contains(&value) || parse_sloppy(value).is_some() {
        return Errors::new();
    }
    vec![FieldError::invalid(
        path,
        value,
        "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
    )]
}

/// `IsValidCIDRForLegacyField`: `value` is a CIDR, or one of `old`.
pub(super) fn legacy_cidr(path: &str, value: &str, old: &[&str]) -> Errors {
    if old.contains(&value) || parse_cidr_sloppy(value).is_some() {
        return Errors::new();
    }
    vec![FieldError::invalid(
        path,
        value,
        "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
    )]
}

/// `ValidateEndpointIP`: an address that is not unspecified, loopback or link-local.
pub(super) fn endpoint_ip(path: &str, value: &str) -> Errors {
    let mut errs = Errors::new();
    let Some(ip) = parse_sloppy(value) else {
        errs.push(FieldError::invalid(
            path,
            value,
            "must be a valid IP address",
        ));
        return errs;
    };
    // An IPv4-mapped IPv6 address is the IPv4 one, as Go's `net.IP` sees it.
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    let (unspecified, loopback, link_local, link_local_multicast) = match ip {
        IpAddr::V4(v4) => (
            v4.is_unspecified(),
            v4.is_loopback(),
            v4.is_link_local(),
            v4.octets()[..3] == [224, 0, 0],
        ),
        IpAddr::V6(v6) => (
            v6.is_unspecified(),
            v6.is_loopback(),
            v6.segments()[0] & 0xffc0 == 0xfe80,
            v6.segments()[0] & 0xff0f == 0xff02,
        ),
    };
    if unspecified {
        errs.push(FieldError::invalid(
            path,
            value,
            format!("may not be unspecified ({value})"),
        ));
    }
    if loopback {
        errs.push(FieldError::invalid(
            path,
            value,
            "may not be in the loopback range (127.0.0.0/8, ::1/128)",
        ));
    }
    if link_local {
        errs.push(FieldError::invalid(
            path,
            value,
            "may not be in the link-local range (169.254.0.0/16, fe80::/10)",
        ));
    }
    if link_local_multicast {
        errs.push(FieldError::invalid(
            path,
            value,
            "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
        ));
    }
    errs
}

/// `netutils.IsIPv6String`.
pub(super) fn is_ipv6(value: &str) -> bool {
    matches!(parse_sloppy(value), Some(IpAddr::V6(v6)) if v6.to_ipv4_mapped().is_none())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sloppy_forms() {
        assert_eq!(
            parse_sloppy("010.0.0.1"),
            Some(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)))
        );
        assert!(parse_sloppy("10.0.0").is_none());
        assert!(parse_sloppy("256.0.0.1").is_none());
        assert!(parse_cidr_sloppy("10.0.0.0/8").is_some());
        assert!(parse_cidr_sloppy("10.0.0.0/33").is_none());
        assert!(parse_cidr_sloppy("::/0").is_some());
        assert_eq!(endpoint_ip("x", "127.0.0.1").len(), 1);
        assert_eq!(endpoint_ip("x", "0.0.0.0").len(), 1);
        assert!(endpoint_ip("x", "1.2.3.4").is_empty());
        assert!(is_ipv6("::1") && !is_ipv6("1.2.3.4") && !is_ipv6("::ffff:1.2.3.4"));
    }
}
