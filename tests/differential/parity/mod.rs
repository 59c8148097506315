//! The kubectl parity suite: one script of kubectl commands, run against the in-memory server (served over
//! HTTP, built with `controllers(false)` like a bare kube-apiserver) and against the real control plane, each
//! in a fresh namespace set as the kubeconfig's current namespace; the outputs (exit code, stdout, stderr) are
//! normalized (`normalize.rs`: namespace, uids, resourceVersions, timestamps, IPs, generated names, kubectl
//! diff's temporary directories) and compared line by line.
//!
//! Adding a command is adding a line to [`SCRIPT`]; `PARITY_TRANSCRIPT=1` prints kube-apiserver's normalized
//! output (with `--nocapture`). Skipped (with a `SKIPPED` message) without a control plane
//! or without kubectl, unless `OPERATOR_REQUIRE_CONTROL_PLANE` is set.
//!
//! # Known deviations
//!
//! Accepted line by line in [`DEVIATIONS`], each with its reason, and listed in the "Known differences from
//! kube-apiserver" of `kubewright::testing`:
//!
//! - Discovery (`kubectl api-versions`, `api-resources`) lacks what the in-memory server does not serve:
//!   `bindings` and `componentstatuses` (`NOT_SERVED` of the differential suite).
//! - A new Deployment shows `status: {}` and a new Service `status: {loadBalancer: {}}` on kube-apiserver, and
//!   no `status` in memory (`EMPTY_BUILTIN_STATUS` of the differential suite).
//!
//! # Left out
//!
//! - `--dry-run=client` never reaches a server and is not compared. The imperative commands (`kubectl create
//!   configmap`, `secret`, `deployment`, `job`, `run`, `expose`, `edit` with `KUBE_EDITOR` set to a script that
//!   changes one value, ...) are compared; `kubectl create <generator>` sends a protobuf body, the others JSON.
//! - `kubectl get` tables (the columns of built-in kinds are being reworked); `-o name`, `-o yaml`, `-o json`,
//!   `-o jsonpath` and `-o go-template` are compared.
//! - `kubectl apply --validate=strict` of a change to an existing object (a patch: kube-apiserver answers 422
//!   `patch: Invalid value: "map[...]"`, the in-memory server 400 with the message of a create), and
//!   `--validate=ignore` (kube-apiserver returns no warning, the in-memory server warns of each unknown field).
//!
//! Besides the normalization, one line is dropped: client-go's reflector log of a watch cut by `kubectl wait`'s
//! own timeout, which kubectl prints or not depending on a race inside it, on either server.

mod normalize;
mod run;

use std::path::Path;

use kube::CustomResourceExt;
use kubewright::testing::ApiServer;
use kubewright::testing::envtest::ControlPlane;
use tests::kubectl::kubectl_binary;

use crate::support::Widget;
use normalize::{Deviation, Normalizer, compare};
use run::{Cluster, Step};

/// The commands, one a line (`{dir}` is the directory of [`MANIFESTS`], `{ns}` the namespace; `&` runs a
/// command in the background until the next `join`; `#` starts a comment).
const SCRIPT: &str = r#"
# Discovery, the namespace
api-versions
api-resources -o name
get namespace {ns} -o yaml

# A custom resource definition and its objects
apply -f {dir}/crd.yaml
wait --for=condition=Established crd/gadgets.parity.example.dev --timeout=30s

# kubectl explain, from /openapi/v3
explain configmap
explain deployment.spec
explain service.spec.ports
explain service.spec
explain service.spec.type
explain pod.spec.containers.resources

