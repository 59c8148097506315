//! String formats (`format`): the checks the 1.35 server knows, as in kube-openapi's strfmt.

use super::go_regex::{
    base64_re, creditcard_re, datetime_re, dns1123_label_re, dns1123_subdomain_re, duration_re,
    hexcolor_re, hostname_label_re, hostname_single_re, hostname_tld_re, isbn10_re, isbn13_re,
    re_match, rgbcolor_re, ssn_re, uuid_re, uuid3_re, uuid4_re, uuid5_re,
};

/// Whether `s` is valid for `format` (one of [`STRING_FORMATS`], in any spelling with dashes).
pub(super) fn validates_format(format: &str, s: &str) -> bool {
    match normalize_format(format).as_str() {
        "bsonobjectid" => s.len() == 24 && s.bytes().all(|b| b.is_ascii_hexdigit()),
        "uri" => is_request_uri(s),
        "email" => is_email(s),
        "hostname" => is_hostname(s),
        "ipv4" => parse_ip(s, true) && s.contains('.'),
        "ipv6" => parse_ip(s, false) && s.contains(':'),
        "cidr" => is_cidr(s),
        "mac" => is_mac(s),
        "uuid" => re_match(uuid_re(), s),
        "uuid3" => re_match(uuid3_re(), s),
        "uuid4" => re_match(uuid4_re(), s),
        "uuid5" => re_match(uuid5_re(), s),
        "isbn" => is_isbn(s, 10) || is_isbn(s, 13),
        "isbn10" => is_isbn(s, 10),
        "isbn13" => is_isbn(s, 13),
        "creditcard" => is_credit_card(s),
        "ssn" => s.len() == 11 && re_match(ssn_re(), s),
        "hexcolor" => re_match(hexcolor_re(), s),
        "rgbcolor" => re_match(rgbcolor_re(), s),
        "byte" => re_match(base64_re(), s),
        "date" => is_date(s),
        "duration" => is_duration(s),
        "datetime" => is_date_time(s),
        "k8sshortname" => s.len() <= 63 && re_match(dns1123_label_re(), s),
        "k8slongname" => s.len() <= 253 && re_match(dns1123_subdomain_re(), s),
        _ => true,
    }
}

/// kube-openapi's `IsHostname`: its regular expression (a single label with at most one `-`
/// right after the first character, or dot-separated labels ending in a top-level domain of 2 to
/// 63 letters), spelled out to avoid compiling large Unicode repetitions.
pub(super) fn is_hostname(s: &str) -> bool {
    let chars = s.chars().count();
    let single = re_match(hostname_single_re(), s)
        && chars.saturating_sub(1 + usize::from(s.chars().nth(1) == Some('-'))) <= 62;
    let dotted = || {
        let Some((labels, tld)) = s.rsplit_once('.') else {
            return false;
        };
        (2..=63).contains(&tld.chars().count())
            && re_match(hostname_tld_re(), tld)
            && labels
                .split('.')
                .all(|l| l.chars().count() <= 63 && re_match(hostname_label_re(), l))
    };
    (single || dotted()) && s.len() <= 255 && s.split('.').all(|p| p.len() <= 63)
}

/// Go's `time.Parse("2006-01-02", s)` succeeds.
pub(super) fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let digits = |r: std::ops::Range<usize>| -> Option<u32> {
        b[r].iter().try_fold(0u32, |acc, c| {
            c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0'))
        })
    };
    let (Some(year), Some(month), Some(day)) = (digits(0..4), digits(5..7), digits(8..10)) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// kube-openapi's `IsDateTime`.
pub(super) fn is_date_time(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_lowercase();
    let parts: Vec<&str> = lower.split('t').collect();
    if parts.len() < 2 || !is_date(parts[0]) {
        return false;
    }
    let Some(caps) = datetime_re().and_then(|r| r.captures(parts[1])) else {
        return false;
    };
    let part = |i: usize| caps.get(i).map_or("", |m| m.as_str());
    part(1) <= "23" && part(2) <= "59" && part(3) <= "59"
}

/// kube-openapi's `ParseDuration`: Go's `time.ParseDuration`, or `<n> <unit>` groups.
pub(super) fn is_duration(s: &str) -> bool {
    if go_parse_duration(s) {
        return true;
    }
    const UNITS: &[&[&str]] = &[
        &["ns", "nano"],
        &["us", "µs", "micro"],
        &["ms", "milli"],
        &["s", "sec"],
        &["m", "min"],
        &["h", "hr", "hour"],
        &["d", "day"],
        &["w", "wk", "week"],
    ];
    let Some(re) = duration_re() else {
        return false;
    };
    let mut ok = false;
    for caps in re.captures_iter(s) {
        let factor = caps.get(1).map_or("", |m| m.as_str());
        if factor.parse::<i64>().is_err() {
            return false;
        }
        let unit = caps.get(2).map_or("", |m| m.as_str()).to_lowercase();
        for variants in UNITS {
            let last = variants.len() - 1;
            for (i, v) in variants.iter().enumerate() {
                if (i == last && unit.starts_with(v)) || unit == *v {
                    ok = true;
                }
            }
        }
    }
    ok
}

