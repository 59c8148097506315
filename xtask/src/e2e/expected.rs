//! `xtask/e2e/expected.md`: the selected specs expected to fail, on which server, and why.
//!
//! Each entry is a list item whose first code span is a spec's full text, under a `## ` heading that names
//! the server: one naming "embedded cluster" (fails there, passes on kube-apiserver) or one naming "bare
//! control plane" (fails on etcd and kube-apiserver alone, whatever the embedded cluster does); or one naming
//! "CI part" (passes on both, but too slow for `--ci`).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, bail};

/// Where an entry says a spec fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fails {
    /// On the embedded cluster, while kube-apiserver passes it.
    Embedded,
    /// On the bare real control plane.
    Real,
    /// Nowhere: it passes on both servers but is left out of the CI part (`--ci`) for its run time.
    Slow,
}

/// The entries, by spec text: where it fails and the reason given.
#[derive(Debug, Default)]
pub struct Expected {
    pub entries: BTreeMap<String, (Fails, String)>,
}

impl Expected {
    /// Reads the file.
    pub fn read(path: &Path) -> anyhow::Result<Expected> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        Expected::parse(&text).with_context(|| format!("in {}", path.display()))
    }

    fn parse(text: &str) -> anyhow::Result<Expected> {
        let mut section = None;
        let mut expected = Expected::default();
        for (n, line) in text.lines().enumerate() {
            if let Some(heading) = line.strip_prefix("## ") {
                section = if heading.contains("embedded cluster") {
                    Some(Fails::Embedded)
                } else if heading.contains("bare control plane") {
                    Some(Fails::Real)
                } else if heading.contains("CI part") {
                    Some(Fails::Slow)
                } else {
                    bail!(
                        "line {}: a section names \"embedded cluster\", \"bare control plane\" or \"CI part\": {heading}",
                        n + 1
                    );
                };
                continue;
            }
            let Some(item) = line.strip_prefix("- `") else {
                continue;
            };
            let Some((spec, reason)) = item.split_once('`') else {
                bail!("line {}: the spec's code span is not closed", n + 1);
            };
            let Some(fails) = section else {
                bail!("line {}: an entry before any section", n + 1);
            };
            let reason = reason.trim_start_matches([':', ' ']).to_string();
            if reason.is_empty() {
                bail!("line {}: `{spec}` has no reason", n + 1);
            }
            if expected
                .entries
                .insert(spec.to_string(), (fails, reason))
                .is_some()
            {
                bail!("line {}: `{spec}` is listed twice", n + 1);
            }
        }
        Ok(expected)
    }

    /// Where the file says `spec` fails, if it lists it.
    pub fn fails(&self, spec: &str) -> Option<Fails> {
        self.entries.get(spec).map(|(f, _)| *f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_read_by_section() {
        let expected = Expected::parse(
            "# title\n\nprose\n\n## Fail on the embedded cluster\n- `a [x]`: reason one\n\n\
             ## Fail on the bare control plane\n- `b`: needs nodes\n\
             ## Left out of the CI part\n- `c`: 60 s\n",
        )
        .unwrap();
        assert_eq!(expected.fails("a [x]"), Some(Fails::Embedded));
        assert_eq!(expected.fails("b"), Some(Fails::Real));
        assert_eq!(expected.fails("c"), Some(Fails::Slow));
        assert_eq!(expected.fails("d"), None);
        assert_eq!(expected.entries["b"].1, "needs nodes");
    }

    #[test]
    fn entries_without_a_reason_or_twice_are_refused() {
        assert!(Expected::parse("## on the embedded cluster\n- `a`\n").is_err());
        assert!(Expected::parse("## on the embedded cluster\n- `a`: x\n- `a`: y\n").is_err());
        assert!(Expected::parse("## elsewhere\n").is_err());
        assert!(Expected::parse("- `a`: x\n").is_err());
    }

    #[test]
    fn the_file_in_the_repository_reads() {
        Expected::read(&super::super::binary::package_dir().join("expected.md")).unwrap();
    }
}
