//! One control-plane process: spawned so that it dies with the test process, logged to a file, stopped on
//! drop, and explained (binary, flag, log line) when it fails.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock, mpsc};
use std::time::{Duration, Instant};

use super::Error;

/// A running etcd or kube-apiserver.
#[derive(Debug)]
pub(crate) struct Process {
    binary: &'static str,
    path: PathBuf,
    args: Vec<String>,
    log: PathBuf,
    child: Option<Child>,
}

impl Process {
    /// Starts `path` with `args`, stdout and stderr going to `log`.
    pub(crate) fn spawn(
        binary: &'static str,
        path: &Path,
        args: Vec<String>,
        log: PathBuf,
    ) -> Result<Self, Error> {
        let out = File::create(&log).map_err(|source| Error::Io {
            context: format!("creating the {binary} log {}", log.display()),
            source,
        })?;
        let err = out.try_clone().map_err(|source| Error::Io {
            context: format!("opening the {binary} log {}", log.display()),
            source,
        })?;
        let mut cmd = Command::new(path);
        cmd.args(&args).stdin(Stdio::null()).stdout(out).stderr(err);
        die_with_parent(&mut cmd);
        let child = spawn_from_lasting_thread(cmd).map_err(|source| Error::Spawn {
            binary,
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Process {
            binary,
            path: path.to_path_buf(),
            args,
            log,
            child: Some(child),
        })
    }

    /// The binary's name (`etcd`, `kube-apiserver`).
    pub(crate) fn binary(&self) -> &'static str {
        self.binary
    }

    /// The process id while it runs.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The arguments it was started with.
    pub(crate) fn args(&self) -> &[String] {
        &self.args
    }

    /// The path of its log file.
    pub(crate) fn log(&self) -> &Path {
        &self.log
    }

    /// The path of the binary.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// `Err(Error::Exited)` when the process has ended.
    pub(crate) fn check_running(&mut self) -> Result<(), Error> {
        let status = match self.child.as_mut().map(Child::try_wait) {
            None => "stopped".to_string(),
            Some(Ok(None)) => return Ok(()),
            Some(Ok(Some(status))) => status.to_string(),
            Some(Err(e)) => e.to_string(),
        };
        self.child = None;
        let log = read_log(&self.log);
        Err(match address_in_use(&log, &self.args) {
            Some((flag, port)) => Error::PortInUse {
                binary: self.binary,
                flag,
                port,
            },
            None => Error::Exited {
                binary: self.binary,
                status,
                line: telling_line(&log),
                log: self.log.clone(),
            },
        })
    }

    /// The error for a process that did not become ready in `timeout`.
    pub(crate) fn not_ready(&self, timeout: Duration, waiting_for: String) -> Error {
        Error::NotReady {
            binary: self.binary,
            timeout,
            waiting_for,
            line: telling_line(&read_log(&self.log)),
            log: self.log.clone(),
        }
    }

    /// Asks the process to stop (SIGTERM), then kills it if it is still running after `grace`.
    pub(crate) fn stop(&mut self, grace: Duration) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        if let Ok(None) = child.try_wait() {
            let pid = rustix::process::Pid::from_child(&child);
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
            let deadline = Instant::now() + grace;
            while Instant::now() < deadline {
                if !matches!(child.try_wait(), Ok(None)) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        if let Ok(None) = child.try_wait() {
            tracing::debug!(binary = self.binary, "killing after the stop grace period");
            let _ = child.kill();
        }
        let _ = child.wait();
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.stop(Duration::from_secs(3));
    }
}

/// Linux: the child gets SIGKILL when the thread that spawned it ends. Children are spawned from one
/// thread that lives as long as the process, so a test binary that is killed takes its control plane with it.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn die_with_parent(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the child between fork and exec; it only makes one prctl system call,
    // which is async-signal-safe, and allocates nothing.
    unsafe {
        cmd.pre_exec(|| {
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
                .map_err(io::Error::from)
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_cmd: &mut Command) {}

type SpawnJob = (Command, mpsc::Sender<io::Result<Child>>);

/// Spawns `cmd` from a thread that never ends, so the parent-death signal fires only when the process ends
/// (it is tied to the spawning thread, and test threads and blocking-pool threads come and go).
fn spawn_from_lasting_thread(cmd: Command) -> io::Result<Child> {
    static SPAWNER: OnceLock<Mutex<mpsc::Sender<SpawnJob>>> = OnceLock::new();
    let spawner = SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnJob>();
        let started = std::thread::Builder::new()
            .name("envtest-spawner".into())
            .spawn(move || {
                for (mut cmd, reply) in rx {
                    let _ = reply.send(cmd.spawn());
                }
            });
        if let Err(e) = started {
            tracing::warn!(error = %e, "no spawner thread; control-plane processes may outlive a killed test");
        }
        Mutex::new(tx)
    });
    let (reply_tx, reply_rx) = mpsc::channel();
    let sent = spawner
        .lock()
        .map_err(|_| io::Error::other("spawner lock poisoned"))?
        .send((cmd, reply_tx));
    match sent {
        Ok(()) => reply_rx
            .recv()
            .map_err(|_| io::Error::other("the spawner thread ended"))?,
        // No spawner thread: spawn here.
        Err(mpsc::SendError((mut cmd, _))) => cmd.spawn(),
    }
}

/// The whole log, or an empty string when it cannot be read.
pub(crate) fn read_log(path: &Path) -> String {
    std::fs::read(path)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}

/// The last `count` non-empty lines of the log at `path`, or a note that it is empty or unreadable.
pub(crate) fn last_lines(path: &Path, count: usize) -> String {
    let log = read_log(path);
    let lines: Vec<&str> = log.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return "(the log is empty)".to_string();
    }
    lines[lines.len().saturating_sub(count)..].join("\n")
}

