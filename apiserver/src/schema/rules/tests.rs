//! Unit tests of the type checker and the cost estimator, against the values kube-apiserver's own tests
//! expect (apiextensions' `TestCostEstimation`) and cel-go's error texts.

use serde_json::{Value, json};

use super::super::compile::parse_node;
use super::budget_errors;
use super::check::check;
use super::cost::estimate;
use super::decls::decl_of;

/// The estimated maximum cost of the node's first rule (the node is not a resource).
fn cost_of(schema: Value) -> u64 {
    let node = parse_node(&schema, "openAPIV3Schema.properties[spec]").expect("a schema");
    let rule = &node.rules[0];
    let decl = decl_of(&node, false, "selfType").expect("a declaration");
    let checked = check(&rule.source, rule.program.expression(), &decl, false);
    assert!(checked.errors.is_empty(), "{:?}", checked.errors);
    estimate(rule.program.expression(), &checked, &decl).max
}

fn with_rule(mut schema: Value, rule: &str) -> Value {
    schema["x-kubernetes-validations"] = json!([{"rule": rule}]);
    schema
}

fn item(t: &str) -> Value {
    match t {
        "duration" | "date" | "date-time" => json!({"type": "string", "format": t}),
        "int-or-string" => json!({"x-kubernetes-int-or-string": true}),
        _ => json!({"type": t}),
    }
}

fn array(t: &str, max: Option<i64>, rule: &str) -> Value {
    let mut a = json!({"type": "array", "items": item(t)});
    if let Some(m) = max {
        a["maxItems"] = json!(m);
    }
    with_rule(a, rule)
}

fn map(t: &str, max: Option<i64>, rule: &str) -> Value {
    let mut a = json!({"type": "object", "additionalProperties": item(t)});
    if let Some(m) = max {
        a["maxProperties"] = json!(m);
    }
    with_rule(a, rule)
}

fn string(max: Option<i64>, rule: &str) -> Value {
    let mut a = json!({"type": "string"});
    if let Some(m) = max {
        a["maxLength"] = json!(m);
    }
    with_rule(a, rule)
}

type Gen = fn(Option<i64>) -> Value;

