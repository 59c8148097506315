//! The JSONPath forms of printer columns, with the values kube-apiserver 1.35 gave for the same paths.

use serde_json::{Value, json};

use super::{JsonPath, JsonPathError, print};

fn object() -> Value {
    json!({
        "metadata": {"name": "g1", "labels": {"app.kubernetes.io/name": "gg"}},
        "spec": {
            "count": 3, "ratio": 2.5, "on": true, "nul": null,
            "obj": {"a": "x", "b": [1, 2]},
            "list": ["p", "q", "r"],
            "items": [{"n": 1}, {"n": 2, "tag": "t"}, {"n": 3}],
            "html": {"k": "<a&b>"},
        },
        "status": {"conditions": [
            {"type": "Synced", "status": "True", "reason": "S"},
            {"type": "Ready", "status": "False", "reason": "R"},
        ]},
    })
}

/// The first value of a column's path, printed as a string column prints it.
fn cell(path: &str) -> Option<String> {
    let obj = object();
    JsonPath::column(path)
        .and_then(|p| p.first(&obj))
        .ok()
        .flatten()
        .map(|v| print(&v))
}

fn all(path: &str) -> Result<Vec<Value>, JsonPathError> {
    let obj = object();
    let found = JsonPath::column(path)?.find(&obj)?;
    Ok(found
        .into_iter()
        .flatten()
        .map(|v| v.into_owned())
        .collect())
}

#[test]
fn fields_and_escaped_dots() {
    assert_eq!(cell(".spec.count").as_deref(), Some("3"));
    assert_eq!(cell(".spec.ratio").as_deref(), Some("2.5"));
    assert_eq!(cell(".spec.on").as_deref(), Some("true"));
    assert_eq!(
        cell(r".metadata.labels.app\.kubernetes\.io/name").as_deref(),
        Some("gg")
    );
    assert_eq!(cell(".spec.missing"), None);
    assert_eq!(cell(".spec.count.deeper"), None);
    assert_eq!(cell(".spec.nul").as_deref(), Some("<no value>"));
}

