//! `cargo xtask envtest`: build etcd and kube-apiserver, and the cluster components kube-controller-manager,
//! kube-scheduler and kwok, from Go modules into a cache keyed by version.
//!
//! None builds with `go install`: `k8s.io/kubernetes` replaces its 31 staging modules with local paths,
//! and etcd's server module has the same problem. Each is built from a scratch module that requires it (and,
//! for the Kubernetes binaries, replaces each staging module with its published `v0.x` release). kwok's
//! default stages (`kustomize/stage` of its module) are copied beside it.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, bail};
use kubewright_envtest::cluster::KWOK_STAGES_FILE;
use kubewright_envtest::{
    ASSETS_ENV, Assets, ClusterAssets, ETCD_VERSION, KUBERNETES_VERSION, KWOK_VERSION,
    assets_dir_name, cache_root,
};

/// The staging modules `k8s.io/kubernetes` replaces with `./staging/src/k8s.io/<name>`.
pub(crate) const STAGING: [&str; 31] = [
    "api",
    "apiextensions-apiserver",
    "apimachinery",
    "apiserver",
    "cli-runtime",
    "client-go",
    "cloud-provider",
    "cluster-bootstrap",
    "code-generator",
    "component-base",
    "component-helpers",
    "controller-manager",
    "cri-api",
    "cri-client",
    "csi-translation-lib",
    "dynamic-resource-allocation",
    "endpointslice",
    "externaljwt",
    "kms",
    "kube-aggregator",
    "kube-controller-manager",
    "kube-proxy",
    "kube-scheduler",
    "kubectl",
    "kubelet",
    "metrics",
    "mount-utils",
    "pod-security-admission",
    "sample-apiserver",
    "sample-cli-plugin",
    "sample-controller",
];

/// The oldest Go that builds Kubernetes v1.35 and kwok v0.8 (which declares `go 1.26.0`).
const MIN_GO: (u32, u32) = (1, 26);

/// kwok's default stages, in its module: nodes become `Ready`; pods `Running` and `Ready`, a Job's pods
/// `Succeeded`, deleted pods gone. (Node heartbeats are left out: no node-lifecycle controller runs.)
const KWOK_STAGES: [&str; 4] = [
    "kustomize/stage/node/fast/node-initialize.yaml",
    "kustomize/stage/pod/fast/pod-ready.yaml",
    "kustomize/stage/pod/fast/pod-complete.yaml",
    "kustomize/stage/pod/fast/pod-delete.yaml",
];

/// Options of `cargo xtask envtest`.
#[derive(Debug, Default, clap::Args)]
pub struct Args {
    /// Build here instead of the cache directory (default: $OPERATOR_ENVTEST_CACHE, else
    /// $XDG_CACHE_HOME/operator-envtest, else ~/.cache/operator-envtest).
    #[arg(long)]
    cache_dir: Option<PathBuf>,
    /// Build even when KUBEBUILDER_ASSETS is set or the cache already holds the binaries.
    #[arg(long)]
    rebuild: bool,
}

/// Finds or builds the binaries, the control plane's and the cluster's; progress goes to stderr.
pub fn run(args: &Args) -> anyhow::Result<Assets> {
    let assets = control_plane(args)?;
    cluster(args, &assets)?;
    Ok(assets)
}

fn root(args: &Args) -> anyhow::Result<PathBuf> {
    match &args.cache_dir {
        Some(dir) => Ok(dir.clone()),
        None => cache_root().context("no cache directory: set HOME or OPERATOR_ENVTEST_CACHE"),
    }
}