/// Go's `time.ParseDuration` succeeds.
pub(super) fn go_parse_duration(s: &str) -> bool {
    let neg = s.starts_with('-');
    let mut s = s.strip_prefix(['-', '+']).unwrap_or(s);
    if s == "0" {
        return true;
    }
    if s.is_empty() {
        return false;
    }
    let limit: u128 = 1 << 63;
    let mut total: u128 = 0;
    while !s.is_empty() {
        let int_len = s.bytes().take_while(u8::is_ascii_digit).count();
        let mut value: u128 = 0;
        for b in s[..int_len].bytes() {
            value = value * 10 + u128::from(b - b'0');
            if value > limit {
                return false;
            }
        }
        s = &s[int_len..];
        let mut frac_len = 0;
        let mut frac = "";
        if let Some(rest) = s.strip_prefix('.') {
            frac_len = rest.bytes().take_while(u8::is_ascii_digit).count();
            frac = &rest[..frac_len];
            s = &rest[frac_len..];
        }
        if int_len == 0 && frac_len == 0 {
            return false;
        }
        let unit_len = s
            .find(|c: char| c == '.' || c.is_ascii_digit())
            .unwrap_or(s.len());
        let unit = match &s[..unit_len] {
            "ns" => 1u128,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return false,
        };
        s = &s[unit_len..];
        let mut v = value * unit;
        if !frac.is_empty() {
            let f: f64 = format!("0.{frac}").parse().unwrap_or(0.0);
            v += (f * unit as f64) as u128;
        }
        total += v;
        if total > limit {
            return false;
        }
    }
    neg || total < limit
}

/// IPv4 per Go: `sloppy` is Go 1.16's parser (leading zeros allowed), otherwise `net/netip`'s.
pub(super) fn parse_ipv4(s: &str, sloppy: bool) -> bool {
    let parts: Vec<&str> = s.split('.').collect();
    parts.len() == 4
        && parts.iter().all(|p| {
            if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                return false;
            }
            if !sloppy && (p.len() > 3 || (p.len() > 1 && p.starts_with('0'))) {
                return false;
            }
            let trimmed = p.trim_start_matches('0');
            trimmed.len() <= 3 && trimmed.parse::<u32>().unwrap_or(0) <= 255
        })
}

/// IPv6 per Go (see [`parse_ipv4`] for `sloppy`).
pub(super) fn parse_ipv6(s: &str, sloppy: bool) -> bool {
    if !sloppy && s.contains('%') {
        return false;
    }
    let mut b = s.as_bytes();
    let mut ellipsis: Option<usize> = None;
    if b.len() >= 2 && b[0] == b':' && b[1] == b':' {
        ellipsis = Some(0);
        b = &b[2..];
        if b.is_empty() {
            return true;
        }
    }
    let mut i = 0;
    while i < 16 {
        let mut n: u32 = 0;
        let mut c = 0;
        while c < b.len() && b[c].is_ascii_hexdigit() {
            n = n * 16 + char::from(b[c]).to_digit(16).unwrap_or(0);
            c += 1;
            if n >= 0xFF_FFFF {
                return false;
            }
        }
        if c == 0 || n > 0xFFFF || (!sloppy && c > 4 && b.get(c) != Some(&b'.')) {
            return false;
        }
        if b.get(c) == Some(&b'.') {
            if (ellipsis.is_none() && i != 12) || i + 4 > 16 {
                return false;
            }
            if !std::str::from_utf8(b).is_ok_and(|v4| parse_ipv4(v4, sloppy)) {
                return false;
            }
            b = &[];
            i += 4;
            break;
        }
        i += 2;
        b = &b[c..];
        if b.is_empty() {
            break;
        }
        if b[0] != b':' || b.len() == 1 {
            return false;
        }
        b = &b[1..];
        if b[0] == b':' {
            if ellipsis.is_some() {
                return false;
            }
            ellipsis = Some(i);
            b = &b[1..];
            if b.is_empty() {
                break;
            }
        }
    }
    if !b.is_empty() {
        return false;
    }
    if i < 16 {
        ellipsis.is_some()
    } else {
        ellipsis.is_none()
    }
}

/// Go's `net.ParseIP` (or the sloppy variant) succeeds.
pub(super) fn parse_ip(s: &str, sloppy: bool) -> bool {
    for b in s.bytes() {
        match b {
            b'.' => return parse_ipv4(s, sloppy),
            b':' => return parse_ipv6(s, sloppy),
            _ => {}
        }
    }
    false
}

