//! The dispatcher of a planned pass: each write is sent as a server-side dry run ([`ApiDispatcher::dry_run`])
//! after the live object is read, and both are kept with the command, so the plan can show what the write
//! would change. Events are dropped by the dry-run dispatcher; reads pass through.

use std::sync::{Arc, Mutex};

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::Value;

use crate::answer::Answer;
use crate::command::{ApiDispatcher, Command, Dispatcher, Target};
use crate::error::Result;

/// One write a pass asked for, as the dry run answered it.
#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    /// The command.
    pub command: Command,
    /// The object before the write, read from the API server (none when it does not exist).
    pub live: Option<Value>,
    /// What the write would store: the dry run's answer (none for a delete), or the error it met.
    pub planned: std::result::Result<Option<Value>, String>,
}

/// Sends writes as dry runs through `inner` and records them.
pub(crate) struct PlanDispatcher {
    inner: ApiDispatcher,
    writes: Mutex<Vec<Recorded>>,
}

impl PlanDispatcher {
    /// A recorder over `inner`, which must be a dry-run dispatcher.
    pub(crate) fn new(inner: ApiDispatcher) -> Arc<Self> {
        debug_assert!(inner.is_dry_run());
        Arc::new(Self {
            inner,
            writes: Mutex::default(),
        })
    }

    /// The writes recorded, in the order the pass asked for them.
    pub(crate) fn writes(&self) -> Vec<Recorded> {
        self.writes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    async fn record(&self, command: &Command) -> Result<Option<Answer>> {
        let Some(target) = command.target().filter(|_| command.is_mutating()) else {
            // An event: the dry-run dispatcher records none.
            return self.inner.execute(command).await;
        };
        // A create with `generateName` names no object yet.
        let live = if target.name.is_empty() {
            None
        } else {
            self.inner.get(target).await?
        };
        let answered = self.inner.execute(command).await;
        let planned = match &answered {
            Ok(Some(answer)) => answer.to_value().map(Some).map_err(|e| e.to_string()),
            Ok(None) => Ok(None),
            Err(e) => Err(brief(e)),
        };
        self.writes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Recorded {
                command: command.clone(),
                live,
                planned,
            });
        answered
    }
}

impl Dispatcher for PlanDispatcher {
    fn execute<'a>(&'a self, command: &'a Command) -> BoxFuture<'a, Result<Option<Answer>>> {
        self.record(command).boxed()
    }

    fn get<'a>(&'a self, target: &'a Target) -> BoxFuture<'a, Result<Option<Value>>> {
        self.inner.get(target)
    }
}

/// An error in one line: for a refused request, what was asked and the server's code, reason and message
/// (`create Deployment ns/web (dryRun=All): 403 Forbidden: deployments.apps is forbidden: User …`).
pub(crate) fn brief(error: &crate::Error) -> String {
    match error {
        crate::Error::Kube {
            context,
            source: kube::Error::Api(status),
        } => format!(
            "{context} (dryRun=All): {} {}: {}",
            status.code, status.reason, status.message
        ),
        other => other.to_string(),
    }
}