# Field validation: unknown fields
apply -f {dir}/unknown-field.yaml --validate=strict
apply -f {dir}/unknown-field.yaml --validate=warn -o name
apply -f {dir}/unknown-gadget.yaml --validate=strict
apply -f {dir}/unknown-gadget.yaml --validate=true
apply -f {dir}/gadget.yaml
apply -f {dir}/gadget.yaml
get gadget g1 -o yaml
get gadget g1 -o json
get gadgets -o name
get gadget g1 -o jsonpath={.spec.size}
patch gadget g1 --type=merge -p '{"spec":{"color":"blue"}}'
patch gadget g1 -p '{"spec":{"color":"blue"}}'
patch gadget g1 --type=json -p '[{"op":"replace","path":"/spec/size","value":2}]'
scale gadget g1 --replicas=4
get gadget g1 -o jsonpath={.spec.size}
label gadget g1 tier=front
annotate gadget g1 note=hello
get gadgets -l tier=front -o name
label gadget g1 tier-
get gadget g1 -o yaml
get gadget g1 --show-managed-fields -o 'jsonpath={.metadata.managedFields[?(@.manager=="kubectl-label")]}'
explain gadget
explain gadget.spec
explain gadget.status.conditions
explain gadget.metadata.ownerReferences
explain widget.spec
explain thing.spec

# kubectl explain from /openapi/v2 (gnostic's protobuf)
explain --output plaintext-openapiv2 configmap
explain --output plaintext-openapiv2 service.spec
explain --output plaintext-openapiv2 service.spec.ports
explain --output plaintext-openapiv2 deployment.spec.template.spec.containers
explain --output plaintext-openapiv2 gadget.spec
explain --output plaintext-openapiv2 gadget.status.conditions
explain --output plaintext-openapiv2 widget.spec
explain --output plaintext-openapiv2 thing.spec
explain --output plaintext-openapiv2 thing.spec.inner
explain --output plaintext-openapiv2 thing --recursive

# Built-in objects
apply -f {dir}/configmap.yaml
apply -f {dir}/deployment.yaml
apply -f {dir}/service.yaml
apply -f {dir}/configmap.yaml
get configmap settings -o yaml
get configmap settings -o json
get deployment web -o yaml
get service web -o yaml
get configmaps,deployments,services -o name
get deployment web -o jsonpath={.spec.template.spec.containers[0].image}
get configmaps -o 'jsonpath={range .items[*]}{.metadata.name}{"\n"}{end}'
get configmap missing -o name

# label, annotate, scale, patch, set image
label configmap settings tier=backend
get configmaps -l tier=backend -o name
label configmap settings tier=frontend
label configmap settings tier=frontend --overwrite
label configmap settings tier-
annotate deployment web note=hello
annotate deployment web note=again
annotate deployment web note-
scale deployment web --replicas=3
get deployment web -o jsonpath={.spec.replicas}
scale deployment web --replicas=-1
patch configmap settings -p '{"data":{"color":"green"}}'
patch configmap settings --type=merge -p '{"data":{"size":"large"}}'
patch configmap settings --type=json -p '[{"op":"remove","path":"/data/size"}]'
patch configmap settings --type=json -p '[{"op":"remove","path":"/data/absent"}]'
get configmap settings -o jsonpath={.data}
patch deployment web --type=json -p '[{"op":"replace","path":"/spec/replicas","value":2}]'
patch deployment web -p '{"spec":{"template":{"spec":{"containers":[{"name":"app","env":[{"name":"A","value":"1"}]}]}}}}'
set image deployment/web app=nginx:1.28
set env deployment/web B=2
get deployment web -o 'jsonpath={.spec.replicas} {.metadata.generation} {.spec.template.spec.containers[0].image} {.spec.template.spec.containers[0].env}'

