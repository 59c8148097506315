//! Admission webhooks on both servers: the operator's webhook server (`kubewright::admission`, HTTPS with
//! generated certificates at `127.0.0.1`) registered by a validating and a mutating configuration scoped to
//! the scenario's namespace; denials on create, update, patch and delete, warnings, defaulting patches,
//! dry runs, and unreachable webhooks under `failurePolicy: Fail` and `Ignore`.

use std::time::Duration;

use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::{Client, CustomResource, CustomResourceExt};
use kubewright::admission::{Certificates, ClientConfig, Verdict, WebhookServer, Webhooks};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::support::{APPLY, MERGE, STRATEGIC, Transcript, configmap, configmaps, run};

/// A kind whose schema requires `spec.teeth`, which its mutating webhook fills in: kube-apiserver validates
/// after mutating admission, so a create without it succeeds.
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "webhooks.example.dev",
    version = "v1",
    kind = "Sprocket",
    namespaced
)]
pub struct SprocketSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub teeth: Option<i32>,
}

fn sprocket_crd() -> CustomResourceDefinition {
    let mut crd = serde_json::to_value(Sprocket::crd()).expect("a CRD");
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["required"] =
        json!(["teeth"]);
    serde_json::from_value(crd).expect("a CRD")
}

fn sprockets(ns: &str) -> String {
    format!("/apis/webhooks.example.dev/v1/namespaces/{ns}/sprockets")
}

fn hooks() -> Webhooks<ConfigMap> {
    Webhooks::<ConfigMap>::new()
        .validate(|r| {
            let data = r.object.and_then(|cm| cm.data.as_ref());
            if data.is_some_and(|d| d.contains_key("bad")) {
                return Verdict::deny("the key bad is not allowed");
            }
            if r.object.is_none()
                && r.old_object
                    .is_some_and(|cm| cm.metadata.name.as_deref() == Some("keep"))
            {
                return Verdict::deny("keep is kept");
            }
            match data {
                Some(d) if d.contains_key("warn") => Verdict::allow().warn("the key warn is noted"),
                _ => Verdict::allow(),
            }
        })
        .validate_deletes()
        .default(|cm| {
            cm.data
                .get_or_insert_with(Default::default)
                .entry("defaulted".into())
                .or_insert_with(|| "yes".into());
        })
}

