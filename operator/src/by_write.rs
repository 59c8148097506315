//! A map from an object's uid to what the runtime wrote to it, bounded by write order: the memories of the
//! runtime's own writes (the written children, the unconfirmed statuses) drop an entry as soon as the cache
//! shows the write, and past a capacity forget the oldest quarter, so an entry the cache never confirms (a
//! lost watch event) cannot make them grow.

use std::collections::HashMap;

/// How many entries a [`ByWrite`] holds at most.
pub(crate) const CAPACITY: usize = 16_384;

/// Values by uid, each with when it was written (in writes since the map was made).
#[derive(Debug)]
pub(crate) struct ByWrite<V> {
    entries: HashMap<Box<str>, (V, u64)>,
    writes: u64,
    capacity: usize,
}

impl<V> Default for ByWrite<V> {
    fn default() -> Self {
        Self::with_capacity(CAPACITY)
    }
}

impl<V> ByWrite<V> {
    /// An empty map that holds at most `capacity` entries.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Self {
            entries: HashMap::new(),
            writes: 0,
            capacity,
        }
    }

    /// Remembers `value` as the last write to `uid`; past the capacity, the oldest quarter of the entries go.
    pub(crate) fn insert(&mut self, uid: &str, value: V) {
        self.writes += 1;
        self.entries.insert(uid.into(), (value, self.writes));
        if self.entries.len() > self.capacity {
            let keep_after = self.writes.saturating_sub(self.capacity as u64 * 3 / 4);
            self.entries.retain(|_, (_, seq)| *seq > keep_after);
        }
    }

    /// The last write to `uid`.
    pub(crate) fn get(&self, uid: &str) -> Option<&V> {
        self.entries.get(uid).map(|(v, _)| v)
    }

    /// Forgets `uid`.
    pub(crate) fn remove(&mut self, uid: &str) {
        self.entries.remove(uid);
    }

    /// Keeps the entries `keep` accepts.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&str, &V) -> bool) {
        self.entries.retain(|uid, (v, _)| keep(uid, v));
    }

    /// How many entries there are.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewriting_one_uid_takes_one_entry_and_past_the_capacity_the_oldest_go() {
        let mut map = ByWrite::with_capacity(8);
        for i in 0..3 {
            map.insert("again", i);
        }
        assert_eq!((map.len(), map.get("again")), (1, Some(&2)));
        for i in 0..8 {
            map.insert(&i.to_string(), i);
        }
        // 9 entries were too many: those of the oldest quarter of the last 8 writes and before went.
        assert!(map.len() <= 8 && map.len() >= 4, "{}", map.len());
        assert_eq!(map.get("7"), Some(&7));
        assert_eq!(map.get("again"), None);
        map.remove("7");
        map.retain(|uid, _| uid != "6");
        assert_eq!((map.get("7"), map.get("6")), (None, None));
    }
}
