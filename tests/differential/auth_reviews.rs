//! The review kinds of `authentication.k8s.io/v1` and `authorization.k8s.io/v1`: discovery (create only, no
//! storage version hash), SelfSubjectReview (the requester's groups; the name and extra differ: `admin` and
//! its client certificate's id in envtest, `system:admin` in memory), a TokenReview of a token no authenticator knows, and the access
//! reviews decided by RBAC over Roles, ClusterRoles and bindings the scenario creates for users outside
//! every bootstrap binding (allowed by which binding, no opinion, a missing role in the reason, a
//! privileged group, validation errors), a Table asked of a review (406), and verbs other than create (405).

use kube::Client;
use serde_json::{Value, json};

use crate::deviations::BUILTIN_MANAGED_FIELDS_SHAPE;
use crate::support::{Transcript, run};

const AUTHZ: &str = "/apis/authorization.k8s.io/v1";

fn sar(spec: Value) -> Value {
    json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec})
}

fn pods(user: &str, verb: &str, ns: &str) -> Value {
    sar(
        json!({"user": user, "resourceAttributes": {"verb": verb, "resource": "pods", "namespace": ns}}),
    )
}

async fn reviews(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    for path in [
        "/apis/authentication.k8s.io/v1",
        "/apis/authorization.k8s.io/v1",
    ] {
        t.get(&format!("discovery {path}"), path).await;
    }
    t.post(
        "self subject review",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}),
    )
    .await;
    if let Some(answer) = t.last_answer_mut() {
        answer["status"]["userInfo"]["username"] = json!("<requester>");
        // kube-apiserver names the client certificate the envtest admin authenticates with.
        if let Some(info) = answer["status"]["userInfo"].as_object_mut() {
            info.remove("extra");
        }
    }
    let token_reviews = "/apis/authentication.k8s.io/v1/tokenreviews";
    for (label, token) in [("unknown token", "not-a-token"), ("no token", "")] {
        t.post(
            &format!("token review, {label}"),
            token_reviews,
            &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}}),
        )
        .await;
    }
    t.get("list token reviews", token_reviews).await;

    let rbac = "/apis/rbac.authorization.k8s.io/v1";
    t.post(
        "role",
        &format!("{rbac}/namespaces/{ns}/roles"),
        &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "pod-reader"},
            "rules": [{"apiGroups": [""], "resources": ["pods", "*/status"], "verbs": ["get", "list"]},
                      {"apiGroups": ["apps"], "resources": ["deployments"], "resourceNames": ["web"], "verbs": ["*"]}]}),
    )
    .await;
    for (name, role_kind, role, subject) in [
        (
            "alice-reads",
            "Role",
            "pod-reader",
            json!({"kind": "User", "name": "kw-alice"}),
        ),
        (
            "bob-missing",
            "Role",
            "no-such-role",
            json!({"kind": "User", "name": "kw-bob"}),
        ),
        (
            "team-reads",
            "Role",
            "pod-reader",
            json!({"kind": "Group", "name": "kw-team"}),
        ),
        (
            "robot-reads",
            "Role",
            "pod-reader",
            json!({"kind": "ServiceAccount", "name": "robot"}),
        ),
        (
            "carol-missing",
            "ClusterRole",
            "kw-no-such-clusterrole",
            json!({"kind": "User", "name": "kw-carol"}),
        ),
    ] {
        t.post(
            &format!("role binding {name}"),
            &format!("{rbac}/namespaces/{ns}/rolebindings"),
            &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": name},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
                "subjects": [subject]}),
        )
        .await;
        // A RoleBinding's atomic roleRef is owned field by field in memory (see `kinds`): not compared here.
        if let Some(answer) = t.last_answer_mut()
            && let Some(meta) = answer["metadata"].as_object_mut()
        {
            meta.remove("managedFields");
        }
    }

    let sars = format!("{AUTHZ}/subjectaccessreviews");
    for (label, body) in [
        ("alice gets pods", pods("kw-alice", "get", &ns)),
        ("alice deletes pods", pods("kw-alice", "delete", &ns)),
        (
            "alice gets pods elsewhere",
            pods("kw-alice", "get", "kube-system"),
        ),
        ("bob gets pods (missing role)", pods("kw-bob", "get", &ns)),
        (
            "carol gets pods (missing cluster role)",
            pods("kw-carol", "get", &ns),
        ),
        (
            "a team member gets pods",
            sar(
                json!({"user": "kw-dave", "groups": ["kw-team"], "resourceAttributes": {"verb": "list", "resource": "pods", "namespace": ns}}),
            ),
        ),
        (
            "the robot service account gets pods",
            pods(&format!("system:serviceaccount:{ns}:robot"), "get", &ns),
        ),
        (
            "alice gets a pod's status",
            sar(
                json!({"user": "kw-alice", "resourceAttributes": {"verb": "get", "resource": "pods", "subresource": "status", "namespace": ns}}),
            ),
        ),
        (
            "alice patches deployment web",
            sar(
                json!({"user": "kw-alice", "resourceAttributes": {"verb": "patch", "group": "apps", "resource": "deployments", "name": "web", "namespace": ns}}),
            ),
        ),
        (
            "alice patches deployment other",
            sar(
                json!({"user": "kw-alice", "resourceAttributes": {"verb": "patch", "group": "apps", "resource": "deployments", "name": "other", "namespace": ns}}),
            ),
        ),
        (
            "a privileged group",
            sar(
                json!({"user": "kw-erin", "groups": ["system:masters"], "resourceAttributes": {"verb": "delete", "resource": "nodes"}}),
            ),
        ),
        (
            "alice, a non-resource path",
            sar(
                json!({"user": "kw-alice", "nonResourceAttributes": {"verb": "get", "path": "/kw-private"}}),
            ),
        ),
        (
            "no user or group",
            sar(json!({"resourceAttributes": {"verb": "get", "resource": "pods"}})),
        ),
        ("no attributes", sar(json!({"user": "kw-alice"}))),
        (
            "both attributes",
            sar(
                json!({"user": "kw-alice", "resourceAttributes": {"verb": "get", "resource": "pods"},
                "nonResourceAttributes": {"verb": "get", "path": "/"}}),
            ),
        ),
    ] {
        t.post(&format!("subject access review: {label}"), &sars, &body)
            .await;
    }
    let local = format!("{AUTHZ}/namespaces/{ns}/localsubjectaccessreviews");
    let mut lsar = pods("kw-alice", "get", &ns);
    lsar["kind"] = json!("LocalSubjectAccessReview");
    t.post("local subject access review", &local, &lsar).await;
    lsar["spec"]["resourceAttributes"]["namespace"] = json!("elsewhere");
    t.post(
        "local subject access review, another namespace",
        &local,
        &lsar,
    )
    .await;

    let selfs = format!("{AUTHZ}/selfsubjectaccessreviews");
    let ssar = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
        "spec": {"nonResourceAttributes": {"path": "/", "verb": "get"}}});
    t.post("self subject access review", &selfs, &ssar).await;
    t.send_accepting(
        "self subject access review as a Table",
        "POST",
        &selfs,
        "application/json;as=Table;v=v1;g=meta.k8s.io",
        "application/json",
        Some(&ssar),
    )
    .await;
    t.post(
        "self subject rules review without a namespace",
        &format!("{AUTHZ}/selfsubjectrulesreviews"),
        &json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "spec": {}}),
    )
    .await;
    t.get("get a self subject access review", &format!("{selfs}/x"))
        .await;
    t
}

/// The review kinds answered alike: discovery, the requester, tokens, RBAC decisions and their reasons.
#[tokio::test]
async fn review_kinds_are_answered_as_kube_apiserver_answers_them() {
    run(
        "review_kinds_are_answered_as_kube_apiserver_answers_them",
        &[BUILTIN_MANAGED_FIELDS_SHAPE],
        reviews,
    )
    .await;
}
