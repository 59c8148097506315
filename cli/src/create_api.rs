//! `cargo kubewright create api --kind K`: adds a kind to a crate `new` generated, as kubebuilder's
//! `create api` does: its module and tests from the same templates, registered in `src/lib.rs` at the
//! `+kubewright:scaffold` lines.

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::files;
use crate::names::{ApiVersion, CrateName, Group, Kind};
use crate::template::{self, Values};

/// The line of `src/lib.rs` before which a kind's module is declared.
pub const MODULES_MARKER: &str = "// +kubewright:scaffold:modules";

/// The line of `src/lib.rs` before which `app()` runs a kind.
pub const OPERATE_MARKER: &str = "// +kubewright:scaffold:operate";

/// What `create api` is asked for, unchecked.
#[derive(Debug, Clone)]
pub struct CreateApi {
    /// The crate's directory.
    pub dir: PathBuf,
    /// The kind to add.
    pub kind: String,
    /// The API group (default: the crate's `[package.metadata.kubewright]`).
    pub group: Option<String>,
    /// The API version (default: the crate's `[package.metadata.kubewright]`).
    pub version: Option<String>,
}

/// What `create api` wrote.
#[derive(Debug, Clone)]
pub struct Added {
    /// The files created, then `src/lib.rs`.
    pub files: Vec<PathBuf>,
    /// Why the Rust files were not formatted, when they were not.
    pub unformatted: Option<String>,
}

impl CreateApi {
    /// Checks the kind (and group and version), that the crate has no kind of that name and that its
    /// `src/lib.rs` has both scaffold lines, then writes the kind's files and registers it; nothing is written
    /// when a check fails.
    pub fn write(&self) -> Result<Added, Error> {
        let manifest = self.dir.join("Cargo.toml");
        let text = std::fs::read_to_string(&manifest).map_err(Error::io("read", &manifest))?;
        let not_generated = |why: &str| Error::NotGenerated {
            path: manifest.clone(),
            why: why.into(),
        };
        let table: toml::Table = text
            .parse()
            .map_err(|e| not_generated(&format!("not TOML: {e}")))?;
        let package = table.get("package");
        let name = package
            .and_then(|p| p.get("name"))
            .and_then(|n| n.as_str())
            .ok_or_else(|| not_generated("it names no package"))?;
        let metadata = package
            .and_then(|p| p.get("metadata"))
            .and_then(|m| m.get("kubewright"));
        let recorded = |key: &str| {
            metadata
                .and_then(|m| m.get(key))
                .and_then(|v| v.as_str())
                .map(str::to_string)
        };
        let group = self
            .group
            .clone()
            .or_else(|| recorded("group"))
            .ok_or_else(|| {
                not_generated(
                    "no --group given and no `group` in its [package.metadata.kubewright]",
                )
            })?;
        let version = self
            .version
            .clone()
            .or_else(|| recorded("version"))
            .unwrap_or_else(|| "v1".into());
        let name = CrateName::parse(name)?;
        let group = Group::parse(&group)?;
        let version = ApiVersion::parse(&version)?;
        let kind = Kind::parse(&self.kind)?;

        let values = Values::new(&name, &group, &version, &kind);
        let rendered = template::render(template::KIND, &values);
        for file in &rendered {
            let path = self.dir.join(&file.path);
            if path.symlink_metadata().is_ok() {
                return Err(Error::KindExists {
                    kind: kind.as_str().into(),
                    path,
                });
            }
        }
        if let Some(path) = declaring(&self.dir.join("src"), &kind)? {
            return Err(Error::KindExists {
                kind: kind.as_str().into(),
                path,
            });
        }
        let lib = self.dir.join("src").join("lib.rs");
        let source = std::fs::read_to_string(&lib).map_err(Error::io("read", &lib))?;
        let registered = register(&source, &kind).map_err(|why| Error::NotGenerated {
            path: lib.clone(),
            why,
        })?;

        let mut written = files::write_new(&self.dir, &rendered)?;
        if let Err(e) = std::fs::write(&lib, registered) {
            for file in &written {
                let _ = std::fs::remove_file(file);
            }
            return Err(Error::io("write", &lib)(e));
        }
        written.push(lib);
        let unformatted = files::format(&written).err();
        Ok(Added {
            files: written,
            unformatted,
        })
    }
}

/// The file of `src` (a crate's sources, not recursively) that declares `kind` as a CRD's kind, if one does.
fn declaring(src: &Path, kind: &Kind) -> Result<Option<PathBuf>, Error> {
    let needle = format!("kind = \"{}\"", kind.as_str());
    let entries = std::fs::read_dir(src).map_err(Error::io("read the directory", src))?;
    for entry in entries {
        let path = entry.map_err(Error::io("read the directory", src))?.path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).map_err(Error::io("read", &path))?;
        if text.contains(&needle) {
            return Ok(Some(path));
        }
    }
    Ok(None)
}

/// `lib`, the crate's `src/lib.rs`, with `kind`'s module declared and run by `app()`: lines inserted before
/// the two scaffold lines, indented as the line above each.
fn register(lib: &str, kind: &Kind) -> Result<String, String> {
    let module = kind.module();
    let lines = insert_before(lib, MODULES_MARKER, &[format!("pub mod {module};")])?;
    insert_before(
        &lines,
        OPERATE_MARKER,
        &[
            format!(".operate::<{module}::{}>()", kind.as_str()),
            format!(".sample({module}::sample(\"{}-sample\"))", kind.lower()),
        ],
    )
}

/// `text` with `new` inserted before the line holding `marker` (alone, after indentation), indented as the
/// line above it.
fn insert_before(text: &str, marker: &str, new: &[String]) -> Result<String, String> {
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.trim() == marker)
        .ok_or_else(|| format!("it has no `{marker}` line to add the kind at"))?;
    let above = if at > 0 { lines[at - 1] } else { lines[at] };
    let indent = &above[..above.len() - above.trim_start().len()];
    let mut out: Vec<String> = lines[..at].iter().map(|l| l.to_string()).collect();
    out.extend(new.iter().map(|l| format!("{indent}{l}")));
    out.extend(lines[at..].iter().map(|l| l.to_string()));
    let mut joined = out.join("\n");
    if text.ends_with('\n') {
        joined.push('\n');
    }
    Ok(joined)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIB: &str = "pub mod widget;\n// +kubewright:scaffold:modules\n\npub fn app() -> App {\n    App::new(\"x\")\n        .operate::<widget::Widget>()\n    // +kubewright:scaffold:operate\n}\n";

    #[test]
    fn a_kind_is_registered_at_both_scaffold_lines() {
        let kind = Kind::parse("WebApp").expect("kind");
        let lib = register(LIB, &kind).expect("registered");
        assert_eq!(
            lib,
            "pub mod widget;\npub mod web_app;\n// +kubewright:scaffold:modules\n\npub fn app() -> App {\n    \
             App::new(\"x\")\n        .operate::<widget::Widget>()\n        .operate::<web_app::WebApp>()\n        \
             .sample(web_app::sample(\"webapp-sample\"))\n    // +kubewright:scaffold:operate\n}\n"
        );
    }

    #[test]
    fn a_lib_without_a_scaffold_line_is_refused() {
        let kind = Kind::parse("Gadget").expect("kind");
        let lib = LIB.replace(OPERATE_MARKER, "");
        let why = register(&lib, &kind).expect_err("refused");
        assert!(why.contains(OPERATE_MARKER), "{why}");
    }
}
