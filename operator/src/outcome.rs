//! What a step tells the reconciler to do next.

use std::time::Duration;

/// The result of a successful step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Outcome {
    /// Go on with the next step.
    #[default]
    Continue,
    /// Go on, and run the whole pass again after this long.
    RequeueAfter(Duration),
    /// Stop the pass here (status is still written).
    Halt,
}

impl Outcome {
    /// Combines the outcomes of two steps run one after the other: `Halt` wins, then the earlier requeue.
    pub fn and(self, next: Outcome) -> Outcome {
        match (self, next) {
            (Outcome::Halt, _) | (_, Outcome::Halt) => Outcome::Halt,
            (Outcome::RequeueAfter(a), Outcome::RequeueAfter(b)) => Outcome::RequeueAfter(a.min(b)),
            (Outcome::RequeueAfter(a), Outcome::Continue)
            | (Outcome::Continue, Outcome::RequeueAfter(a)) => Outcome::RequeueAfter(a),
            (Outcome::Continue, Outcome::Continue) => Outcome::Continue,
        }
    }

    /// Whether the pass stops here.
    pub fn is_halt(&self) -> bool {
        matches!(self, Outcome::Halt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combining() {
        let s = Duration::from_secs;
        assert_eq!(Outcome::Continue.and(Outcome::Continue), Outcome::Continue);
        assert_eq!(
            Outcome::Continue.and(Outcome::RequeueAfter(s(5))),
            Outcome::RequeueAfter(s(5))
        );
        assert_eq!(
            Outcome::RequeueAfter(s(3)).and(Outcome::RequeueAfter(s(5))),
            Outcome::RequeueAfter(s(3))
        );
        assert_eq!(
            Outcome::RequeueAfter(s(3)).and(Outcome::Halt),
            Outcome::Halt
        );
    }
}
