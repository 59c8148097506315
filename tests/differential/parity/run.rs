//! Running the parity script on one cluster: each line is one kubectl command, its exit code, standard output
//! and standard error recorded as one step.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::process::{Child, Command};

/// One command and what it printed.
#[derive(Debug, Clone)]
pub struct Step {
    /// The script line (after `{dir}` is filled in), as the report shows it.
    pub command: String,
    /// The exit code (`-1` when killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// A cluster kubectl talks to: the binary, a kubeconfig whose current context has the test's namespace.
pub struct Cluster {
    pub bin: PathBuf,
    pub kubeconfig: PathBuf,
    /// The namespace, for `{ns}` in the script.
    pub ns: String,
    /// `KUBE_EDITOR` for `kubectl edit` (see [`write_editor`]).
    pub editor: PathBuf,
}

/// Writes the editor `kubectl edit` runs: a script that sets the data key `a` to `"edited"`.
pub fn write_editor(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("editor.sh");
    std::fs::write(
        &path,
        "#!/bin/sh\nsed -i 's/^  a: \"1\"$/  a: edited/' \"$1\"\n",
    )
    .expect("the editor script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .expect("the editor script is executable");
    path
}

/// The words of a script line: split at whitespace, except inside single quotes (which are removed).
pub fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut started = false;
    for c in line.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                started = true;
            }
            c if c.is_whitespace() && !quoted => {
                if started {
                    out.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            c => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        out.push(word);
    }
    out
}

impl Cluster {
    fn command(&self, args: &[String]) -> Command {
        let mut cmd = Command::new(&self.bin);
        // A cache of its own per server: kubectl keys its discovery and OpenAPI cache by host and port, and
        // a port another server used before (another run, another engineer) would answer from its cache.
        cmd.arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--cache-dir")
            .arg(self.kubeconfig.with_extension("cache"))
            .args(args)
            .env("KUBE_EDITOR", &self.editor)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        cmd
    }

    /// Runs the script (`{dir}` stands for `dir`, `{ns}` for the namespace): one command a line; blank lines and `#` comments are skipped. A line starting with `&`
    /// starts its command in the background (its step is recorded at the next `join` line, in the order the
    /// background commands were started); three seconds pass before the next line runs, so that a background
    /// `kubectl wait` is watching before the change it waits for.
    pub async fn run(&self, script: &str, dir: &Path) -> Vec<Step> {
        let mut steps = Vec::new();
        let mut background: Vec<(String, Child)> = Vec::new();
        for line in script.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if line == "join" {
                for (command, child) in background.drain(..) {
                    steps.push(finish(command, child).await);
                }
                continue;
            }
            let line = line
                .replace("{dir}", &dir.display().to_string())
                .replace("{ns}", &self.ns);
            let (line, in_background) = match line.strip_prefix('&') {
                Some(rest) => (rest.trim().to_string(), true),
                None => (line, false),
            };
            let child = self
                .command(&words(&line))
                .spawn()
                .unwrap_or_else(|e| panic!("running kubectl {line}: {e}"));
            if in_background {
                background.push((line, child));
                tokio::time::sleep(Duration::from_secs(3)).await;
            } else {
                steps.push(finish(line, child).await);
            }
        }
        assert!(background.is_empty(), "the script ends without a `join`");
        steps
    }
}

async fn finish(command: String, child: Child) -> Step {
    let out = tokio::time::timeout(Duration::from_secs(90), child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("kubectl {command} did not finish within 90s"))
        .unwrap_or_else(|e| panic!("kubectl {command}: {e}"));
    Step {
        command,
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn words_split_at_whitespace_outside_single_quotes() {
    assert_eq!(
        words(r#"patch cm a -p '{"data": {"k": "v"}}'  --type=merge"#),
        vec![
            "patch",
            "cm",
            "a",
            "-p",
            r#"{"data": {"k": "v"}}"#,
            "--type=merge"
        ]
    );
    assert_eq!(
        words("get cm -o jsonpath=''"),
        vec!["get", "cm", "-o", "jsonpath="]
    );
}
