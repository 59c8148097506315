//! `cargo xtask openapi-enums FILE`: the enum fields of kube-apiserver's built-in schemas, read from the Go
//! source kube-openapi generates for them (`pkg/generated/openapi/zz_generated.openapi.go` of the Kubernetes
//! release), written as the JSON table `apiserver/src/openapi/enums.json`:
//!
//! ```text
//! { "io.k8s.api.core.v1.ServiceSpec": { "/properties/type": { "enum": [...], "values": "\n\nPossible enum values:\n - ..." } } }
//! ```
//!
//! k8s-openapi's schemas carry neither the `enum` lists nor the "Possible enum values" paragraph kube-openapi
//! appends to such a field's description; the in-memory server adds both from this table. `values` is what
//! follows the description's text (trimmed, as k8s-openapi trims it): the blank line and the paragraph.
//!
//! The generated file is Go, read line by line: each `schema_<...>` function defines one schema (its name
//! taken from the registration map `alias.Type{}.OpenAPIModelName(): schema_<...>(ref)` and the import of
//! `alias`), and nested braces are followed to know the property (`"name": {`), `Items:` or
//! `AdditionalProperties:` an `Enum:` line belongs to.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value, json};

/// Arguments of `cargo xtask openapi-enums`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// kube-openapi's generated definitions: `pkg/generated/openapi/zz_generated.openapi.go` of the
    /// `k8s.io/kubernetes` module of the release served.
    source: PathBuf,
}

/// The paragraph kube-openapi appends to an enum field's description.
const PARAGRAPH: &str = "Possible enum values:\n";

/// Prints the table of enum fields (JSON) on stdout.
pub fn run(args: &Args) -> Result<()> {
    let src = std::fs::read_to_string(&args.source)
        .with_context(|| format!("reading {}", args.source.display()))?;
    let table = table(&src)?;
    println!("{}", serde_json::to_string_pretty(&table)?);
    Ok(())
}

/// The table of every enum field of `src`, keyed by schema name and JSON pointer inside the schema.
fn table(src: &str) -> Result<Value> {
    let names = schema_names(src);
    let mut out: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
    let mut current: Option<&String> = None;
    let mut stack: Vec<Option<String>> = Vec::new();
    let mut description: Option<(Vec<Option<String>>, String)> = None;
    let mut count = 0;
    for line in src.lines() {
        if let Some(rest) = line.strip_prefix("func ") {
            let function = rest.split('(').next().unwrap_or_default();
            current = names.get(function);
            stack.clear();
            description = None;
            continue;
        }
        let Some(schema) = current else { continue };
        let bare = without_strings(line);
        let trimmed = line.trim();
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
            let pointer: String = stack.iter().flatten().map(|s| format!("/{s}")).collect();
            let mut entry = json!({ "enum": values });
            if let Some((at, text)) = &description
                && *at == stack
                && let Some(start) = text.find(PARAGRAPH)
            {
                // What follows the description's text, trailing whitespace included: k8s-openapi trims
                // a description, and kube-openapi writes a blank line after a comment ending in a newline.
                let prefix = text[..start].trim_end().len();
                entry["values"] = Value::String(text[prefix..].to_string());
            }
            out.entry(schema.clone())
                .or_default()
                .insert(pointer, entry);
            count += 1;
        }
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
    if count == 0 {
        bail!("no Enum: line found in the source");
    }
    eprintln!("{count} enum fields");
    Ok(serde_json::to_value(out)?)
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

/// The schema name of each generated function, from the registration map and the file's imports.
fn schema_names(src: &str) -> HashMap<String, String> {
    let mut imports = HashMap::new();
    for line in src.lines() {
        let parts: Vec<&str> = line.split_whitespace().collect();
        if let [alias, path] = parts[..]
            && let Some(path) = path.strip_prefix('"').and_then(|p| p.strip_suffix('"'))
        {
            imports.insert(alias.to_string(), path.to_string());
        }
    }
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
