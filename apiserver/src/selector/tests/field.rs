//! Tests of field selectors.

use super::*;

fn fsel(s: &str) -> FieldSelector {
    FieldSelector::parse(s).unwrap_or_else(|e| panic!("{s:?} should parse: {e}"))
}

fn ferr(s: &str) -> String {
    match FieldSelector::parse(s) {
        Ok(v) => panic!("{s:?} should not parse, got {v}"),
        Err(e) => e.to_string(),
    }
}

fn object(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |f| pairs.iter().find(|(k, _)| k == f).map(|(_, v)| v.clone())
}

#[test]
fn field_empty_selects_everything() {
    for s in ["", ",", ",,"] {
        let f = fsel(s);
        assert!(f.is_empty());
        assert_eq!(f.to_string(), "");
        assert_eq!(f.fields().count(), 0);
        assert!(f.matches(|_| None));
    }
}

#[test]
fn field_operators() {
    let f = fsel("status.phase!=Failed,metadata.name==a,metadata.namespace=b");
    assert_eq!(
        f.fields().collect::<Vec<_>>(),
        ["metadata.name", "metadata.namespace", "status.phase"]
    );
    assert_eq!(
        f.to_string(),
        "metadata.name=a,metadata.namespace=b,status.phase!=Failed"
    );
    let obj = object(&[
        ("metadata.name", "a"),
        ("metadata.namespace", "b"),
        ("status.phase", "Running"),
    ]);
    assert!(f.matches(&obj));
    assert!(!f.matches(object(&[
        ("metadata.name", "a"),
        ("metadata.namespace", "b"),
        ("status.phase", "Failed"),
    ])));
    assert!(!f.matches(object(&[("metadata.name", "a")])));
    assert_eq!("a=b".parse::<FieldSelector>(), Ok(fsel("a=b")));
}

#[test]
fn field_absent_compares_as_empty() {
    assert!(fsel("spec.nodeName=").matches(|_| None));
    assert!(fsel("spec.nodeName==").matches(|_| Some(String::new())));
    assert!(!fsel("spec.nodeName!=").matches(|_| None));
    assert!(fsel("spec.nodeName!=").matches(|_| Some("n1".into())));
    assert!(fsel("spec.nodeName!=n1").matches(|_| None));
    assert!(!fsel("spec.nodeName=n1").matches(|_| None));
}

#[test]
fn field_escaping() {
    let f = fsel(r"a=x\,y\=z\\w,b=c");
    assert_eq!(f.fields().collect::<Vec<_>>(), ["a", "b"]);
    assert!(f.matches(object(&[("a", r"x,y=z\w"), ("b", "c")])));
    assert_eq!(f.to_string(), r"a=x\,y\=z\\w,b=c");
    assert!(fsel("a=b!c").matches(object(&[("a", "b!c")])));
    assert!(fsel(r"a!=\=").matches(object(&[("a", "x")])));
    assert_eq!(fsel("a=é").to_string(), "a=é");
    assert_eq!(escape_value(r"a\b,c=d!e"), r"a\\b\,c\=d!e");
    assert_eq!(
        unescape_value(&escape_value(r"\,=\\x")),
        Ok(r"\,=\\x".to_string())
    );
}

#[test]
fn field_names_are_verbatim() {
    let f = fsel("metadata.name = foo");
    assert_eq!(f.fields().collect::<Vec<_>>(), ["metadata.name "]);
    assert!(f.matches(object(&[("metadata.name ", " foo")])));
    assert_eq!(fsel("=b").fields().collect::<Vec<_>>(), [""]);
    assert_eq!(fsel(r"a\,b=c").fields().collect::<Vec<_>>(), [r"a\,b"]);
}

#[test]
fn field_errors() {
    assert_eq!(
        ferr("abc"),
        "invalid selector: 'abc'; can't understand 'abc'"
    );
    assert_eq!(
        ferr("a=b,xyz"),
        "invalid selector: 'a=b,xyz'; can't understand 'xyz'"
    );
    assert_eq!(
        ferr(r"a=b\"),
        r"invalid field selector: invalid escape sequence: \"
    );
    assert_eq!(
        ferr(r"a=b\x"),
        r"invalid field selector: invalid escape sequence: \x"
    );
    assert_eq!(
        ferr(r"a=b\!"),
        r"invalid field selector: invalid escape sequence: \!"
    );
    assert_eq!(
        ferr("a=b=c"),
        "invalid field selector: unescaped character in value: 61"
    );
    assert_eq!(
        ferr("a!==b"),
        "invalid field selector: unescaped character in value: 61"
    );
    assert_eq!(
        ferr("a===b"),
        "invalid field selector: unescaped character in value: 61"
    );
}
