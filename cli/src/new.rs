//! `cargo kubewright new PATH --group G --kind K`: a new operator crate in a new directory.

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::files;
use crate::names::{ApiVersion, CrateName, Group, Kind};
use crate::template::{self, Values};

/// The `operator/` folder of the checkout this binary was built from: the default kubewright dependency while
/// the crates are not published.
pub const BUILT_FROM: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../operator");

/// What `new` is asked for, unchecked.
#[derive(Debug, Clone)]
pub struct NewCrate {
    /// The directory to create.
    pub path: PathBuf,
    /// The crate's name (default: the directory's name).
    pub name: Option<String>,
    /// The API group.
    pub group: String,
    /// The API version.
    pub version: String,
    /// The first kind.
    pub kind: String,
    /// The kubewright crate to depend on (default: [`BUILT_FROM`]).
    pub kubewright_path: Option<PathBuf>,
}

/// What `new` wrote.
#[derive(Debug, Clone)]
pub struct Written {
    /// The crate's directory.
    pub dir: PathBuf,
    /// The files, in order.
    pub files: Vec<PathBuf>,
    /// Why the Rust files were not formatted, when they were not.
    pub unformatted: Option<String>,
}

impl NewCrate {
    /// Checks every name and the kubewright path, then writes the crate into a new directory; on any error
    /// before the directory is created nothing is written, and a directory it created is removed again when a
    /// write fails.
    pub fn write(&self) -> Result<Written, Error> {
        let name = match &self.name {
            Some(name) => name.clone(),
            None => self
                .path
                .file_name()
                .and_then(|n| n.to_str())
                .map(str::to_string)
                .ok_or_else(|| Error::NoName(self.path.clone()))?,
        };
        let name = CrateName::parse(&name)?;
        let group = Group::parse(&self.group)?;
        let version = ApiVersion::parse(&self.version)?;
        let kind = Kind::parse(&self.kind)?;
        let kubewright = kubewright_crate(
            self.kubewright_path
                .as_deref()
                .unwrap_or(Path::new(BUILT_FROM)),
        )?;
        if self.path.symlink_metadata().is_ok() {
            return Err(Error::Exists(self.path.clone()));
        }
        let root = kubewright.parent().unwrap_or(&kubewright);
        let mut values = Values::new(&name, &group, &version, &kind);
        values
            .set(
                "kubewright_path",
                toml::Value::String(kubewright.display().to_string()).to_string(),
            )
            .set("kubewright_root", root.display().to_string());
        let mut rendered = template::render(template::CRATE, &values);
        rendered.extend(template::render(template::KIND, &values));

        if let Some(parent) = self.path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(Error::io("create the directory", parent))?;
        }
        std::fs::create_dir(&self.path).map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => Error::Exists(self.path.clone()),
            _ => Error::io("create the directory", &self.path)(e),
        })?;
        let files = match files::write_new(&self.path, &rendered) {
            Ok(files) => files,
            Err(e) => {
                // The directory is ours (created above): leave nothing half-written behind.
                let _ = std::fs::remove_dir_all(&self.path);
                return Err(e);
            }
        };
        let unformatted = files::format(&files).err();
        Ok(Written {
            dir: self.path.clone(),
            files,
            unformatted,
        })
    }
}

/// The kubewright crate at `path` (its folder, holding a Cargo.toml of package `kubewright`), as an absolute
/// path.
fn kubewright_crate(path: &Path) -> Result<PathBuf, Error> {
    let not_found = |why: String| Error::NoKubewright {
        path: path.to_path_buf(),
        why,
    };
    let manifest = path.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest)
        .map_err(|e| not_found(format!("cannot read its Cargo.toml: {e}")))?;
    let table: toml::Table = text
        .parse()
        .map_err(|e| not_found(format!("its Cargo.toml is not TOML: {e}")))?;
    let package = table
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(|n| n.as_str());
    if package != Some("kubewright") {
        return Err(not_found(match package {
            Some(other) => format!("its Cargo.toml is package `{other}`"),
            None => "its Cargo.toml names no package".into(),
        }));
    }
    std::fs::canonicalize(path).map_err(|e| not_found(format!("cannot resolve it: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn widget(path: PathBuf) -> NewCrate {
        NewCrate {
            path,
            name: None,
            group: "example.dev".into(),
            version: "v1".into(),
            kind: "Widget".into(),
            kubewright_path: None,
        }
    }

    #[test]
    fn a_directory_that_exists_is_refused_and_left_as_it_was() {
        let tmp = tempfile::tempdir().expect("a temporary directory");
        let dir = tmp.path().join("my-operator");
        std::fs::create_dir(&dir).expect("the directory");
        std::fs::write(dir.join("notes.txt"), "mine").expect("a file");
        let error = widget(dir.clone()).write().expect_err("refused");
        assert!(
            matches!(error, Error::Exists(ref p) if *p == dir),
            "{error}"
        );
        assert!(error.to_string().contains("overwrites nothing"));
        let left: Vec<_> = std::fs::read_dir(&dir).expect("read").collect();
        assert_eq!(left.len(), 1);
        assert_eq!(
            std::fs::read_to_string(dir.join("notes.txt"))
                .ok()
                .as_deref(),
            Some("mine")
        );
    }

    #[test]
    fn invalid_names_are_refused_before_anything_is_written() {
        let tmp = tempfile::tempdir().expect("a temporary directory");
        let cases = [
            ("my-operator", "example", "Widget", "at least one dot"),
            ("my-operator", "example.dev", "widget", "UpperCamelCase"),
            ("my_operator", "example.dev", "Widget", "RFC 1123 label"),
            (
                "2-operator",
                "example.dev",
                "Widget",
                "cannot start with a digit",
            ),
        ];
        for (name, group, kind, rule) in cases {
            let dir = tmp.path().join("sub").join(name);
            let mut new = widget(dir.clone());
            new.group = group.into();
            new.kind = kind.into();
            let error = new.write().expect_err("refused");
            assert!(matches!(error, Error::Name(_)), "{error}");
            assert!(error.to_string().contains(rule), "{error}");
            assert!(
                !tmp.path().join("sub").exists(),
                "{name}: something was written"
            );
        }
    }

    #[test]
    fn a_kubewright_path_without_the_runtime_is_refused_before_anything_is_written() {
        let tmp = tempfile::tempdir().expect("a temporary directory");
        let mut new = widget(tmp.path().join("my-operator"));
        new.kubewright_path = Some(Path::new(BUILT_FROM).join("..").join("cli"));
        let error = new.write().expect_err("refused");
        assert!(
            error.to_string().contains("package `cargo-kubewright`"),
            "{error}"
        );
        assert!(!tmp.path().join("my-operator").exists());
    }
}
