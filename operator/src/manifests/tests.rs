//! Tests of the manifests.

use super::*;
use crate::reconcilers::Wiring;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use k8s_openapi::api::rbac::v1::ClusterRole;
use k8s_openapi::api::rbac::v1::PolicyRule;

fn verbs(rules: &[PolicyRule], group: &str, resource: &str) -> Vec<String> {
    rules
        .iter()
        .find(|r| {
            r.api_groups.as_deref() == Some(&[group.to_string()])
                && r.resources.as_deref() == Some(&[resource.to_string()])
        })
        .map(|r| r.verbs.clone())
        .unwrap_or_default()
}

fn wiring(finalizer: bool) -> Wiring {
    let mut w = Wiring::default();
    w.owns::<Deployment>();
    w.tracks::<ConfigMap>();
    w.watches::<Secret>();
    if finalizer {
        w.finalizer("example.dev/cleanup");
    }
    w
}

// A cluster-scoped built-in stands in for a parent kind: only its group and plural matter here.
type Parent = ClusterRole;

#[test]
fn each_role_gets_exactly_its_verbs() {
    let rules = rules::<Parent>(&wiring(false));
    let g = "rbac.authorization.k8s.io";
    assert_eq!(verbs(&rules, g, "clusterroles"), PARENT_VERBS);
    assert_eq!(verbs(&rules, g, "clusterroles/status"), STATUS_VERBS);
    assert_eq!(verbs(&rules, "apps", "deployments"), OWNED_VERBS);
    assert_eq!(verbs(&rules, "", "configmaps"), READ_VERBS);
    assert_eq!(verbs(&rules, "", "secrets"), READ_VERBS);
    assert_eq!(verbs(&rules, "events.k8s.io", "events"), EVENT_VERBS);
    assert_eq!(rules.len(), 6, "nothing else: {rules:#?}");
}

#[test]
fn a_finalizer_lets_the_operator_patch_its_parents() {
    let rules = rules::<Parent>(&wiring(true));
    assert_eq!(
        verbs(&rules, "rbac.authorization.k8s.io", "clusterroles"),
        ["get", "list", "watch", "patch", "update"]
    );
}

#[test]
fn a_kind_both_owned_and_watched_is_owned() {
    let mut w = Wiring::default();
    w.watches::<Namespace>();
    w.owns::<Namespace>();
    assert_eq!(verbs(&rules::<Parent>(&w), "", "namespaces"), OWNED_VERBS);
}

#[test]
fn owned_role_bindings_need_bind_on_the_roles_they_name() {
    use k8s_openapi::api::rbac::v1::{ClusterRoleBinding, RoleBinding};
    let mut w = Wiring::default();
    w.owns::<RoleBinding>();
    let derived = rules::<Namespace>(&w);
    assert_eq!(verbs(&derived, RBAC_GROUP, "roles"), BIND_VERBS);
    assert_eq!(verbs(&derived, RBAC_GROUP, "clusterroles"), BIND_VERBS);
    let mut w = Wiring::default();
    w.owns::<ClusterRoleBinding>();
    let derived = rules::<Namespace>(&w);
    assert!(verbs(&derived, RBAC_GROUP, "roles").is_empty());
    assert_eq!(verbs(&derived, RBAC_GROUP, "clusterroles"), BIND_VERBS);
    // A RoleBinding only read grants no bind.
    let mut w = Wiring::default();
    w.tracks::<RoleBinding>();
    assert!(verbs(&rules::<Namespace>(&w), RBAC_GROUP, "clusterroles").is_empty());
}

#[test]
fn bind_can_be_narrowed_to_named_roles_and_rules_added() {
    use k8s_openapi::api::rbac::v1::RoleBinding;
    let mut w = Wiring::default();
    w.owns::<RoleBinding>();
    let mut m = Manifests::new("op");
    m.rules.merge(&scoped_rules::<Namespace>(&w, true));
    let m = m.bind_only([("ClusterRole", "admin")]).rule(PolicyRule {
        api_groups: Some(vec!["".into()]),
        resources: Some(vec!["nodes".into()]),
        verbs: vec!["list".into()],
        ..Default::default()
    });
    let rules = m.rules();
    let binds: Vec<&PolicyRule> = rules
        .iter()
        .filter(|r| r.verbs.contains(&"bind".to_string()))
        .collect();
    assert_eq!(binds.len(), 1, "{rules:#?}");
    assert_eq!(binds[0].resources, Some(vec!["clusterroles".to_string()]));
    assert_eq!(binds[0].resource_names, Some(vec!["admin".to_string()]));
    assert_eq!(verbs(&rules, "", "nodes"), ["list"]);
}

