//! Create, get, list, and the errors of each: AlreadyExists, NotFound, Conflict, Invalid; generateName;
//! dry run.

use kube::Client;
use serde_json::json;

use crate::support::{Transcript, configmap, configmaps, run, widget, widgets};

async fn create_get_list(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let cms = configmaps(&ns);
    let ws = widgets(&ns);
    t.post("create configmap", &cms, &configmap("a", json!({"k": "v"})))
        .await;
    t.get("get configmap", &format!("{cms}/a")).await;
    t.post("create widget", &ws, &widget("w", 1, "red")).await;
    t.get("get widget", &format!("{ws}/w")).await;
    t.get("list configmaps", &cms).await;
    t.get("list widgets", &ws).await;
    t
}

#[tokio::test]
async fn create_get_and_list() {
    run("create_get_and_list", &[], create_get_list).await;
}

async fn errors(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let cms = configmaps(&ns);
    let ws = widgets(&ns);
    t.post("create configmap", &cms, &configmap("a", json!({"k": "v"})))
        .await;
    t.post("create configmap again", &cms, &configmap("a", json!({})))
        .await;
    t.get("get missing configmap", &format!("{cms}/missing"))
        .await;
    let created = t.post("create widget", &ws, &widget("w", 1, "red")).await;
    t.post("create widget again", &ws, &widget("w", 2, "blue"))
        .await;
    t.get("get missing widget", &format!("{ws}/missing")).await;
    t.delete("delete missing widget", &format!("{ws}/missing"))
        .await;

    let mut changed = created.clone();
    changed["spec"]["replicas"] = json!(3);
    t.put("update widget", &format!("{ws}/w"), &changed).await;
    changed["spec"]["replicas"] = json!(4);
    t.put(
        "update widget with a stale resourceVersion",
        &format!("{ws}/w"),
        &changed,
    )
    .await;
    let mut cm = t.get("get configmap", &format!("{cms}/a")).await;
    cm["data"]["k"] = json!("w");
    t.put("update configmap", &format!("{cms}/a"), &cm).await;
    cm["data"]["k"] = json!("x");
    t.put(
        "update configmap with a stale resourceVersion",
        &format!("{cms}/a"),
        &cm,
    )
    .await;
    let mut missing = configmap("absent", json!({}));
    missing["metadata"]["resourceVersion"] = json!("1");
    t.put(
        "update of a missing configmap",
        &format!("{cms}/absent"),
        &missing,
    )
    .await;
    t.put(
        "update with a mismatched name",
        &format!("{cms}/other"),
        &cm,
    )
    .await;
    t
}

#[tokio::test]
async fn already_exists_not_found_and_conflict() {
    run("already_exists_not_found_and_conflict", &[], errors).await;
}

async fn invalid(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let ws = widgets(&ns);
    t.post(
        "wrong type",
        &ws,
        &widget("a", 1, "red").tap(|w| w["spec"]["replicas"] = json!("three")),
    )
    .await;
    t.post("below minimum", &ws, &widget("b", -1, "red")).await;
    let mut missing = widget("c", 1, "red");
    missing["spec"].as_object_mut().unwrap().remove("color");
    t.post("missing required field", &ws, &missing).await;
    let mut unnamed = widget("", 1, "red");
    unnamed["metadata"] = json!({});
    t.post("no name", &ws, &unnamed).await;
    t.post("bad name", &ws, &widget("Not_A_Name", 1, "red"))
        .await;
    t.post(
        "unknown field",
        &ws,
        &widget("d", 1, "red").tap(|w| w["spec"]["size"] = json!(3)),
    )
    .await;
    t.get("unknown fields are pruned", &format!("{ws}/d")).await;
    t
}

trait Tap: Sized {
    fn tap(self, f: impl FnOnce(&mut Self)) -> Self;
}

impl Tap for serde_json::Value {
    fn tap(mut self, f: impl FnOnce(&mut Self)) -> Self {
        f(&mut self);
        self
    }
}

#[tokio::test]
async fn invalid_custom_resources() {
    run("invalid_custom_resources", &[], invalid).await;
}

async fn generated_and_dry_run(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let cms = configmaps(&ns);
    let mut generated = configmap("", json!({}));
    generated["metadata"] = json!({ "generateName": "gen-" });
    let created = t.post("create with generateName", &cms, &generated).await;
    let name = created["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    t.get("get the generated name", &format!("{cms}/{name}"))
        .await;
    t.post(
        "dry-run create",
        &format!("{cms}?dryRun=All"),
        &configmap("dry", json!({"k": "v"})),
    )
    .await;
    t.get("a dry-run create does not persist", &format!("{cms}/dry"))
        .await;
    t.post(
        "dry-run create with generateName",
        &format!("{cms}?dryRun=All"),
        &generated,
    )
    .await;
    t.get("list after dry runs", &cms).await;
    t
}

#[tokio::test]
async fn generate_name_and_dry_run() {
    run("generate_name_and_dry_run", &[], generated_and_dry_run).await;
}

async fn field_validation(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client).with_warnings();
    let ws = widgets(&ns);
    let cms = configmaps(&ns);
    let with_unknown = |name: &str| widget(name, 1, "red").tap(|w| w["spec"]["size"] = json!(3));
    let cm_unknown = |name: &str| configmap(name, json!({})).tap(|c| c["extra"] = json!(1));
    for (mode, query) in [
        ("Warn", ""),
        ("Ignore", "?fieldValidation=Ignore"),
        ("Strict", "?fieldValidation=Strict"),
    ] {
        let lower = mode.to_lowercase();
        t.post(
            &format!("{mode}: a custom resource"),
            &format!("{ws}{query}"),
            &with_unknown(&lower),
        )
        .await;
        t.post(
            &format!("{mode}: a ConfigMap"),
            &format!("{cms}{query}"),
            &cm_unknown(&lower),
        )
        .await;
    }
    t.post(
        "an unknown mode",
        &format!("{cms}?fieldValidation=Loud"),
        &configmap("loud", json!({})),
    )
    .await;
    t
}

#[tokio::test]
async fn unknown_fields_warn_ignore_or_fail() {
    run("unknown_fields_warn_ignore_or_fail", &[], field_validation).await;
}
