//! What a child set does with a child its desired function no longer lists: keep it, keep it as part of a
//! trimmed history, or delete it ([`Retention`], given with
//! [`ChildSetReconciler::retain`](super::ChildSetReconciler::retain)).

use std::borrow::Cow;
use std::collections::BTreeMap;

use k8s_openapi::jiff::Timestamp;

/// What happens to a child of a set that its desired function no longer lists.
///
/// A rule sees the parent and each such child (one the parent controls, not being deleted) and answers for it:
///
/// ```
/// use std::borrow::Cow;
/// use k8s_openapi::api::batch::v1::Job;
/// use k8s_openapi::jiff::Timestamp;
/// use kubewright::reconcilers::Retention;
///
/// /// Running Jobs stay; finished ones are a history of the 3 newest succeeded and the newest failed.
/// fn retention(limits: &(usize, usize), job: &Job) -> Retention {
///     let status = job.status.as_ref();
///     let finished = |type_: &str| {
///         status.and_then(|s| s.conditions.as_ref()).into_iter().flatten()
///             .any(|c| c.type_ == type_ && c.status == "True")
///     };
///     let at = job.metadata.creation_timestamp.as_ref().map_or(Timestamp::UNIX_EPOCH, |t| t.0);
///     if finished("Complete") {
///         Retention::History { class: Cow::Borrowed("Succeeded"), limit: limits.0, at }
///     } else if finished("Failed") {
///         Retention::History { class: Cow::Borrowed("Failed"), limit: limits.1, at }
///     } else {
///         Retention::Keep
///     }
/// }
/// assert_eq!(retention(&(3, 1), &Job::default()), Retention::Keep);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Retention {
    /// Kept as it is (a Job still running).
    Keep,
    /// Part of the history named `class`: the newest `limit` children of the class (by `at`, newest first) are
    /// kept, the others deleted.
    History {
        /// The history's name, in the event of each child it deletes (`Succeeded`, `Failed`).
        class: Cow<'static, str>,
        /// How many children of the class are kept.
        limit: usize,
        /// When the child counts from (its creation, its scheduled time): the newest are kept.
        at: Timestamp,
    },
    /// Deleted, as a child no longer desired is without a rule.
    Delete,
}

/// What becomes of one child no longer desired, once every rule has answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Fate {
    /// Kept by [`Retention::Keep`]: it counts for the set's readiness.
    Keep,
    /// Kept as one of the newest of its history: it does not count for the set's readiness.
    InHistory,
    /// Deleted, with why (`None`: no rule kept it).
    Delete(Option<String>),
}

/// The fate of each child, in the order given, from its rule's answer (`None`: no rule). Within a history,
/// children are ordered newest first by `at`, then by `key` (their place: namespace and name) so that equal
/// times always keep the same children; the first `limit` stay. The limit of a class is the one the newest
/// child's rule gave.
pub(super) fn fates<K: Ord + Clone>(answers: &[(K, Option<Retention>)]) -> Vec<Fate> {
    let mut classes: BTreeMap<&str, Vec<(Timestamp, &K, usize)>> = BTreeMap::new();
    let mut limits: BTreeMap<&str, (Timestamp, usize)> = BTreeMap::new();
    let mut out: Vec<Fate> = Vec::with_capacity(answers.len());
    for (i, (key, answer)) in answers.iter().enumerate() {
        out.push(match answer {
            None => Fate::Delete(None),
            Some(Retention::Delete) => Fate::Delete(None),
            Some(Retention::Keep) => Fate::Keep,
            Some(Retention::History { class, limit, at }) => {
                classes.entry(class).or_default().push((*at, key, i));
                let newest = limits.entry(class).or_insert((*at, *limit));
                if *at > newest.0 {
                    *newest = (*at, *limit);
                }
                Fate::InHistory
            }
        });
    }
    for (class, mut members) in classes {
        let limit = limits.get(class).map_or(0, |l| l.1);
        members.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
        for (_, _, i) in members.into_iter().skip(limit) {
            out[i] = Fate::Delete(Some(format!("history {class} keeps the newest {limit}")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history(class: &'static str, limit: usize, seconds: i64) -> Option<Retention> {
        Some(Retention::History {
            class: Cow::Borrowed(class),
            limit,
            at: Timestamp::from_second(seconds).expect("a time"),
        })
    }

    #[test]
    fn each_history_keeps_its_newest_and_deletes_the_rest() {
        let answers = [
            ("a", history("Succeeded", 2, 10)),
            ("b", history("Succeeded", 2, 30)),
            ("c", history("Failed", 1, 20)),
            ("d", history("Succeeded", 2, 20)),
            ("e", history("Failed", 1, 40)),
            ("f", Some(Retention::Keep)),
            ("g", None),
            ("h", Some(Retention::Delete)),
        ];
        let why =
            |class, limit| Fate::Delete(Some(format!("history {class} keeps the newest {limit}")));
        assert_eq!(
            fates(&answers),
            [
                why("Succeeded", 2),
                Fate::InHistory,
                why("Failed", 1),
                Fate::InHistory,
                Fate::InHistory,
                Fate::Keep,
                Fate::Delete(None),
                Fate::Delete(None),
            ]
        );
    }

    #[test]
    fn equal_times_keep_the_first_by_place_and_a_zero_limit_keeps_none() {
        let answers = [
            ("b", history("Succeeded", 1, 10)),
            ("a", history("Succeeded", 1, 10)),
            ("c", history("Failed", 0, 10)),
        ];
        let fates = fates(&answers);
        assert_eq!(fates[1], Fate::InHistory);
        assert!(matches!(fates[0], Fate::Delete(Some(_))));
        assert_eq!(
            fates[2],
            Fate::Delete(Some("history Failed keeps the newest 0".into()))
        );
    }
}
