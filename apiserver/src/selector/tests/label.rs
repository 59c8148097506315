//! Tests of label selectors: parsing, matching and the structured form.

use super::*;

#[test]
fn empty_selects_everything() {
    for s in ["", "   ", "\t\n\r "] {
        let l = sel(s);
        assert!(l.is_empty());
        assert_eq!(l.to_string(), "");
        assert!(l.matches(None));
        assert!(l.matches(Some(&labels(json!({"a": "b"})))));
    }
    assert!(LabelSelector::default().is_empty());
}

#[test]
fn parses_every_operator() {
    for (input, canonical) in [
        ("a=b", "a=b"),
        ("a==b", "a==b"),
        ("a!=b", "a!=b"),
        ("a in (b,c)", "a in (b,c)"),
        ("a notin (c,b)", "a notin (b,c)"),
        ("a", "a"),
        ("!a", "!a"),
        ("a>5", "a>5"),
        ("a<5", "a<5"),
    ] {
        let l = sel(input);
        assert!(!l.is_empty());
        assert_eq!(l.to_string(), canonical, "{input}");
    }
}

#[test]
fn canonical_form_sorts_keys_and_values() {
    assert_eq!(
        sel("b=1, a in (z, y, z), !c, d").to_string(),
        "a in (y,z),b=1,!c,d"
    );
    // Stable for equal keys.
    assert_eq!(sel("a!=2,a!=1").to_string(), "a!=2,a!=1");
    assert_eq!("x=y".parse::<LabelSelector>(), Ok(sel("x=y")));
}

#[test]
fn whitespace_is_tolerated() {
    let l = sel("  a = b ,\tc  in  ( x , y ) ,\n ! d , e notin(z),f>1 ");
    assert_eq!(l.to_string(), "a=b,c in (x,y),!d,e notin (z),f>1");
    assert_eq!(sel("a in(b)").to_string(), "a in (b)");
    assert_eq!(sel("a!=b").to_string(), sel("a != b").to_string());
}

#[test]
fn prefixed_keys_and_keywords_as_words() {
    assert_eq!(
        sel("app.kubernetes.io/name=web").to_string(),
        "app.kubernetes.io/name=web"
    );
    assert_eq!(sel("in in (in,notin)").to_string(), "in in (in,notin)");
    assert_eq!(sel("notin").to_string(), "notin");
    assert_eq!(sel("a=in").to_string(), "a=in");
}

#[test]
fn empty_values() {
    assert_eq!(sel("a=").to_string(), "a=");
    assert_eq!(sel("a=,b").to_string(), "a=,b");
    assert_eq!(sel("a!=").to_string(), "a!=");
    assert_eq!(sel("a in ()").to_string(), "a in ()");
    assert_eq!(sel("a in (,b)").to_string(), "a in (,b)");
    assert_eq!(sel("a in (b,)").to_string(), "a in (,b)");
    assert_eq!(sel("a in (,,,)").to_string(), "a in ()");
    // apimachinery quirk: a doubled comma right before ')' is rejected.
    assert_eq!(
        err("a in (,,)"),
        "unable to parse requirement: found ')', expected: ',', or identifier"
    );
    assert_eq!(sel("a in (b,,c)").to_string(), "a in (,b,c)");
}

#[test]
fn max_lengths() {
    let v63 = "v".repeat(63);
    assert!(LabelSelector::parse(&format!("a={v63}")).is_ok());
    let k63 = "k".repeat(63);
    assert!(LabelSelector::parse(&format!("example.com/{k63}")).is_ok());
}