#[test]
fn crd_rules_and_flag_only_when_the_operator_installs_crds() {
    let crd_rules = |m: &Manifests| {
        m.rules()
            .iter()
            .filter(|r| {
                r.resources
                    .as_ref()
                    .is_some_and(|r| r.contains(&"customresourcedefinitions".to_string()))
            })
            .count()
    };
    let m = Manifests::new("op")
        .namespace("op-system")
        .args(["--in-cluster"]);
    assert_eq!(crd_rules(&m), 0);
    let args = |m: &Manifests| {
        m.deployment()
            .spec
            .into_iter()
            .flat_map(|s| s.template.spec)
            .flat_map(|p| p.containers)
            .flat_map(|c| c.args.unwrap_or_default())
            .collect::<Vec<_>>()
    };
    assert_eq!(args(&m), ["--in-cluster"]);
    let m = m.install_crds(true);
    assert_eq!(crd_rules(&m), 1);
    assert_eq!(args(&m), ["--in-cluster", "--install-crds"]);
    // The Namespace comes before what goes into it.
    let kinds: Vec<String> = m
        .objects()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(kinds[0], "Namespace");
    assert_eq!(kinds[1], "ServiceAccount");
    assert!(Manifests::new("op").namespace_object().is_none());
    // Restricted: what the Pod Security Standards' `restricted` level asks of every container.
    let pod = m
        .deployment()
        .spec
        .map(|s| s.template)
        .and_then(|t| t.spec)
        .expect("pod");
    let c = &pod.containers[0];
    let sc = c
        .security_context
        .as_ref()
        .expect("container security context");
    assert_eq!(sc.allow_privilege_escalation, Some(false));
    assert_eq!(sc.read_only_root_filesystem, Some(true));
    assert_eq!(
        sc.capabilities.as_ref().and_then(|c| c.drop.clone()),
        Some(vec!["ALL".to_string()])
    );
    let psc = pod.security_context.as_ref().expect("pod security context");
    assert_eq!(psc.run_as_non_root, Some(true));
    assert_eq!(
        psc.seccomp_profile.as_ref().map(|p| p.type_.as_str()),
        Some("RuntimeDefault")
    );
    assert!(
        c.resources
            .as_ref()
            .and_then(|r| r.limits.as_ref())
            .is_some()
    );
}

#[test]
fn leases_only_with_leader_election_in_a_role_beside_the_operator() {
    let mut m = Manifests::new("op").namespace("op-system");
    m.rules.merge(&scoped_rules::<Parent>(&wiring(false), true));
    assert!(m.roles().is_empty());
    let m = m.leader_election(true);
    assert!(
        verbs(&m.rules(), "coordination.k8s.io", "leases").is_empty(),
        "not cluster-wide"
    );
    let roles = m.roles();
    assert_eq!(roles.len(), 1);
    assert_eq!(
        roles[0].metadata.name.as_deref(),
        Some("op-leader-election")
    );
    assert_eq!(roles[0].metadata.namespace.as_deref(), Some("op-system"));
    assert_eq!(
        verbs(
            roles[0].rules.as_deref().unwrap(),
            "coordination.k8s.io",
            "leases"
        ),
        LEASE_VERBS
    );
    let bindings = m.role_bindings();
    assert_eq!(bindings[0].role_ref.name, "op-leader-election");
    assert_eq!(bindings[0].subjects.as_ref().unwrap()[0].name, "op");
    assert!(m.container_args().contains(&"--leader-elect".to_string()));
}

#[test]
fn sharded_replicas_list_leases_and_patch_their_parents() {
    use kube::Resource;
    let mut m = Manifests::new("op").namespace("op-system");
    m.rules.merge(&scoped_rules::<Parent>(&wiring(false), true));
    m.parents.push((
        Parent::group(&()).into_owned(),
        Parent::plural(&()).into_owned(),
        false,
    ));
    let plural = Parent::plural(&()).into_owned();
    let group = Parent::group(&()).into_owned();
    assert!(!verbs(&m.rules(), &group, &plural).contains(&"patch".to_string()));
    let m = m.sharded(Some(3));
    assert!(verbs(&m.rules(), &group, &plural).contains(&"patch".to_string()));
    let roles = m.roles();
    assert_eq!(roles.len(), 1);
    assert_eq!(
        verbs(
            roles[0].rules.as_deref().unwrap(),
            "coordination.k8s.io",
            "leases"
        ),
        ["get", "list", "create", "update"]
    );
    let args = m.container_args();
    assert!(args.contains(&"--sharded".to_string()));
    assert!(!args.contains(&"--leader-elect".to_string()));
    assert_eq!(m.deployment().spec.unwrap().replicas, Some(3));
}

