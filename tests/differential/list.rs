//! Lists with label and field selectors, and paginated lists.

use kube::Client;
use serde_json::json;

use crate::deviations::CONTINUE_TOKEN_ERROR;
use crate::support::{Transcript, configmaps, run, widget, widgets};

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
