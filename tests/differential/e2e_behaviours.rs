//! Behaviours of kube-apiserver that Kubernetes' API-machinery e2e specs meet (`cargo xtask
//! e2e-apimachinery`): the health endpoints' check lists.

use kube::Client;

use crate::support::{Transcript, run};

async fn health(client: Client, _ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    for path in [
        "/healthz",
        "/healthz?verbose",
        "/livez?verbose=1",
        "/readyz?verbose=true",
        "/livez?verbose&exclude=etcd&exclude=nope",
        "/readyz?exclude=etcd",
        "/healthz/etcd",
        "/readyz/shutdown",
        "/livez/poststarthook/rbac/bootstrap-roles",
        "/livez/nope",
    ] {
        t.get(&format!("GET {path}"), path).await;
    }
    t
}

#[tokio::test]
async fn health_endpoints_list_their_checks() {
    run("health_endpoints_list_their_checks", &[], health).await;
}