#[test]
fn structural_errors() {
    for (input, want) in [
        (
            "a in (",
            "unable to parse requirement: found '', expected: ',', ')' or identifier",
        ),
        (
            "a in (b",
            "unable to parse requirement: found '', expected: ',' or ')'",
        ),
        (
            "a in (b c)",
            "unable to parse requirement: found 'c', expected: ',' or ')'",
        ),
        (
            "a in (b,=)",
            "unable to parse requirement: found '=', expected: ',', or identifier",
        ),
        (
            "a in b",
            "unable to parse requirement: found 'b' expected: '('",
        ),
        (
            "a in",
            "unable to parse requirement: found '' expected: '('",
        ),
        (
            "=b",
            "found '=', expected: !, identifier, or 'end of string'",
        ),
        (
            ",",
            "found ',', expected: !, identifier, or 'end of string'",
        ),
        ("a=b=c", "found '=', expected: ',' or 'end of string'"),
        ("a=b c", "found 'c', expected: ',' or 'end of string'"),
        ("!a=b", "found '=', expected: ',' or 'end of string'"),
        ("a=b,", "found '', expected: identifier after ','"),
        ("a,,b", "found ',', expected: identifier after ','"),
        (
            "a b",
            "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt",
        ),
        (
            "a!b",
            "unable to parse requirement: found '!', expected: in, notin, =, ==, !=, gt, lt",
        ),
        (
            "!",
            "unable to parse requirement: found '', expected: identifier",
        ),
        (
            "!!a",
            "unable to parse requirement: found '!', expected: identifier",
        ),
        (
            "a===b",
            "unable to parse requirement: found '=', expected: identifier",
        ),
        (
            "a>=5",
            "unable to parse requirement: found '=', expected: identifier",
        ),
        (
            "a=(b)",
            "unable to parse requirement: found '(', expected: identifier",
        ),
    ] {
        assert_eq!(err(input), want, "{input:?}");
    }
}

#[test]
fn integer_errors() {
    assert_eq!(
        err("a>b"),
        "unable to parse requirement: values[0]: Invalid value: \"b\": \
         for 'Gt', 'Lt' operators, the value must be an integer"
    );
    assert_eq!(
        err("a<"),
        "unable to parse requirement: values[0]: Invalid value: \"\": \
         for 'Gt', 'Lt' operators, the value must be an integer"
    );
    assert!(err("a>99999999999999999999").contains("must be an integer"));
}

#[test]
fn value_errors() {
    let long = "x".repeat(64);
    assert_eq!(
        err(&format!("a={long}")),
        format!(
            "unable to parse requirement: values[0][a]: Invalid value: \"{long}\": \
             must be no more than 63 characters"
        )
    );
    assert_eq!(
        err("app=-x"),
        format!(
            "unable to parse requirement: values[0][app]: Invalid value: \"-x\": {VALUE_REGEX}"
        )
    );
    let long_bad = format!("{long}-");
    assert_eq!(
        err(&format!("a={long_bad}")),
        format!(
            "unable to parse requirement: values[0][a]: Invalid value: \"{long_bad}\": \
             must be no more than 63 characters; {VALUE_REGEX}"
        )
    );
    assert_eq!(
        err("a in (y-, -x)"),
        format!(
            "unable to parse requirement: [values[0][a]: Invalid value: \"-x\": {VALUE_REGEX}, \
             values[1][a]: Invalid value: \"y-\": {VALUE_REGEX}]"
        )
    );
    assert_eq!(
        err("a>-1"),
        format!("unable to parse requirement: values[0][a]: Invalid value: \"-1\": {VALUE_REGEX}")
    );
}

