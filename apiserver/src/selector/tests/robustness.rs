//! Tests that odd selector strings never panic.

use super::*;

/// Deterministic pseudo-random strings over an alphabet rich in syntax characters.
fn odd_strings() -> Vec<String> {
    let long = "x".repeat(70);
    let alphabet: &[&str] = &[
        "a", "b", "Z", "0", "9", "-", "_", ".", "/", "=", "==", "!", "!=", "(", ")", ",", "<", ">",
        " ", "\t", "\n", "\\", "\0", "in", "notin", "é", "☃", "\u{7f}", "\u{200b}", "\"", &long,
    ];
    let mut out: Vec<String> = [
        "",
        "(",
        ")",
        "()",
        "!",
        "!!",
        "!=",
        "==",
        "=",
        ",",
        ",,",
        "in",
        "notin",
        "in in",
        "a in",
        "a in (",
        "a in ((",
        "a in ()",
        "a in (,",
        "a notin )",
        "a>",
        "a<",
        ">",
        "<",
        "a>>1",
        "a<=1",
        "\\",
        "\\\\",
        "a=\\",
        "\0",
        "\0\0",
        "a\0=b",
        "é=é",
        "☃",
        "a=b,!",
        "a/b/c/d",
        "/",
        "//",
        "a/=b",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..600 {
        let mut s = String::new();
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let len = (state >> 59) as usize;
        for _ in 0..len {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            s.push_str(alphabet[(state >> 33) as usize % alphabet.len()]);
        }
        out.push(s);
    }
    out
}

#[test]
fn odd_input_never_panics_and_round_trips() {
    let sample = labels(json!({"a": "b", "Z": "0", "in": ""}));
    let mut parsed = 0;
    for s in odd_strings() {
        if let Ok(l) = LabelSelector::parse(&s) {
            parsed += 1;
            let _ = l.matches(Some(&sample));
            let _ = l.matches(None);
            let again = LabelSelector::parse(&l.to_string());
            assert_eq!(again.as_ref(), Ok(&l), "{s:?} -> {l}");
        }
        if let Ok(f) = FieldSelector::parse(&s) {
            let _ = f.matches(|field| Some(field.to_string()));
            let _ = f.fields().count();
            let mut again = FieldSelector::parse(&f.to_string())
                .unwrap_or_else(|e| panic!("{s:?} -> {f}: {e}"));
            let mut original = f.clone();
            again.terms.sort();
            original.terms.sort();
            assert_eq!(again, original, "{s:?}");
        }
        let _ = LabelSelector::from_label_selector(&json!({
            "matchLabels": {s.clone(): s.clone()},
            "matchExpressions": [{"key": s.clone(), "operator": s.clone(), "values": [s.clone()]}],
        }));
        let _ = LabelSelector::from_label_selector(&json!({
            "matchExpressions": [{"key": s.clone(), "operator": "NotIn", "values": [s.clone()]}],
        }));
    }
    assert!(parsed > 20, "only {parsed} odd strings parsed");
}