#[test]
fn objects_and_arrays_print_as_go_json() {
    assert_eq!(cell(".spec.obj").as_deref(), Some(r#"{"a":"x","b":[1,2]}"#));
    assert_eq!(cell(".spec.list").as_deref(), Some(r#"["p","q","r"]"#));
    assert_eq!(
        cell(".spec.html").as_deref(),
        Some(r#"{"k":"\u003ca\u0026b\u003e"}"#)
    );
    assert_eq!(
        cell(".spec['obj']").as_deref(),
        Some(r#"{"a":"x","b":[1,2]}"#)
    );
}

#[test]
fn filters_pick_matching_items() {
    assert_eq!(
        cell(r#".status.conditions[?(@.type=="Ready")].status"#).as_deref(),
        Some("False")
    );
    assert_eq!(
        cell(r#".status.conditions[?(@.type == 'Synced')].reason"#).as_deref(),
        Some("S")
    );
    assert_eq!(all(".spec.items[?(@.n>1)].n"), Ok(vec![json!(2), json!(3)]));
    assert_eq!(
        all(".spec.items[?(@.n>=2)].n"),
        Ok(vec![json!(2), json!(3)])
    );
    assert_eq!(all(".spec.items[?(@.n<2)].n"), Ok(vec![json!(1)]));
    assert_eq!(
        all(".spec.items[?(@.n<=2)].n"),
        Ok(vec![json!(1), json!(2)])
    );
    assert_eq!(
        all(".spec.items[?(@.n!=2)].n"),
        Ok(vec![json!(1), json!(3)])
    );
    assert_eq!(all(".spec.items[?(@.tag)].n"), Ok(vec![json!(2)]));
    assert_eq!(
        all(r#".status.conditions[?(@.type=="Gone")].status"#),
        Ok(vec![])
    );
}

#[test]
fn comparing_different_kinds_fails_the_path() {
    assert_eq!(
        all(r#".spec.items[?(@.n=="1")].n"#),
        Err(JsonPathError::Incomparable)
    );
    assert_eq!(
        all(".spec.items[?(@.n==1.0)].n"),
        Err(JsonPathError::Incomparable)
    );
    assert_eq!(cell(r#".spec.items[?(@.n=="1")].n"#), None);
}

#[test]
fn indexes_slices_and_unions() {
    assert_eq!(cell(".spec.list[0]").as_deref(), Some("p"));
    assert_eq!(cell(".spec.list[-1]").as_deref(), Some("r"));
    assert_eq!(
        all(".spec.list[10]"),
        Err(JsonPathError::OutOfBounds { index: 10, len: 3 })
    );
    assert_eq!(all(".spec.list[1:]"), Ok(vec![json!("q"), json!("r")]));
    assert_eq!(all(".spec.list[:2]"), Ok(vec![json!("p"), json!("q")]));
    assert_eq!(all(".spec.list[0:3:2]"), Ok(vec![json!("p"), json!("r")]));
    assert_eq!(
        all(".spec.list[*]"),
        Ok(vec![json!("p"), json!("q"), json!("r")])
    );
    assert_eq!(all(".spec.list[1,0]"), Ok(vec![json!("q"), json!("p")]));
    assert_eq!(all(".spec.list[1:1]"), Ok(vec![]));
    assert_eq!(all(".spec.list[0:3:0]"), Err(JsonPathError::Step));
    assert_eq!(
        all(".spec['count','ratio']"),
        Ok(vec![json!(3), json!(2.5)])
    );
    assert_eq!(
        all(".spec.obj[0]"),
        Err(JsonPathError::NotAnArray("indexed value"))
    );
}

#[test]
fn wildcards_and_recursive_descent() {
    assert_eq!(all(".spec.obj.*"), Ok(vec![json!("x"), json!([1, 2])]));
    assert_eq!(all("..n"), Ok(vec![json!(1), json!(2), json!(3)]));
    assert_eq!(all("..type"), Ok(vec![json!("Synced"), json!("Ready")]));
    assert_eq!(cell(".status.conditions[*].reason").as_deref(), Some("S"));
}

#[test]
fn templates_keep_text_and_several_actions() {
    let obj = object();
    let path = JsonPath::parse("n={.metadata.name} c={.spec.count}").expect("parses");
    let found: Vec<Vec<Value>> = path
        .find(&obj)
        .expect("evaluates")
        .into_iter()
        .map(|vs| vs.into_iter().map(|v| v.into_owned()).collect())
        .collect();
    assert_eq!(
        found,
        vec![
            vec![json!("n=")],
            vec![json!("g1")],
            vec![json!(" c=")],
            vec![json!(3)]
        ]
    );
    assert_eq!(cell("."), None, "kube-apiserver prints nothing for `.`");
    assert_eq!(print(&obj["spec"]["count"]), "3");
}

/// More paths with the cells kube-apiserver 1.35 gave for the same object.
#[test]
fn paths_kube_apiserver_answered() {
    let cases = [
        (".spec.items[?(@.n==1.0)].n", None),
        (".spec.list[-5]", None),
        (".spec.list[2:1]", None),
        (".spec.list[0:0]", None),
        (".spec.obj[*]", None),
        (".spec['count','ratio']", Some("3")),
        (".spec.items[*].n", Some("1")),
        (
            r#".status.conditions[?(@.type=="Ready")]"#,
            Some(r#"{"reason":"R","status":"False","type":"Ready"}"#),
        ),
        (r#".spec.list[?(@=="q")]"#, Some("q")),
        (".spec.items[?(@.n>1.5)].n", None),
        (r#".spec.list[?(@<"q")]"#, Some("p")),
        (".spec.items[?(@.tag==true)].n", None),
        (".spec.list[::2]", Some("p")),
        (".spec.list[-2:]", Some("q")),
    ];
    for (path, want) in cases {
        assert_eq!(cell(path).as_deref(), want, "{path}");
    }
    let status = object()["status"].to_string();
    assert_eq!(
        cell("..status"),
        Some(status),
        "the root's status comes first"
    );
}

#[test]
fn malformed_paths_do_not_parse() {
    assert_eq!(
        JsonPath::column(".spec.list[").err(),
        Some(JsonPathError::Unterminated("array"))
    );
    assert_eq!(
        JsonPath::column(".spec.list[x]").err(),
        Some(JsonPathError::InvalidIndex("x".into()))
    );
    assert_eq!(
        JsonPath::column(".a[?(@.b==1)").err(),
        Some(JsonPathError::Unterminated("filter"))
    );
    assert_eq!(
        all(".spec range"),
        Err(JsonPathError::Unsupported("range".into())),
        "parses, fails to evaluate"
    );
    assert_eq!(
        JsonPath::column(".a#").err(),
        None,
        "a field runs up to a terminator"
    );
    assert_eq!(
        JsonPath::column("#").err(),
        Some(JsonPathError::UnrecognizedCharacter('#'))
    );
    assert_eq!(
        JsonPath::parse("{.a").err(),
        Some(JsonPathError::UnclosedAction)
    );
}

#[test]
fn numbers_print_like_go() {
    let printed = |v: Value| print(&v);
    assert_eq!(printed(json!(1234567.5)), "1.2345675e+06");
    assert_eq!(
        printed(json!(123456789012345678901234.5)),
        "1.2345678901234569e+23"
    );
    assert_eq!(printed(json!(0.00001)), "1e-05");
    assert_eq!(printed(json!(0.0001)), "0.0001");
    assert_eq!(printed(json!(123456.5)), "123456.5");
    assert_eq!(printed(json!(2000000.0)), "2000000");
    assert_eq!(printed(json!(-3)), "-3");
}
