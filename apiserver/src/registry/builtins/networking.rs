//! Networking kinds: `networking.k8s.io`, `discovery.k8s.io` (EndpointSlices) and `node.k8s.io`
//! (RuntimeClasses).

use k8s_openapi::api::{
    discovery::v1 as discovery, networking::v1 as networking, node::v1 as node,
};

use super::typed::builtin;
use crate::registry::resource_type::ResourceType;

/// The networking kinds.
pub(super) fn kinds() -> Vec<ResourceType> {
    vec![
        builtin::<networking::Ingress>()
            .short_names(&["ing"])
            .with_status()
            .with_generation(),
        builtin::<networking::IngressClass>().with_generation(),
        builtin::<networking::IPAddress>().short_names(&["ip"]),
        builtin::<networking::NetworkPolicy>()
            .short_names(&["netpol"])
            .with_generation(),
        builtin::<networking::ServiceCIDR>().with_status(),
        builtin::<discovery::EndpointSlice>().with_generation(),
        builtin::<node::RuntimeClass>(),
    ]
}
