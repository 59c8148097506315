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
        // Only the new files are formatted: rustfmt on lib.rs would format every module of the crate, the
        // author's edits included. The lines lib.rs gets are placed and indented as rustfmt would.
        let unformatted = files::format(&written).err();
        if let Err(e) = std::fs::write(&lib, registered) {
            for file in &written {
                let _ = std::fs::remove_file(file);
            }
            return Err(Error::io("write", &lib)(e));
        }
        written.push(lib);
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

/// `lib`, the crate's `src/lib.rs`, with `kind`'s module declared and run by `app()`: the module among the
/// `pub mod` lines above the modules' scaffold line, in the order rustfmt sorts them; `app()`'s calls before
/// the other scaffold line, indented as the line above it.
fn register(lib: &str, kind: &Kind) -> Result<String, String> {
    let module = kind.module();
    let declaration = format!("pub mod {module};");
    let lines = insert_before(
        lib,
        MODULES_MARKER,
        std::slice::from_ref(&declaration),
        |above| {
            // Back over the declarations that sort after the new one.
            above
                .iter()
                .rev()
                .take_while(|l| l.starts_with("pub mod ") && l.trim_end() > declaration.as_str())
                .count()
        },
    )?;
    insert_before(
        &lines,
        OPERATE_MARKER,
        &[
            format!(".operate::<{module}::{}>()", kind.as_str()),
            format!(".sample({module}::sample(\"{}-sample\"))", kind.lower()),
        ],
        |_| 0,
    )
}

/// `text` with `new` inserted before the line holding `marker` (alone, after indentation), or `back(lines
/// above the marker)` lines higher, indented as the line above the insertion.
fn insert_before(
    text: &str,
    marker: &str,
    new: &[String],
    back: impl FnOnce(&[&str]) -> usize,
) -> Result<String, String> {
    let lines: Vec<&str> = text.lines().collect();
    let marked = lines
        .iter()
        .position(|l| l.trim() == marker)
        .ok_or_else(|| format!("it has no `{marker}` line to add the kind at"))?;
    let at = marked - back(&lines[..marked]);
    let above = if at > 0 { lines[at - 1] } else { lines[marked] };
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
            "pub mod web_app;\npub mod widget;\n// +kubewright:scaffold:modules\n\npub fn app() -> App {\n    \
             App::new(\"x\")\n        .operate::<widget::Widget>()\n        .operate::<web_app::WebApp>()\n        \
             .sample(web_app::sample(\"webapp-sample\"))\n    // +kubewright:scaffold:operate\n}\n"
        );
    }

    #[test]
    fn a_module_is_declared_in_order() {
        let kind = Kind::parse("Apple").expect("kind");
        let lib = register(LIB, &kind).expect("registered");
        assert!(
            lib.starts_with("pub mod apple;\npub mod widget;\n// +kubewright"),
            "{lib}"
        );
        let kind = Kind::parse("Zebra").expect("kind");
        let lib = register(&lib, &kind).expect("registered");
        assert!(
            lib.starts_with("pub mod apple;\npub mod widget;\npub mod zebra;\n// +kubewright"),
            "{lib}"
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
