//! Lists with label and field selectors, and paginated lists.

use kube::Client;
use serde_json::json;

use crate::deviations::CONTINUE_TOKEN_ERROR;
use crate::support::{MERGE, Transcript, configmaps, run, widget, widgets};

async fn selectors(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let cms = configmaps(&ns);
    for (name, app) in [("a", Some("x")), ("b", Some("y")), ("c", None)] {
        let mut cm = crate::support::configmap(name, json!({"k": name}));
        if let Some(app) = app {
            cm["metadata"]["labels"] = json!({"app": app});
        }
        t.post(&format!("create {name}"), &cms, &cm).await;
    }
    for (label, query) in [
        ("equality", "labelSelector=app%3Dx"),
        ("set", "labelSelector=app%20in%20(x,y)"),
        ("absence", "labelSelector=!app"),
        ("inequality", "labelSelector=app!%3Dx"),
        ("field", "fieldSelector=metadata.name%3Db"),
        ("field inequality", "fieldSelector=metadata.name!%3Db"),
        ("both", "labelSelector=app&fieldSelector=metadata.name%3Da"),
        ("unknown field", "fieldSelector=data.k%3Da"),
        ("bad label selector", "labelSelector=app%3D%3D%3Dx"),
    ] {
        t.get(label, &format!("{cms}?{query}")).await;
    }
    let ws = widgets(&ns);
    t.post("create a widget", &ws, &widget("w", 1, "red")).await;
    t.get(
        "widgets by name",
        &format!("{ws}?fieldSelector=metadata.name%3Dw"),
    )
    .await;
    t.get(
        "widgets by namespace",
        &format!("{ws}?fieldSelector=metadata.namespace%3D{ns}"),
    )
    .await;
    t.get(
        "widgets by spec",
        &format!("{ws}?fieldSelector=spec.color%3Dred"),
    )
    .await;
    t
}

#[tokio::test]
async fn list_with_selectors() {
    run("list_with_selectors", &[], selectors).await;
}