# Server-side dry runs
apply -f {dir}/configmap-v2.yaml --dry-run=server -o yaml
get configmap settings -o jsonpath={.data}
apply --server-side -f {dir}/configmap-v2.yaml --dry-run=server -o yaml
apply --server-side --force-conflicts -f {dir}/configmap-v2.yaml --dry-run=server -o yaml
apply --server-side --force-conflicts -f {dir}/configmap-v2.yaml --dry-run=server --show-managed-fields -o jsonpath={.metadata.managedFields[*].manager}
create -f {dir}/extra.yaml --dry-run=server -o yaml
get configmap extra -o name
create -f {dir}/generated.yaml --dry-run=server -o name
create -f {dir}/configmap.yaml --dry-run=server
delete configmap settings --dry-run=server
get configmap settings -o name
delete gadget g1 --dry-run=server
scale deployment web --replicas=7 --dry-run=server
get deployment web -o jsonpath={.spec.replicas}
label configmap settings dry=run --dry-run=server
patch configmap settings -p '{"data":{"dry":"run"}}' --dry-run=server -o jsonpath={.data}
get configmap settings -o 'jsonpath={.data} {.metadata.labels}'

# kubectl diff: 0 without differences, 1 with
diff -f {dir}/service.yaml
diff -f {dir}/deployment-v2.yaml
diff --server-side -f {dir}/deployment-v2.yaml
diff --server-side --force-conflicts -f {dir}/deployment-v2.yaml
diff --server-side --force-conflicts -f {dir}/gadget.yaml
get deployment web -o jsonpath={.spec.template.spec.containers[0].image}

# Client-side apply of a change: the strategic merge patch kubectl computes from /openapi/v3's schema
apply -f {dir}/deployment-v2.yaml
get deployment web -o 'jsonpath={.spec.replicas} {.spec.template.spec.containers} {.metadata.annotations}'
apply -f {dir}/deployment.yaml
get deployment web -o 'jsonpath={.spec.replicas} {.spec.template.spec.containers}'

# kubectl wait
wait --for=condition=Ready gadget/g1 --timeout=2s
& wait --for=condition=Ready gadget/g1 --timeout=60s
patch gadget g1 --subresource=status --type=merge -p '{"status":{"conditions":[{"type":"Ready","status":"True","reason":"Done","message":"ok","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}'
join
wait --for=condition=Ready gadget/g1 --timeout=10s
wait --for=condition=Ready=false gadget/g1 --timeout=2s
& wait --for=jsonpath={.status.phase}=Running gadget/g1 --timeout=60s
patch gadget g1 --subresource=status --type=merge -p '{"status":{"phase":"Running"}}'
join
wait --for=jsonpath={.spec.replicas}=2 deployment/web --timeout=10s
wait --for=jsonpath={.spec.replicas}=9 deployment/web --timeout=2s
apply -f {dir}/held.yaml
delete gadget g2 --wait=false
& wait --for=delete gadget/g2 --timeout=60s
patch gadget g2 --type=merge -p '{"metadata":{"finalizers":null}}'
join
wait --for=delete configmap/missing --timeout=5s
& wait --for=create configmap/later --timeout=60s
create -f {dir}/later.yaml
join
wait --for=create configmap/later --timeout=5s
wait --for=delete configmap/settings --timeout=2s

# get --watch until its request times out
& get gadgets --watch -o name --request-timeout=8s
patch gadget g1 --type=merge -p '{"spec":{"color":"green"}}'
join

# A changed configuration applied, replace, go-template
apply -f {dir}/configmap-v2.yaml
get configmap settings -o 'go-template={{.data.color}}/{{.data.shape}}'
replace -f {dir}/configmap.yaml
get configmap settings -o yaml

# Deletes
delete -f {dir}/deployment.yaml
delete service web
delete gadget g1
label configmaps settings later group=x
delete configmaps -l group=x --wait=false
get gadgets -o name
get configmaps -o name
get configmap settings -o name

