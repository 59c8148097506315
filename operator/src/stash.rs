//! Typed values passed between the steps of one reconcile pass.

use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;

use crate::error::{Error, Result};

/// A typed key into the [`Stash`]. Declare keys as constants so a wrong type is a compile error:
///
/// ```
/// use kubewright::{Stash, StashKey};
/// const IMAGE: StashKey<String> = StashKey::new("image");
/// let mut stash = Stash::default();
/// stash.store(&IMAGE, "nginx:1.27".to_string());
/// assert_eq!(stash.get(&IMAGE).unwrap(), "nginx:1.27");
/// ```
pub struct StashKey<T> {
    name: &'static str,
    _type: PhantomData<fn() -> T>,
}

impl<T> StashKey<T> {
    /// A key with a name unique among the keys of one reconciler.
    pub const fn new(name: &'static str) -> Self {
        Self {
            name,
            _type: PhantomData,
        }
    }

    /// The key's name.
    pub const fn name(&self) -> &'static str {
        self.name
    }
}

impl<T> Clone for StashKey<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for StashKey<T> {}

impl<T> fmt::Debug for StashKey<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "StashKey<{}>({:?})",
            std::any::type_name::<T>(),
            self.name
        )
    }
}

trait StashValue: Any + Send + Sync {
    fn as_any(&self) -> &dyn Any;
    fn debug(&self) -> String;
}

impl<T: Any + Send + Sync + fmt::Debug> StashValue for T {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn debug(&self) -> String {
        format!("{self:?}")
    }
}

/// Values that live for one reconcile pass, stored by one step and read by later ones.
#[derive(Default)]
pub struct Stash {
    values: HashMap<&'static str, Box<dyn StashValue>>,
}

impl fmt::Debug for Stash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut m = f.debug_map();
        let mut keys: Vec<_> = self.values.keys().collect();
        keys.sort();
        for k in keys {
            m.entry(k, &self.values[k].debug());
        }
        m.finish()
    }
}

impl Stash {
    /// Stores a value, replacing any earlier one.
    pub fn store<T: Any + Send + Sync + fmt::Debug>(&mut self, key: &StashKey<T>, value: T) {
        self.values.insert(key.name, Box::new(value));
    }

    /// Reads a value; a missing key or a key of another type is a typed error.
    pub fn get<T: Any>(&self, key: &StashKey<T>) -> Result<&T> {
        let v = self
            .values
            .get(key.name)
            .ok_or(Error::MissingStash(key.name))?;
        v.as_any().downcast_ref::<T>().ok_or(Error::StashType {
            key: key.name,
            expected: std::any::type_name::<T>(),
        })
    }

    /// Reads a value if present.
    pub fn try_get<T: Any>(&self, key: &StashKey<T>) -> Option<&T> {
        self.get(key).ok()
    }

    /// The names of the stored keys, sorted.
    pub fn keys(&self) -> Vec<&'static str> {
        let mut k: Vec<_> = self.values.keys().copied().collect();
        k.sort();
        k
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const N: StashKey<u32> = StashKey::new("n");
    const S: StashKey<String> = StashKey::new("n");

    #[test]
    fn missing_and_mistyped_keys_are_errors() {
        let mut stash = Stash::default();
        assert!(matches!(stash.get(&N), Err(Error::MissingStash("n"))));
        stash.store(&N, 3);
        assert_eq!(*stash.get(&N).unwrap(), 3);
        assert!(matches!(
            stash.get(&S),
            Err(Error::StashType { key: "n", .. })
        ));
        assert_eq!(format!("{stash:?}"), "{\"n\": \"3\"}");
    }
}