/// Serves the webhooks and installs their configurations for `ns`, plus two validating webhooks that
/// cannot be reached (for ConfigMaps labelled `dead: fail` and `dead: ignore`); waits (bounded) until a
/// dry run shows them in force.
async fn install(client: &Client, ns: &str) -> tokio::task::JoinHandle<()> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    match crds.create(&PostParams::default(), &sprocket_crd()).await {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.code == 409 => {}
        Err(e) => panic!("the Sprocket CRD: {e}"),
    }
    let sprockets: Api<Sprocket> = Api::namespaced(client.clone(), ns);
    for _ in 0..400 {
        if sprockets.list(&Default::default()).await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let selector = LabelSelector {
        match_labels: Some([("kubernetes.io/metadata.name".to_string(), ns.to_string())].into()),
        ..Default::default()
    };
    let server = WebhookServer::new(Certificates::generate(["127.0.0.1"]).expect("certificates"))
        .kind(hooks())
        .kind(Webhooks::<Sprocket>::new().default(|s| {
            s.spec.teeth.get_or_insert(12);
        }))
        .namespace_selector(selector);
    let bound = server
        .clone()
        .bind("127.0.0.1:0".parse().expect("an address"))
        .await
        .expect("the webhook server binds");
    let url = format!("https://127.0.0.1:{}", bound.local_addr().port());
    let serving = tokio::spawn(bound.serve());
    server
        .install(
            client,
            &format!("diff-{ns}"),
            &ClientConfig::Url(url),
            "differential",
        )
        .await
        .expect("the webhook configurations are installed");
    let webhooks: Vec<serde_json::Value> = ["fail", "ignore"]
        .iter()
        .map(|policy| {
            json!({
                "name": format!("{policy}.dead.example.dev"),
                "clientConfig": {"url": "https://127.0.0.1:1/dead"},
                "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"],
                           "operations": ["CREATE"], "scope": "Namespaced"}],
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}},
                "objectSelector": {"matchLabels": {"dead": policy}},
                "failurePolicy": if *policy == "fail" { "Fail" } else { "Ignore" },
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "timeoutSeconds": 5,
            })
        })
        .collect();
    let dead: ValidatingWebhookConfiguration = serde_json::from_value(json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": format!("dead-{ns}")},
        "webhooks": webhooks,
    }))
    .expect("a configuration");
    Api::<ValidatingWebhookConfiguration>::all(client.clone())
        .patch(
            &format!("dead-{ns}"),
            &PatchParams::apply("differential").force(),
            &Patch::Apply(&dead),
        )
        .await
        .expect("the dead webhook is installed");
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let probe: ConfigMap =
        serde_json::from_value(configmap("probe", json!({"bad": "1"}))).expect("a ConfigMap");
    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    for _ in 0..400 {
        if matches!(cms.create(&dry, &probe).await, Err(kube::Error::Api(ref s)) if s.code == 400) {
            return serving;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the webhooks are not in force");
}

async fn scenario(client: Client, ns: String) -> Transcript {
    let serving = install(&client, &ns).await;
    let mut t = Transcript::new(client).with_warnings();
    let cms = configmaps(&ns);
    t.post(
        "a create is defaulted",
        &cms,
        &configmap("good", json!({"a": "1"})),
    )
    .await;
    t.post(
        "a denied create",
        &cms,
        &configmap("bad", json!({"bad": "1"})),
    )
    .await;
    t.post(
        "a warned create",
        &cms,
        &configmap("warned", json!({"warn": "1"})),
    )
    .await;
    t.post(
        "a dry-run create is admitted too",
        &format!("{cms}?dryRun=All"),
        &configmap("dry", json!({"b": "2"})),
    )
    .await;
    let good = t
        .get("the defaulted object is stored", &format!("{cms}/good"))
        .await;
    let mut bad = good.clone();
    bad["data"]["bad"] = json!("1");
    t.put("a denied update", &format!("{cms}/good"), &bad).await;
    t.patch(
        "a denied patch",
        &format!("{cms}/good"),
        MERGE,
        &json!({"data": {"bad": "2"}}),
    )
    .await;
    t.patch(
        "a patch that removes the default gets it back",
        &format!("{cms}/good"),
        MERGE,
        &json!({"data": {"defaulted": null, "c": "3"}}),
    )
    .await;
    t.patch(
        "a server-side apply that creates is defaulted",
        &format!("{cms}/applied?fieldManager=applier"),
        APPLY,
        &configmap("applied", json!({"x": "1"})),
    )
    .await;
    t.patch(
        "a server-side apply that updates keeps the default unowned",
        &format!("{cms}/applied?fieldManager=applier"),
        APPLY,
        &configmap("applied", json!({"x": "2"})),
    )
    .await;
    t.patch(
        "a denied server-side apply",
        &format!("{cms}/applied?fieldManager=applier"),
        APPLY,
        &configmap("applied", json!({"bad": "1"})),
    )
    .await;
    t.patch(
        "a strategic merge patch is defaulted too",
        &format!("{cms}/applied"),
        STRATEGIC,
        &json!({"data": {"defaulted": null}}),
    )
    .await;
    t.post("keep", &cms, &configmap("keep", json!({}))).await;
    t.delete("a denied delete", &format!("{cms}/keep")).await;
    t.delete("an allowed delete", &format!("{cms}/warned"))
        .await;
    let mut failing = configmap("failing", json!({}));
    failing["metadata"]["labels"] = json!({"dead": "fail"});
    t.post("an unreachable webhook that fails closed", &cms, &failing)
        .await;
    let mut ignoring = configmap("ignoring", json!({}));
    ignoring["metadata"]["labels"] = json!({"dead": "ignore"});
    t.post("an unreachable webhook that is ignored", &cms, &ignoring)
        .await;
    t.post(
        "a mutating webhook fills a field the schema requires",
        &sprockets(&ns),
        &json!({"apiVersion": "webhooks.example.dev/v1", "kind": "Sprocket",
                "metadata": {"name": "s"}, "spec": {}}),
    )
    .await;
    serving.abort();
    t
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admission_webhooks() {
    run("admission_webhooks", &[], scenario).await;
}