# Imperative commands: `create <generator>` sends protobuf (client-go's typed clients), the others JSON
create configmap imp-cm --from-literal=a=1 --from-literal=b=two
get configmap imp-cm -o yaml
create configmap imp-cm --from-literal=a=1
create configmap imp-dry --from-literal=a=1 --dry-run=server -o yaml
get configmap imp-dry -o name
create secret generic imp-secret --from-literal=password=s3cr3t
get secret imp-secret -o yaml
create secret docker-registry imp-registry --docker-server=registry.example.dev --docker-username=u --docker-password=p -o name
create serviceaccount imp-sa
get serviceaccount imp-sa -o yaml
create role imp-role --verb=get,list --resource=pods,configmaps
get role imp-role -o yaml
create rolebinding imp-rb --role=imp-role --serviceaccount={ns}:imp-sa
get rolebinding imp-rb -o yaml
create clusterrole {ns}-imp --verb=get --resource=nodes
create clusterrolebinding {ns}-imp --clusterrole={ns}-imp --user=jane
get clusterrolebinding {ns}-imp -o yaml
delete clusterrolebinding {ns}-imp
delete clusterrole {ns}-imp
create namespace {ns}-imp
get namespace {ns}-imp -o jsonpath={.metadata.name}
delete namespace {ns}-imp --wait=false
create deployment imp-web --image=nginx:1.27 --replicas=2 --port=80
get deployment imp-web -o yaml
create service clusterip imp-svc --tcp=80:8080
get service imp-svc -o yaml
expose deployment imp-web --name=imp-exposed --port=8080 --target-port=80
get service imp-exposed -o yaml
create job imp-job --image=busybox -- echo hi
get job imp-job -o jsonpath={.spec.template.spec}
create cronjob imp-cron --image=busybox --schedule='*/5 * * * *'
get cronjob imp-cron -o jsonpath={.spec}
run imp-pod --image=nginx:1.27 --labels=app=imp --env=A=1 --port=80
get pod imp-pod -o jsonpath={.metadata.labels}/{.spec.containers}
scale deployment imp-web --replicas=3
set image deployment/imp-web nginx=nginx:1.28
label deployment imp-web tier=web
annotate deployment imp-web note=imperative
rollout restart deployment/imp-web
get deployment imp-web -o 'jsonpath={.spec.replicas} {.spec.template.spec.containers[0].image} {.metadata.labels} {.metadata.annotations.note}'
edit configmap imp-cm
get configmap imp-cm -o jsonpath={.data}
create quota imp-quota --hard=pods=3,requests.cpu=1
get resourcequota imp-quota -o jsonpath={.spec}
create poddisruptionbudget imp-pdb --selector=app=imp --min-available=1
get pdb imp-pdb -o jsonpath={.spec}
create priorityclass {ns}-imp --value=1000 --description=parity
get priorityclass {ns}-imp -o jsonpath={.value}/{.description}/{.preemptionPolicy}
delete priorityclass {ns}-imp
create service externalname imp-ext --external-name=db.example.dev
get service imp-ext -o jsonpath={.spec}
create ingress imp-ing --rule=web.example.dev/=imp-svc:80 --annotation=a=b
get ingress imp-ing -o jsonpath={.metadata.annotations}/{.spec}
create deployment imp-dry --image=nginx --dry-run=server -o jsonpath={.spec.template.spec.containers}
"#;

