//! Normalizing kubectl's output (what differs between any two clusters or runs) and comparing two runs line
//! by line.

use std::collections::BTreeMap;

use regex::{Captures, Regex};

use super::run::Step;

/// A known difference: in the steps whose command contains `command`, a line present on one side only that
/// contains `line` (a blank line, when `line` is blank) is accepted. A deviation that accepts nothing fails the test, so a fixed one is noticed.
#[derive(Debug, Clone, Copy)]
pub struct Deviation {
    pub command: &'static str,
    pub line: &'static str,
    pub reason: &'static str,
}

impl Deviation {
    /// Whether the deviation accepts a line: one containing `line`, or, when `line` is blank, a blank line
    /// (every line contains a blank `line`).
    fn covers(&self, line: &str) -> bool {
        if self.line.trim().is_empty() {
            line.trim().is_empty()
        } else {
            line.contains(self.line)
        }
    }
}

/// Rewrites what differs between runs: the namespace and the manifest directory; uids (by ordinal of first
/// appearance); resourceVersions; timestamps (RFC 3339, and the ones `diff -u` prints); IPv4 addresses;
/// generated name suffixes (`parity-gen-xxxxx`); kubectl diff's temporary directories.
pub struct Normalizer {
    replacements: Vec<(String, String)>,
    uid: Regex,
    uids: BTreeMap<String, usize>,
    rules: Vec<(Regex, &'static str)>,
}

impl Normalizer {
    /// A normalizer for a run in namespace `ns` with manifests in `dir`.
    pub fn new(ns: &str, dir: &str) -> Self {
        let rule = |r: &str, to| (Regex::new(r).expect("a valid regex"), to);
        Normalizer {
            replacements: vec![
                (dir.to_string(), "<dir>".into()),
                (ns.to_string(), "<ns>".into()),
            ],
            uid: Regex::new("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
                .expect("a valid regex"),
            uids: BTreeMap::new(),
            rules: vec![
                rule(r#"("?resourceVersion"?: *)"[0-9]+""#, r#"$1"<rv>""#),
                rule(
                    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z",
                    "<time>",
                ),
                rule(
                    r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)? [+-][0-9]{4}",
                    "<time>",
                ),
                rule(
                    r"\b[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\b",
                    "<ip>",
                ),
                rule(
                    r"parity-gen-[bcdfghjklmnpqrstvwxz2456789]{5}\b",
                    "parity-gen-<suffix>",
                ),
                rule(r"(LIVE|MERGED)-[0-9]+", "$1-<n>"),
                rule(
                    r"^[IWEF][0-9]{4} [0-9:.]+ +[0-9]+ ([a-z_]+\.go:)[0-9]+\]",
                    "<klog> $1<line>]",
                ),
            ],
        }
    }

    /// One step as the lines compared: the command, the exit code, then stdout and stderr.
    pub fn step(&mut self, step: &Step) -> Vec<String> {
        let mut lines = vec![format!("$ kubectl {}", self.text(&step.command))];
        lines.push(format!("exit {}", step.code));
        lines.extend(
            self.text(&step.stdout)
                .lines()
                .filter(|l| !other_scenarios_group(l))
                .map(|l| format!("  {l}")),
        );
        let stderr = self.text(&step.stderr);
        lines.extend(
            stderr
                .lines()
                .filter(|l| !is_timeout_race(l))
                .map(|l| format!("  stderr: {l}")),
        );
        lines
    }

    fn text(&mut self, s: &str) -> String {
        s.lines()
            .map(|l| self.line(l))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn line(&mut self, s: &str) -> String {
        let mut s = s.to_string();
        for (from, to) in &self.replacements {
            s = s.replace(from.as_str(), to);
        }
        let uids = &mut self.uids;
        let s = self.uid.replace_all(&s, |c: &Captures<'_>| {
            let n = uids.len() + 1;
            format!("<uid-{}>", uids.entry(c[0].to_string()).or_insert(n))
        });
        let mut s = s.into_owned();
        for (re, to) in &self.rules {
            s = re.replace_all(&s, *to).into_owned();
        }
        s
    }
}

/// Whether a line of discovery output names a test group of the other differential scenarios (`*.example.dev`
/// other than this script's and the shared Widget's): they share the real control plane, so their CRDs come
/// and go there while this script runs.
fn other_scenarios_group(line: &str) -> bool {
    line.split(|c: char| c.is_whitespace() || c == '/')
        .any(|word| {
            word.ends_with(".example.dev")
                && !word.ends_with("parity.example.dev")
                && !word.ends_with("diff.example.dev")
        })
}

/// Whether a line is client-go's log of a watch cut by kubectl wait's own timeout: whether the reflector sees
/// the closed watch before the stop request is a race inside kubectl, on any server.
fn is_timeout_race(line: &str) -> bool {
    line.contains("reflector.go:") && line.contains("context deadline exceeded")
}

/// The lines of `a` and `b` not in their longest common subsequence: (in `a` only, in `b` only).
fn line_diff(a: &[String], b: &[String]) -> (Vec<String>, Vec<String>) {
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let (mut only_a, mut only_b) = (Vec::new(), Vec::new());
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            i += 1;
            j += 1;
        } else if j == m || (i < n && lcs[i + 1][j] >= lcs[i][j + 1]) {
            only_a.push(a[i].clone());
            i += 1;
        } else {
            only_b.push(b[j].clone());
            j += 1;
        }
    }
    (only_a, only_b)
}

