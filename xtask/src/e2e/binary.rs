//! The e2e test binary: built from `xtask/e2e` (a test-main package pinning `k8s.io/kubernetes`) into the
//! envtest cache, keyed by the package's files, and the specs it holds.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use kubewright_envtest::{KUBERNETES_VERSION, cache_root};
use serde_json::Value;

/// The folder of the Go package, in this repository.
pub fn package_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("e2e")
}

/// The files whose content keys the cached binary.
const SOURCES: [&str; 3] = ["go.mod", "go.sum", "e2e_test.go"];

/// A built test binary, and how long finding or building it took.
pub struct Binary {
    pub path: PathBuf,
    /// `None` when the cache held it.
    pub built_in: Option<Duration>,
}

/// Finds the binary for the package's current files in the cache, or builds it there.
pub fn find_or_build(cache_dir: Option<&Path>, rebuild: bool) -> anyhow::Result<Binary> {
    let dir = package_dir();
    let mut key = Fnv::default();
    for name in SOURCES {
        let path = dir.join(name);
        let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        key.write(name.as_bytes());
        key.write(&bytes);
    }
    let root = match cache_dir {
        Some(dir) => dir.to_path_buf(),
        None => cache_root().context("no cache directory: set HOME or OPERATOR_ENVTEST_CACHE")?,
    };
    let target_dir = root.join(format!(
        "e2e-apimachinery-{KUBERNETES_VERSION}-{:016x}",
        key.0
    ));
    let target = target_dir.join("e2e-apimachinery.test");
    if !rebuild && target.is_file() {
        super::progress(&format!("reusing {}", target.display()));
        return Ok(Binary {
            path: target,
            built_in: None,
        });
    }
    let go = crate::build::check_go(&format!(
        "build Kubernetes {KUBERNETES_VERSION}'s API-machinery e2e test binary (`go test -c` of {})",
        dir.display()
    ))?;
    let started = Instant::now();
    super::progress(&format!(
        "building the e2e test binary with {go} into {} (a few minutes; downloads modules the Go module cache lacks)",
        target.display()
    ));
    std::fs::create_dir_all(&target_dir)
        .with_context(|| format!("creating {}", target_dir.display()))?;
    let partial = target_dir.join("e2e-apimachinery.test.partial");
    let partial_arg = partial.display().to_string();
    crate::build::go_with(
        &dir,
        &["test", "-c", "-trimpath", "-o", &partial_arg, "."],
        "e2e",
        "-mod=readonly",
    )?;
    std::fs::rename(&partial, &target)
        .with_context(|| format!("moving {} to {}", partial.display(), target.display()))?;
    let built_in = started.elapsed();
    super::progress(&format!("built the e2e test binary in {built_in:.0?}"));
    Ok(Binary {
        path: target,
        built_in: Some(built_in),
    })
}

/// One spec the binary holds.
#[derive(Debug, Clone)]
pub struct Spec {
    /// Its full text, as ginkgo's focus matches it: the containers' texts and its own, space-separated.
    pub text: String,
    /// `test/e2e/apimachinery/<file>.go:<line>`.
    pub location: String,
    /// Marked `[Serial]`: runs alone.
    pub serial: bool,
}

/// The specs of `test/e2e/apimachinery` that `focus` and `skip` select, from a dry run.
pub fn list(
    binary: &Path,
    focus: Option<&str>,
    skip: &str,
    out: &Path,
) -> anyhow::Result<Vec<Spec>> {
    let report = out.join("specs.json");
    let mut command = Command::new(binary);
    command
        .arg("--ginkgo.dry-run")
        .arg("--ginkgo.no-color")
        .arg(format!("--ginkgo.focus-file={FOCUS_FILE}"))
        .arg(format!("--ginkgo.skip={skip}"))
        .arg(format!("--ginkgo.json-report={}", report.display()));
    if let Some(focus) = focus {
        command.arg(format!("--ginkgo.focus={focus}"));
    }
    let output = command
        .output()
        .with_context(|| format!("running {} --ginkgo.dry-run", binary.display()))?;
    if !output.status.success() {
        bail!(
            "listing the specs failed ({}):\n{}",
            output.status,
            String::from_utf8_lossy(&output.stdout)
        );
    }
    let text = std::fs::read_to_string(&report)
        .with_context(|| format!("reading {}", report.display()))?;
    let suites: Value = serde_json::from_str(&text).context("reading ginkgo's JSON report")?;
    let mut specs: Vec<Spec> = spec_reports(&suites)
        .filter(|s| s["State"] == "passed")
        .filter_map(|s| {
            let location = &s["LeafNodeLocation"];
            let file = location["FileName"].as_str()?;
            let file = &file[file.find("test/e2e/")?..];
            let text = full_text(s);
            Some(Spec {
                serial: text.contains("[Serial]"),
                location: format!("{file}:{}", location["LineNumber"]),
                text,
            })
        })
        .collect();
    specs.sort_by(|a, b| a.text.cmp(&b.text));
    Ok(specs)
}

/// The folder ginkgo's `--ginkgo.focus-file` keeps to.
pub const FOCUS_FILE: &str = "test/e2e/apimachinery/";

/// The `It` reports of a ginkgo JSON report.
pub fn spec_reports(suites: &Value) -> impl Iterator<Item = &Value> {
    suites
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|suite| suite["SpecReports"].as_array().into_iter().flatten())
        .filter(|s| s["LeafNodeType"] == "It")
}

/// A spec's full text from its report.
pub fn full_text(spec: &Value) -> String {
    spec["ContainerHierarchyTexts"]
        .as_array()
        .into_iter()
        .flatten()
        .chain(std::iter::once(&spec["LeafNodeText"]))
        .filter_map(Value::as_str)
        .collect::<Vec<_>>()
        .join(" ")
}

/// A Go regular expression that ginkgo's focus matches against exactly the spec `text` (ginkgo matches the
/// suite's description, a space and the spec's text; RE2 takes a backslash before any punctuation).
pub fn go_regex_exact(text: &str) -> String {
    let mut out = String::from(" ");
    for c in text.chars() {
        if c.is_ascii_punctuation() {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('$');
    out
}

/// 64-bit FNV-1a, a cache key stable across Rust releases.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
        // A separator, so that ("ab", "c") and ("a", "bc") differ.
        self.0 = self.0.wrapping_mul(0x0100_0000_01b3) ^ 0xff;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_texts_become_exact_go_patterns() {
        assert_eq!(
            go_regex_exact("[sig-api-machinery] a.b (c) [Conformance]"),
            r" \[sig\-api\-machinery\] a\.b \(c\) \[Conformance\]$"
        );
    }

    #[test]
    fn the_go_module_pins_kubernetes_and_replaces_every_staging_module() {
        let go_mod = std::fs::read_to_string(package_dir().join("go.mod")).unwrap();
        assert!(
            go_mod.contains(&format!("k8s.io/kubernetes {KUBERNETES_VERSION}")),
            "{go_mod}"
        );
        let staging = KUBERNETES_VERSION.replacen("v1.", "v0.", 1);
        for module in crate::build::STAGING {
            let line = format!("k8s.io/{module} => k8s.io/{module} {staging}");
            assert!(go_mod.contains(&line), "go.mod lacks `{line}`");
        }
    }

    #[test]
    fn the_cache_key_separates_files() {
        let (mut a, mut b) = (Fnv::default(), Fnv::default());
        a.write(b"ab");
        a.write(b"c");
        b.write(b"a");
        b.write(b"bc");
        assert_ne!(a.0, b.0);
    }
}