#[test]
fn key_errors() {
    assert_eq!(
        err("-a=b"),
        format!("unable to parse requirement: <nil>: Invalid value: \"-a\": {NAME_REGEX}")
    );
    assert_eq!(
        err("app:web"),
        format!("unable to parse requirement: <nil>: Invalid value: \"app:web\": {NAME_REGEX}")
    );
    let long = "k".repeat(64);
    assert_eq!(
        err(&long),
        format!(
            "unable to parse requirement: <nil>: Invalid value: \"{long}\": \
             name part must be no more than 63 characters"
        )
    );
    assert_eq!(
        err("a/"),
        format!(
            "unable to parse requirement: <nil>: Invalid value: \"a/\": \
             name part must be non-empty; {NAME_REGEX}"
        )
    );
    assert_eq!(
        err("/a"),
        "unable to parse requirement: <nil>: Invalid value: \"/a\": \
         prefix part must be non-empty"
    );
    assert_eq!(
        err("Example.com/a"),
        "unable to parse requirement: <nil>: Invalid value: \"Example.com/a\": prefix part \
         a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \
         '-' or '.', and must start and end with an alphanumeric character (e.g. \
         'example.com', regex used for validation is \
         '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    );
    assert!(err("a..b/c").contains("prefix part a lowercase RFC 1123 subdomain"));
    assert!(
        err(&format!("{}/a", "p".repeat(254)))
            .contains("prefix part must be no more than 253 characters")
    );
    assert_eq!(
        err("a/b/c"),
        "unable to parse requirement: <nil>: Invalid value: \"a/b/c\": a qualified name \
         must consist of alphanumeric characters, '-', '_' or '.', and must start and end \
         with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex \
         used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional \
         DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
    );
    assert!(
        err("a\"\\é")
            .starts_with("unable to parse requirement: <nil>: Invalid value: \"a\\\"\\\\é\": ")
    );
}

#[test]
fn nul_byte_ends_input_like_go() {
    assert_eq!(sel("a\0").to_string(), "a");
    assert_eq!(sel("a=b\0,c").to_string(), "a=b,c");
    assert_eq!(err("a=b,\0"), "found '', expected: identifier after ','");
    assert_eq!(
        err("a\0b"),
        "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"
    );
}

#[test]
fn equality_matching() {
    for s in ["a=b", "a==b", "a in (b)"] {
        assert!(m(s, json!({"a": "b"})), "{s}");
        assert!(!m(s, json!({"a": "c"})), "{s}");
        assert!(!m(s, json!({})), "{s}");
        assert!(!sel(s).matches(None), "{s}");
    }
    assert!(m("a=", json!({"a": ""})));
    assert!(!m("a=", json!({})));
    assert!(m("a in ()", json!({"a": ""})));
    assert!(!m("a in ()", json!({"a": "x"})));
}

#[test]
fn inequality_matches_absent_keys() {
    for s in ["a!=b", "a notin (b)"] {
        assert!(!m(s, json!({"a": "b"})), "{s}");
        assert!(m(s, json!({"a": "c"})), "{s}");
        assert!(m(s, json!({})), "{s}");
        assert!(sel(s).matches(None), "{s}");
    }
    assert!(m("a notin (b,c)", json!({"a": "d"})));
    assert!(!m("a notin (b,c)", json!({"a": "c"})));
    assert!(m("a in (b,c)", json!({"a": "c"})));
}

#[test]
fn existence_matching() {
    assert!(m("a", json!({"a": ""})));
    assert!(!m("a", json!({"b": "x"})));
    assert!(!m("!a", json!({"a": ""})));
    assert!(m("!a", json!({"b": "x"})));
    assert!(sel("!a").matches(None));
}

#[test]
fn integer_comparisons() {
    assert!(m("a>5", json!({"a": "6"})));
    assert!(!m("a>5", json!({"a": "5"})));
    assert!(m("a<5", json!({"a": "4"})));
    assert!(m("a<5", json!({"a": "-10"})));
    assert!(!m("a<5", json!({"a": "5"})));
    assert!(!m("a>5", json!({})));
    assert!(!m("a<5", json!({})));
    assert!(!m("a>5", json!({"a": "x"})));
    assert!(!m("a<5", json!({"a": ""})));
    assert!(!m("a<5", json!({"a": "99999999999999999999"})));
}

#[test]
fn non_string_label_values_are_absent() {
    assert!(!m("a", json!({"a": 1})));
    assert!(!m("a=1", json!({"a": 1})));
    assert!(m("a!=1", json!({"a": 1})));
    assert!(m("!a", json!({"a": null})));
    assert!(!m("a>0", json!({"a": 1})));
}

#[test]
fn requirements_are_anded() {
    let s = "app=web,tier notin (db),!canary,version>1";
    assert!(m(s, json!({"app": "web", "tier": "fe", "version": "2"})));
    assert!(!m(s, json!({"app": "web", "tier": "db", "version": "2"})));
    assert!(!m(s, json!({"app": "web", "canary": "", "version": "2"})));
    assert!(!m(s, json!({"app": "web", "version": "1"})));
}

fn structured(v: Value) -> Result<LabelSelector, String> {
    LabelSelector::from_label_selector(&v).map_err(|e| e.to_string())
}

#[test]
fn structured_empty_selects_everything() {
    for v in [
        Value::Null,
        json!({}),
        json!({"matchLabels": {}, "matchExpressions": []}),
    ] {
        let l = structured(v).unwrap_or_else(|e| panic!("{e}"));
        assert!(l.is_empty());
        assert!(l.matches(None));
    }
    let l = structured(json!({"matchLabels": null, "matchExpressions": null}));
    assert_eq!(l.map(|l| l.is_empty()), Ok(true));
}

#[test]
fn structured_conversion() {
    let l = structured(json!({
        "matchLabels": {"b": "1", "a": "x"},
        "matchExpressions": [
            {"key": "c", "operator": "In", "values": ["z", "y"]},
            {"key": "d", "operator": "NotIn", "values": ["q"]},
            {"key": "e", "operator": "Exists"},
            {"key": "f", "operator": "DoesNotExist", "values": []},
        ]
    }))
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(l.to_string(), "a=x,b=1,c in (y,z),d notin (q),e,!f");
    assert!(l.matches(Some(&labels(
        json!({"a": "x", "b": "1", "c": "y", "e": ""})
    ))));
    assert!(!l.matches(Some(&labels(json!({"a": "x", "b": "1", "c": "y"})))));
    assert!(!l.matches(Some(&labels(
        json!({"a": "x", "b": "1", "c": "y", "e": "", "f": ""})
    ))));
    assert_eq!(l, sel(&l.to_string()));
}

#[test]
fn structured_errors() {
    assert_eq!(
        structured(json!({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]})),
        Err("\"Gt\" is not a valid label selector operator".to_string())
    );
    assert_eq!(
        structured(json!({"matchExpressions": [{"key": "a"}]})),
        Err("\"\" is not a valid label selector operator".to_string())
    );
    assert_eq!(
        structured(json!({"matchExpressions": [{"key": "a", "operator": "In"}]})),
        Err(
            "values: Invalid value: []string(nil): for 'in', 'notin' operators, \
             values set can't be empty"
                .to_string()
        )
    );
    assert_eq!(
        structured(
            json!({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x", "y"]}]})
        ),
        Err(
            "values: Invalid value: []string{\"x\", \"y\"}: values set must be empty \
             for exists and does not exist"
                .to_string()
        )
    );
    assert_eq!(
        structured(json!({"matchLabels": {"-a": "b"}})),
        Err(format!("key: Invalid value: \"-a\": {NAME_REGEX}"))
    );
    assert_eq!(
        structured(json!({"matchLabels": {"a": "-b"}})),
        Err(format!(
            "values[0][a]: Invalid value: \"-b\": {VALUE_REGEX}"
        ))
    );
    assert_eq!(
        structured(
            json!({"matchExpressions": [{"key": "", "operator": "In", "values": ["ok", "-x"]}]})
        ),
        Err(format!(
            "[key: Invalid value: \"\": name part must be non-empty; {NAME_REGEX}, \
             values[1][]: Invalid value: \"-x\": {VALUE_REGEX}]"
        ))
    );
    assert!(
        structured(json!("a=b")).is_err_and(|e| e.starts_with("json: cannot unmarshal string"))
    );
    assert!(structured(json!({"matchLabels": {"a": 1}})).is_err());
    assert!(structured(json!({"matchLabels": []})).is_err());
    assert!(structured(json!({"matchExpressions": {}})).is_err());
    assert!(structured(json!({"matchExpressions": [1]})).is_err());
    assert!(structured(json!({"matchExpressions": [{"key": 1, "operator": "Exists"}]})).is_err());
    assert!(
        structured(json!({"matchExpressions": [{"key": "a", "operator": "In", "values": "x"}]}))
            .is_err()
    );
    assert!(
        structured(json!({"matchExpressions": [{"key": "a", "operator": "In", "values": [true]}]}))
            .is_err()
    );
}
