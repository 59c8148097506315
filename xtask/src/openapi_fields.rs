//! `cargo xtask openapi-fields FILE`: what kube-openapi's generated definitions of kube-apiserver's built-in
//! schemas say that k8s-openapi's schemas do not, read from the Go source kube-openapi generates for them
//! (`pkg/generated/openapi/zz_generated.openapi.go` of the Kubernetes release), written as the JSON table
//! `apiserver/src/openapi/fields.json`:
//!
//! ```text
//! { "io.k8s.api.core.v1.ServiceSpec": {
//!     "": { "required": [] },
//!     "/properties/type": { "enum": [...], "values": "\n\nPossible enum values:\n - ..." },
//!     "/properties/ports": { "extensions": { "x-kubernetes-list-type": "map", ... } } } }
//! ```
//!
//! - `enum`: the values of an enum field; `values`, what kube-openapi appends to its description after the
//!   text (trimmed, as k8s-openapi trims it): the blank line and the "Possible enum values" paragraph.
//! - `required`: a schema's required fields in Go field order (every schema has one, empty when nothing is
//!   required; k8s-openapi sorts them, and requires a few that kube-apiserver does not).
//! - `extensions`: the `x-kubernetes-*` extensions of a schema or field (list and map types, patch strategies
//!   and merge keys, unions), none of which k8s-openapi's schemas carry.
//! - `schema`: for the List kinds, which k8s-openapi has no schema of, and the options of the operations
//!   (whose fields are the query parameters the paths document), the keywords of each node of their schema
//!   (`description`, `type`, `format`, `$ref` as the name referred to), to build them whole.
//! - `default`: a field's default as kube-openapi publishes it (`""`, `0`, `false`, `{}` for a struct,
//!   `"TCP"`), which k8s-openapi's schemas do not carry either.
//!
//! The generated file is Go, read line by line: each `schema_<...>` function defines one schema (its name
//! taken from the registration map `alias.Type{}.OpenAPIModelName(): schema_<...>(ref)` and the import of
//! `alias`), and nested braces are followed to know the property (`"name": {`), `Items:` or
//! `AdditionalProperties:` a line belongs to; an `Extensions:` block's Go literal is read as JSON.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value, json};

/// Arguments of `cargo xtask openapi-fields`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// kube-openapi's generated definitions: `pkg/generated/openapi/zz_generated.openapi.go` of the
    /// `k8s.io/kubernetes` module of the release served.
    source: PathBuf,
}

/// The options of the API's operations, whose fields are the query parameters kube-apiserver documents with
/// their descriptions: recorded whole, as the List kinds are.
const OPTIONS: &[&str] = &[
    "io.k8s.apimachinery.pkg.apis.meta.v1.ListOptions",
    "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
    "io.k8s.apimachinery.pkg.apis.meta.v1.CreateOptions",
    "io.k8s.apimachinery.pkg.apis.meta.v1.PatchOptions",
    "io.k8s.apimachinery.pkg.apis.meta.v1.UpdateOptions",
];

/// The paragraph kube-openapi appends to an enum field's description.
const PARAGRAPH: &str = "Possible enum values:\n";

/// Prints the table (JSON) on stdout.
pub fn run(args: &Args) -> Result<()> {
    let src = std::fs::read_to_string(&args.source)
        .with_context(|| format!("reading {}", args.source.display()))?;
    let table = table(args, &src)?;
    println!("{}", serde_json::to_string_pretty(&table)?);
    Ok(())
}