/// `ParseCIDRSloppy` succeeds.
pub(super) fn is_cidr(s: &str) -> bool {
    let Some((addr, mask)) = s.split_once('/') else {
        return false;
    };
    let bits = if parse_ipv4(addr, true) {
        32
    } else if parse_ipv6(addr, true) {
        128
    } else {
        return false;
    };
    !mask.is_empty()
        && mask.len() < 8
        && mask.bytes().all(|b| b.is_ascii_digit())
        && mask.parse::<u32>().is_ok_and(|n| n <= bits)
}

/// Go's `net.ParseMAC` succeeds.
pub(super) fn is_mac(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 14 {
        return false;
    }
    let hex2 = |x: &[u8]| x.len() == 2 && x.iter().all(u8::is_ascii_hexdigit);
    if b[2] == b':' || b[2] == b'-' {
        if !(b.len() + 1).is_multiple_of(3) {
            return false;
        }
        let n = (b.len() + 1) / 3;
        if n != 6 && n != 8 && n != 20 {
            return false;
        }
        (0..n).all(|i| hex2(&b[i * 3..i * 3 + 2]) && (i + 1 == n || b[i * 3 + 2] == b[2]))
    } else if b[4] == b'.' {
        if !(b.len() + 1).is_multiple_of(5) {
            return false;
        }
        let n = 2 * (b.len() + 1) / 5;
        if n != 6 && n != 8 && n != 20 {
            return false;
        }
        (0..n / 2).all(|i| {
            let x = i * 5;
            hex2(&b[x..x + 2]) && hex2(&b[x + 2..x + 4]) && (i + 1 == n / 2 || b[x + 4] == b[4])
        })
    } else {
        false
    }
}

pub(super) fn is_isbn(s: &str, version: u32) -> bool {
    let sanitized: Vec<u8> = s
        .bytes()
        .filter(|b| !matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ' | b'-'))
        .collect();
    let Ok(sanitized) = String::from_utf8(sanitized) else {
        return false;
    };
    let d = sanitized.as_bytes();
    let digit = |i: usize| i32::from(d[i]) - i32::from(b'0');
    if version == 10 {
        if !re_match(isbn10_re(), &sanitized) {
            return false;
        }
        let mut sum: i32 = (0..9).map(|i| (i as i32 + 1) * digit(i)).sum();
        sum += if d[9] == b'X' { 100 } else { 10 * digit(9) };
        sum % 11 == 0
    } else {
        if !re_match(isbn13_re(), &sanitized) {
            return false;
        }
        let sum: i32 = (0..12)
            .map(|i| if i % 2 == 0 { digit(i) } else { 3 * digit(i) })
            .sum();
        digit(12) - ((10 - sum % 10) % 10) == 0
    }
}

pub(super) fn is_credit_card(s: &str) -> bool {
    let sanitized: String = s.chars().filter(char::is_ascii_digit).collect();
    if !re_match(creditcard_re(), &sanitized) {
        return false;
    }
    let mut sum = 0u32;
    let mut double = false;
    for c in sanitized.bytes().rev() {
        let mut n = u32::from(c - b'0');
        if double {
            n *= 2;
            sum += if n >= 10 { n % 10 + 1 } else { n };
        } else {
            sum += n;
        }
        double = !double;
    }
    sum.is_multiple_of(10)
}

pub(super) fn is_email_atext(c: char, dot: bool, permissive: bool) -> bool {
    match c {
        '.' => dot,
        '(' | ')' | '[' | ']' | ';' | '@' | '\\' | ',' => permissive,
        '<' | '>' | '"' | ':' => false,
        c => ('!'..='~').contains(&c) || !c.is_ascii(),
    }
}

pub(super) fn is_dot_atom(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('.')
        && !s.ends_with('.')
        && !s.contains("..")
        && s.chars().all(|c| is_email_atext(c, true, false))
}

/// `local-part@domain`: a dot-atom or non-empty quoted string, then a dot-atom or domain literal.
pub(super) fn is_addr_spec(s: &str) -> bool {
    let domain = if let Some(rest) = s.strip_prefix('"') {
        let mut escaped = false;
        let mut end = None;
        for (i, c) in rest.char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => {
                    end = Some(i);
                    break;
                }
                _ => {}
            }
        }
        let Some(end) = end else { return false };
        if end == 0 {
            return false;
        }
        match rest[end + 1..].strip_prefix('@') {
            Some(domain) => domain,
            None => return false,
        }
    } else {
        match s.split_once('@') {
            Some((local, domain)) if is_dot_atom(local) => domain,
            _ => return false,
        }
    };
    let domain = domain.trim_start_matches([' ', '\t']);
    if let Some(lit) = domain.strip_prefix('[') {
        return lit
            .strip_suffix(']')
            .is_some_and(|inner| !inner.contains(['[', ']', '\\']));
    }
    is_dot_atom(domain)
}