/// The log line that best explains a failure: Go's flag errors (`Error: unknown flag: --x`), else the last
/// klog error or fatal line (`E1122 …`, `F1122 …`) or etcd's JSON error line, else the last line.
pub(crate) fn telling_line(log: &str) -> String {
    let lines: Vec<&str> = log.lines().filter(|l| !l.trim().is_empty()).collect();
    let flag_error = lines.iter().find(|l| l.starts_with("Error:"));
    let klog_error = lines.iter().rev().find(|l| {
        let mut chars = l.chars();
        matches!(chars.next(), Some('E' | 'F')) && chars.next().is_some_and(|c| c.is_ascii_digit())
    });
    let json_error = lines.iter().rev().find(|l| {
        l.contains(r#""level":"fatal""#)
            || l.contains(r#""level":"error""#)
            || l.contains(r#""level":"panic""#)
    });
    flag_error
        .or(klog_error)
        .or(json_error)
        .or(lines.last())
        .map(|l| l.trim().to_string())
        .unwrap_or_else(|| "(the log is empty)".to_string())
}

/// When the log says a listen address was in use, the flag (from `args`) that named the port, and the port.
fn address_in_use(log: &str, args: &[String]) -> Option<(String, u16)> {
    let line = log.lines().find(|l| l.contains("address already in use"))?;
    args.iter().find_map(|arg| {
        let (flag, value) = arg.split_once('=')?;
        let port: u16 = value
            .rsplit(':')
            .next()?
            .trim_end_matches('/')
            .parse()
            .ok()
            .or_else(|| value.parse().ok())?;
        let needle = format!(":{port}");
        line.contains(&needle).then(|| (flag.to_string(), port))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_error_explains_a_failed_start() {
        let log = "Error: unknown flag: --nope\nUsage:\n  kube-apiserver [flags]\n";
        assert_eq!(telling_line(log), "Error: unknown flag: --nope");
    }

    #[test]
    fn the_last_klog_error_explains_a_failed_start() {
        let log = "I1122 05:00:00.000 1 server.go:1] starting\nE1122 05:00:01.000 1 run.go:72] \"command failed\" err=\"open /x: no such file\"\nI1122 05:00:02.000 1 x.go:1] bye\n";
        assert!(telling_line(log).starts_with("E1122"));
    }

    #[test]
    fn an_empty_log_says_so() {
        assert_eq!(telling_line(""), "(the log is empty)");
    }

    #[test]
    fn a_port_in_use_names_the_flag() {
        let args = vec![
            "--listen-client-urls=http://127.0.0.1:2379".to_string(),
            "--secure-port=6443".to_string(),
        ];
        let log = "E1122 failed to listen on 127.0.0.1:6443: listen tcp 127.0.0.1:6443: bind: address already in use";
        assert_eq!(
            address_in_use(log, &args),
            Some(("--secure-port".to_string(), 6443))
        );
        let log =
            r#"{"level":"fatal","msg":"listen tcp 127.0.0.1:2379: bind: address already in use"}"#;
        assert_eq!(
            address_in_use(log, &args),
            Some(("--listen-client-urls".to_string(), 2379))
        );
    }
}
