//! Tests of the Go formatting helpers and the string formats.

use super::*;

#[test]
fn go_formatting() {
    assert_eq!(
        go_quote("a\"b\\\n\t\u{7}\u{7f}é\u{a0}\u{1F600}"),
        "\"a\\\"b\\\\\\n\\t\\a\\x7fé\\u00a0\u{1F600}\""
    );
    assert_eq!(go_float_v(1e6), "1e+06");
    assert_eq!(go_float_v(123456.0), "123456");
    assert_eq!(go_float_v(1234567.0), "1.234567e+06");
    assert_eq!(go_float_v(0.0001), "0.0001");
    assert_eq!(go_float_v(0.00001), "1e-05");
    assert_eq!(go_float_v(-1.5), "-1.5");
    assert_eq!(go_float_v(3.0), "3");
    assert_eq!(go_float_json(1e21), "1e+21");
    assert_eq!(go_float_json(1e20), "100000000000000000000");
    assert_eq!(go_float_json(1e-7), "1e-7");
    assert_eq!(go_float_json(0.5), "0.5");
    assert_eq!(
        go_json(&json!({"b": [1, 2.5, null, true], "a": "<&>\u{1}"})),
        r#"{"a":"\u003c\u0026\u003e\u0001","b":[1,2.5,null,true]}"#
    );
    assert_eq!(
        go_bad_value(&json!(18446744073709551615u64)),
        "1.8446744073709552e+19"
    );
    let e = FieldError::not_supported("f", json!("x"), &["a", "b\"c"]);
    assert_eq!(
        e.to_string(),
        r#"f: Unsupported value: "x": supported values: "a", "b\"c""#
    );
    assert_eq!(
        FieldError::duplicate("f[1]", json!(null)).to_string(),
        "f[1]: Duplicate value: null"
    );
    assert_eq!(
        FieldError::invalid("f", json!(false), "bad").reason(),
        "FieldValueInvalid"
    );
}

