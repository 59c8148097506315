//! One scenario of the `tenants` operator, run on the embedded cluster and on a whole real cluster (there under
//! the operator's own service account): a foreign Namespace refused and left untouched, quotas and bindings
//! only in the tenant's own namespaces, an entry removed deletes its Namespace once, a converged tenant writes
//! nothing, and deleting the tenant removes its Namespaces (garbage collection).

use std::collections::BTreeMap;
use std::time::Duration;

use examples::tenants::{
    ADMIN_ROLE, BINDING_NAME, CPU_LIMIT, ENTRY_LABEL, QUOTA_NAME, Tenant, TenantStatus, reconciler,
    sample,
};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, ResourceQuota};
use k8s_openapi::api::rbac::v1::RoleBinding;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::{Client, CustomResourceExt, ResourceExt};
use kubewright::Operator;
use serde_json::json;

/// The tenant of the scenario.
pub const TENANT: &str = "acme";
/// The Namespace that exists before the tenant wants it, and that the tenant must never touch.
pub const FOREIGN: &str = "acme-prod";

/// Polls `f` (bounded: about 30 s) until it returns `Ok`; panics naming `what` and the last value seen.
pub async fn eventually<T, L: std::fmt::Debug>(
    what: &str,
    f: impl AsyncFnMut() -> Result<T, L>,
) -> T {
    eventually_within(what, Duration::from_secs(30), f).await
}

/// How long a whole cluster's garbage collector may take to act for a kind it learned of after it started:
/// kube-controller-manager looks for new resources (a CRD installed by the test) every 30 seconds, and only
/// then watches them; namespace deletion then waits for the namespace controller.
pub const GARBAGE_COLLECTION_BOUND: Duration = Duration::from_secs(90);

/// [`eventually`] with another bound.
pub async fn eventually_within<T, L: std::fmt::Debug>(
    what: &str,
    bound: Duration,
    mut f: impl AsyncFnMut() -> Result<T, L>,
) -> T {
    let mut last = None;
    for _ in 0..bound.as_millis().div_ceil(100) {
        match f().await {
            Ok(v) => return v,
            Err(l) => last = Some(l),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}; last seen: {last:#?}");
}

/// The tenant's status, `(Ready status, reason, message, namespaces)`, for the generation it describes.
async fn ready(tenants: &Api<Tenant>) -> (String, String, String, Vec<String>, bool) {
    let tenant = tenants.get(TENANT).await.expect("get the tenant");
    let status: TenantStatus = tenant.status.clone().unwrap_or_default();
    let current = status.observed_generation == tenant.metadata.generation;
    let ready = status.conditions.iter().find(|c| c.type_ == "Ready");
    (
        ready.map(|c| c.status.clone()).unwrap_or_default(),
        ready.map(|c| c.reason.clone()).unwrap_or_default(),
        ready.map(|c| c.message.clone()).unwrap_or_default(),
        status.namespaces,
        current,
    )
}

/// Waits until the current generation's status is `Ready = ready` with `reason` and lists `namespaces`.
async fn status_is(
    tenants: &Api<Tenant>,
    ready_: &str,
    reason: &str,
    namespaces: &[&str],
) -> String {
    eventually(
        &format!("Ready={ready_} ({reason}) with namespaces {namespaces:?}"),
        async || {
            let got = ready(tenants).await;
            if got.4 && got.0 == ready_ && got.1 == reason && got.3 == namespaces {
                Ok(got.2)
            } else {
                Err(got)
            }
        },
    )
    .await
}

/// Checks the quota and the binding of the namespace `ns`.
async fn children_in(client: &Client, ns: &str, cpu: &str, admins: &[&str]) {
    let quotas: Api<ResourceQuota> = Api::namespaced(client.clone(), ns);
    let bindings: Api<RoleBinding> = Api::namespaced(client.clone(), ns);
    let quota = eventually(&format!("the quota in {ns}"), async || {
        quotas
            .get_opt(QUOTA_NAME)
            .await
            .expect("get quota")
            .ok_or(())
    })
    .await;
    let hard = quota.spec.and_then(|s| s.hard).unwrap_or_default();
    assert_eq!(
        hard.get(CPU_LIMIT).map(|q| q.0.as_str()),
        Some(cpu),
        "{hard:?}"
    );
    let binding = eventually(&format!("the binding in {ns}"), async || {
        bindings
            .get_opt(BINDING_NAME)
            .await
            .expect("get binding")
            .ok_or(())
    })
    .await;
    assert_eq!(binding.role_ref.kind, "ClusterRole");
    assert_eq!(binding.role_ref.name, ADMIN_ROLE);
    let users: Vec<(String, String, Option<String>)> = binding
        .subjects
        .unwrap_or_default()
        .into_iter()
        .map(|s| (s.kind, s.name, s.api_group))
        .collect();
    let want: Vec<(String, String, Option<String>)> = admins
        .iter()
        .map(|a| {
            (
                "User".to_string(),
                a.to_string(),
                Some("rbac.authorization.k8s.io".to_string()),
            )
        })
        .collect();
    assert_eq!(users, want);
}

/// The foreign Namespace is as the user left it: no owner, its label, no quota or binding, its ConfigMap.
async fn foreign_untouched(client: &Client) {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let ns = namespaces
        .get(FOREIGN)
        .await
        .expect("the foreign Namespace");
    assert!(ns.owner_references().is_empty(), "{ns:?}");
    assert_eq!(ns.labels().get(ENTRY_LABEL), None, "{ns:?}");
    assert_eq!(
        ns.labels().get("team").map(String::as_str),
        Some("payments")
    );
    assert!(ns.metadata.deletion_timestamp.is_none());
    let quotas: Api<ResourceQuota> = Api::namespaced(client.clone(), FOREIGN);
    let bindings: Api<RoleBinding> = Api::namespaced(client.clone(), FOREIGN);
    assert!(quotas.get_opt(QUOTA_NAME).await.expect("get").is_none());
    assert!(bindings.get_opt(BINDING_NAME).await.expect("get").is_none());
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), FOREIGN);
    assert!(cms.get_opt("user-data").await.expect("get").is_some());
}

