//! Runs on a schedule: parents that start a run-once child (a Job, a backup, a certificate request) at each
//! time of a cron schedule and keep a history of the finished ones, as Kubernetes' CronJob does.
//!
//! - [`Schedule`] reads a cron schedule as Kubernetes' CronJob controller reads one (five fields, or a name
//!   such as `@hourly`), in UTC, and answers which of its times was missed and which comes next.
//! - [`Runs`] turns a schedule and the parent's policy (starting deadline, suspension,
//!   [`ConcurrencyPolicy`], history limits) into what a create-once child set needs: the schedule times whose
//!   runs should exist now ([`Runs::desired`]), the fate of a run no longer desired ([`Runs::retain`]), when
//!   to look again ([`Runs::requeue`]), and what to report ([`observe`]).
//!
//! Times are the pass's ([`Context::now`](crate::Context::now)), never the wall clock, so tests move them at
//! will. The `cronjob` example is the kubebuilder tutorial's CronJob written with this module.

mod runs;

use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};
use k8s_openapi::jiff::{Timestamp, tz::TimeZone};

use crate::{Error, Result};

pub use runs::{ConcurrencyPolicy, Observed, Runs, observe};

/// How many missed times [`Schedule::latest`] catches up before it calls the spec invalid, as Kubernetes'
/// CronJob controller does.
pub const MAX_MISSED: usize = 100;

/// A cron schedule: five fields (`minute hour day-of-month month day-of-week`) or a name (`@yearly`,
/// `@monthly`, `@weekly`, `@daily`, `@hourly`), read in UTC as robfig/cron's `ParseStandard` (and so
/// Kubernetes' CronJob and the kubebuilder tutorial) reads them.
///
/// ```
/// use kubewright::schedule::Schedule;
///
/// let every_ten = Schedule::parse("*/10 * * * *")?;
/// let now = "2025-01-01T00:35:00Z".parse()?;
/// assert_eq!(every_ten.next_after(now), Some("2025-01-01T00:40:00Z".parse()?));
/// assert_eq!(every_ten.latest("2025-01-01T00:00:00Z".parse()?, now)?, Some("2025-01-01T00:30:00Z".parse()?));
///
/// let err = Schedule::parse("0 * * * * *").unwrap_err(); // six fields: seconds are not read
/// assert_eq!(err.reason(), Some("InvalidSchedule"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Schedule {
    cron: Cron,
}

impl Schedule {
    /// Reads `text`; an invalid spec with reason `InvalidSchedule` (the message quotes `text` and says why)
    /// when it is not a schedule.
    pub fn parse(text: &str) -> Result<Schedule> {
        let parser = CronParser::builder()
            .seconds(Seconds::Disallowed)
            .year(Year::Disallowed)
            .build();
        let cron = parser
            .parse(text)
            .map_err(|e| Error::invalid_spec("InvalidSchedule", format!("{text:?}: {e}")))?;
        Ok(Schedule { cron })
    }

    /// The schedule's times after `t` (not `t` itself), in order.
    pub fn times_after(&self, t: Timestamp) -> impl Iterator<Item = Timestamp> + '_ {
        self.cron
            .iter_after(t.to_zoned(TimeZone::UTC))
            .map(|z| z.timestamp())
    }

    /// The schedule's first time after `t`, if it has one.
    pub fn next_after(&self, t: Timestamp) -> Option<Timestamp> {
        self.times_after(t).next()
    }

    /// The latest of the schedule's times after `since` and at most `now` (the run missed last); an invalid
    /// spec with reason `TooManyMissedStarts` when there are more than [`MAX_MISSED`] such times (the
    /// CronJob controller's rule: a clock far off, or a deadline that should bound them).
    pub fn latest(&self, since: Timestamp, now: Timestamp) -> Result<Option<Timestamp>> {
        let missed = self.times_after(since).take_while(|t| *t <= now);
        let missed: Vec<Timestamp> = missed.take(MAX_MISSED + 1).collect();
        if missed.len() > MAX_MISSED {
            let message = format!(
                "more than {MAX_MISSED} missed start times: set or decrease the starting deadline, or check clock skew"
            );
            return Err(Error::invalid_spec("TooManyMissedStarts", message));
        }
        Ok(missed.last().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn at(text: &str) -> Timestamp {
        text.parse().expect("a timestamp")
    }

    #[test]
    fn five_fields_and_names_are_a_schedule_six_fields_are_not() {
        assert!(Schedule::parse("*/5 * * * *").is_ok());
        assert!(Schedule::parse("@hourly").is_ok());
        for bad in ["0 * * * * *", "not a schedule", "61 * * * *", ""] {
            let err = Schedule::parse(bad).expect_err(bad);
            assert_eq!(err.reason(), Some("InvalidSchedule"), "{bad:?}");
            assert!(err.to_string().contains(&format!("{bad:?}")), "{err}");
        }
    }

    #[test]
    fn times_are_read_in_utc_after_the_given_time() {
        let daily = Schedule::parse("@daily").expect("a schedule");
        let t = at("2025-01-01T00:00:00Z");
        assert_eq!(daily.next_after(t), Some(at("2025-01-02T00:00:00Z")));
        let times: Vec<_> = daily.times_after(t).take(2).collect();
        assert_eq!(
            times,
            [at("2025-01-02T00:00:00Z"), at("2025-01-03T00:00:00Z")]
        );
    }

    #[test]
    fn the_latest_missed_time_and_none_before_the_first() -> Result<()> {
        let every_ten = Schedule::parse("*/10 * * * *")?;
        let since = at("2025-01-01T00:00:30Z");
        assert_eq!(every_ten.latest(since, at("2025-01-01T00:09:59Z"))?, None);
        assert_eq!(
            every_ten.latest(since, at("2025-01-01T00:35:00Z"))?,
            Some(at("2025-01-01T00:30:00Z"))
        );
        assert_eq!(
            every_ten.latest(at("2025-01-01T00:30:00Z"), at("2025-01-01T00:35:00Z"))?,
            None
        );
        Ok(())
    }

    #[test]
    fn more_than_100_missed_times_is_an_invalid_spec() -> Result<()> {
        let minutely = Schedule::parse("* * * * *")?;
        let since = at("2025-01-01T00:00:30Z");
        let hundred = minutely.latest(since, at("2025-01-01T01:40:59Z"))?;
        assert_eq!(
            hundred,
            Some(at("2025-01-01T01:40:00Z")),
            "100 missed times are caught up"
        );
        let err = minutely
            .latest(since, at("2025-01-01T01:41:00Z"))
            .expect_err("101 missed");
        assert_eq!(err.reason(), Some("TooManyMissedStarts"));
        Ok(())
    }
}
