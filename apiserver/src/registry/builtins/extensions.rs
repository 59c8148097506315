//! The kinds that extend the API server (category `api-extensions`): admission webhooks and policies,
//! CustomResourceDefinitions and APIServices.

use k8s_openapi::api::admissionregistration::v1 as admission;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiextensions;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1 as apiregistration;

use super::typed::builtin;
use crate::registry::resource_type::ResourceType;

/// The extension kinds.
pub(super) fn kinds() -> Vec<ResourceType> {
    let ext = |t: ResourceType| t.in_category("api-extensions");
    vec![
        ext(builtin::<admission::MutatingWebhookConfiguration>().with_generation()),
        ext(builtin::<admission::ValidatingWebhookConfiguration>().with_generation()),
        ext(builtin::<admission::ValidatingAdmissionPolicy>()
            .with_status()
            .with_generation()),
        ext(builtin::<admission::ValidatingAdmissionPolicyBinding>().with_generation()),
        ext(builtin::<apiextensions::CustomResourceDefinition>()
            .short_names(&["crd", "crds"])
            .with_status()
            .with_generation()),
        ext(builtin::<apiregistration::APIService>().with_status()),
    ]
}