#[test]
fn costs_match_kube_apiserver() {
    let cases: Vec<(&str, Gen, u64, i64, u64)> = vec![
        (
            "number array all",
            |m| array("number", m, "self.all(x, true)"),
            4718591,
            10,
            32,
        ),
        (
            "string array all",
            |m| array("string", m, "self.all(x, true)"),
            3145727,
            20,
            62,
        ),
        (
            "boolean array all",
            |m| array("boolean", m, "self.all(x, true)"),
            1887437,
            5,
            17,
        ),
        (
            "map of numbers all",
            |m| map("number", m, "self.all(x, true)"),
            1348169,
            10,
            32,
        ),
        (
            "map of strings all",
            |m| map("string", m, "self.all(x, true)"),
            1179647,
            3,
            11,
        ),
        (
            "map of booleans all",
            |m| map("boolean", m, "self.all(x, true)"),
            943718,
            100,
            302,
        ),
        (
            "contains",
            |m| string(m, "self.contains('test')"),
            314574,
            10,
            5,
        ),
        (
            "startsWith",
            |m| string(m, "self.startsWith('test')"),
            2,
            15,
            2,
        ),
        (
            "concat",
            |m| string(m, r#"size(self + "hello") > size("hello")"#),
            314578,
            4,
            7,
        ),
        (
            "index numbers",
            |m| array("number", m, "self[1] == 0.0"),
            2,
            5000,
            2,
        ),
        (
            "index strings",
            |m| array("string", m, "self[1] == self[1]"),
            314577,
            8,
            314577,
        ),
        (
            "matches",
            |m| string(m, r#"self.matches("x")"#),
            314574,
            50,
            22,
        ),
        (
            "matches empty string",
            |m| string(m, r#""".matches("(((((((((())))))))))[0-9]")"#),
            7,
            10,
            7,
        ),
        (
            "matches empty regex",
            |m| string(m, r#"self.matches("")"#),
            1,
            100,
            1,
        ),
        ("string equality", |m| string(m, r#"self == "x""#), 2, 0, 1),
        (
            "all == 0.0",
            |m| array("number", m, "self.all(x, x == 0.0)"),
            6291454,
            3 * 1024 * 2048,
            25165826,
        ),
        (
            "int-or-string all",
            |m| array("int-or-string", m, "self.all(x, true)"),
            4718591,
            10,
            32,
        ),
        (
            "int-or-string index",
            |m| array("int-or-string", m, "self[0] == 5"),
            3,
            10,
            3,
        ),
        (
            "duration all",
            |m| array("duration", m, "self.all(x, true)"),
            2359295,
            5,
            17,
        ),
        (
            "duration index",
            |m| array("duration", m, "self[0].getHours() == 2"),
            4,
            525,
            4,
        ),
        (
            "date all",
            |m| array("date", m, "self.all(x, true)"),
            725936,
            15,
            47,
        ),
        (
            "date-time all",
            |m| array("date-time", m, "self.all(x, true)"),
            428963,
            25,
            77,
        ),
        (
            "map of durations all",
            |m| map("duration", m, "self.all(x, true)"),
            1048577,
            5,
            17,
        ),
        (
            "map of dates all",
            |m| map("date", m, "self.all(x, true)"),
            524288,
            10,
            32,
        ),
        (
            "find",
            |m| string(m, "self.find('[0-9]+') == ''"),
            629147,
            10,
            11,
        ),
        (
            "lowerAscii",
            |m| string(m, "self.lowerAscii() == 'lower!'"),
            314575,
            10,
            6,
        ),
        (
            "size",
            |m| map("integer", m, "oldSelf.size() == self.size()"),
            5,
            10,
            5,
        ),
        (
            "timestamps",
            |m| map("date-time", m, r#"self["a"] == self["b"]"#),
            8,
            7,
            8,
        ),
        (
            "durations",
            |m| map("duration", m, r#"self["c"] == self["d"]"#),
            8,
            42,
            8,
        ),
        (
            "join",
            |m| {
                let mut s = json!({"type": "string"});
                let mut a = json!({"type": "array"});
                if let Some(m) = m {
                    s["maxLength"] = json!(m);
                    a["maxItems"] = json!(m);
                }
                a["items"] = s;
                with_rule(a, "self.join(' ') == 'aa bb'")
            },
            329853068905,
            10,
            43,
        ),
        (
            "isSorted",
            |m| {
                let mut s = json!({"type": "string"});
                let mut a = json!({"type": "array"});
                if let Some(m) = m {
                    s["maxLength"] = json!(m);
                    a["maxItems"] = json!(m);
                }
                a["items"] = s;
                with_rule(a, "self.isSorted() == true")
            },
            329854432052,
            10,
            52,
        ),
        (
            "enum",
            |m| {
                let mut s = json!({"type": "string", "enum": ["A", "B", "C", "LongValue"]});
                if let Some(m) = m {
                    s["maxLength"] = json!(m);
                }
                with_rule(s, "self.contains('A')")
            },
            2,
            1000,
            401,
        ),
        (
            "int-or-string quantity",
            |m| {
                let mut s = json!({"x-kubernetes-int-or-string": true});
                if let Some(m) = m {
                    s["maxLength"] = json!(m);
                }
                with_rule(s, "isQuantity(self)")
            },
            314574,
            20,
            9,
        ),
    ];
    let mut wrong = Vec::new();
    for (name, generate, unbounded, max, bounded) in cases {
        let (a, b) = (cost_of(generate(None)), cost_of(generate(Some(max))));
        if (a, b) != (unbounded, bounded) {
            wrong.push(format!(
                "{name}: {a} and {b}, expected {unbounded} and {bounded}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// The type errors of the node's first rule.
fn errors_of(schema: Value) -> Vec<String> {
    match parse_node(&schema, "openAPIV3Schema") {
        Ok(node) => budget_errors(&node)
            .iter()
            .map(ToString::to_string)
            .collect(),
        Err(e) => vec![e.to_string()],
    }
}

#[test]
fn type_errors_are_cel_gos() {
    let object = |rule: &str| {
        with_rule(
            json!({"type": "object", "properties": {
                "a": {"type": "integer"}, "s": {"type": "string", "maxLength": 64},
                "l": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 64}}}}),
            rule,
        )
    };
    let cases = [
        (
            "self.a.startsWith('x')",
            "ERROR: <input>:1:18: found no matching overload for 'startsWith' applied to 'int.(string)'\n | self.a.startsWith('x')\n | .................^",
        ),
        (
            "self.s.startsWith('x', 'y')",
            "found no matching overload for 'startsWith' applied to 'string.(string, string)'",
        ),
        (
            "nope(self.a)",
            "ERROR: <input>:1:5: undeclared reference to 'nope' (in container '')",
        ),
        (
            "size(self.a) > 0",
            "found no matching overload for 'size' applied to '(int)'",
        ),
        (
            "self.l.all(x, x.size())",
            "expected type 'bool' but found 'int'",
        ),
        (
            "self.a.all(x, true)",
            "expression of type 'int' cannot be range of a comprehension (must be list, map, or dynamic)",
        ),
        ("self.s", "cel expression must evaluate to a bool"),
        (
            "self.a == 1 && math.greatest(1, 2) == 2",
            "undeclared reference to 'math'",
        ),
    ];
    for (rule, expected) in cases {
        let errors = errors_of(object(rule));
        assert!(
            errors.iter().any(|e| e.contains(expected)),
            "{rule}: {errors:#?}"
        );
    }
    for rule in [
        "quantity(self.s).isGreaterThan(quantity('1'))",
        "isURL(self.s) && url(self.s).getHost() == 'a'",
        "isIP(self.s) && ip(self.s).family() == 4",
        "isCIDR(self.s) && cidr(self.s).containsIP('10.0.0.1')",
        "self.s.matches('^a') && self.s.find('a') == 'a'",
        "self.l.isSorted() && self.l.indexOf('a') >= 0 && sets.contains(self.l, ['a'])",
        "optional.of(self.a).hasValue() && optional.none().orValue(1) == 1",
        "!format.dns1123Label().validate(self.s).hasValue()",
        "format.named('dns1123Label').hasValue()",
        "self.l.map(x, x.size()).all(n, n > 0) && self.l.exists_one(x, x == 'a')",
        "self.s.split(',').size() > 0 && self.s.lowerAscii() == self.s",
        "has(self.a) ? self.a > 1 : true",
        "self.a in [1, 2] && 'a' in self.l",
        "self.a < 1.5 && 1u < 2",
    ] {
        assert_eq!(errors_of(object(rule)), Vec::<String>::new(), "{rule}");
    }
}

#[test]
fn cost_factors_are_formatted_as_the_server_formats_them() {
    use super::budget::cost_error_message;
    let factor = |cost: u64| {
        let m = cost_error_message("estimated rule cost", cost, 10_000_000);
        m["estimated rule cost exceeds budget by factor of ".len()..]
            .split(' ')
            .next()
            .unwrap_or("")
            .to_string()
    };
    assert_eq!(factor(14_034_780), "1.403478x");
    assert_eq!(factor(25_000_000), "2.5x");
    assert!(
        cost_error_message("estimated rule cost", 1_000_000_001, 10_000_000)
            .contains("by factor of more than 100x (try simplifying")
    );
    assert_eq!(factor(1_000_000_000), "100.0x");
}

#[test]
fn errors_are_drawn_as_cel_go_draws_them() {
    use super::positions::render;
    assert_eq!(
        render("a == 'é' &&\n\tb", Some((2, 2)), "m"),
        "ERROR: <input>:2:2: m\n |  b\n | .^"
    );
    assert_eq!(
        render("'wö' == 1", Some((1, 3)), "m"),
        "ERROR: <input>:1:3: m\n | 'wö' == 1\n | ..＾"
    );
    assert_eq!(
        render("'wö' == 1", Some((1, 4)), "m"),
        "ERROR: <input>:1:4: m\n | 'wö' == 1\n | ..．^"
    );
}