#[test]
fn string_format_checks() {
    assert!(validates_format("date-time", "2024-01-01t10:00:00Z"));
    assert!(validates_format("datetime", "2024-01-01T10:00:00.5-07:00"));
    assert!(!validates_format("date-time", "2024-01-01T24:00:00Z"));
    assert!(!validates_format("date-time", "2024-01-01"));
    assert!(!validates_format("date", "2024-1-01"));
    assert!(validates_format("byte", "aGk="));
    assert!(!validates_format("byte", ""));
    assert!(validates_format("uuid", "123E4567E89B12D3A456426614174000"));
    assert!(validates_format(
        "uuid4",
        "123e4567-e89b-42d3-a456-426614174000"
    ));
    assert!(!validates_format(
        "uuid4",
        "123e4567-e89b-12d3-a456-426614174000"
    ));
    assert!(validates_format("ipv4", "192.168.0.1"));
    assert!(validates_format("ipv4", "::ffff:1.2.3.4"));
    assert!(!validates_format("ipv4", "256.1.1.1"));
    assert!(validates_format("ipv6", "fe80::1"));
    assert!(validates_format("ipv6", "::"));
    assert!(!validates_format("ipv6", "fe80::1%eth0"));
    assert!(!validates_format("ipv6", "1:2:3:4:5:6:7:8:9"));
    assert!(!validates_format("ipv6", "1.2.3.4"));
    assert!(validates_format("cidr", "10.0.0.0/8"));
    assert!(validates_format("cidr", "fd00::/64"));
    assert!(!validates_format("cidr", "10.0.0.0/33"));
    assert!(!validates_format("cidr", "10.0.0.0"));
    assert!(validates_format("mac", "01:23:45:67:89:ab"));
    assert!(validates_format("mac", "0123.4567.89ab"));
    assert!(!validates_format("mac", "01:23:45:67:89"));
    assert!(!validates_format("mac", "01:23-45:67:89:ab"));
    assert!(validates_format("hostname", "example.com"));
    assert!(validates_format("hostname", "localhost"));
    assert!(!validates_format("hostname", "-bad.com"));
    assert!(validates_format("duration", "1h30m"));
    assert!(validates_format("duration", "-1.5s"));
    assert!(validates_format("duration", "3 days"));
    assert!(!validates_format("duration", "5 parsecs"));
    assert!(!validates_format("duration", ""));
    assert!(validates_format("email", "a.b@example.com"));
    assert!(validates_format("email", "Jane Doe <jane@example.com>"));
    assert!(!validates_format("email", "not-an-email"));
    assert!(!validates_format("email", "a..b@example.com"));
    assert!(validates_format("uri", "https://example.com/a?b=c"));
    assert!(validates_format("uri", "/relative/path"));
    assert!(validates_format("uri", "mailto:a@b"));
    assert!(!validates_format("uri", "relative/path"));
    assert!(!validates_format("uri", "http://exa mple.com/"));
    assert!(!validates_format("uri", "http://host:port/"));
    assert!(!validates_format("uri", "/bad%zz"));
    assert!(validates_format("isbn", "978-0321751041"));
    assert!(validates_format("isbn10", "0321751043"));
    assert!(!validates_format("isbn13", "9780321751042"));
    assert!(validates_format("creditcard", "4111 1111 1111 1111"));
    assert!(!validates_format("creditcard", "4111 1111 1111 1112"));
    assert!(validates_format("ssn", "123-45-6789"));
    assert!(validates_format("hexcolor", "#ffF"));
    assert!(validates_format("rgbcolor", "rgb(255, 0,10)"));
    assert!(!validates_format("rgbcolor", "rgb(256,0,0)"));
    assert!(validates_format("bsonobjectid", "507f1f77bcf86cd799439011"));
    assert!(validates_format("k8s-long-name", "a.b-c"));
    assert!(!validates_format("k8s-long-name", "a.-"));
    assert!(validates_format("password", ""));
}

#[test]
fn hostname_matches_the_reference_pattern() {
    let hn = "a-zA-Z0-9\\p{S}\\p{L}";
    let reference = regex::RegexBuilder::new(&format!(
        "^([{hn}]((-?[{hn}]{{0,62}})?)|([{hn}](([{hn}\\-]{{0,61}}[{hn}])?)(\\.)){{1,}}([a-zA-Z\\p{{L}}]){{2,63}})$"
    ))
    .size_limit(256 << 20)
    .build()
    .unwrap();
    let long = "a".repeat(63);
    let longer = "a".repeat(64);
    let mut inputs: Vec<String> = [
        "",
        "a",
        "-",
        "a-",
        "-a",
        "a-b",
        "a-b-c",
        "a--b",
        "ab-cd",
        "localhost",
        "x.y",
        "a.bc",
        "a.b1",
        "a.b-c",
        "example.com",
        "sub.example.com",
        "a-.com",
        "-a.com",
        "a-b.com",
        "a--b.com",
        "a..com",
        ".com",
        "com.",
        "münchen.de",
        "☃.net",
        "a☃b.com",
        "a.☃☃",
        "$.com",
        "a b.com",
        "a_b.com",
        "1.2.3.4",
        "a.b.c.d.ef",
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    inputs.extend([
        long.clone(),
        longer.clone(),
        format!("a-{long}"),
        format!("a-{}", "b".repeat(62)),
        format!("{long}.com"),
        format!("{longer}.com"),
        format!("a.{}", "c".repeat(63)),
        format!("a.{}", "c".repeat(64)),
        format!("a{}a.com", "-".repeat(61)),
    ]);
    for input in &inputs {
        let expected = reference.is_match(input)
            && input.len() <= 255
            && input.split('.').all(|p| p.len() <= 63);
        assert_eq!(is_hostname(input), expected, "{input:?}");
    }
}