/// Finds or builds kube-controller-manager, kube-scheduler and kwok: beside the control plane's binaries,
/// else in (or into) the cache.
fn cluster(args: &Args, assets: &Assets) -> anyhow::Result<ClusterAssets> {
    if !args.rebuild
        && let Ok(found) = ClusterAssets::beside(assets)
    {
        progress(&format!(
            "reusing {} (kube-controller-manager and kube-scheduler {}, kwok {})",
            found.dir.display(),
            found.kubernetes_version,
            found.kwok_version
        ));
        return Ok(found);
    }
    let root = root(args)?;
    let target = root.join(assets_dir_name());
    let go = check_go("build kube-controller-manager, kube-scheduler and kwok")?;
    let started = Instant::now();
    progress(&format!(
        "building kube-controller-manager and kube-scheduler {KUBERNETES_VERSION} and kwok {KWOK_VERSION} with \
         {go} into {}",
        target.display()
    ));
    std::fs::create_dir_all(&target).with_context(|| format!("creating {}", target.display()))?;
    let kwok = GoBinary {
        name: "kwok",
        module: "sigs.k8s.io/kwok",
        version: KWOK_VERSION,
        package: "sigs.k8s.io/kwok/cmd/kwok",
        replaces: Vec::new(),
        ldflags: Vec::new(),
    };
    let binaries = [
        kubernetes_binary("kube-controller-manager"),
        kubernetes_binary("kube-scheduler"),
        kwok,
    ];
    for binary in &binaries {
        let src = root.join("src").join(binary.name);
        let partial = target.join(format!("{}.partial", binary.name));
        binary.build(&src, &partial)?;
        let out = target.join(binary.name);
        std::fs::rename(&partial, &out)
            .with_context(|| format!("moving {} to {}", partial.display(), out.display()))?;
        if binary.name == "kwok" {
            write_kwok_stages(&src, &target.join(KWOK_STAGES_FILE))?;
        }
    }
    let found =
        ClusterAssets::in_dir(&target).context("checking the cluster binaries just built")?;
    progress(&format!(
        "built kube-controller-manager and kube-scheduler {} and kwok {} in {:.0?}",
        found.kubernetes_version,
        found.kwok_version,
        started.elapsed()
    ));
    Ok(found)
}

