//! `cargo xtask protobuf-schema`: the protobuf messages of kube-apiserver's built-in kinds, as the in-memory
//! API server encodes them (`apiserver/src/protobuf/schema.json`).
//!
//! Two sources of the Go module cache (`$GOMODCACHE`, by default `~/go/pkg/mod`) are joined, per message and
//! field number:
//! - the `generated.proto` files of `k8s.io/api`, `k8s.io/apimachinery`, `k8s.io/apiextensions-apiserver`
//!   and `k8s.io/kube-aggregator`, compiled with `protox`: each field's number, type and label;
//! - the Go types they were generated from (the `.go` files beside them): each field's JSON name (`""` when
//!   the Go field is embedded `json:",inline"`, its fields written in the parent's JSON object), whether Go
//!   holds it by value (written even when zero: the Go code marshals every non-pointer field) or by pointer
//!   (written only when set), and whether its JSON is `omitempty`. A message generated from a named slice
//!   (`type Verbs []string`) is a JSON array; a message whose Go type carries no field tags (`Time`,
//!   `Quantity`, `IntOrString`, ...) is marked `special`: the server encodes those by hand.
//!
//! The groups map each served `group/version` (`v1` for the core group) to the proto package of its kinds:
//! the `+groupName=` of the package's `doc.go`, or its folder's name.
//!
//! ```text
//! { "groups": { "apps/v1": "k8s.io.api.apps.v1", ... },
//!   "messages": { "k8s.io.api.apps.v1.Deployment": { "form": "struct", "fields": [
//!       { "json": "metadata", "number": 1, "type": "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta",
//!         "label": "optional", "value": true, "omitempty": true }, ... ] } } }
//! ```

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use prost_types::field_descriptor_proto::{Label, Type};
use prost_types::{DescriptorProto, FileDescriptorSet};
use regex::Regex;
use serde_json::{Value, json};

/// Arguments of `cargo xtask protobuf-schema`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The version of the `k8s.io` modules to read.
    #[arg(long, default_value = "v0.35.4")]
    version: String,
    /// The Go module cache; default `$GOMODCACHE` or `~/go/pkg/mod`.
    #[arg(long)]
    modcache: Option<PathBuf>,
}

/// The modules read, and the folders of their API packages.
const MODULES: [(&str, &str); 4] = [
    ("api", ""),
    ("apimachinery", "pkg"),
    ("apiextensions-apiserver", "pkg/apis"),
    ("kube-aggregator", "pkg/apis"),
];

/// Prints the schema (JSON) on stdout.
pub fn run(args: &Args) -> Result<()> {
    let modcache = match &args.modcache {
        Some(dir) => dir.clone(),
        None => std::env::var_os("GOMODCACHE")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join("go/pkg/mod")))
            .context("neither --modcache, GOMODCACHE nor HOME is set")?,
    };
    // protox resolves imports such as `k8s.io/api/core/v1/generated.proto`: a folder of links named as the
    // imports, to the versioned module folders.
    let includes = tempfile::tempdir()?;
    std::fs::create_dir(includes.path().join("k8s.io"))?;
    let mut files = Vec::new();
    let mut packages = Vec::new();
    for (module, under) in MODULES {
        let dir = modcache.join(format!("k8s.io/{module}@{}", args.version));
        if !dir.is_dir() {
            bail!("{} is not in the Go module cache", dir.display());
        }
        std::os::unix::fs::symlink(&dir, includes.path().join("k8s.io").join(module))?;
        for proto in find_protos(&dir.join(under))? {
            let rel = proto.strip_prefix(&dir)?.to_string_lossy().to_string();
            if rel.contains("testing") || rel.contains("/test") || rel.contains("example") {
                continue;
            }
            files.push(format!("k8s.io/{module}/{rel}"));
            packages.push(
                proto
                    .parent()
                    .context("a proto file has a folder")?
                    .to_path_buf(),
            );
        }
    }
    let set = protox::Compiler::new([includes.path()])?
        .include_imports(true)
        .include_source_info(false)
        .open_files(&files)?
        .file_descriptor_set();
    let mut go = GoTypes::default();
    let mut groups = BTreeMap::new();
    for dir in &packages {
        go.read_package(dir)?;
        if let Some(gv) = group_version(dir)? {
            let proto = files_package(&set, dir, &modcache, &args.version)?;
            groups.insert(gv, proto);
        }
    }
    let messages = messages(&set, &go)?;
    print(&groups, &messages)
}

