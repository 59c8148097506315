//! `cargo xtask e2e-apimachinery`: Kubernetes' own API-machinery e2e specs (`test/e2e/apimachinery` of
//! `k8s.io/kubernetes`, built by `binary.rs` from the test-main package `xtask/e2e`), run against the real
//! control plane and the embedded cluster, one process per spec (`run.rs`), compared in a table and
//! against the expected failures of `xtask/e2e/expected.md` (`expected.rs`).

mod binary;
mod expected;
mod run;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use kubewright_envtest::{Assets, ControlPlane};

use binary::Spec;
use expected::{Expected, Fails};
use run::{ContentType, Outcome, Runner};

/// The specs left out unless `--skip` says otherwise: those the e2e framework leaves out by default (flaky,
/// behind a feature), those that break the cluster on purpose, and those marked slow.
const DEFAULT_SKIP: &str = r"\[Flaky\]|\[Feature:.+\]|\[Disruptive\]|\[Slow\]";

/// Which servers to run the specs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Servers {
    Both,
    Real,
    Embedded,
}

/// Options of `cargo xtask e2e-apimachinery`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Run only the specs whose full text matches this Go regular expression (ginkgo's focus).
    #[arg(long)]
    focus: Option<String>,
    /// Leave out the specs whose full text matches this Go regular expression (ginkgo's skip).
    #[arg(long, default_value = DEFAULT_SKIP)]
    skip: String,
    /// Leave out the specs `xtask/e2e/expected.md` lists as failing on the bare control plane.
    #[arg(long)]
    runnable_only: bool,
    /// The CI part: only the specs `xtask/e2e/expected.md` expects to pass on both servers, less those it
    /// leaves out of the CI part for their run time, against the embedded cluster alone, with `--check`.
    #[arg(long, conflicts_with_all = ["server", "runnable_only"])]
    ci: bool,
    /// Which servers to run them against.
    #[arg(long, value_enum, default_value_t = Servers::Both)]
    server: Servers,
    /// What the specs' clients send: client-go's default (protobuf) or JSON, for diagnosis.
    #[arg(long, value_enum, default_value_t = ContentType::Protobuf)]
    content_type: ContentType,
    /// Seconds after which a spec is interrupted (ginkgo's suite timeout, one spec per process).
    #[arg(long, default_value_t = 90)]
    spec_timeout: u64,
    /// How many specs run at once (`[Serial]` ones always run alone).
    #[arg(long, default_value_t = 3)]
    jobs: usize,
    /// Fail unless every spec that fails on a server is listed in `xtask/e2e/expected.md` for it, and every
    /// listed spec that ran fails there.
    #[arg(long)]
    check: bool,
    /// Where each spec's output and ginkgo report go (default: target/e2e-apimachinery).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Keep the test binary here instead of the envtest cache directory.
    #[arg(long)]
    cache_dir: Option<PathBuf>,
    /// Build the test binary even when the cache holds it.
    #[arg(long)]
    rebuild: bool,
    /// Build (or find) the test binary and stop, running no spec: CI builds it while other work runs.
    #[arg(long, conflicts_with_all = ["focus", "runnable_only", "ci", "check"])]
    build_only: bool,
}

/// Options of the hidden `serve-embedded` task: the embedded cluster as a process of its own.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Write the kubeconfig here once serving.
    #[arg(long)]
    write_kubeconfig: PathBuf,
}

