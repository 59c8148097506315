//! The runtime cost limits of CRD validation rules on both servers: the e2e spec's rule over a large list
//! (`call cost exceeds limit`, no further rule run: the failing `x` rule after it is not reported), the
//! same rule on small lists and on a list below the limit (allowed).

use std::time::Duration;

use kube::Client;
use serde_json::{Value, json};

use crate::support::{Transcript, run};

const NAME: &str = "costfixtures.celcost.example.dev";
const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

fn crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": NAME},
        "spec": {
            "group": "celcost.example.dev",
            "names": {"kind": "CostFixture", "plural": "costfixtures", "singular": "costfixture"},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {
                        "type": "object",
                        "x-kubernetes-validations": [
                            {"rule": "self.x + self.y > 0"},
                            {"rule": "self.firstArray.isSorted() && self.secondArray.isSorted() && ((self.firstArray.sum() + self.secondArray.sum()) % 2 == 0)"},
                            {"rule": "self.largeArray.all(x, self.largeArray.all(y, y == x))"},
                            {"rule": "self.x < 100", "message": "x below 100"}
                        ],
                        "properties": {
                            "x": {"type": "integer"},
                            "y": {"type": "integer"},
                            "firstArray": {"type": "array", "maxItems": 1000, "items": {"type": "integer"}},
                            "secondArray": {"type": "array", "maxItems": 1000, "items": {"type": "integer"}},
                            "largeArray": {"type": "array", "maxItems": 725, "items": {"type": "integer"}}
                        }
                    }
                }}}
            }]
        }
    })
}

fn object(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "celcost.example.dev/v1", "kind": "CostFixture",
           "metadata": {"name": name}, "spec": spec})
}

fn small() -> Value {
    json!({"x": 1, "y": 0, "firstArray": [3, 4], "secondArray": [5, 10], "largeArray": [2, 2]})
}

async fn scenario(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client.clone());
    let objects = format!("/apis/celcost.example.dev/v1/namespaces/{ns}/costfixtures");
    t.post("create the CRD", CRDS, &crd()).await;
    *t.last_answer_mut().expect("an answer") = json!("created");
    let mut probe = Transcript::new(client.clone());
    for _ in 0..200 {
        if probe.get("poll", &objects).await["kind"] == "CostFixtureList" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    t.post("small lists", &objects, &object("small", small()))
        .await;
    let mut large = small();
    large["largeArray"] = json!(vec![20; 725]);
    large["x"] = json!(200);
    t.post("a large list", &objects, &object("large", large))
        .await;
    let mut below = small();
    below["largeArray"] = json!(vec![20; 300]);
    t.post("a list below the limit", &objects, &object("below", below))
        .await;
    t.delete("delete the CRD", &format!("{CRDS}/{NAME}")).await;
    *t.last_answer_mut().expect("an answer") = json!("deleted");
    t
}

#[tokio::test]
async fn cel_runtime_cost_limits() {
    run("cel_runtime_cost_limits", &[], scenario).await;
}