fn find_protos(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n == "generated.proto") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The `group/version` served from a package folder, for the folders named after an API version.
fn group_version(dir: &Path) -> Result<Option<String>> {
    let version = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let versioned = Regex::new(r"^v\d+((alpha|beta)\d+)?$")?;
    if !versioned.is_match(&version) {
        return Ok(None);
    }
    let folder = dir
        .parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let marker = Regex::new(r"(?m)^// \+groupName=(\S*)\s*$")?;
    let mut group = None;
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "go") {
            let src = std::fs::read_to_string(&path)?;
            if let Some(c) = marker.captures(&src) {
                group = Some(c[1].to_string());
                break;
            }
        }
    }
    let group = group.unwrap_or(folder);
    Ok(Some(if group.is_empty() {
        version
    } else {
        format!("{group}/{version}")
    }))
}

/// The proto package of the `generated.proto` in `dir`.
fn files_package(
    set: &FileDescriptorSet,
    dir: &Path,
    modcache: &Path,
    version: &str,
) -> Result<String> {
    let rel = dir
        .strip_prefix(modcache.join("k8s.io"))?
        .to_string_lossy()
        .to_string();
    let rel = rel.replacen(&format!("@{version}"), "", 1);
    let name = format!("k8s.io/{rel}/generated.proto");
    set.file
        .iter()
        .find(|f| f.name() == name)
        .map(|f| f.package().to_string())
        .with_context(|| format!("{name} was not compiled"))
}

/// One field of a Go struct that carries a `protobuf` tag.
#[derive(Debug, Clone)]
struct GoField {
    number: i32,
    /// The JSON name; empty when the field is embedded inline.
    json: String,
    /// Held by value: marshalled even when zero.
    value: bool,
    omitempty: bool,
}

/// The Go types of the packages read, by proto message name (`package.Name`).
#[derive(Debug, Default)]
struct GoTypes {
    structs: HashMap<String, Vec<GoField>>,
    slices: HashSet<String>,
    /// Types with their own JSON form (a `MarshalJSON` method).
    custom_json: HashSet<String>,
    /// Types defined as another package's struct (`type MatchCondition v1.MatchCondition`), by the other's
    /// name.
    defined_as: HashMap<String, String>,
}