/// Compares two runs step by step; returns a report of every difference no deviation accepts, and of the
/// deviations that accepted nothing (empty when the runs agree).
pub fn compare(memory: &[Vec<String>], real: &[Vec<String>], deviations: &[Deviation]) -> String {
    let mut report = String::new();
    if memory.len() != real.len() {
        report.push_str(&format!(
            "  {} steps in memory, {} on kube-apiserver\n",
            memory.len(),
            real.len()
        ));
    }
    let mut used = vec![false; deviations.len()];
    for (m, r) in memory.iter().zip(real) {
        let (only_m, only_r) = line_diff(m, r);
        let mut unexplained = Vec::new();
        for (side, line) in only_m
            .iter()
            .map(|l| ("in-memory", l))
            .chain(only_r.iter().map(|l| ("real     ", l)))
        {
            let accepted = deviations
                .iter()
                .position(|d| m[0].contains(d.command) && d.covers(line));
            match accepted {
                Some(i) => used[i] = true,
                None => unexplained.push(format!("    {side} | {line}\n")),
            }
        }
        if !unexplained.is_empty() {
            report.push_str(&format!("  {}\n", m[0]));
            unexplained.iter().for_each(|l| report.push_str(l));
        }
    }
    for (d, used) in deviations.iter().zip(used) {
        if !used {
            report.push_str(&format!(
                "  deviation {:?} ({:?} in `{}`) no longer observed; remove it from the list and the docs\n",
                d.reason, d.line, d.command
            ));
        }
    }
    report
}

#[test]
fn normalizes_what_differs_between_runs() {
    let mut n = Normalizer::new("envtest-abcde", "/tmp/x");
    let step = Step {
        command: "get cm -n envtest-abcde -f /tmp/x/a.yaml".into(),
        code: 0,
        stdout: "uid: 0b8f7a52-1c2d-4e5f-8a9b-0c1d2e3f4a5b\nresourceVersion: \"123\"\n\"resourceVersion\": \"9\",\ncreationTimestamp: \"2026-01-02T03:04:05Z\"\nclusterIP: 10.0.0.12\nname: parity-gen-x7k2q\n".into(),
        stderr: "W1125 10:18:34.354503   12795 diff.go:723] Object keeps changing\nE1125 10:18:46.199511   13574 reflector.go:166] \"Unhandled Error\" err=\"Failed to watch: context deadline exceeded\"\n".into(),
    };
    assert_eq!(
        n.step(&step),
        vec![
            "$ kubectl get cm -n <ns> -f <dir>/a.yaml",
            "exit 0",
            "  uid: <uid-1>",
            "  resourceVersion: \"<rv>\"",
            "  \"resourceVersion\": \"<rv>\",",
            "  creationTimestamp: \"<time>\"",
            "  clusterIP: <ip>",
            "  name: parity-gen-<suffix>",
            "  stderr: <klog> diff.go:<line>] Object keeps changing",
        ]
    );
}

#[test]
fn compares_line_by_line_with_deviations() {
    let lines = |s: &[&str]| s.iter().map(|l| l.to_string()).collect::<Vec<_>>();
    let m = vec![lines(&["$ kubectl get x", "exit 0", "  a", "  b"])];
    let r = vec![lines(&["$ kubectl get x", "exit 0", "  a", "  c"])];
    assert!(!compare(&m, &r, &[]).is_empty());
    let d = [
        Deviation {
            command: "get x",
            line: "b",
            reason: "test",
        },
        Deviation {
            command: "get x",
            line: "c",
            reason: "test",
        },
    ];
    assert_eq!(compare(&m, &r, &d), "");
    assert!(compare(&m, &m, &d).contains("no longer observed"));
    // A blank deviation line accepts blank lines only.
    let blank = [Deviation {
        command: "get x",
        line: " ",
        reason: "test",
    }];
    let with_blank = vec![lines(&["$ kubectl get x", "exit 0", "  a", "    ", "  b"])];
    assert_eq!(compare(&m, &with_blank, &blank), "");
    assert!(!compare(&m, &r, &blank).is_empty());
}
