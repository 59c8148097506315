//! Running the real kubectl against a served cluster, for the tests that use it as the outside client.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncWriteExt;

/// kubectl on `PATH`, or `None` when it is missing outside CI (with a message). In CI a missing kubectl
/// fails the test.
pub fn kubectl_binary() -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("kubectl"))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "kubectl is not installed; CI must have it"
        );
        eprintln!("SKIPPED: kubectl not found on PATH; install it to run the kubectl tests");
    }
    found
}

/// kubectl with a kubeconfig.
#[derive(Debug, Clone)]
pub struct Kubectl {
    /// The binary.
    pub bin: PathBuf,
    /// The kubeconfig passed with `--kubeconfig`.
    pub kubeconfig: PathBuf,
}

impl Kubectl {
    /// Runs kubectl with `args` (and `stdin`); returns success, stdout and stderr.
    pub async fn run(&self, args: &[&str], stdin: Option<&str>) -> (bool, String, String) {
        let mut cmd = tokio::process::Command::new(&self.bin);
        cmd.arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn().expect("spawn kubectl");
        if let Some(input) = stdin {
            let mut si = child.stdin.take().expect("stdin");
            si.write_all(input.as_bytes()).await.expect("write stdin");
        }
        let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
            .await
            .expect("kubectl finished within 60s")
            .expect("kubectl ran");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Runs kubectl and fails the test unless it succeeds; returns stdout.
    pub async fn ok(&self, args: &[&str]) -> String {
        self.ok_with(args, None).await
    }

    /// Like [`Kubectl::ok`], with standard input.
    pub async fn ok_with(&self, args: &[&str], stdin: Option<&str>) -> String {
        let (ok, out, err) = self.run(args, stdin).await;
        assert!(
            ok,
            "kubectl {} failed:\nstdout: {out}\nstderr: {err}",
            args.join(" ")
        );
        out
    }
}
