//! The `Team` operator: a child set and a `watches` mapper, written with `#[derive(Reconciler)]`.
//!
//! A `Team` (`example.dev/v1`, namespaced) lists its members; the operator keeps one ServiceAccount per member,
//! named `<team>-<member>` and matched by the [`MEMBER_LABEL`] (a child set: members added, removed or renamed
//! become creates and deletes). Each account carries the team's role, read from a ConfigMap labelled
//! [`TEAM_LABEL`]` = <team>` (key `role`, default `developer`); the ConfigMap is not a child and not named in
//! the spec, so a `watches` mapper finds the team from the label whenever such a ConfigMap changes.
//!
//! `cargo run --example teams` runs it ([`app`], on [`kubewright::cli`]) on the embedded cluster with a sample team.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{ConfigMap, ServiceAccount};
use kube::core::{Expression, Selector};
use kube::runtime::reflector::ObjectRef;
use kubewright::prelude::*;

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
fn role(team: &Team, cx: &mut Context) -> kubewright::Result<String> {
    let selector = Selector::from(Expression::Equal(TEAM_LABEL.into(), team.name_any()));
    let settings = cx.list::<ConfigMap>(team.namespace().as_deref(), &selector)?;
    Ok(settings
        .iter()
        .find_map(|cm| cm.data.as_ref()?.get("role").cloned())
        .unwrap_or_else(|| DEFAULT_ROLE.to_string()))
}

/// One ServiceAccount per member, annotated with the team's role.
pub fn desired_accounts(team: &Team, cx: &mut Context) -> kubewright::Result<Vec<ServiceAccount>> {
    let role = role(team, cx)?;
    Ok(team
        .spec
        .members
        .iter()
        .map(|member| {
            object!(ServiceAccount {
                metadata: {
                    name: format!("{}-{member}", team.name_any()),
                    labels: { [MEMBER_LABEL]: member },
                    annotations: { [ROLE_ANNOTATION]: &role },
                },
            })
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
    object!(ConfigMap {
        metadata: {
            name: format!("{team}-settings"),
            namespace: "default",
            labels: { [TEAM_LABEL]: team },
        },
        data: { "role": role },
    })
}

/// The Team operator's command line ([`kubewright::cli`]); the embedded cluster gets a sample team (`ada` and
/// `linus`) and its settings (role `developer`).
pub fn app() -> App {
    App::new("teams-operator")
        .namespace("teams-system")
        .image("example.dev/teams-operator:latest")
        .operate::<Team>()
        .sample(sample_settings(SAMPLE_NAME, DEFAULT_ROLE))
        .sample(sample(SAMPLE_NAME, &["ada", "linus"]))
        .log(summary)
        .kubectl_hint("get teams,serviceaccounts,configmaps")
}

/// The name of the sample Team created on the embedded cluster.
pub const SAMPLE_NAME: &str = "platform";

/// The line logged for a Team when its status changes.
fn summary(team: &Team) -> String {
    let status = team.status.clone().unwrap_or_default();
    format!(
        "members={:?} ready={} accounts={:?}",
        team.spec.members,
        kubewright::cli::ready(&status.conditions),
        status.accounts,
    )
}
