//! Writing the rendered files, never over one that exists, and formatting the Rust ones with rustfmt.

use std::fs::OpenOptions;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::Error;
use crate::template::Rendered;

/// Writes each file under `dir`, creating its directories; a file that exists is an error, nothing of it
/// overwritten. Returns the paths written, in order.
pub fn write_new(dir: &Path, files: &[Rendered]) -> Result<Vec<PathBuf>, Error> {
    let mut written = Vec::with_capacity(files.len());
    for file in files {
        let path = dir.join(&file.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(Error::io("create the directory", parent))?;
        }
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        if file.executable {
            use std::os::unix::fs::OpenOptionsExt as _;
            options.mode(0o755);
        }
        let mut out = options.open(&path).map_err(Error::io("create", &path))?;
        written.push(path.clone());
        out.write_all(file.text.as_bytes())
            .map_err(Error::io("write", &path))?;
    }
    Ok(written)
}

/// Formats the Rust files among `paths` with `rustfmt` (edition 2024), so that names of any length come out as
/// `cargo fmt` would write them. Returns why not when rustfmt cannot run or fails.
pub fn format(paths: &[PathBuf]) -> Result<(), String> {
    let rust: Vec<&PathBuf> = paths
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    if rust.is_empty() {
        return Ok(());
    }
    match Command::new("rustfmt")
        .args(["--edition", "2024"])
        .args(&rust)
        .status()
    {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(format!("rustfmt failed ({status})")),
        Err(e) => Err(format!("cannot run rustfmt: {e}")),
    }
}