#[test]
fn metrics_get_a_port_a_flag_and_a_service() {
    let m = Manifests::new("op")
        .namespace("op-system")
        .metrics(8080)
        .health_probes(8081);
    assert_eq!(
        m.container_args(),
        [
            "--health-probe-bind-address=:8081",
            "--metrics-bind-address=:8080"
        ]
    );
    let ports: Vec<_> = m
        .container_ports()
        .into_iter()
        .map(|p| (p.name.unwrap(), p.container_port))
        .collect();
    assert_eq!(
        ports,
        [("healthz".to_string(), 8081), ("metrics".to_string(), 8080)]
    );
    let service = m.metrics_service().unwrap();
    assert_eq!(service.metadata.name.as_deref(), Some("op-metrics"));
    let spec = service.spec.unwrap();
    assert_eq!(spec.selector, Some(m.labels()));
    assert_eq!(spec.ports.unwrap()[0].port, 8080);
    assert!(Manifests::new("op").metrics_service().is_none());
}

#[test]
fn watching_namespaces_grants_namespaced_rules_per_namespace() {
    use k8s_openapi::api::core::v1::ConfigMap;
    // A namespaced parent (ConfigMap stands in) owning Deployments and reading Namespaces.
    let mut w = Wiring::default();
    w.owns::<Deployment>();
    w.tracks::<Namespace>();
    let mut m = Manifests::new("op").namespace("op-system");
    m.rules.merge(&scoped_rules::<ConfigMap>(&w, true));
    let m = m.watch_namespaces(["team-b", "team-a"]);
    // Only the cluster-scoped kind needs the ClusterRole.
    let cluster = m.rules();
    assert_eq!(verbs(&cluster, "", "namespaces"), READ_VERBS);
    assert_eq!(cluster.len(), 1, "{cluster:#?}");
    let per_namespace = m.namespace_rules();
    assert_eq!(verbs(&per_namespace, "apps", "deployments"), OWNED_VERBS);
    assert_eq!(verbs(&per_namespace, "", "configmaps"), PARENT_VERBS);
    assert_eq!(verbs(&per_namespace, "", "configmaps/status"), STATUS_VERBS);
    assert_eq!(
        verbs(&per_namespace, "events.k8s.io", "events"),
        EVENT_VERBS
    );
    assert!(verbs(&per_namespace, "", "namespaces").is_empty());
    let roles = m.roles();
    let places: Vec<_> = roles
        .iter()
        .map(|r| r.metadata.namespace.clone().unwrap())
        .collect();
    assert_eq!(places, ["team-a", "team-b"]);
    assert_eq!(m.role_bindings().len(), 2);
    assert_eq!(
        m.container_args(),
        ["--namespace=team-a", "--namespace=team-b"]
    );
    // Nothing cluster-scoped: no ClusterRole at all.
    let mut w = Wiring::default();
    w.owns::<Deployment>();
    let mut m = Manifests::new("op");
    m.rules.merge(&scoped_rules::<ConfigMap>(&w, true));
    let m = m.watch_namespaces(["team-a"]);
    let kinds: Vec<String> = m
        .objects()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        kinds,
        ["ServiceAccount", "Role", "RoleBinding", "Deployment"]
    );
}

#[test]
fn the_yaml_stream_binds_the_role_to_the_account() {
    let mut m = Manifests::new("webapp-operator")
        .namespace("system")
        .image("img:1");
    m.rules.merge(&scoped_rules::<Parent>(&wiring(false), true));
    let yaml = m.to_yaml().unwrap();
    let docs: Vec<serde_json::Value> = yaml
        .split("---\n")
        .filter(|d| !d.trim().is_empty())
        .map(|d| serde_saphyr::from_str(d).unwrap())
        .collect();
    let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "Namespace",
            "ServiceAccount",
            "ClusterRole",
            "ClusterRoleBinding",
            "Deployment"
        ]
    );
    assert_eq!(docs[0]["metadata"]["name"], "system");
    assert_eq!(docs[1]["metadata"]["namespace"], "system");
    assert_eq!(docs[3]["roleRef"]["name"], "webapp-operator");
    assert_eq!(docs[3]["subjects"][0]["namespace"], "system");
    let pod = &docs[4]["spec"]["template"]["spec"];
    assert_eq!(pod["serviceAccountName"], "webapp-operator");
    assert_eq!(pod["containers"][0]["image"], "img:1");
    assert_eq!(docs[2]["rules"].as_array().unwrap().len(), 6);
}

