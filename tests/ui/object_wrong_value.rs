//! A value must convert to its field's type: the error points at the value and names the field's type.
use k8s_openapi::api::apps::v1::Deployment;
use kubewright::object;

fn main() {
    let _ = object!(Deployment {
        spec: { replicas: "two" },
    });
}