/// Concatenates kwok's default stages from its module (resolved in the scratch module `src`) into `out`.
fn write_kwok_stages(src: &Path, out: &Path) -> anyhow::Result<()> {
    let output = Command::new("go")
        .args(["list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/kwok"])
        .current_dir(src)
        .env("GOFLAGS", "-mod=mod")
        .env("GOTOOLCHAIN", "local")
        .output()
        .context("running go list -m sigs.k8s.io/kwok")?;
    if !output.status.success() {
        bail!(
            "`go list -m sigs.k8s.io/kwok` failed in {}: {}",
            src.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let module = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
    let mut stages = String::new();
    for file in KWOK_STAGES {
        let path = module.join(file);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading kwok's stage {}", path.display()))?;
        stages.push_str("---\n");
        stages.push_str(&text);
        if !text.ends_with('\n') {
            stages.push('\n');
        }
    }
    std::fs::write(out, stages).with_context(|| format!("writing {}", out.display()))
}

/// A binary of `k8s.io/kubernetes` (`cmd/<name>`), with the staging modules replaced by their releases and
/// the version stamped as Kubernetes' own build stamps it.
fn kubernetes_binary(name: &'static str) -> GoBinary {
    let staging_version = KUBERNETES_VERSION.replacen("v1.", "v0.", 1);
    let (major, minor) = kubernetes_major_minor();
    GoBinary {
        name,
        module: "k8s.io/kubernetes",
        version: KUBERNETES_VERSION,
        package: match name {
            "kube-controller-manager" => "k8s.io/kubernetes/cmd/kube-controller-manager",
            "kube-scheduler" => "k8s.io/kubernetes/cmd/kube-scheduler",
            _ => "k8s.io/kubernetes/cmd/kube-apiserver",
        },
        replaces: STAGING
            .iter()
            .map(|m| format!("k8s.io/{m} => k8s.io/{m} {staging_version}"))
            .collect(),
        ldflags: [
            ("gitVersion", KUBERNETES_VERSION.to_string()),
            ("gitMajor", major),
            ("gitMinor", minor),
            ("gitTreeState", "clean".to_string()),
            ("buildDate", "1970-01-01T00:00:00Z".to_string()),
        ]
        .into_iter()
        .flat_map(|(var, value)| {
            [
                format!("-X k8s.io/component-base/version.{var}={value}"),
                format!("-X k8s.io/client-go/pkg/version.{var}={value}"),
            ]
        })
        .collect(),
    }
}

/// Finds or builds etcd and kube-apiserver.
fn control_plane(args: &Args) -> anyhow::Result<Assets> {
    if !args.rebuild
        && let Some(dir) = std::env::var_os(ASSETS_ENV).filter(|d| !d.is_empty())
    {
        let assets = Assets::in_dir(&dir).with_context(|| {
            format!(
                "{ASSETS_ENV}={} does not hold working binaries (unset it to build them)",
                PathBuf::from(&dir).display()
            )
        })?;
        progress(&format!(
            "using {ASSETS_ENV}: etcd {}, kube-apiserver {}",
            assets.etcd_version, assets.kubernetes_version
        ));
        return Ok(assets);
    }
    let root = root(args)?;
    let target = root.join(assets_dir_name());
    if !args.rebuild
        && let Ok(assets) = Assets::in_dir(&target)
    {
        progress(&format!(
            "reusing {} (etcd {}, kube-apiserver {})",
            target.display(),
            assets.etcd_version,
            assets.kubernetes_version
        ));
        return Ok(assets);
    }
    build(&root, &target)
}

fn build(root: &Path, target: &Path) -> anyhow::Result<Assets> {
    let go = check_go("build etcd and kube-apiserver")?;
    let started = Instant::now();
    progress(&format!(
        "building kube-apiserver {KUBERNETES_VERSION} and etcd {ETCD_VERSION} with {go} into {}",
        target.display()
    ));
    let staging = root.join(format!("{}.partial", assets_dir_name()));
    if staging.exists() {
        std::fs::remove_dir_all(&staging)
            .with_context(|| format!("removing {}", staging.display()))?;
    }
    std::fs::create_dir_all(&staging).with_context(|| format!("creating {}", staging.display()))?;

    let etcd = GoBinary {
        name: "etcd",
        module: "go.etcd.io/etcd/server/v3",
        version: ETCD_VERSION,
        package: "go.etcd.io/etcd/server/v3",
        replaces: Vec::new(),
        ldflags: Vec::new(),
    };
    let apiserver = kubernetes_binary("kube-apiserver");
    for binary in [&etcd, &apiserver] {
        binary.build(
            &root.join("src").join(binary.name),
            &staging.join(binary.name),
        )?;
    }
    let assets = Assets::in_dir(&staging).context("checking the binaries just built")?;
    if target.exists() {
        std::fs::remove_dir_all(target)
            .with_context(|| format!("removing {}", target.display()))?;
    }
    std::fs::rename(&staging, target)
        .with_context(|| format!("moving {} to {}", staging.display(), target.display()))?;
    progress(&format!(
        "built etcd {} and kube-apiserver {} in {:.0?}",
        assets.etcd_version,
        assets.kubernetes_version,
        started.elapsed()
    ));
    Assets::in_dir(target).context("checking the installed binaries")
}

/// One binary built from a scratch Go module.
struct GoBinary {
    name: &'static str,
    module: &'static str,
    version: &'static str,
    package: &'static str,
    replaces: Vec<String>,
    ldflags: Vec<String>,
}

impl GoBinary {
    /// Writes the scratch module in `src`, resolves its dependencies and builds `out`.
    fn build(&self, src: &Path, out: &Path) -> anyhow::Result<()> {
        let started = Instant::now();
        std::fs::create_dir_all(src).with_context(|| format!("creating {}", src.display()))?;
        let mut go_mod = format!(
            "module operator.dev/envtest/{}\n\ngo {}.{}\n\nrequire {} {}\n",
            self.name, MIN_GO.0, MIN_GO.1, self.module, self.version
        );
        if !self.replaces.is_empty() {
            go_mod.push_str("\nreplace (\n");
            for r in &self.replaces {
                go_mod.push_str(&format!("\t{r}\n"));
            }
            go_mod.push_str(")\n");
        }
        let go_mod_path = src.join("go.mod");
        if std::fs::read_to_string(&go_mod_path).ok().as_deref() != Some(go_mod.as_str()) {
            // A go.sum from another version would only add noise; start over.
            let _ = std::fs::remove_file(src.join("go.sum"));
            std::fs::write(&go_mod_path, &go_mod)
                .with_context(|| format!("writing {}", go_mod_path.display()))?;
        }
        progress(&format!(
            "{}: resolving {}@{} (downloads modules on the first build)",
            self.name, self.package, self.version
        ));
        go(
            src,
            &["get", &format!("{}@{}", self.package, self.version)],
            self.name,
        )?;
        progress(&format!("{}: compiling", self.name));
        let mut ldflags = vec!["-s".to_string(), "-w".to_string()];
        ldflags.extend(self.ldflags.iter().cloned());
        let out_arg = out.display().to_string();
        let ldflags = ldflags.join(" ");
        go(
            src,
            &[
                "build",
                "-trimpath",
                "-ldflags",
                &ldflags,
                "-o",
                &out_arg,
                self.package,
            ],
            self.name,
        )?;
        progress(&format!(
            "{}: built in {:.0?}",
            self.name,
            started.elapsed()
        ));
        Ok(())
    }
}

/// Runs `go args…` in `dir`, forwarding its output line by line, prefixed with the binary being built.
fn go(dir: &Path, args: &[&str], what: &str) -> anyhow::Result<()> {
    go_with(dir, args, what, "-mod=mod")
}

/// [`go`] with the given `GOFLAGS` (`-mod=readonly` builds a module exactly as its go.mod and go.sum pin it).
pub(crate) fn go_with(dir: &Path, args: &[&str], what: &str, goflags: &str) -> anyhow::Result<()> {
    let mut child = Command::new("go")
        .args(args)
        .current_dir(dir)
        .env("CGO_ENABLED", "0")
        .env("GOFLAGS", goflags)
        .env("GOTOOLCHAIN", "local")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("running go {}", args.join(" ")))?;
    let stdout = child.stdout.take();
    let forward_stdout = std::thread::spawn({
        let what = what.to_string();
        move || {
            if let Some(out) = stdout {
                for line in BufReader::new(out).lines().map_while(Result::ok) {
                    eprintln!("  [{what}] {line}");
                }
            }
        }
    });
    let mut last_lines = Vec::new();
    if let Some(err) = child.stderr.take() {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            eprintln!("  [{what}] {line}");
            last_lines.push(line);
            if last_lines.len() > 20 {
                last_lines.remove(0);
            }
        }
    }
    let _ = forward_stdout.join();
    let status = child.wait().context("waiting for go")?;
    if !status.success() {
        bail!(
            "`go {}` for {what} failed ({status}) in {}:\n{}",
            args.join(" "),
            dir.display(),
            last_lines.join("\n")
        );
    }
    Ok(())
}