/// The table of `src`: the enum fields, every schema's `required`, and the extensions of every schema and
/// field, keyed by schema name and JSON pointer inside the schema.
fn table(args: &Args, src: &str) -> Result<Value> {
    let names = schema_names(src);
    let imports = imports(src);
    let mut out: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
    let mut current: Option<&String> = None;
    let mut stack: Vec<Option<String>> = Vec::new();
    let mut description: Option<(Vec<Option<String>>, String)> = None;
    let (mut enums, mut extensions, mut defaults) = (0, 0, 0);
    let lines: Vec<&str> = src.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if let Some(rest) = line.strip_prefix("func ") {
            let function = rest.split('(').next().unwrap_or_default();
            current = names.get(function);
            stack.clear();
            description = None;
            if let Some(schema) = current {
                // Every schema says what it requires, if only nothing.
                entry(&mut out, schema, "").insert("required".into(), json!([]));
            }
            continue;
        }
        let Some(schema) = current else { continue };
        let pointer: String = stack.iter().flatten().map(|s| format!("/{s}")).collect();
        let trimmed = line.trim();
        if trimmed.starts_with("Extensions: spec.Extensions{") {
            // The block runs to its closing brace, over as many lines as it takes.
            let mut block = String::new();
            let mut depth = 0i64;
            let mut at = i - 1;
            loop {
                let l = lines
                    .get(at)
                    .with_context(|| format!("the extensions of {schema}"))?;
                let bare = without_strings(l);
                depth += bare.matches('{').count() as i64 - bare.matches('}').count() as i64;
                block.push_str(l);
                block.push('\n');
                at += 1;
                if depth <= 0 {
                    break;
                }
            }
            i = at;
            let literal = block
                .trim()
                .trim_start_matches("Extensions:")
                .trim()
                .trim_end_matches(',');
            let value = go_literal(literal)
                .with_context(|| format!("the extensions of {schema}{pointer}"))?;
            entry(&mut out, schema, &pointer).insert("extensions".into(), value);
            extensions += 1;
            continue;
        }
        if let Some(required) = trimmed.strip_prefix("Required:") {
            let required = required
                .trim()
                .strip_prefix("[]string{")
                .and_then(|v| v.strip_suffix("},"))
                .with_context(|| format!("the required fields of {schema}: {required}"))?;
            let required: Vec<String> = serde_json::from_str(&format!("[{required}]"))
                .with_context(|| format!("the required fields of {schema}: {required}"))?;
            entry(&mut out, schema, &pointer).insert("required".into(), json!(required));
        }
        if let Some(value) = trimmed.strip_prefix("Default:") {
            let value = value.trim().trim_end_matches(',');
            let value = if value == "map[string]interface{}{}" {
                json!({})
            } else if let Ok(literal) = serde_json::from_str(value) {
                literal
            } else {
                constant(&args.source, src, value)
                    .with_context(|| format!("a default of {schema}{pointer}: {value}"))?
            };
            entry(&mut out, schema, &pointer).insert("default".into(), value);
            defaults += 1;
        }
        if (schema.ends_with("List") || OPTIONS.contains(&schema.as_str()))
            && let Some(prop) = whole_schema_prop(trimmed, &imports)
                .with_context(|| format!("{schema}{pointer}: {trimmed}"))?
        {
            let field = entry(&mut out, schema, &pointer);
            let props = field
                .entry("schema")
                .or_insert_with(|| json!({}))
                .as_object_mut()
                .context("a schema entry")?;
            props.insert(prop.0.into(), prop.1);
        }
        if let Some(text) = trimmed.strip_prefix("Description:") {
            let text = text.trim().trim_end_matches(',');
            let text: String = serde_json::from_str(text)
                .with_context(|| format!("a description of {schema}: {text}"))?;
            description = Some((stack.clone(), text));
        }
        if let Some(values) = trimmed.strip_prefix("Enum:") {
            let values = values
                .trim()
                .strip_prefix("[]interface{}{")
                .and_then(|v| v.strip_suffix("},"))
                .with_context(|| format!("an enum of {schema}: {values}"))?;
            let values: Vec<String> = serde_json::from_str(&format!("[{values}]"))
                .with_context(|| format!("the enum values of {schema}: {values}"))?;
            let field = entry(&mut out, schema, &pointer);
            field.insert("enum".into(), json!(values));
            if let Some((at, text)) = &description
                && *at == stack
                && let Some(start) = text.find(PARAGRAPH)
            {
                // What follows the description's text, trailing whitespace included: k8s-openapi trims
                // a description, and kube-openapi writes a blank line after a comment ending in a newline.
                let prefix = text[..start].trim_end().len();
                field.insert("values".into(), Value::String(text[prefix..].to_string()));
            }
            enums += 1;
        }
        let bare = without_strings(line);
        let opens = bare.matches('{').count();
        let closes = bare.matches('}').count();
        if opens > closes {
            stack.push(label(trimmed));
            stack.extend(std::iter::repeat_n(None, opens - closes - 1));
        } else {
            for _ in 0..closes - opens {
                stack.pop();
            }
        }
    }
    if enums == 0 || extensions == 0 {
        bail!("no Enum: or Extensions: line found in the source");
    }
    eprintln!(
        "{} schemas, {enums} enum fields, {extensions} extension sets, {defaults} defaults",
        out.len()
    );
    Ok(serde_json::to_value(out)?)
}

