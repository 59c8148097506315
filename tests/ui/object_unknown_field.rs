//! A field `object!` names must exist: the compiler's error points at the name and suggests the field meant.
use k8s_openapi::api::apps::v1::Deployment;
use kubewright::object;

fn main() {
    let _ = object!(Deployment {
        metadata: { nmae: "web" },
    });
}