/// An approximation of Go's `net/mail.ParseAddress`.
pub(super) fn is_email(s: &str) -> bool {
    let t = s.trim_matches([' ', '\t']);
    if is_addr_spec(t) {
        return true;
    }
    let Some(rest) = t.strip_suffix('>') else {
        return false;
    };
    let Some(lt) = rest.rfind('<') else {
        return false;
    };
    let name = rest[..lt].trim_matches([' ', '\t']);
    let addr = rest[lt + 1..].trim_start_matches([' ', '\t']);
    let name_ok = name.is_empty()
        || name.split([' ', '\t']).filter(|w| !w.is_empty()).all(|w| {
            (w.starts_with('"') && w.ends_with('"') && w.len() >= 2)
                || w.chars().all(|c| is_email_atext(c, true, true))
        });
    name_ok && is_addr_spec(addr)
}

/// An approximation of Go's `url.ParseRequestURI` succeeding.
pub(super) fn is_request_uri(s: &str) -> bool {
    if s.is_empty() || s.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return false;
    }
    if s == "*" {
        return true;
    }
    // Scheme.
    let mut scheme = "";
    let mut rest = s;
    for (i, c) in s.char_indices() {
        match c {
            'a'..='z' | 'A'..='Z' => {}
            '0'..='9' | '+' | '-' | '.' if i > 0 => {}
            ':' if i == 0 => return false,
            ':' => {
                scheme = &s[..i];
                rest = &s[i + 1..];
                break;
            }
            _ => break,
        }
    }
    if rest.ends_with('?') && rest.matches('?').count() == 1 {
        rest = &rest[..rest.len() - 1];
    } else if let Some((before, _)) = rest.split_once('?') {
        rest = before;
    }
    if !rest.starts_with('/') {
        return !scheme.is_empty();
    }
    if !scheme.is_empty()
        && let Some(after) = rest.strip_prefix("//")
    {
        let (authority, path) = match after.find('/') {
            Some(i) => (&after[..i], &after[i..]),
            None => (after, ""),
        };
        if !is_authority(authority) {
            return false;
        }
        rest = path;
    }
    unescapes(rest, false)
}

pub(super) fn is_authority(a: &str) -> bool {
    let (userinfo, host) = match a.rfind('@') {
        Some(i) => (Some(&a[..i]), &a[i + 1..]),
        None => (None, a),
    };
    let port_ok = |p: &str| {
        p.is_empty()
            || p.strip_prefix(':')
                .is_some_and(|d| d.bytes().all(|b| b.is_ascii_digit()))
    };
    if host.starts_with('[') {
        match host.rfind(']') {
            Some(i) if port_ok(&host[i + 1..]) => {}
            _ => return false,
        }
    } else if let Some(i) = host.rfind(':')
        && !port_ok(&host[i..])
    {
        return false;
    }
    if !unescapes(host, true) {
        return false;
    }
    match userinfo {
        None => true,
        Some(u) => {
            u.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._:~!$&'()*+,;=%@".contains(c))
                && unescapes(u, false)
        }
    }
}

/// Go's `url` unescaping succeeds (`host` mode also rejects characters not allowed in hosts).
pub(super) fn unescapes(s: &str, host: bool) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                if i + 2 >= b.len() {
                    return false;
                }
                if !b[i + 1].is_ascii_hexdigit() || !b[i + 2].is_ascii_hexdigit() {
                    return false;
                }
                if host
                    && char::from(b[i + 1]).to_digit(16).unwrap_or(0) < 8
                    && &s[i..i + 3] != "%25"
                {
                    return false;
                }
                i += 3;
                continue;
            }
            c if host && c < 0x80 => {
                let allowed = c.is_ascii_alphanumeric() || b"-_.~!$&'()*+,;=:[]<>\"".contains(&c);
                if !allowed {
                    return false;
                }
            }
            _ => {}
        }
        i += 1;
    }
    true
}

/// String formats the 1.35 server validates (names normalized by dropping `-`).
pub(super) const STRING_FORMATS: &[&str] = &[
    "bsonobjectid",
    "uri",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "cidr",
    "mac",
    "uuid",
    "uuid3",
    "uuid4",
    "uuid5",
    "isbn",
    "isbn10",
    "isbn13",
    "creditcard",
    "ssn",
    "hexcolor",
    "rgbcolor",
    "byte",
    "password",
    "date",
    "duration",
    "datetime",
    "k8sshortname",
    "k8slongname",
];

/// A format name as kube-openapi compares it: without dashes.
pub(super) fn normalize_format(f: &str) -> String {
    f.replace('-', "")
}
