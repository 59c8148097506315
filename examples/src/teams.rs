//! The `Team` operator: a child set and a `watches` mapper, written with `#[derive(Reconciler)]`.
//!
//! A `Team` (`example.dev/v1`, namespaced) lists its members; the operator keeps one ServiceAccount per member,
//! named `<team>-<member>` and matched by the [`MEMBER_LABEL`] (a child set: members added, removed or renamed
//! become creates and deletes). Each account carries the team's role, read from a ConfigMap labelled
//! [`TEAM_LABEL`]` = <team>` (key `role`, default `developer`); the ConfigMap is not a child and not named in
//! the spec, so a `watches` mapper finds the team from the label whenever such a ConfigMap changes.
//!
//! `cargo run --example teams` runs it on the embedded cluster with a sample team (the examples' shared command
//! line, [`example`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{ConfigMap, ServiceAccount};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};
use kube::core::Selector;
use kube::runtime::reflector::ObjectRef;
use kube::{CustomResource, ResourceExt};
use operator::{ChildOutcome, Context, Reconciler, ReconcilerStatus};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The label naming a member on its ServiceAccount.
pub const MEMBER_LABEL: &str = "example.dev/member";
/// The label naming the team a settings ConfigMap belongs to.
pub const TEAM_LABEL: &str = "example.dev/team";
/// The annotation carrying the team's role on each account.
pub const ROLE_ANNOTATION: &str = "example.dev/role";
/// The role when the team has no settings.
pub const DEFAULT_ROLE: &str = "developer";

/// A team: one ServiceAccount per member.
#[derive(
    CustomResource, Reconciler, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema,
)]
#[kube(
    group = "example.dev",
    version = "v1",
    kind = "Team",
    namespaced,
    status = "TeamStatus"
)]
#[children(desired = desired_accounts, id = member, reflect = reflect_accounts)]
#[watches(ConfigMap, map = team_of_settings)]
pub struct TeamSpec {
    /// The members' names (lowercase DNS labels).
    pub members: Vec<String>,
}

/// What the operator observed of a team.
#[derive(
    Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, ReconcilerStatus,
)]
#[serde(rename_all = "camelCase")]
pub struct TeamStatus {
    /// The generation this status describes.
    pub observed_generation: Option<i64>,
    /// `Ready`, rolled up from `ServiceAccountsReady`.
    #[serde(default)]
    pub conditions: Vec<Condition>,
    /// The members whose account exists.
    #[serde(default)]
    pub accounts: Vec<String>,
}

/// The team's role: `role` of the first (by name) ConfigMap labelled with the team, listed from the cache;
/// the `watches` mapper is what reconciles the team when such a ConfigMap changes.
fn role(team: &Team, cx: &mut Context) -> operator::Result<String> {
    let selector: Selector = [(TEAM_LABEL.to_string(), team.name_any())]
        .into_iter()
        .collect();
    let settings = cx.list::<ConfigMap>(team.namespace().as_deref(), &selector)?;
    Ok(settings
        .iter()
        .find_map(|cm| cm.data.as_ref()?.get("role").cloned())
        .unwrap_or_else(|| DEFAULT_ROLE.to_string()))
}

/// One ServiceAccount per member, annotated with the team's role.
pub fn desired_accounts(team: &Team, cx: &mut Context) -> operator::Result<Vec<ServiceAccount>> {
    let role = role(team, cx)?;
    Ok(team
        .spec
        .members
        .iter()
        .map(|member| ServiceAccount {
            metadata: ObjectMeta {
                name: Some(format!("{}-{member}", team.name_any())),
                labels: Some(BTreeMap::from([(MEMBER_LABEL.to_string(), member.clone())])),
                annotations: Some(BTreeMap::from([(
                    ROLE_ANNOTATION.to_string(),
                    role.clone(),
                )])),
                ..Default::default()
            },
            ..Default::default()
        })
        .collect())
}

/// The member an account belongs to.
pub fn member(account: &ServiceAccount) -> String {
    account
        .labels()
        .get(MEMBER_LABEL)
        .cloned()
        .unwrap_or_default()
}