/// `go version`, or a clear error when Go is missing or too old; `purpose` says what Go is needed for.
pub(crate) fn check_go(purpose: &str) -> anyhow::Result<String> {
    let output = Command::new("go").arg("version").output();
    let output = match output {
        Ok(o) if o.status.success() => o,
        Ok(o) => bail!(
            "`go version` failed: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Err(e) => bail!(
            "Go is needed to {purpose}, but `go` could not be run ({e}). Install Go {}.{} or newer \
             (`apt-get install golang-go` where the release packages one that new){}.",
            MIN_GO.0,
            MIN_GO.1,
            if purpose.contains("kube-apiserver") {
                format!(
                    ", or set {ASSETS_ENV} to a directory that already holds envtest binaries (etcd and \
                     kube-apiserver, e.g. from `setup-envtest use`)"
                )
            } else {
                String::new()
            }
        ),
    };
    let text = String::from_utf8_lossy(&output.stdout).trim().to_string();
    match go_version(&text) {
        Some((version, found)) if found >= MIN_GO => Ok(format!("go{version}")),
        _ => bail!(
            "{text}: Go {}.{} or newer is needed to {purpose} (Kubernetes {KUBERNETES_VERSION})",
            MIN_GO.0,
            MIN_GO.1
        ),
    }
}

/// The version and its (major, minor) from `go version` output, e.g. `go version go1.26.8 linux/amd64`.
fn go_version(text: &str) -> Option<(&str, (u32, u32))> {
    let version = text
        .split_whitespace()
        .filter_map(|w| w.strip_prefix("go"))
        .find(|v| v.starts_with(|c: char| c.is_ascii_digit()))?;
    let mut parts = version
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse::<u32>().ok());
    let major = parts.next()??;
    let minor = parts.next().flatten().unwrap_or(0);
    Some((version, (major, minor)))
}

/// `("1", "35")` from `v1.35.4`.
fn kubernetes_major_minor() -> (String, String) {
    let mut parts = KUBERNETES_VERSION.trim_start_matches('v').split('.');
    (
        parts.next().unwrap_or_default().to_string(),
        parts.next().unwrap_or_default().to_string(),
    )
}

fn progress(message: &str) {
    eprintln!("xtask envtest: {message}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_versions_are_read_from_go_version_output() {
        assert_eq!(
            go_version("go version go1.26.8 linux/amd64"),
            Some(("1.26.8", (1, 26)))
        );
        assert_eq!(
            go_version("go version go1.25rc1 linux/amd64"),
            Some(("1.25rc1", (1, 25)))
        );
        assert_eq!(go_version("go version devel linux/amd64"), None);
        assert!(go_version("go version go1.19.8 linux/amd64").unwrap().1 < MIN_GO);
    }

    #[test]
    fn every_staging_module_is_replaced_once() {
        let mut names = STAGING.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), STAGING.len());
    }

    #[test]
    fn the_kubernetes_version_splits_into_major_and_minor() {
        let (major, minor) = kubernetes_major_minor();
        assert_eq!(
            format!("v{major}.{minor}."),
            KUBERNETES_VERSION[..major.len() + minor.len() + 3]
        );
    }
}