/// Builds (or finds) the test binary, runs the selection, prints the table, and checks it.
pub fn run(mut args: Args) -> anyhow::Result<()> {
    let started = Instant::now();
    let binary = binary::find_or_build(args.cache_dir.as_deref(), args.rebuild)?;
    if args.build_only {
        progress(&format!(
            "test binary {}{}",
            binary.path.display(),
            binary
                .built_in
                .map(|built| format!(", built in {built:.0?}"))
                .unwrap_or_default()
        ));
        return Ok(());
    }
    let out = match &args.out {
        Some(out) => out.clone(),
        None => Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join("target")
            .join("e2e-apimachinery"),
    };
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let out = out.canonicalize().context("the output folder")?;
    let expected = Expected::read(&binary::package_dir().join("expected.md"))?;
    let mut specs = binary::list(&binary.path, args.focus.as_deref(), &args.skip, &out)?;
    if args.runnable_only {
        specs.retain(|s| expected.fails(&s.text) != Some(Fails::Real));
    }
    if args.ci {
        specs.retain(|s| expected.fails(&s.text).is_none());
        args.server = Servers::Embedded;
        args.check = true;
    }
    if specs.is_empty() {
        bail!("no spec selected");
    }
    progress(&format!(
        "{} specs selected; client content type {:?}",
        specs.len(),
        args.content_type
    ));
    let runtime = tokio::runtime::Runtime::new().context("starting a tokio runtime")?;
    let mut columns = Vec::new();
    for server in [Servers::Real, Servers::Embedded] {
        if args.server != Servers::Both && args.server != server {
            continue;
        }
        let name = if server == Servers::Real {
            "real"
        } else {
            "embedded"
        };
        let logs = out.join(name);
        if logs.exists() {
            std::fs::remove_dir_all(&logs)
                .with_context(|| format!("clearing {}", logs.display()))?;
        }
        std::fs::create_dir_all(&logs).with_context(|| format!("creating {}", logs.display()))?;
        let column_started = Instant::now();
        let outcomes = runtime.block_on(against(server, &binary.path, &specs, &args, &logs))?;
        progress(&format!(
            "{name}: {} of {} passed in {:.0?}",
            outcomes.iter().filter(|o| o.passed()).count(),
            specs.len(),
            column_started.elapsed()
        ));
        columns.push((name, server, outcomes));
    }
    print_table(&specs, &columns, &expected);
    let problems = compare(&specs, &columns, &expected);
    println!();
    if let Some(built) = binary.built_in {
        println!("test binary built in {built:.0?}");
    }
    println!(
        "total {:.0?}; each spec's output and report: {}/{{real,embedded}}/NNN.log",
        started.elapsed(),
        out.display()
    );
    if problems.is_empty() {
        println!(
            "every failure is listed in xtask/e2e/expected.md, and every listed spec that ran fails"
        );
        return Ok(());
    }
    println!("\ndifferences from xtask/e2e/expected.md:");
    for p in &problems {
        println!("- {p}");
    }
    if args.check {
        bail!("{} specs differ from xtask/e2e/expected.md", problems.len());
    }
    Ok(())
}

/// Starts `server`, runs every spec against it and stops it.
async fn against(
    server: Servers,
    binary: &Path,
    specs: &[Spec],
    args: &Args,
    logs: &Path,
) -> anyhow::Result<Vec<Outcome>> {
    let kubeconfig = logs.join("kubeconfig");
    let mut control_plane = None;
    let mut embedded = None;
    if server == Servers::Real {
        let assets = match Assets::locate() {
            Ok(assets) => assets,
            Err(e) if e.is_no_assets() => {
                progress(&format!("{e}; building them now"));
                crate::build::run(&crate::build::Args::default())?
            }
            Err(e) => return Err(e.into()),
        };
        let cp = ControlPlane::builder().assets(assets).start().await?;
        cp.write_kubeconfig(&kubeconfig)?;
        progress(&format!(
            "real: kube-apiserver {} at {}",
            cp.assets().kubernetes_version,
            cp.url()
        ));
        control_plane = Some(cp);
    } else {
        embedded = Some(serve_embedded(&kubeconfig, logs).await?);
    }
    let runner = Arc::new(Runner {
        binary: binary.to_path_buf(),
        kubeconfig,
        content_type: args.content_type,
        timeout: Duration::from_secs(args.spec_timeout),
        logs: logs.to_path_buf(),
    });
    let outcomes = run_all(&runner, specs, args.jobs.max(1)).await;
    if let Some(cp) = control_plane {
        cp.stop();
    }
    if let Some(mut child) = embedded {
        let _ = child.kill().await;
    }
    Ok(outcomes)
}

