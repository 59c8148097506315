//! The audit of writes that proves a sharded run had no two writers: kube-apiserver's audit log (JSON lines),
//! each write attributed to the replica whose impersonated user sent it, checked against the owner each parent
//! had at that moment by its shard label.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use anyhow::Context;
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
struct Write {
    user: String,
    verb: String,
    resource: String,
    subresource: Option<String>,
    name: String,
    code: u16,
    received: String,
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
        protocol: v["requestURI"]
            .as_str()
            .is_some_and(|u| u.contains(PROTOCOL)),
        sets_owner: labels[SHARD_LABEL].as_str().map(str::to_string),
    })
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

/// Reads the audit log at `path` and checks every write of a replica (a user starting with `replica_prefix`)
/// to a parent of `plural` or a child of `children` (named as its parent) against the owner the parent had
/// when the write was received: the value of its shard label after the last protocol write received before.
/// A relabel takes effect when it is committed, between its receipt and its completion, and a new owner's
/// writes follow its commit (the new owner saw it on a watch), so they are received after the relabel was;
/// the completion is no bound (the watch event can reach the new owner, and its write the server, before the
/// relabel's response is written). RFC 3339 timestamps with microseconds compare as strings.
pub(super) fn check(
    path: &Path,
    plural: &str,
    children: &[&str],
    replica_prefix: &str,
) -> anyhow::Result<Findings> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the audit log {}", path.display()))?;
    let writes: Vec<Write> = text.lines().filter_map(parse).collect();
    // Each parent's owners over time: (completed, owner).
    let mut owners: HashMap<&str, Vec<(&str, &str)>> = HashMap::new();
    for w in &writes {
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
    for w in &writes {
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
    Ok(findings)
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
        let f = check(&path, "webapps", &["deployments"], "shard-").unwrap();
        assert_eq!(f.protocol_writes, 2);
        assert_eq!(f.writes, 4);
        assert_eq!(f.foreign.len(), 1, "{:?}", f.foreign);
        assert!(f.foreign[0].starts_with("shard-r1 patch webapps app-0"));
        assert_eq!(f.created_twice, ["deployments app-0: 2 creates"]);
    }
}