impl GoTypes {
    fn read_package(&mut self, dir: &Path) -> Result<()> {
        let proto = std::fs::read_to_string(dir.join("generated.proto"))?;
        let package = Regex::new(r"(?m)^package ([\w.]+);")?
            .captures(&proto)
            .map(|c| c[1].to_string())
            .context("generated.proto names its package")?;
        let start = Regex::new(r"^type (\w+) struct \{\s*$")?;
        let slice = Regex::new(r"^type (\w+) \[\]\S+\s*$")?;
        let defined = Regex::new(r"^type (\w+) \w+\.(\w+)\s*$")?;
        let marshal = Regex::new(r"^func \(\w+ \*?(\w+)\) MarshalJSON\(")?;
        let field = Regex::new(r"^\s*(?:\w+\s+)?(\S+)\s+`([^`]*)`")?;
        let json_tag = Regex::new(r#"json:"([^"]*)""#)?;
        let pb_tag = Regex::new(r#"protobuf:"([^"]*)""#)?;
        let mut names: Vec<PathBuf> = std::fs::read_dir(dir)?
            .map(|e| e.map(|e| e.path()))
            .collect::<std::io::Result<_>>()?;
        names.sort();
        for path in names {
            let file = path
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            if !file.ends_with(".go")
                || file.ends_with("_test.go")
                || file.starts_with("zz_generated")
                || file == "generated.pb.go"
            {
                continue;
            }
            let src = std::fs::read_to_string(&path)?;
            let mut current: Option<(String, Vec<GoField>)> = None;
            for line in src.lines() {
                if let Some((name, fields)) = current.as_mut() {
                    if line == "}" {
                        let (name, fields) = (std::mem::take(name), std::mem::take(fields));
                        self.structs.insert(format!("{package}.{name}"), fields);
                        current = None;
                        continue;
                    }
                    if line.trim_start().starts_with("//") {
                        continue;
                    }
                    let Some(c) = field.captures(line) else {
                        continue;
                    };
                    let (ty, tags) = (&c[1], &c[2]);
                    let Some(pb) = pb_tag.captures(tags) else {
                        continue;
                    };
                    let pb: Vec<&str> = pb[1].split(',').collect();
                    let Some(number) = pb.get(1).and_then(|n| n.parse().ok()) else {
                        continue;
                    };
                    let json: Vec<String> = json_tag
                        .captures(tags)
                        .map(|j| j[1].split(',').map(str::to_string).collect())
                        .unwrap_or_default();
                    let name = json.first().cloned().unwrap_or_default();
                    fields.push(GoField {
                        number,
                        json: name,
                        value: !ty.starts_with('*') && !ty.starts_with('['),
                        omitempty: json
                            .iter()
                            .skip(1)
                            .any(|o| o == "omitempty" || o == "omitzero"),
                    });
                } else if let Some(c) = start.captures(line) {
                    current = Some((c[1].to_string(), Vec::new()));
                } else if let Some(c) = slice.captures(line) {
                    self.slices.insert(format!("{package}.{}", &c[1]));
                } else if let Some(c) = defined.captures(line) {
                    self.defined_as
                        .insert(format!("{package}.{}", &c[1]), c[2].to_string());
                } else if let Some(c) = marshal.captures(line) {
                    self.custom_json.insert(format!("{package}.{}", &c[1]));
                }
            }
        }
        Ok(())
    }
}

/// Every message of the set, joined with its Go type.
fn messages(set: &FileDescriptorSet, go: &GoTypes) -> Result<BTreeMap<String, Value>> {
    let mut all: HashMap<String, &DescriptorProto> = HashMap::new();
    for file in &set.file {
        for m in &file.message_type {
            collect(&mut all, file.package(), m);
        }
    }
    let mut out = BTreeMap::new();
    for file in &set.file {
        for m in &file.message_type {
            let name = format!("{}.{}", file.package(), m.name());
            out.insert(name.clone(), message(&name, m, &all, go)?);
        }
    }
    Ok(out)
}

fn collect<'a>(
    all: &mut HashMap<String, &'a DescriptorProto>,
    scope: &str,
    m: &'a DescriptorProto,
) {
    let name = format!("{scope}.{}", m.name());
    for nested in &m.nested_type {
        collect(all, &name, nested);
    }
    all.insert(name, m);
}

fn message(
    name: &str,
    m: &DescriptorProto,
    all: &HashMap<String, &DescriptorProto>,
    go: &GoTypes,
) -> Result<Value> {
    if go.custom_json.contains(name) {
        return Ok(json!({ "form": "special" }));
    }
    if go.slices.contains(name) {
        let [items] = m.field.as_slice() else {
            bail!("{name} is a Go slice but its message has other fields than items");
        };
        return Ok(json!({ "form": "slice", "fields": [field(name, items, None, all)?] }));
    }
    let numbers = |m: &DescriptorProto| -> Vec<(i32, String)> {
        m.field
            .iter()
            .map(|f| (f.number(), f.name().to_string()))
            .collect()
    };
    // A type defined as another package's struct has that struct's fields.
    let same = go.defined_as.get(name).and_then(|other| {
        all.iter()
            .filter(|(n, o)| n.ends_with(&format!(".{other}")) && numbers(o) == numbers(m))
            .find_map(|(n, _)| go.structs.get(n.as_str()))
    });
    let empty = Vec::new();
    let go_fields = go
        .structs
        .get(name)
        .or(same)
        .or(m.field.is_empty().then_some(&empty));
    let Some(go_fields) = go_fields else {
        return Ok(json!({ "form": "special" }));
    };
    let mut fields = Vec::new();
    for f in &m.field {
        let Some(g) = go_fields.iter().find(|g| g.number == f.number()) else {
            // A proto field without a Go field: the Go type marshals itself.
            return Ok(json!({ "form": "special" }));
        };
        if g.json == "-" {
            return Ok(json!({ "form": "special" }));
        }
        fields.push(field(name, f, Some(g), all)?);
    }
    Ok(json!({ "form": "struct", "fields": fields }))
}

fn field(
    message: &str,
    f: &prost_types::FieldDescriptorProto,
    go: Option<&GoField>,
    all: &HashMap<String, &DescriptorProto>,
) -> Result<Value> {
    let scalar = |t: Type| -> Result<&'static str> {
        Ok(match t {
            Type::String => "string",
            Type::Bytes => "bytes",
            Type::Bool => "bool",
            Type::Int32 => "int32",
            Type::Int64 => "int64",
            Type::Uint32 => "uint32",
            Type::Uint64 => "uint64",
            Type::Double => "double",
            Type::Float => "float",
            other => bail!(
                "{message}.{}: type {other:?} is not used by Kubernetes",
                f.name()
            ),
        })
    };
    let type_name = f.type_name().trim_start_matches('.').to_string();
    let mut out = json!({
        "json": go.map(|g| g.json.clone()).unwrap_or_else(|| f.name().to_string()),
        "number": f.number(),
    });
    let entry = all.get(&type_name).filter(|m| {
        m.options
            .as_ref()
            .and_then(|o| o.map_entry)
            .unwrap_or(false)
    });
    if let Some(entry) = entry {
        let (Some(k), Some(v)) = (
            entry.field.iter().find(|f| f.number() == 1),
            entry.field.iter().find(|f| f.number() == 2),
        ) else {
            bail!("{type_name} is a map entry without key and value");
        };
        out["label"] = json!("map");
        out["key"] = json!(scalar(k.r#type())?);
        out["type"] = match v.r#type() {
            Type::Message => json!(v.type_name().trim_start_matches('.')),
            t => json!(scalar(t)?),
        };
    } else {
        out["label"] = json!(match f.label() {
            Label::Repeated => "repeated",
            _ => "optional",
        });
        out["type"] = match f.r#type() {
            Type::Message => json!(type_name),
            t => json!(scalar(t)?),
        };
    }
    if let Some(g) = go {
        let optional = out["label"] == "optional";
        out["value"] = json!(g.value && optional);
        out["omitempty"] = json!(g.omitempty);
    }
    Ok(out)
}

/// Writes the schema with one field a line, so that a new release's changes read as a short diff.
fn print(groups: &BTreeMap<String, String>, messages: &BTreeMap<String, Value>) -> Result<()> {
    let mut out = String::from("{\n  \"groups\": ");
    out.push_str(&serde_json::to_string_pretty(groups)?.replace('\n', "\n  "));
    out.push_str(",\n  \"messages\": {");
    for (i, (name, m)) in messages.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!(
            "\n    {}: {{ \"form\": {}",
            serde_json::to_string(name)?,
            m["form"]
        ));
        if let Some(fields) = m["fields"].as_array() {
            out.push_str(", \"fields\": [");
            for (j, f) in fields.iter().enumerate() {
                out.push_str(if j > 0 { ",\n      " } else { "\n      " });
                out.push_str(&serde_json::to_string(f)?);
            }
            out.push_str("\n    ]");
        }
        out.push_str(" }");
    }
    out.push_str("\n  }\n}");
    println!("{out}");
    Ok(())
}