async fn pagination(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let cms = configmaps(&ns);
    for name in ["a", "b", "c", "d", "e"] {
        t.post(
            &format!("create {name}"),
            &cms,
            &crate::support::configmap(name, json!({})),
        )
        .await;
    }
    let mut page = t.get("page 1", &format!("{cms}?limit=2")).await;
    let mut n = 1;
    while let Some(token) = page["metadata"]["continue"]
        .as_str()
        .filter(|c| !c.is_empty())
        .map(str::to_string)
    {
        n += 1;
        page = t
            .get(
                &format!("page {n}"),
                &format!("{cms}?limit=2&continue={token}"),
            )
            .await;
        if n > 5 {
            break;
        }
    }
    t.get(
        "a bad continue token",
        &format!("{cms}?limit=2&continue=bm90LWEtdG9rZW4"),
    )
    .await;
    let ws = widgets(&ns);
    for name in ["x", "y"] {
        t.post(
            &format!("create widget {name}"),
            &ws,
            &widget(name, 1, "red"),
        )
        .await;
    }
    let page = t.get("widgets page 1", &format!("{ws}?limit=1")).await;
    let token = page["metadata"]["continue"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    t.get("widgets page 2", &format!("{ws}?limit=1&continue={token}"))
        .await;
    t
}

#[tokio::test]
async fn paginated_lists() {
    run("paginated_lists", &[CONTINUE_TOKEN_ERROR], pagination).await;
}

const METADATA: &str = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
const METADATA_LIST: &str = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";

/// What a selective or metadata-only cache reads: lists and watches as `PartialObjectMetadata`, and the
/// events of a label-selected watch as objects enter and leave the selection (an object whose label is
/// removed is `DELETED` from the watch, though it still exists).
async fn metadata_and_selected(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let cms = configmaps(&ns);
    let mut a = crate::support::configmap("a", json!({"k": "a"}));
    a["metadata"]["labels"] = json!({"owner": "p1"});
    t.post("create a", &cms, &a).await;
    let created = t
        .post(
            "create b",
            &cms,
            &crate::support::configmap("b", json!({"k": "b"})),
        )
        .await;
    let rv = created["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    t.send_accepting(
        "list as metadata",
        "GET",
        &format!("{cms}?labelSelector=owner"),
        METADATA_LIST,
        "",
        None,
    )
    .await;
    t.send_accepting(
        "get as metadata",
        "GET",
        &format!("{cms}/a"),
        METADATA,
        "",
        None,
    )
    .await;
    t.patch(
        "b enters the selection",
        &format!("{cms}/b"),
        MERGE,
        &json!({"metadata": {"labels": {"owner": "p1"}}}),
    )
    .await;
    t.patch(
        "a changes",
        &format!("{cms}/a"),
        MERGE,
        &json!({"data": {"k": "a2"}}),
    )
    .await;
    t.patch(
        "a leaves the selection",
        &format!("{cms}/a"),
        MERGE,
        &json!({"metadata": {"labels": {"owner": null}}}),
    )
    .await;
    t.watch_accepting(
        "selected watch as metadata",
        &format!("{cms}?watch=true&labelSelector=owner&resourceVersion={rv}"),
        METADATA,
    )
    .await;
    t
}

#[tokio::test]
async fn metadata_only_and_selected_watches() {
    run(
        "metadata_only_and_selected_watches",
        &[],
        metadata_and_selected,
    )
    .await;
}

/// What a cache reads when it streams its first list: a watch that sends the objects there are first, then a
/// bookmark marked `k8s.io/initial-events-end`, and nothing for a selector that matches nothing (the runtime's
/// probe); without `resourceVersionMatch=NotOlderThan` the request is refused.
async fn streamed_list(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let cms = configmaps(&ns);
    for name in ["b", "a"] {
        let mut cm = crate::support::configmap(name, json!({"k": name}));
        cm["metadata"]["labels"] = json!({"app": "x"});
        t.post(&format!("create {name}"), &cms, &cm).await;
    }
    let stream = "watch=true&sendInitialEvents=true&allowWatchBookmarks=true&timeoutSeconds=1";
    t.streamed_list(
        "streamed list",
        &format!("{cms}?{stream}&resourceVersionMatch=NotOlderThan&labelSelector=app%3Dx"),
    )
    .await;
    t.streamed_list(
        "streamed list of nothing",
        &format!("{cms}?{stream}&resourceVersionMatch=NotOlderThan&labelSelector=app%3Dnone"),
    )
    .await;
    t.get(
        "streamed list without NotOlderThan",
        &format!("{cms}?{stream}"),
    )
    .await;
    t
}

#[tokio::test]
async fn streamed_lists() {
    run("streamed_lists", &[], streamed_list).await;
}

/// A streamed list asked as a Table, with each `includeObject`: the objects' rows (the column headers in the
/// first event only), then the closing bookmark, itself a Table whose row is the empty object (its object
/// the bookmark's metadata, also under `includeObject=None`); and a Table streamed list of nothing.
async fn table_streamed_list(client: Client, ns: String) -> Transcript {
    const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";
    let mut t = Transcript::new(client);
    let cms = configmaps(&ns);
    for name in ["b", "a"] {
        let mut cm = crate::support::configmap(name, json!({"k": name}));
        cm["metadata"]["labels"] = json!({"app": "x"});
        t.post(&format!("create {name}"), &cms, &cm).await;
    }
    let stream = "watch=true&sendInitialEvents=true&allowWatchBookmarks=true&timeoutSeconds=1\
        &resourceVersionMatch=NotOlderThan";
    for include in ["None", "Metadata", "Object"] {
        t.streamed_list_accepting(
            &format!("a Table streamed list, includeObject={include}"),
            &format!("{cms}?{stream}&labelSelector=app%3Dx&includeObject={include}"),
            TABLE,
        )
        .await;
    }
    t.streamed_list_accepting(
        "a Table streamed list of nothing",
        &format!("{cms}?{stream}&labelSelector=app%3Dnone"),
        TABLE,
    )
    .await;
    t
}

#[tokio::test]
async fn table_streamed_lists() {
    run("table_streamed_lists", &[], table_streamed_list).await;
}