/// The string value of a Go constant a default names (`corev1.AzureDataDiskCachingReadWrite`): the import of
/// its package in `src`, found in the `k8s.io/api` module beside the `k8s.io/kubernetes` one `source` is in
/// (the Go module cache holds `k8s.io/api@v0.X.Y` for `k8s.io/kubernetes@v1.X.Y`).
fn constant(source: &std::path::Path, src: &str, name: &str) -> Result<Value> {
    let (alias, constant) = name
        .split_once('.')
        .context("not a qualified Go constant")?;
    let import = src
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix(&format!("{alias} \""))
                .and_then(|p| p.strip_suffix('"'))
        })
        .with_context(|| format!("no import of {alias}"))?;
    let package = import
        .strip_prefix("k8s.io/api/")
        .with_context(|| format!("{import} is not in k8s.io/api"))?;
    let kubernetes = source
        .ancestors()
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("kubernetes@v1."))
        })
        .context("the source is not in a k8s.io/kubernetes module")?;
    let version = kubernetes
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix("kubernetes@v1."))
        .context("the module's version")?;
    let dir = kubernetes
        .with_file_name(format!("api@v0.{version}"))
        .join(package);
    for entry in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.extension().is_none_or(|e| e != "go") {
            continue;
        }
        let text = std::fs::read_to_string(&path)?;
        for line in text.lines() {
            let mut words = line.split_whitespace();
            if words.next() != Some(constant) {
                continue;
            }
            if let Some((_, value)) = line.split_once('=')
                && let Ok(value) = serde_json::from_str::<Value>(value.trim())
            {
                return Ok(value);
            }
        }
    }
    bail!("{name} is not a constant of {}", dir.display())
}

/// The entry of `pointer` in `schema`'s part of the table.
fn entry<'a>(
    out: &'a mut BTreeMap<String, Map<String, Value>>,
    schema: &str,
    pointer: &str,
) -> &'a mut Map<String, Value> {
    let fields = out.entry(schema.to_string()).or_default();
    let field = fields
        .entry(pointer.to_string())
        .or_insert_with(|| Value::Object(Map::new()));
    if !field.is_object() {
        *field = Value::Object(Map::new());
    }
    match field {
        Value::Object(map) => map,
        _ => unreachable!("made an object above"),
    }
}