/// Lists the members whose account exists.
pub fn reflect_accounts(
    status: &mut TeamStatus,
    accounts: &BTreeMap<String, ChildOutcome<ServiceAccount>>,
) {
    status.accounts = accounts
        .iter()
        .filter(|(_, outcome)| outcome.child().is_some())
        .map(|(member, _)| member.clone())
        .collect();
}

/// The team a settings ConfigMap belongs to, from its label.
pub fn team_of_settings(cm: Arc<ConfigMap>) -> Vec<ObjectRef<Team>> {
    let namespace = cm.namespace().unwrap_or_default();
    cm.labels()
        .get(TEAM_LABEL)
        .map(|team| ObjectRef::new(team).within(&namespace))
        .into_iter()
        .collect()
}

/// The reconciler, as the derive generates it (for readers looking for the entry point).
pub fn reconciler() -> Reconciler<Team> {
    Team::reconciler()
}

/// A team in namespace `default`.
pub fn sample(name: &str, members: &[&str]) -> Team {
    let mut team = Team::new(
        name,
        TeamSpec {
            members: members.iter().map(|m| m.to_string()).collect(),
        },
    );
    team.metadata.namespace = Some("default".into());
    team
}

/// The settings ConfigMap of a team in namespace `default`.
pub fn sample_settings(team: &str, role: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(format!("{team}-settings")),
            namespace: Some("default".into()),
            labels: Some(BTreeMap::from([(TEAM_LABEL.to_string(), team.to_string())])),
            ..Default::default()
        },
        data: Some(BTreeMap::from([("role".to_string(), role.to_string())])),
        ..Default::default()
    }
}

/// The Team controller, for [`crate::cli::Example`].
pub fn controller(operator: operator::Operator) -> operator::Operator {
    operator.controller(reconciler())
}

/// The installation of the operator: the CRD, its Namespace and ServiceAccount, the ClusterRole derived from
/// the wiring, the binding, the leader-election Role and the Deployment with probes and metrics.
pub fn installation() -> operator::manifests::Manifests {
    use kube::CustomResourceExt;
    operator::manifests::Manifests::new("teams-operator")
        .namespace("teams-system")
        .image("example.dev/teams-operator:latest")
        .args(["--in-cluster"])
        .health_probes(8081)
        .metrics(8080)
        .leader_election(true)
        .reconciler(&reconciler())
        .crd(Team::crd())
}

/// What `teams manifests` prints: [`installation`] as one YAML stream.
pub fn manifests() -> anyhow::Result<String> {
    installation()
        .to_yaml()
        .map_err(|e| anyhow::anyhow!("cannot render the manifests as YAML: {e}"))
}

/// The name of the sample Team created on the embedded cluster.
pub const SAMPLE_NAME: &str = "platform";

/// The Team operator on the examples' shared command line.
pub fn example() -> crate::cli::Example {
    use futures::FutureExt;
    use kube::CustomResourceExt;
    crate::cli::Example {
        crds: || vec![Team::crd()],
        controller,
        manifests,
        installation: Some(installation),
        prepare_embedded: |_| {},
        seed: |client| seed(client).boxed(),
        observe: |client| crate::cli::log_changes(client, summary).boxed(),
        kubectl_hint: "get teams,serviceaccounts,configmaps",
        webhooks: None,
    }
}

/// Creates the sample team (`ada` and `linus`) and its settings (role `developer`).
async fn seed(client: kube::Client) -> anyhow::Result<()> {
    use anyhow::Context as _;
    use kube::api::{Api, PostParams};
    let settings: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    settings
        .create(
            &PostParams::default(),
            &sample_settings(SAMPLE_NAME, DEFAULT_ROLE),
        )
        .await
        .context("cannot create the sample settings ConfigMap")?;
    let teams: Api<Team> = Api::namespaced(client, "default");
    teams
        .create(
            &PostParams::default(),
            &sample(SAMPLE_NAME, &["ada", "linus"]),
        )
        .await
        .context("cannot create the sample Team")?;
    tracing::info!(
        team = SAMPLE_NAME,
        "created the sample Team and its settings"
    );
    Ok(())
}

/// The line logged for a Team when its status changes.
fn summary(team: &Team) -> String {
    let status = team.status.clone().unwrap_or_default();
    format!(
        "members={:?} ready={} accounts={:?}",
        team.spec.members,
        crate::cli::ready(&status.conditions),
        status.accounts,
    )
}
