//! The audit of writes that proves a sharded run had no two writers: kube-apiserver's audit log (JSON lines),
//! each write attributed to the replica whose impersonated user sent it, checked against the owner each parent
//! had at that moment by its shard label.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use anyhow::{Context, bail};
use serde_json::Value;

/// The audit policy: the protocol's label patches of the parents with their bodies (the new owner is in
/// them), every other write with its metadata, nothing else.
pub(super) fn policy(plural: &str) -> String {
    format!(
        r#"apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Request
  verbs: ["patch"]
  resources: [{{group: "example.dev", resources: ["{plural}"]}}]
- level: Metadata
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
- level: None
"#
    )
}

/// The label naming a parent's owner (`kubewright::sharding::SHARD_LABEL`).
const SHARD_LABEL: &str = "sharding.kubewright.dev/shard";
/// The field manager of the protocol's label writes (`kubewright::sharding::FIELD_MANAGER`).
const PROTOCOL: &str = "fieldManager=kubewright-sharding";

/// One write of the log.
#[derive(Debug, Clone)]
pub(super) struct Write {
    user: String,
    verb: String,
    resource: String,
    subresource: Option<String>,
    name: String,
    code: u16,
    received: String,
    /// When the response was complete (the received time when the log has no later stage).
    completed: String,
    protocol: bool,
    /// The shard label the body sets, for a protocol patch of a parent.
    sets_owner: Option<String>,
}

fn parse(line: &str) -> Option<Write> {
    let v: Value = serde_json::from_str(line).ok()?;
    let object = &v["objectRef"];
    let user = v["impersonatedUser"]["username"]
        .as_str()
        .or_else(|| v["user"]["username"].as_str())?
        .to_string();
    let labels = &v["requestObject"]["metadata"]["labels"];
    Some(Write {
        user,
        verb: v["verb"].as_str()?.to_string(),
        resource: object["resource"].as_str()?.to_string(),
        subresource: object["subresource"].as_str().map(str::to_string),
        name: object["name"].as_str().unwrap_or_default().to_string(),
        code: u16::try_from(v["responseStatus"]["code"].as_u64().unwrap_or(0)).unwrap_or(0),
        received: v["requestReceivedTimestamp"].as_str()?.to_string(),
        completed: v["stageTimestamp"]
            .as_str()
            .or_else(|| v["requestReceivedTimestamp"].as_str())?
            .to_string(),
        protocol: v["requestURI"]
            .as_str()
            .is_some_and(|u| u.contains(PROTOCOL)),
        sets_owner: labels[SHARD_LABEL].as_str().map(str::to_string),
    })
}

/// The writes of the audit log at `path` and of the files kube-apiserver rotated out of it before
/// (`<stem>-<time>.<ext>` in the same directory: it rotates at 100 MB even with `--audit-log-maxsize=0`),
/// oldest first.
pub(super) fn writes(path: &Path) -> anyhow::Result<Vec<Write>> {
    let (Some(dir), Some(stem), Some(ext)) = (
        path.parent(),
        path.file_stem().and_then(|s| s.to_str()),
        path.extension().and_then(|s| s.to_str()),
    ) else {
        bail!("not an audit log path: {}", path.display());
    };
    let mut rotated: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.starts_with(&format!("{stem}-")) && n.ends_with(&format!(".{ext}"))
            })
        })
        .collect();
    // The rotation time in each name sorts them.
    rotated.sort();
    rotated.push(path.to_path_buf());
    let mut writes = Vec::new();
    for file in rotated {
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("reading the audit log {}", file.display()))?;
        writes.extend(text.lines().filter_map(parse));
    }
    Ok(writes)
}

/// What the audit shows.
#[derive(Debug, Default)]
pub(super) struct Findings {
    /// Writes of the replicas to parents and children, protocol writes apart.
    pub(super) writes: usize,
    /// The protocol's label writes.
    pub(super) protocol_writes: usize,
    /// Writes by a replica to a parent (or its child) it did not own then.
    pub(super) foreign: Vec<String>,
    /// Objects created more than once.
    pub(super) created_twice: Vec<String>,
    /// Writes answered 409, by verb and resource.
    pub(super) conflicts: BTreeMap<String, usize>,
    /// Writes per replica.
    pub(super) by_replica: BTreeMap<String, usize>,
}