/// The manifests the script applies: (file name, content).
const MANIFESTS: &[(&str, &str)] = &[
    (
        "crd.yaml",
        r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.parity.example.dev
spec:
  group: parity.example.dev
  names:
    kind: Gadget
    plural: gadgets
    singular: gadget
    listKind: GadgetList
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.size
        statusReplicasPath: .status.size
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [color]
            properties:
              color: {type: string}
              size: {type: integer, minimum: 0, default: 1}
          status:
            type: object
            properties:
              phase: {type: string}
              size: {type: integer}
              conditions:
                type: array
                items:
                  type: object
                  required: [type, status]
                  properties:
                    type: {type: string}
                    status: {type: string}
                    reason: {type: string}
                    message: {type: string}
                    lastTransitionTime: {type: string, format: date-time}
"#,
    ),
    (
        "gadget.yaml",
        "apiVersion: parity.example.dev/v1\nkind: Gadget\nmetadata:\n  name: g1\nspec:\n  color: red\n",
    ),
    (
        "unknown-field.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: unknown\ncolor: red\ndata:\n  a: b\n",
    ),
    (
        "unknown-gadget.yaml",
        "apiVersion: parity.example.dev/v1\nkind: Gadget\nmetadata:\n  name: g3\nspec:\n  color: red\n  shade: dark\n",
    ),
    (
        "held.yaml",
        "apiVersion: parity.example.dev/v1\nkind: Gadget\nmetadata:\n  name: g2\n  finalizers:\n  - parity.example.dev/hold\nspec:\n  color: red\n",
    ),
    (
        "configmap.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  color: red\n",
    ),
    (
        "configmap-v2.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  color: yellow\n  shape: round\n",
    ),
    (
        "extra.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\ndata:\n  a: b\n",
    ),
    (
        "later.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: later\n",
    ),
    (
        "generated.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  generateName: parity-gen-\ndata:\n  a: b\n",
    ),
    ("deployment.yaml", DEPLOYMENT),
    ("deployment-v2.yaml", DEPLOYMENT_V2),
    (
        "service.yaml",
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  selector:\n    app: web\n  ports:\n  - port: 80\n    targetPort: 8080\n",
    ),
];

const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
spec:
  replicas: 1
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: app
        image: nginx:1.27
";

const DEPLOYMENT_V2: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: app
        image: nginx:1.29
";