/// Checks that the operator writes nothing over a further pass: the tenant is annotated (a change that is not
/// its spec, so a pass runs and must find everything in place) and the writes seen for a while after are
/// compared. `writes` lists every write request seen so far, as `METHOD path` (without query); the
/// annotation's own PATCH is not the operator's.
async fn quiet(tenants: &Api<Tenant>, writes: &dyn Fn() -> Vec<String>, round: u32) {
    // A request is logged once answered, which under load can be after the client saw its effect (the status a
    // caller waited for): the count is taken once the log has stood still for a while (at most 10 s).
    let mut before = writes().len();
    for _ in 0..20 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let now = writes().len();
        if now == before {
            break;
        }
        before = now;
    }
    tenants
        .patch(
            TENANT,
            &PatchParams::default(),
            &Patch::Merge(
                json!({"metadata": {"annotations": {"example.dev/poke": round.to_string()}}}),
            ),
        )
        .await
        .expect("annotate the tenant");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let annotate = format!("PATCH /apis/tenants.example.dev/v1/tenants/{TENANT}");
    let after: Vec<String> = writes()
        .into_iter()
        .skip(before)
        .filter(|w| *w != annotate)
        .collect();
    assert!(after.is_empty(), "a converged tenant wrote: {after:#?}");
}