/// Checks every write of a replica (a user starting with `replica_prefix`) to a parent of `plural` or a child
/// of `children` (named as its parent) against the owner the parent had when the write was received: the value of its shard label after the last protocol write received before.
/// A relabel takes effect when it is committed, between its receipt and its completion, and a new owner's
/// writes follow its commit (the new owner saw it on a watch), so they are received after the relabel was;
/// the completion is no bound (the watch event can reach the new owner, and its write the server, before the
/// relabel's response is written). RFC 3339 timestamps with microseconds compare as strings.
pub(super) fn check(
    writes: &[Write],
    plural: &str,
    children: &[&str],
    replica_prefix: &str,
) -> Findings {
    // Each parent's owners over time: (completed, owner).
    let mut owners: HashMap<&str, Vec<(&str, &str)>> = HashMap::new();
    for w in writes {
        if w.protocol
            && w.resource == plural
            && (200..300).contains(&w.code)
            && let Some(owner) = &w.sets_owner
        {
            owners
                .entry(w.name.as_str())
                .or_default()
                .push((w.received.as_str(), owner.as_str()));
        }
    }
    for timeline in owners.values_mut() {
        timeline.sort();
    }
    let mut findings = Findings::default();
    let mut created: HashMap<(String, String), usize> = HashMap::new();
    for w in writes {
        let relevant = w.resource == plural || children.contains(&w.resource.as_str());
        if !relevant || !w.user.starts_with(replica_prefix) {
            continue;
        }
        if w.code == 409 {
            *findings
                .conflicts
                .entry(format!("{} {}", w.verb, w.resource))
                .or_default() += 1;
        }
        if w.protocol {
            findings.protocol_writes += 1;
            continue;
        }
        findings.writes += 1;
        *findings.by_replica.entry(w.user.clone()).or_default() += 1;
        if w.verb == "create" && w.subresource.is_none() && (200..300).contains(&w.code) {
            *created
                .entry((w.resource.clone(), w.name.clone()))
                .or_default() += 1;
        }
        let owner = owners.get(w.name.as_str()).and_then(|timeline| {
            timeline
                .iter()
                .take_while(|(at, _)| *at < w.received.as_str())
                .last()
                .map(|(_, owner)| *owner)
        });
        let replica = &w.user[replica_prefix.len()..];
        if owner != Some(replica) {
            findings.foreign.push(format!(
                "{} {} {}{} {} at {} (owner then: {owner:?})",
                w.user,
                w.verb,
                w.resource,
                w.subresource
                    .as_deref()
                    .map(|s| format!("/{s}"))
                    .unwrap_or_default(),
                w.name,
                w.received
            ));
        }
    }
    findings.created_twice = created
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|((resource, name), n)| format!("{resource} {name}: {n} creates"))
        .collect();
    findings.created_twice.sort();
    findings
}

/// One replica's membership Lease renewals, as kube-apiserver's audit log shows them.
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct Renewals {
    /// Successful writes of the Lease.
    pub(super) written: usize,
    /// Writes answered with an error.
    pub(super) failed: usize,
    /// The longest a write took in kube-apiserver (received to response complete), in seconds.
    pub(super) slowest: f64,
    /// The longest time between two successful writes received, in seconds.
    pub(super) longest_gap: f64,
    /// When the last successful write was received.
    pub(super) last: String,
}