#[test]
fn webhooks_are_served_fronted_configured_and_certified_consistently() {
    use crate::admission::{Verdict, Webhooks};
    let hooks = Webhooks::<ConfigMap>::new()
        .validate(|_| Verdict::allow())
        .default(|_| {});
    let plain = Manifests::new("op").namespace("op-system");
    assert!(plain.webhook_service().is_none());
    assert!(plain.webhook_certificate().is_empty());
    let objects = plain.objects().unwrap();
    assert!(!objects.iter().any(|o| {
        o["kind"]
            .as_str()
            .is_some_and(|k| k.contains("Webhook") || k == "Certificate")
    }));

    let m = Manifests::new("op")
        .namespace("op-system")
        .admission(&hooks);
    let objects = m.objects().unwrap();
    let find = |kind: &str, name: &str| {
        objects
            .iter()
            .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no {kind} {name}"))
            .clone()
    };
    let deployment = find("Deployment", "op");
    let service = find("Service", "op-webhook");
    let certificate = find("Certificate", "op-webhook");
    find("Issuer", "op-selfsigned");
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    // The Service selects the operator's pods, on the container's named port.
    assert_eq!(
        service["spec"]["selector"],
        deployment["spec"]["template"]["metadata"]["labels"]
    );
    assert_eq!(service["spec"]["ports"][0]["targetPort"], "webhook");
    assert!(
        container["ports"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "webhook" && p["containerPort"] == WEBHOOK_PORT)
    );
    // The certificate names the Service and lands in the Secret the pod mounts where the flag points.
    assert_eq!(
        certificate["spec"]["dnsNames"][0],
        "op-webhook.op-system.svc"
    );
    let volume = &deployment["spec"]["template"]["spec"]["volumes"][0];
    assert_eq!(
        volume["secret"]["secretName"],
        certificate["spec"]["secretName"]
    );
    assert_eq!(container["volumeMounts"][0]["mountPath"], WEBHOOK_CERT_DIR);
    let args: Vec<&str> = container["args"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a.as_str())
        .collect();
    assert!(
        args.contains(&"--webhook-bind-address=0.0.0.0:9443"),
        "{args:?}"
    );
    assert!(args.contains(&format!("--webhook-cert-dir={WEBHOOK_CERT_DIR}").as_str()));
    // Both configurations send the API server to the Service, with the CA injected from the Certificate.
    for kind in [
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
    ] {
        let c = find(kind, "op");
        assert_eq!(
            c["metadata"]["annotations"]["cert-manager.io/inject-ca-from"],
            "op-system/op-webhook"
        );
        let client = &c["webhooks"][0]["clientConfig"];
        assert_eq!(client["service"]["name"], "op-webhook");
        assert_eq!(client["service"]["namespace"], "op-system");
        assert!(client.get("caBundle").is_none(), "{client}");
    }
}

#[test]
fn secured_metrics_get_the_review_rules_a_flag_and_a_reader_role() {
    let m = Manifests::new("op").metrics(8080).metrics_secure(true);
    assert!(m.container_args().contains(&"--metrics-secure".to_string()));
    let rules = m.rules();
    assert_eq!(
        verbs(&rules, "authentication.k8s.io", "tokenreviews"),
        ["create"]
    );
    assert_eq!(
        verbs(&rules, "authorization.k8s.io", "subjectaccessreviews"),
        ["create"]
    );
    let reader = m.metrics_reader_role().unwrap();
    assert_eq!(reader.metadata.name.as_deref(), Some("op-metrics-reader"));
    let rule = &reader.rules.unwrap()[0];
    assert_eq!(
        rule.non_resource_urls.as_deref(),
        Some(&["/metrics".to_string()][..])
    );
    assert_eq!(rule.verbs, ["get"]);
    // Off by default: no reviews, no reader.
    let plain = Manifests::new("op").metrics(8080);
    assert!(verbs(&plain.rules(), "authentication.k8s.io", "tokenreviews").is_empty());
    assert!(plain.metrics_reader_role().is_none());
}