/// Runs the specs that are not `[Serial]` `jobs` at a time, then the `[Serial]` ones alone.
async fn run_all(runner: &Arc<Runner>, specs: &[Spec], jobs: usize) -> Vec<Outcome> {
    let mut outcomes = vec![Outcome::Broken("not run".into()); specs.len()];
    let semaphore = Arc::new(tokio::sync::Semaphore::new(jobs));
    let mut tasks = tokio::task::JoinSet::new();
    let report = |index: usize, spec: &Spec, outcome: &Outcome, took: Duration| {
        progress(&format!(
            "[{}/{}] {} ({took:.0?}) {}",
            index + 1,
            specs.len(),
            outcome.cell(),
            spec.text
        ));
    };
    for (index, spec) in specs.iter().enumerate().filter(|(_, s)| !s.serial) {
        let (runner, spec, semaphore) = (runner.clone(), spec.clone(), semaphore.clone());
        tasks.spawn(async move {
            let _permit = semaphore.acquire_owned().await;
            let (outcome, took) = runner.run(index, &spec).await;
            (index, outcome, took)
        });
    }
    while let Some(joined) = tasks.join_next().await {
        if let Ok((index, outcome, took)) = joined {
            report(index, &specs[index], &outcome, took);
            outcomes[index] = outcome;
        }
    }
    for (index, spec) in specs.iter().enumerate().filter(|(_, s)| s.serial) {
        let (outcome, took) = runner.run(index, spec).await;
        report(index, spec, &outcome, took);
        outcomes[index] = outcome;
    }
    outcomes
}

