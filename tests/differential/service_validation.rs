//! A Service's rules beyond its ports and cluster IP (`builtin_validation` has those): the load balancer
//! fields, node ports (kube-apiserver's allocator checks a requested one's range before validation), an
//! `ExternalName` Service, IP addresses, IP families and policies on a single-stack cluster, session affinity,
//! external IPs and the traffic policies, each with a valid control, an invalid create and a forbidden
//! update, on both servers; and a NetworkPolicy's rules (selectors, ports, peers, IP blocks, policy types).

use kube::Client;
use serde_json::{Value, json};

use crate::builtin_validation::{Case, core, run_cases};
use crate::support::{Transcript, run};

fn service(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec})
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "service load balancer",
            collection: |ns| core("services")(ns),
            valid: service(
                "lb",
                json!({"type": "LoadBalancer", "ports": [{"port": 80, "appProtocol": "kubernetes.io/h2c"}],
                    "loadBalancerClass": "example.com/lb", "loadBalancerSourceRanges": [" 10.0.0.0/8 "],
                    "externalTrafficPolicy": "Local", "trafficDistribution": "PreferClose"}),
            ),
            invalid: Some(service(
                "lb-bad",
                json!({"type": "LoadBalancer", "ports": [{"port": 80, "appProtocol": "bad proto"}],
                    "loadBalancerClass": "Bad Class", "loadBalancerSourceRanges": ["10.0.0.0/40", "x"],
                    "externalTrafficPolicy": "Nowhere", "internalTrafficPolicy": "Somewhere",
                    "trafficDistribution": "Far"}),
            )),
            forbidden: Some(json!({"spec": {"loadBalancerClass": "example.com/other"}})),
        },
        Case {
            name: "service load balancer fields on a cluster IP service",
            collection: |ns| core("services")(ns),
            valid: service(
                "cip",
                json!({"ports": [{"port": 80}], "sessionAffinity": "ClientIP"}),
            ),
            invalid: Some(service(
                "cip-bad",
                json!({"ports": [{"port": 80}], "loadBalancerClass": "example.com/lb",
                    "loadBalancerSourceRanges": ["10.0.0.0/8"], "allocateLoadBalancerNodePorts": true,
                    "externalTrafficPolicy": "Local", "healthCheckNodePort": 30555}),
            )),
            forbidden: Some(
                json!({"spec": {"sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 90000}}}}),
            ),
        },
        Case {
            name: "service node port range",
            collection: |ns| core("services")(ns),
            valid: service("np", json!({"type": "NodePort", "ports": [{"port": 80}]})),
            invalid: Some(service(
                "np-bad",
                json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": 80}]}),
            )),
            forbidden: Some(json!({"spec": {"ports": [{"port": 80, "nodePort": 20000}]}})),
        },
        Case {
            name: "service headless node port",
            collection: |ns| core("services")(ns),
            valid: service(
                "np2",
                json!({"type": "NodePort", "selector": {"app": "a"}, "ports": [{"port": 80}],
                    "externalTrafficPolicy": "Local"}),
            ),
            invalid: Some(service(
                "np2-bad",
                json!({"type": "NodePort", "clusterIP": "None", "selector": {"app": "a"},
                    "ports": [{"port": 80}, {"port": 80, "protocol": "UDP"}],
                    "externalIPs": ["127.0.0.1", "nope", "0.0.0.0", "169.254.1.1", "10.1.2.3"],
                    "sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 0}},
                    "allocateLoadBalancerNodePorts": true}),
            )),
            forbidden: Some(json!({"spec": {"externalTrafficPolicy": "Sideways"}})),
        },
        Case {
            name: "service external name",
            collection: |ns| core("services")(ns),
            valid: service(
                "ext",
                json!({"type": "ExternalName", "externalName": "db.example.com."}),
            ),
            invalid: Some(service(
                "ext-bad",
                json!({"type": "ExternalName", "externalName": "Bad_Name", "clusterIP": "10.0.0.215",
                    "ipFamilyPolicy": "SingleStack", "ipFamilies": ["IPv4"], "internalTrafficPolicy": "Local"}),
            )),
            forbidden: Some(json!({"spec": {"externalName": ""}})),
        },
        Case {
            name: "service cluster ip addresses",
            collection: |ns| core("services")(ns),
            valid: service(
                "ips",
                json!({"clusterIP": "10.0.0.214", "ipFamilyPolicy": "SingleStack", "ipFamilies": ["IPv4"],
                    "ports": [{"port": 80}]}),
            ),
            invalid: Some(service(
                "ips-bad",
                json!({"clusterIP": "not-an-ip", "clusterIPs": ["not-an-ip", "10.0.0.9", "10.0.0.10"],
                    "ipFamilies": ["IPv4", "IPv4", "IPv7"], "ipFamilyPolicy": "Triple",
                    "ports": [{"port": 80}]}),
            )),
            forbidden: Some(json!({"spec": {"ipFamilyPolicy": "RequireDualStack"}})),
        },
        Case {
            name: "service ip families on a single-stack cluster",
            collection: |ns| core("services")(ns),
            valid: service(
                "fam4",
                json!({"ipFamilyPolicy": "PreferDualStack", "ports": [{"port": 80}]}),
            ),
            invalid: Some(service(
                "fam6",
                json!({"ipFamilies": ["IPv6"], "ports": [{"port": 80}]}),
            )),
            forbidden: Some(json!({"spec": {"ipFamilies": ["IPv4", "IPv6"]}})),
        },
        Case {
            name: "service two cluster ips, single stack",
            collection: |ns| core("services")(ns),
            valid: service("two", json!({"ports": [{"port": 80}]})),
            invalid: Some(service(
                "two-bad",
                json!({"clusterIP": "10.0.0.216", "clusterIPs": ["10.0.0.216", "fd00::10"],
                    "ipFamilies": ["IPv4", "IPv6"], "ports": [{"port": 80}]}),
            )),
            forbidden: Some(
                json!({"spec": {"clusterIP": "fd00::10", "clusterIPs": ["fd00::10"], "ipFamilies": null}}),
            ),
        },
    ]
}

async fn rules(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    run_cases(&mut t, &ns, cases()).await;
    t
}

#[tokio::test]
async fn service_rules_refuse_alike() {
    run("service_rules_refuse_alike", &[], rules).await;
}

fn network_policy(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": name}, "spec": spec})
}

fn network_policy_cases() -> Vec<Case> {
    vec![Case {
        name: "network policy",
        collection: |ns| format!("/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies"),
        valid: network_policy(
            "np",
            json!({"podSelector": {"matchLabels": {"app": "a"}}, "policyTypes": ["Ingress", "Egress"],
                "ingress": [{"ports": [{"port": 80, "endPort": 90}, {"port": "http"}],
                    "from": [{"podSelector": {}, "namespaceSelector": {"matchLabels": {"team": "x"}}},
                        {"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}}]}],
                "egress": [{"to": [{"ipBlock": {"cidr": "fd00::/64"}}]}]}),
        ),
        invalid: Some(network_policy(
            "np-bad",
            json!({"podSelector": {"matchExpressions": [{"key": "app", "operator": "Is"}]},
                "policyTypes": ["Ingress", "Sideways"],
                "ingress": [{"ports": [{"protocol": "HTTP", "port": 0, "endPort": 70000}, {"port": "Not_A_Name", "endPort": 5},
                        {"endPort": 5}, {"port": 90, "endPort": 80}],
                    "from": [{}, {"ipBlock": {"cidr": "10.0.0.0/8", "except": ["11.0.0.0/16", "10.0.0.0/8", "x"]},
                        "podSelector": {"matchLabels": {"a": "-b"}}}]}],
                "egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/40"}}, {"ipBlock": {"cidr": ""}}]}]}),
        )),
        forbidden: Some(json!({"spec": {"policyTypes": ["Ingress", "Egress", "Ingress"]}})),
    }]
}

async fn network_policies(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    run_cases(&mut t, &ns, network_policy_cases()).await;
    t
}

#[tokio::test]
async fn network_policy_rules_refuse_alike() {
    run("network_policy_rules_refuse_alike", &[], network_policies).await;
}