/// The differences accepted, each with its reason.
const DEVIATIONS: &[Deviation] = &[
    Deviation {
        command: "api-resources",
        line: "  bindings",
        reason: "bindings are not served (NOT_SERVED)",
    },
    Deviation {
        command: "api-resources",
        line: "  componentstatuses",
        reason: "componentstatuses are not served (NOT_SERVED)",
    },
    Deviation {
        command: "get deployment web -o yaml",
        line: "  status: {}",
        reason: "a new Deployment has status: {} on kube-apiserver, no status in memory (EMPTY_BUILTIN_STATUS)",
    },
    Deviation {
        command: "get service web -o yaml",
        line: "  status:",
        reason: "a new Service has status: {loadBalancer: {}} on kube-apiserver, no status in memory (EMPTY_BUILTIN_STATUS)",
    },
    Deviation {
        command: "get service web -o yaml",
        line: "    loadBalancer: {}",
        reason: "a new Service has status: {loadBalancer: {}} on kube-apiserver, no status in memory (EMPTY_BUILTIN_STATUS)",
    },
    Deviation {
        command: "get deployment imp-web -o yaml",
        line: "  status: {}",
        reason: "a new Deployment has status: {} on kube-apiserver, no status in memory (EMPTY_BUILTIN_STATUS)",
    },
    Deviation {
        command: "get service imp-svc -o yaml",
        line: "  status:",
        reason: "a new Service has status: {loadBalancer: {}} on kube-apiserver, no status in memory (EMPTY_BUILTIN_STATUS)",
    },
    Deviation {
        command: "get service imp-svc -o yaml",
        line: "    loadBalancer: {}",
        reason: "a new Service has status: {loadBalancer: {}} on kube-apiserver, no status in memory (EMPTY_BUILTIN_STATUS)",
    },
    Deviation {
        command: "get service imp-exposed -o yaml",
        line: "  status:",
        reason: "a new Service has status: {loadBalancer: {}} on kube-apiserver, no status in memory (EMPTY_BUILTIN_STATUS)",
    },
    Deviation {
        command: "get service imp-exposed -o yaml",
        line: "    loadBalancer: {}",
        reason: "a new Service has status: {loadBalancer: {}} on kube-apiserver, no status in memory (EMPTY_BUILTIN_STATUS)",
    },
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_answers_alike_on_both_servers() {
    let test = "kubectl_answers_alike_on_both_servers";
    let Some(cp) = ControlPlane::shared_or_skip(test).await else {
        return;
    };
    let Some(bin) = kubectl_binary() else {
        assert!(
            std::env::var_os("OPERATOR_REQUIRE_CONTROL_PLANE").is_none(),
            "kubectl is not installed and OPERATOR_REQUIRE_CONTROL_PLANE is set"
        );
        return;
    };
    let dir = tempfile::tempdir().expect("a temporary directory");
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).expect("the manifest directory");
    for (name, content) in MANIFESTS {
        std::fs::write(manifests.join(name), content).expect("a manifest");
    }
    let editor = run::write_editor(dir.path());

    let server = ApiServer::builder().controllers(false).build();
    let serving = server
        .serve("127.0.0.1:0".parse().expect("an address"))
        .await
        .expect("the in-memory server is served");
    let memory_config = dir.path().join("memory.kubeconfig");
    serving
        .write_kubeconfig(&memory_config)
        .expect("the in-memory kubeconfig");
    // Other tests of this process install the Widget, Gadget and Thing CRDs on the control plane: both
    // servers serve them.
    crate::support::install_crd(&server.client()).await;
    cp.install_crds([
        Widget::crd(),
        crate::support::gadget_definition(),
        crate::openapi_v2::thing_definition(),
    ])
    .await
    .expect("the CRD installs on the control plane");
    let memory_ns = crate::support::namespace(&server.client()).await;
    let real_config = dir.path().join("real.kubeconfig");
    cp.write_kubeconfig(&real_config)
        .expect("the control plane's kubeconfig");
    let real_ns = cp.namespace().await.expect("a namespace");

    // The two servers are independent (each its own kubeconfig, namespace and kubectl cache): the script runs
    // on both at once, which halves the suite's longest test.
    let on = |config, ns: &String| {
        let cluster = Cluster {
            bin: bin.clone(),
            kubeconfig: config,
            ns: ns.clone(),
            editor: editor.clone(),
        };
        let manifests = &manifests;
        async move {
            set_namespace(&cluster, &cluster.ns).await;
            let steps = cluster.run(SCRIPT, manifests).await;
            normalized(&steps, &cluster.ns, manifests)
        }
    };
    let outputs = {
        let (memory, real) = tokio::join!(on(memory_config, &memory_ns), on(real_config, &real_ns));
        [memory, real]
    };
    let report = compare(&outputs[0], &outputs[1], DEVIATIONS);
    let transcript = |o: &[Vec<String>]| o.iter().flatten().cloned().collect::<Vec<_>>().join("\n");
    if std::env::var_os("PARITY_TRANSCRIPT").is_some() {
        eprintln!("kube-apiserver (normalized):\n{}", transcript(&outputs[1]));
    }
    if !report.is_empty() {
        panic!(
            "kubectl's output differs between the in-memory server and kube-apiserver:\n{report}\n\
             in-memory (normalized):\n{}\n\nkube-apiserver (normalized):\n{}",
            transcript(&outputs[0]),
            transcript(&outputs[1])
        );
    }
    // The cluster-scoped CRD is shared by every test of this process.
    let crd = Cluster {
        bin,
        kubeconfig: dir.path().join("real.kubeconfig"),
        ns: real_ns,
        editor,
    };
    crd.run("delete -f {dir}/crd.yaml --wait=false", &manifests)
        .await;
}

async fn set_namespace(cluster: &Cluster, ns: &str) {
    let steps = cluster
        .run(
            &format!("config set-context --current --namespace={ns}"),
            Path::new(""),
        )
        .await;
    assert_eq!(steps[0].code, 0, "{steps:?}");
}

fn normalized(steps: &[Step], ns: &str, dir: &Path) -> Vec<Vec<String>> {
    let mut n = Normalizer::new(ns, &dir.display().to_string());
    steps.iter().map(|s| n.step(s)).collect()
}
