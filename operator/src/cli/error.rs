//! What stops the command line: a sentence saying what failed, over the error that made it fail.

use std::fmt;

/// The error under a [`CliError`].
pub type Source = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What stopped [`App::run`](super::App::run): what failed (`cannot read the kubeconfig /tmp/k`), and the
/// error under it. `Debug` (what a `main` returning `Result` prints) shows the whole chain of causes.
#[derive(thiserror::Error)]
#[error("{message}")]
pub struct CliError {
    message: String,
    #[source]
    source: Option<Source>,
    /// The process's exit code for this error.
    code: u8,
}

impl CliError {
    /// An error with no cause under it.
    pub fn msg(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            source: None,
            code: 1,
        }
    }

    /// What failed, over `source`.
    pub fn new(message: impl Into<String>, source: impl Into<Source>) -> Self {
        Self {
            message: message.into(),
            source: Some(source.into()),
            code: 1,
        }
    }

    /// The same error, ending the process with `code` ([`App::run`](super::App::run) exits with it).
    pub fn exit_code_of(mut self, code: u8) -> Self {
        self.code = code;
        self
    }

    /// The process's exit code for this error: 1, or 2 for a `plan` with writes.
    pub fn exit_code(&self) -> u8 {
        self.code
    }
}

impl fmt::Debug for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)?;
        let mut cause = std::error::Error::source(self);
        if cause.is_some() {
            write!(f, "\n\nCaused by:")?;
        }
        let mut n = 0;
        while let Some(e) = cause {
            write!(f, "\n    {n}: {e}")?;
            n += 1;
            cause = e.source();
        }
        Ok(())
    }
}

/// Adds what failed to an error, as `anyhow::Context` does.
pub(crate) trait Context<T> {
    /// `message` over the error.
    fn context(self, message: impl Into<String>) -> Result<T, CliError>;
    /// The message `message()` computes, over the error.
    fn with_context<M: Into<String>>(self, message: impl FnOnce() -> M) -> Result<T, CliError>;
}

impl<T, E: Into<Source>> Context<T> for Result<T, E> {
    fn context(self, message: impl Into<String>) -> Result<T, CliError> {
        self.map_err(|e| CliError::new(message, e))
    }

    fn with_context<M: Into<String>>(self, message: impl FnOnce() -> M) -> Result<T, CliError> {
        self.map_err(|e| CliError::new(message(), e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_every_cause() {
        let io = std::io::Error::other("no such file");
        let e: Result<(), _> = Err(io);
        let e = e.context("cannot read the kubeconfig /tmp/k").unwrap_err();
        assert_eq!(e.to_string(), "cannot read the kubeconfig /tmp/k");
        assert_eq!(
            format!("{e:?}"),
            "cannot read the kubeconfig /tmp/k\n\nCaused by:\n    0: no such file"
        );
        assert_eq!(format!("{:?}", CliError::msg("bare")), "bare");
    }
}
