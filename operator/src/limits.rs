//! How far a pass may go: a time limit ([`Reconciler::timeout`](crate::Reconciler::timeout)) and a panic
//! in a step, both turned into the pass's error.

use std::any::Any;
use std::time::Duration;

use crate::context::Context;
use crate::error::Error;

/// Runs `work`, or cuts it after `limit` (answering the limit).
pub(crate) async fn within<T>(
    limit: Option<Duration>,
    work: impl std::future::Future<Output = T>,
) -> std::result::Result<T, Duration> {
    match limit {
        None => Ok(work.await),
        Some(limit) => tokio::time::timeout(limit, work).await.map_err(|_| limit),
    }
}

/// The error of a pass cut after `after`, naming the step it was in.
pub(crate) fn timed_out(cx: &Context, after: Duration) -> Error {
    let step = cx.step().unwrap_or("(before the first step)").to_string();
    tracing::warn!(step = %step, timeout = ?after, "the pass took too long; cancelled");
    Error::TimedOut { step, after }
}

/// The text a panic carried (`panic!("..")` or `panic!("{}", ..)`).
pub(crate) fn panic_message(panic: &(dyn Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}
