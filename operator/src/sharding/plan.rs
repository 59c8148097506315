//! What the assigner does with one parent, given its labels and the live members: the decisions of the
//! hand-over protocol (see the module docs of [`sharding`](super)), as a pure function.

use super::ring::owner;

/// A parent as the assigner sees it: its identity and its two sharding labels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParentShard {
    /// `namespace/name`, or `name` when cluster-scoped.
    pub key: String,
    /// The member that owns it (the shard label), if any.
    pub owner: Option<String>,
    /// The member it is being handed to (the drain label), if a hand-over was asked.
    pub draining_to: Option<String>,
}

/// One step of the protocol for one parent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Move {
    /// The parent has no owner: label it with `to`. Nobody writes it before, so nobody writes it twice.
    Assign {
        /// The member it goes to.
        to: String,
    },
    /// Its owner is alive but another member should own it: ask the owner to hand it over (the drain label).
    /// The owner relabels its children and then the parent once no pass of the parent runs; until then it
    /// keeps reconciling it.
    Drain {
        /// The member that owns it now.
        from: String,
        /// The member it should go to.
        to: String,
    },
    /// A hand-over was asked that membership no longer wants (the owner is the right one again): remove the
    /// drain label.
    CancelDrain,
    /// Its owner is not alive (its Lease expired by the assigner's clock, or was released after its
    /// controllers stopped): the assigner relabels its children and then the parent itself.
    Reassign {
        /// The member that owned it.
        from: String,
        /// The member it goes to.
        to: String,
    },
}

/// What the assigner does with `parent` when `live` are the members alive (none with no live member: the
/// parents wait with their labels as they are).
///
/// ```
/// # use kubewright::sharding::{Move, ParentShard, decide};
/// let live = ["a".to_string()];
/// let new = ParentShard { key: "default/web".into(), owner: None, draining_to: None };
/// assert_eq!(decide(&new, &live), Some(Move::Assign { to: "a".into() }));
/// let orphan = ParentShard { owner: Some("gone".into()), ..new };
/// assert_eq!(decide(&orphan, &live), Some(Move::Reassign { from: "gone".into(), to: "a".into() }));
/// ```
pub fn decide(parent: &ParentShard, live: &[String]) -> Option<Move> {
    let desired = owner(&parent.key, live)?;
    let Some(current) = parent.owner.as_deref() else {
        return Some(Move::Assign {
            to: desired.to_string(),
        });
    };
    if !live.iter().any(|m| m == current) {
        return Some(Move::Reassign {
            from: current.to_string(),
            to: desired.to_string(),
        });
    }
    match parent.draining_to.as_deref() {
        _ if current == desired => parent.draining_to.is_some().then_some(Move::CancelDrain),
        Some(to) if to == desired => None,
        _ => Some(Move::Drain {
            from: current.to_string(),
            to: desired.to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parent(owner: Option<&str>, draining_to: Option<&str>) -> ParentShard {
        ParentShard {
            key: "default/web".into(),
            owner: owner.map(Into::into),
            draining_to: draining_to.map(Into::into),
        }
    }

    fn live(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn each_case_of_the_protocol() {
        let both = live(&["a", "b"]);
        let right = owner("default/web", &both).unwrap();
        let wrong = if right == "a" { "b" } else { "a" };
        // Nobody alive: nothing moves.
        assert_eq!(decide(&parent(None, None), &[]), None);
        assert_eq!(decide(&parent(Some("a"), None), &[]), None);
        // Where it belongs: nothing; a drain membership no longer wants is cancelled.
        assert_eq!(decide(&parent(Some(right), None), &both), None);
        assert_eq!(
            decide(&parent(Some(right), Some(wrong)), &both),
            Some(Move::CancelDrain)
        );
        // With the wrong live owner: drained towards the right one, once.
        assert_eq!(
            decide(&parent(Some(wrong), None), &both),
            Some(Move::Drain {
                from: wrong.into(),
                to: right.into()
            })
        );
        assert_eq!(decide(&parent(Some(wrong), Some(right)), &both), None);
        // A drain towards a member that left is redirected.
        assert_eq!(
            decide(&parent(Some(wrong), Some("gone")), &both),
            Some(Move::Drain {
                from: wrong.into(),
                to: right.into()
            })
        );
        // An owner that is not alive: reassigned by the assigner, drain or not.
        assert_eq!(
            decide(&parent(Some("gone"), Some(wrong)), &both),
            Some(Move::Reassign {
                from: "gone".into(),
                to: right.into()
            })
        );
    }
}