/// A Go composite literal of extension values as JSON: `spec.Extensions{...}` and
/// `map[string]interface{}{...}` are objects, `[]interface{}{...}` arrays, strings and numbers as they are.
fn go_literal(literal: &str) -> Result<Value> {
    let mut json = String::with_capacity(literal.len());
    let mut closers = Vec::new();
    let mut rest = literal;
    while let Some(c) = rest.chars().next() {
        if c == '"' {
            // A Go string literal is a JSON string literal here (no backquoted strings in extensions).
            let mut end = 1;
            let bytes = rest.as_bytes();
            while end < bytes.len() && bytes[end] != b'"' {
                end += if bytes[end] == b'\\' { 2 } else { 1 };
            }
            json.push_str(&rest[..=end.min(rest.len() - 1)]);
            rest = &rest[(end + 1).min(rest.len())..];
            continue;
        }
        if let Some(after) = rest.strip_prefix("[]interface{}{") {
            json.push('[');
            closers.push(']');
            rest = after;
        } else if let Some(after) = rest
            .strip_prefix("map[string]interface{}{")
            .or_else(|| rest.strip_prefix("spec.Extensions{"))
        {
            json.push('{');
            closers.push('}');
            rest = after;
        } else if c == '}' {
            json.push(closers.pop().context("an unbalanced brace")?);
            rest = &rest[1..];
        } else {
            json.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    // Go allows a comma before a closing bracket; JSON does not.
    let trailing = without_trailing_commas(&json);
    Ok(serde_json::from_str(&trailing)?)
}

/// `json` without the commas that precede (across whitespace) a closing bracket or brace.
fn without_trailing_commas(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let chars: Vec<char> = json.chars().collect();
    let mut in_string = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if in_string {
            out.push(c);
            if c == '\\' && i + 1 < chars.len() {
                out.push(chars[i + 1]);
                i += 1;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if c == ',' {
            let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
            if !matches!(next, Some(']') | Some('}')) {
                out.push(c);
            }
        } else {
            out.push(c);
        }
        i += 1;
    }
    out
}

/// What an opening line starts inside a schema: a property, the items, or the additional properties.
fn label(trimmed: &str) -> Option<String> {
    if trimmed.starts_with("Items:") {
        return Some("items".into());
    }
    if trimmed.starts_with("AdditionalProperties:") {
        return Some("additionalProperties".into());
    }
    let name = trimmed.strip_suffix(": {")?;
    let name: String = serde_json::from_str(name).ok()?;
    Some(format!("properties/{name}"))
}

/// The line with its string literals emptied, so that braces inside them are not counted.
fn without_strings(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
            }
            '`' => {
                for c in chars.by_ref() {
                    if c == '`' {
                        break;
                    }
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// The file's imports: alias, package path.
fn imports(src: &str) -> HashMap<String, String> {
    let mut imports = HashMap::new();
    for line in src.lines() {
        let parts: Vec<&str> = line.split_whitespace().collect();
        if let [alias, path] = parts[..]
            && let Some(path) = path.strip_prefix('"').and_then(|p| p.strip_suffix('"'))
        {
            imports.insert(alias.to_string(), path.to_string());
        }
    }
    imports
}

/// One keyword of a List kind's schema, written whole in the table (k8s-openapi has no schema of the List
/// kinds): `Description`, `Type` (its one type), a non-empty `Format`, or `Ref` (the name referred to).
fn whole_schema_prop(
    trimmed: &str,
    imports: &HashMap<String, String>,
) -> Result<Option<(&'static str, Value)>> {
    let Some((key, value)) = trimmed.split_once(':') else {
        return Ok(None);
    };
    let value = value.trim().trim_end_matches(',');
    Ok(match key {
        "Description" => Some(("description", serde_json::from_str(value)?)),
        "Type" => {
            let types: Vec<String> = serde_json::from_str(&format!(
                "[{}]",
                value
                    .strip_prefix("[]string{")
                    .and_then(|v| v.strip_suffix('}'))
                    .context("a type")?
            ))?;
            types.first().map(|t| ("type", json!(t)))
        }
        "Format" => {
            let format: String = serde_json::from_str(value)?;
            (!format.is_empty()).then(|| ("format", json!(format)))
        }
        "Ref" => {
            let inner = value
                .strip_prefix("ref(")
                .and_then(|v| v.strip_suffix(')'))
                .context("a reference")?;
            let name = if let Ok(name) = serde_json::from_str::<String>(inner) {
                name
            } else {
                let typed = inner
                    .strip_suffix("{}.OpenAPIModelName()")
                    .context("a model name")?;
                let (alias, ty) = typed.split_once('.').context("a qualified type")?;
                model_name(imports.get(alias).context("an import")?, ty)
            };
            Some(("$ref", json!(name)))
        }
        _ => None,
    })
}

/// The schema name of each generated function, from the registration map and the file's imports.
fn schema_names(src: &str) -> HashMap<String, String> {
    let imports = imports(src);
    let mut names = HashMap::new();
    for line in src.lines() {
        let line = line.trim();
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let Some(function) = value.trim().strip_suffix("(ref),") else {
            continue;
        };
        let name = if let Some(name) = key.strip_prefix('"').and_then(|k| k.strip_suffix('"')) {
            name.to_string()
        } else if let Some(typed) = key.strip_suffix("{}.OpenAPIModelName()")
            && let Some((alias, ty)) = typed.split_once('.')
            && let Some(path) = imports.get(alias)
        {
            model_name(path, ty)
        } else {
            continue;
        };
        names.insert(function.to_string(), name);
    }
    names
}

/// The name `OpenAPIModelName()` gives a Go type: its package path with the domain reversed
/// (`k8s.io/api/core/v1`, `ServiceSpec`: `io.k8s.api.core.v1.ServiceSpec`).
fn model_name(path: &str, ty: &str) -> String {
    let (domain, rest) = path.split_once('/').unwrap_or((path, ""));
    let domain: Vec<&str> = domain.split('.').rev().collect();
    format!("{}.{}.{ty}", domain.join("."), rest.replace('/', "."))
}
