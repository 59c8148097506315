//! Which member a parent belongs to: rendezvous (highest random weight) hashing of the parent's identity over
//! the live members.
//!
//! Every member and the assigner compute the same answer from the same membership, whatever their process or
//! version: the hash is FNV-1a (64 bits, a fixed public definition) with a final mix, not Rust's `Hash`,
//! whose output may change between compiler versions (a rolling upgrade runs two). When a member joins, only
//! the parents it wins move (about 1/N of them); when one leaves, only its own parents move.

/// The member `parent` (its `namespace/name`, or `name` when cluster-scoped) belongs to among `members`;
/// `None` when there is none. The order of `members` does not matter.
///
/// ```
/// # use kubewright::sharding::owner;
/// let members = ["replica-a".to_string(), "replica-b".to_string()];
/// let first = owner("default/web", &members);
/// assert!(first.is_some());
/// let reversed = [members[1].clone(), members[0].clone()];
/// assert_eq!(owner("default/web", &reversed), first);
/// ```
pub fn owner<'a>(parent: &str, members: &'a [String]) -> Option<&'a str> {
    members
        .iter()
        .map(|m| (score(m, parent), m))
        // Ties (in 64 bits, only for equal names) go to the smaller name, so the answer never depends on the
        // order.
        .max_by(|(a, ma), (b, mb)| a.cmp(b).then_with(|| mb.cmp(ma)))
        .map(|(_, m)| m.as_str())
}

/// The weight of `member` for `parent`.
fn score(member: &str, parent: &str) -> u64 {
    let mut h = Fnv::default();
    h.write(member.as_bytes());
    // A separator no name holds, so ("ab", "c") and ("a", "bc") differ.
    h.write(&[0]);
    h.write(parent.as_bytes());
    mix(h.0)
}

/// FNV-1a, 64 bits.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// A finalizer (splitmix64's) spreading FNV's low-entropy high bits, so weights compare uniformly.
fn mix(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("replica-{i}")).collect()
    }

    fn parents() -> Vec<String> {
        (0..10_000)
            .map(|i| format!("tenant-{}/db-{i}", i % 37))
            .collect()
    }

    #[test]
    fn the_weights_are_fixed_so_every_process_and_version_agrees() {
        // FNV-1a of the empty input is its offset basis; the mix of a fixed value is fixed.
        assert_eq!(Fnv::default().0, 0xcbf2_9ce4_8422_2325);
        let mut h = Fnv::default();
        h.write(b"a");
        assert_eq!(h.0, 0xaf63_dc4c_8601_ec8c);
        assert_eq!(
            score("replica-0", "default/web"),
            score("replica-0", "default/web")
        );
        assert_ne!(score("ab", "c"), score("a", "bc"));
    }

    #[test]
    fn parents_spread_evenly_and_a_new_member_takes_only_its_share() {
        let parents = parents();
        let four = members(4);
        let mut counts = [0usize; 4];
        for p in &parents {
            let m = owner(p, &four).unwrap();
            counts[four.iter().position(|x| x == m).unwrap()] += 1;
        }
        for c in counts {
            assert!((2_200..=2_800).contains(&c), "{counts:?}");
        }
        let five = members(5);
        let moved = parents
            .iter()
            .filter(|p| owner(p, &four) != owner(p, &five))
            .count();
        // A fifth member takes about a fifth; every parent that moved went to it.
        assert!((1_700..=2_300).contains(&moved), "{moved}");
        assert!(
            parents
                .iter()
                .filter(|p| owner(p, &four) != owner(p, &five))
                .all(|p| owner(p, &five) == Some("replica-4"))
        );
    }

    #[test]
    fn a_member_leaving_moves_only_its_own_parents() {
        let parents = parents();
        let three = members(3);
        let two: Vec<String> = three
            .iter()
            .filter(|m| *m != "replica-1")
            .cloned()
            .collect();
        for p in &parents {
            let before = owner(p, &three).unwrap();
            if before != "replica-1" {
                assert_eq!(owner(p, &two), Some(before));
            }
        }
        assert_eq!(owner("default/web", &[]), None);
    }
}
