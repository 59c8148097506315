//! Failures and reports: what a failing case or suite says, and what a passing case hands back.

use std::fmt;

use super::expect::Write;
use crate::command::Command;
use crate::context::Context;
use crate::error::Result;
use crate::outcome::Outcome;
use crate::testing::apiserver::RequestRecord;

/// Why a case failed: every problem found, rendered for a reader (also by `Debug`, so that a test returning
/// `Result<(), CaseFailure>` or calling `unwrap` prints the diffs as they are).
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
pub struct CaseFailure {
    pub(super) case: String,
    pub(super) problems: Vec<String>,
}

impl CaseFailure {
    /// The case's name.
    pub fn case(&self) -> &str {
        &self.case
    }

    /// What went wrong, one entry per problem.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}

impl fmt::Display for CaseFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.problems.len();
        writeln!(
            f,
            "case `{}` failed ({n} problem{}):",
            self.case,
            if n == 1 { "" } else { "s" }
        )?;
        for (i, p) in self.problems.iter().enumerate() {
            let mut lines = p.lines();
            writeln!(f, "{:>3}. {}", i + 1, lines.next().unwrap_or(""))?;
            for l in lines {
                writeln!(f, "     {l}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for CaseFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\n{self}")
    }
}

/// Why a suite failed: the failures of its cases.
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
pub struct SuiteFailure {
    /// One entry per failed case.
    pub failures: Vec<CaseFailure>,
}

impl fmt::Display for SuiteFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in &self.failures {
            writeln!(f, "{c}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for SuiteFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\n{self}")
    }
}

/// What a case ran into; returned by a passing case for further checks of its own.
#[derive(Debug)]
pub struct CaseReport<P> {
    /// The parent: as read from the cache (reconciler cases) or as the step left it (step cases).
    pub parent: Option<P>,
    /// The outcome; `None` when no pass ran (the parent was not in the cache).
    pub result: Option<Result<Outcome>>,
    /// The pass's context: commands, tracks, stash, conditions.
    pub context: Option<Context>,
    /// Every request the API server handled during the pass (empty with no server).
    pub requests: Vec<RequestRecord>,
    /// The writes the case compared.
    pub writes: Vec<Write>,
}

impl<P> CaseReport<P> {
    /// The commands the pass executed, events included.
    pub fn commands(&self) -> &[Command] {
        self.context.as_ref().map(|c| c.commands()).unwrap_or(&[])
    }
}