/// Each replica's renewals of its membership Lease (`<group>-<replica>`, written by user
/// `<replica_prefix><replica>`): how long kube-apiserver took over them and the longest gap between two. A
/// replica that lost its Lease shows whether the server was slow to answer (a long write) or the renewals did
/// not reach it (a long gap of quick writes).
pub(super) fn renewals(
    writes: &[Write],
    group: &str,
    replica_prefix: &str,
) -> anyhow::Result<BTreeMap<String, Renewals>> {
    use k8s_openapi::jiff::Timestamp;
    let mut out: BTreeMap<String, Renewals> = BTreeMap::new();
    let mut previous: BTreeMap<String, Timestamp> = BTreeMap::new();
    for w in writes {
        let Some(replica) = w.user.strip_prefix(replica_prefix) else {
            continue;
        };
        if w.resource != "leases" || w.name != format!("{group}-{replica}") {
            continue;
        }
        let received: Timestamp = w.received.parse()?;
        let completed: Timestamp = w.completed.parse()?;
        let r = out.entry(replica.to_string()).or_default();
        r.slowest = r
            .slowest
            .max(completed.duration_since(received).as_secs_f64());
        if !(200..300).contains(&w.code) {
            r.failed += 1;
            continue;
        }
        r.written += 1;
        if let Some(before) = previous.insert(replica.to_string(), received) {
            r.longest_gap = r
                .longest_gap
                .max(received.duration_since(before).as_secs_f64());
        }
        r.last = w.received.clone();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(user: &str, verb: &str, resource: &str, name: &str, at: &str, extra: &str) -> String {
        format!(
            r#"{{"verb":"{verb}","user":{{"username":"admin"}},"impersonatedUser":{{"username":"{user}"}},"objectRef":{{"resource":"{resource}","name":"{name}"}},"responseStatus":{{"code":200}},"requestReceivedTimestamp":"{at}","stageTimestamp":"{at}"{extra}}}"#
        )
    }

    fn relabel(user: &str, name: &str, at: &str, to: &str) -> String {
        line(
            user,
            "patch",
            "webapps",
            name,
            at,
            &format!(
                r#","requestURI":"/apis/x?fieldManager=kubewright-sharding","requestObject":{{"metadata":{{"labels":{{"{SHARD_LABEL}":"{to}"}}}}}}"#
            ),
        )
    }

    #[test]
    fn writes_are_checked_against_the_owner_of_the_moment() {
        let log = [
            relabel("shard-r1", "app-0", "2026-01-01T00:00:01.000000Z", "r1"),
            line(
                "shard-r1",
                "create",
                "deployments",
                "app-0",
                "2026-01-01T00:00:02.000000Z",
                "",
            ),
            // r1 hands it over to r2.
            relabel("shard-r1", "app-0", "2026-01-01T00:00:03.000000Z", "r2"),
            line(
                "shard-r2",
                "patch",
                "deployments",
                "app-0",
                "2026-01-01T00:00:04.000000Z",
                "",
            ),
            // r1 writes after the hand-over: a second writer.
            line(
                "shard-r1",
                "patch",
                "webapps",
                "app-0",
                "2026-01-01T00:00:05.000000Z",
                "",
            ),
            // And creates the Deployment again.
            line(
                "shard-r2",
                "create",
                "deployments",
                "app-0",
                "2026-01-01T00:00:06.000000Z",
                "",
            ),
        ]
        .join("\n");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.log");
        std::fs::write(&path, log).unwrap();
        let f = check(
            &writes(&path).unwrap(),
            "webapps",
            &["deployments"],
            "shard-",
        );
        assert_eq!(f.protocol_writes, 2);
        assert_eq!(f.writes, 4);
        assert_eq!(f.foreign.len(), 1, "{:?}", f.foreign);
        assert!(f.foreign[0].starts_with("shard-r1 patch webapps app-0"));
        assert_eq!(f.created_twice, ["deployments app-0: 2 creates"]);
    }

    #[test]
    fn renewals_show_the_slowest_write_and_the_longest_gap() {
        let lease = |user: &str, name: &str, at: &str, done: &str, code: u16| {
            format!(
                r#"{{"verb":"update","user":{{"username":"admin"}},"impersonatedUser":{{"username":"{user}"}},"objectRef":{{"resource":"leases","name":"{name}"}},"responseStatus":{{"code":{code}}},"requestReceivedTimestamp":"{at}","stageTimestamp":"{done}"}}"#
            )
        };
        let log = [
            lease(
                "shard-r1",
                "webapp-r1",
                "2026-01-01T00:00:01.000000Z",
                "2026-01-01T00:00:01.010000Z",
                200,
            ),
            lease(
                "shard-r1",
                "webapp-r1",
                "2026-01-01T00:00:03.000000Z",
                "2026-01-01T00:00:04.500000Z",
                200,
            ),
            lease(
                "shard-r1",
                "webapp-r1",
                "2026-01-01T00:00:13.000000Z",
                "2026-01-01T00:00:13.100000Z",
                200,
            ),
            lease(
                "shard-r1",
                "webapp-r1",
                "2026-01-01T00:00:14.000000Z",
                "2026-01-01T00:00:14.000000Z",
                409,
            ),
            // Another replica's Lease, and one that is not a membership Lease.
            lease(
                "shard-r2",
                "webapp-r2",
                "2026-01-01T00:00:02.000000Z",
                "2026-01-01T00:00:02.000000Z",
                200,
            ),
            lease(
                "shard-r2",
                "webapp-assigner",
                "2026-01-01T00:00:09.000000Z",
                "2026-01-01T00:00:09.000000Z",
                200,
            ),
        ];
        // kube-apiserver rotated the first two lines out.
        let dir = tempfile::tempdir().expect("a directory");
        let path = dir.path().join("audit.log");
        let rotated = dir.path().join("audit-2026-01-01T00-00-05.000.log");
        std::fs::write(&rotated, log[..2].join("\n") + "\n").expect("written");
        std::fs::write(&path, log[2..].join("\n")).expect("written");
        let found = renewals(&writes(&path).expect("read"), "webapp", "shard-").expect("parsed");
        let r1 = &found["r1"];
        assert_eq!((r1.written, r1.failed), (3, 1));
        assert!((r1.slowest - 1.5).abs() < 1e-9, "{r1:?}");
        assert!((r1.longest_gap - 10.0).abs() < 1e-9, "{r1:?}");
        assert_eq!(r1.last, "2026-01-01T00:00:13.000000Z");
        assert_eq!(found["r2"].written, 1);
        assert_eq!(found.len(), 2);
    }
}