/// Starts this binary's `serve-embedded` task and waits for its kubeconfig.
async fn serve_embedded(kubeconfig: &Path, logs: &Path) -> anyhow::Result<tokio::process::Child> {
    let exe = std::env::current_exe().context("finding the xtask binary")?;
    let log_path = logs.join("embedded-server.log");
    let log = std::fs::File::create(&log_path)
        .with_context(|| format!("creating {}", log_path.display()))?;
    let mut child = tokio::process::Command::new(exe)
        .arg("serve-embedded")
        .arg("--write-kubeconfig")
        .arg(kubeconfig)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .kill_on_drop(true)
        .spawn()
        .context("starting the embedded cluster")?;
    let deadline = Instant::now() + Duration::from_secs(30);
    while !kubeconfig.exists() {
        if let Some(status) = child.try_wait()? {
            bail!(
                "the embedded cluster exited ({status}); see {}",
                log_path.display()
            );
        }
        if Instant::now() > deadline {
            bail!(
                "the embedded cluster wrote no kubeconfig in 30 s; see {}",
                log_path.display()
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    progress(&format!("embedded: serving, log {}", log_path.display()));
    Ok(child)
}

/// The hidden `serve-embedded` task: the embedded cluster, with its controllers, over HTTP until killed.
pub fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Runtime::new().context("starting a tokio runtime")?;
    runtime.block_on(async move {
        let server = kubewright_apiserver::ApiServer::builder()
            .request_log(false)
            .build();
        let serving = server
            .serve(([127, 0, 0, 1], 0).into())
            .await
            .context("listening")?;
        // Written whole under another name first, so the runner never reads half a file.
        let partial = args.write_kubeconfig.with_extension("partial");
        serving.write_kubeconfig(&partial)?;
        std::fs::rename(&partial, &args.write_kubeconfig)?;
        eprintln!("serving the embedded cluster at {}", serving.url());
        crate::control_plane::shutdown_signal().await;
        serving.shutdown(Duration::from_secs(5)).await;
        anyhow::Ok(())
    })
}

/// Prints `spec | real | embedded` and the counts.
fn print_table(specs: &[Spec], columns: &[(&str, Servers, Vec<Outcome>)], expected: &Expected) {
    print!("| spec |");
    for (name, _, _) in columns {
        print!(" {name} |");
    }
    println!(" expected |");
    print!("| --- |");
    for _ in columns {
        print!(" --- |");
    }
    println!(" --- |");
    for (i, spec) in specs.iter().enumerate() {
        print!("| {} |", spec.text.replace('|', "\\|"));
        for (_, _, outcomes) in columns {
            print!(" {} |", outcomes[i].cell());
        }
        let listed = match expected.fails(&spec.text) {
            Some(Fails::Embedded) => "fails on embedded",
            Some(Fails::Real) => "fails on bare real",
            Some(Fails::Slow) => "not in the CI part",
            None => "",
        };
        println!(" {listed} |");
    }
    println!();
    println!("{} specs selected", specs.len());
    for (name, _, outcomes) in columns {
        let count = |cell: &str| outcomes.iter().filter(|o| o.cell() == cell).count();
        println!(
            "{name}: {} passed, {} failed, {} timed out, {} skipped, {} broken",
            count("pass"),
            count("FAIL"),
            count("timeout"),
            count("skip"),
            count("broken")
        );
    }
    if let [(_, _, real), (_, _, embedded)] = columns {
        let both = (0..specs.len())
            .filter(|&i| real[i].passed() && embedded[i].passed())
            .count();
        let real_only = (0..specs.len())
            .filter(|&i| real[i].passed() && !embedded[i].passed())
            .count();
        let embedded_only = (0..specs.len())
            .filter(|&i| !real[i].passed() && embedded[i].passed())
            .count();
        println!(
            "pass on both: {both}; on real only: {real_only}; on embedded only: {embedded_only}"
        );
    }
    println!("\nfailures:");
    for (name, _, outcomes) in columns {
        for (i, outcome) in outcomes.iter().enumerate() {
            if !outcome.passed() {
                println!("- {name} [{i:03}] {}: {outcome}", specs[i].text);
            }
        }
    }
}

/// Where the outcomes differ from `expected.md`.
fn compare(
    specs: &[Spec],
    columns: &[(&str, Servers, Vec<Outcome>)],
    expected: &Expected,
) -> Vec<String> {
    let real = columns.iter().find(|c| c.1 == Servers::Real).map(|c| &c.2);
    let embedded = columns
        .iter()
        .find(|c| c.1 == Servers::Embedded)
        .map(|c| &c.2);
    let mut problems = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        // A spec left out of the CI part is expected to pass everywhere.
        let listed = expected
            .fails(&spec.text)
            .filter(|fails| *fails != Fails::Slow);
        let real = real.map(|r| &r[i]);
        let embedded = embedded.map(|e| &e[i]);
        match (listed, real, embedded) {
            (Some(Fails::Real), Some(r), _) if r.passed() => {
                problems.push(format!(
                    "`{}` passes on the real control plane but is listed as failing there",
                    spec.text
                ));
            }
            (Some(Fails::Embedded), Some(r), _) if !r.passed() => {
                problems.push(format!(
                    "`{}` fails on the real control plane ({r}), not only on the embedded cluster",
                    spec.text
                ));
            }
            (Some(Fails::Embedded), _, Some(e)) if e.passed() => {
                problems.push(format!(
                    "`{}` passes on the embedded cluster but is listed as failing there",
                    spec.text
                ));
            }
            (None, Some(r), _) if !r.passed() => {
                problems.push(format!(
                    "`{}` fails on the real control plane and is not listed: {r}",
                    spec.text
                ));
            }
            (None, real, Some(e)) if !e.passed() && real.is_none_or(Outcome::passed) => {
                problems.push(format!(
                    "`{}` fails on the embedded cluster and is not listed: {e}",
                    spec.text
                ));
            }
            _ => {}
        }
    }
    problems
}

fn progress(message: &str) {
    eprintln!("xtask e2e-apimachinery: {message}");
}