/// Runs the scenario. `admin` installs the CRD and plays the user; the operator runs with `operator` (the CRD
/// and any kind the cluster needs registered are the caller's business, except the Tenant CRD, installed
/// here); `writes` lists the write requests seen so far (see [`quiet`]).
pub async fn run(admin: Client, operator: Client, writes: &dyn Fn() -> Vec<String>) {
    kubewright::cli::ensure_crd(&admin, Tenant::crd())
        .await
        .expect("install the Tenant CRD");
    let namespaces: Api<Namespace> = Api::all(admin.clone());
    let tenants: Api<Tenant> = Api::all(admin.clone());

    // A user's namespace that happens to have the name the tenant will want.
    let mut foreign = Namespace::default();
    foreign.metadata.name = Some(FOREIGN.into());
    foreign.metadata.labels = Some(BTreeMap::from([("team".into(), "payments".into())]));
    namespaces
        .create(&PostParams::default(), &foreign)
        .await
        .expect("create the foreign Namespace");
    let mut data = ConfigMap::default();
    data.metadata.name = Some("user-data".into());
    Api::<ConfigMap>::namespaced(admin.clone(), FOREIGN)
        .create(&PostParams::default(), &data)
        .await
        .expect("create the user's ConfigMap");

    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(Operator::new(operator).controller(reconciler()).run_until(
        async move {
            let _ = stopped.await;
        },
    ));

    // Two entries, one of which names the foreign Namespace: refused, and nothing goes into it.
    tenants
        .create(
            &PostParams::default(),
            &sample(TENANT, &["dev", "prod"], "2", &["alice", "bob"]),
        )
        .await
        .expect("create the tenant");
    let message = status_is(&tenants, "False", "NotOwned", &["acme-dev"]).await;
    assert_eq!(
        message, "Namespace acme-prod exists and is not controlled by Tenant acme",
        "the refusal message"
    );
    children_in(&admin, "acme-dev", "2", &["alice", "bob"]).await;
    let dev = namespaces.get("acme-dev").await.expect("acme-dev");
    assert_eq!(
        dev.labels().get(ENTRY_LABEL).map(String::as_str),
        Some("dev")
    );
    assert_eq!(
        dev.owner_references().first().map(|o| o.name.as_str()),
        Some(TENANT)
    );
    foreign_untouched(&admin).await;

    // The foreign entry goes, another comes, and the quota and the admins change.
    tenants
        .patch(
            TENANT,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"namespaces": ["dev", "test"], "cpuQuota": "3", "admins": ["alice"]}})),
        )
        .await
        .expect("change the tenant");
    status_is(&tenants, "True", "Ready", &["acme-dev", "acme-test"]).await;
    children_in(&admin, "acme-dev", "3", &["alice"]).await;
    children_in(&admin, "acme-test", "3", &["alice"]).await;
    foreign_untouched(&admin).await;
    quiet(&tenants, writes, 1).await;

    // An entry removed: its Namespace is deleted, once.
    let deletes_of_test = || {
        writes()
            .iter()
            .filter(|w| *w == "DELETE /api/v1/namespaces/acme-test")
            .count()
    };
    tenants
        .patch(
            TENANT,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"namespaces": ["dev"]}})),
        )
        .await
        .expect("remove an entry");
    // A Namespace being deleted is not the tenant's any more: not listed, and not holding Ready back.
    status_is(&tenants, "True", "Ready", &["acme-dev"]).await;
    eventually_within(
        "acme-test gone",
        GARBAGE_COLLECTION_BOUND,
        async || match namespaces.get_opt("acme-test").await.expect("get") {
            None => Ok(()),
            Some(ns) => Err(ns.metadata.deletion_timestamp),
        },
    )
    .await;

    quiet(&tenants, writes, 2).await;
    assert_eq!(deletes_of_test(), 1, "acme-test deleted again");
    foreign_untouched(&admin).await;

    // The tenant deleted: its Namespaces go with it where a garbage collector runs.
    tenants
        .delete(TENANT, &DeleteParams::default())
        .await
        .expect("delete the tenant");
    eventually_within(
        "acme-dev gone with its tenant",
        GARBAGE_COLLECTION_BOUND,
        async || match namespaces.get_opt("acme-dev").await.expect("get") {
            None => Ok(()),
            Some(ns) => Err(ns.metadata.deletion_timestamp),
        },
    )
    .await;

    foreign_untouched(&admin).await;

    let _ = stop.send(());
    running
        .await
        .expect("the operator stops")
        .expect("the operator ran");
}
