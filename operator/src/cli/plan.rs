//! The `plan` subcommand: what the operator would write on a cluster, as diffs, without writing
//! ([`crate::plan`]), and an exit code for CI: 0 when nothing would be written, 2 when something would, 1
//! when the plan could not be made (a write refused, such as one the operator's RBAC forbids).

use std::io::Write as _;
use std::time::Duration;

use kube::Client;

use super::error::{CliError, Context as _};
use super::{App, RunFlags};
use crate::plan::{EXIT_CHANGES, EXIT_UNCHANGED, ParentSelector, Plan};

/// How long `plan` waits for the caches' first lists.
pub const PLAN_SYNC_TIMEOUT: Duration = Duration::from_secs(60);

impl App {
    /// What the operator would write on the cluster of `client` ([`Operator::plan`](crate::Operator::plan)),
    /// with its reconcilers and the caches `flags` ask for (`--namespace`), for every parent or the one
    /// `selector` picks.
    pub async fn plan(
        self,
        client: Client,
        flags: &RunFlags,
        selector: Option<ParentSelector>,
    ) -> Result<Plan, CliError> {
        self.operator(flags.operator(client))
            .plan(selector, PLAN_SYNC_TIMEOUT)
            .await
            .context("cannot plan")
    }

    /// The `plan` subcommand: prints the plan on stdout; `Ok` when nothing would be written, an error with
    /// exit code 2 ([`CliError::exit_code`]) when something would, and an error (exit code 1) naming the
    /// first refused request or failed pass when the plan is incomplete.
    pub async fn run_plan(
        self,
        client: Client,
        flags: &RunFlags,
        selector: Option<ParentSelector>,
    ) -> Result<(), CliError> {
        let plan = self.plan(client, flags, selector).await?;
        std::io::stdout()
            .write_all(plan.to_string().as_bytes())
            .context("cannot write to stdout")?;
        if let Some(first) = plan.failures().into_iter().next() {
            return Err(CliError::msg(format!("the plan is incomplete: {first}")));
        }
        match plan.exit_code() {
            EXIT_UNCHANGED => Ok(()),
            code => {
                debug_assert_eq!(code, EXIT_CHANGES);
                let writes: usize = plan.parents.iter().map(|p| p.writes.len()).sum();
                Err(
                    CliError::msg(format!("the operator would make {writes} writes"))
                        .exit_code_of(code),
                )
            }
        }
    }
}
