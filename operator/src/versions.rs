//! Comparing `resourceVersion`s. They are opaque strings to clients, but kube-apiserver's (etcd's) and the
//! in-memory server's are increasing numbers, which the runtime uses to tell whether a cached object already
//! shows one of its own writes.

/// Whether `cached` is `written` or a later version: `Some` when both are numbers, `None` when either is not
/// (each caller decides what an opaque version means to it).
pub(crate) fn at_least(cached: &str, written: &str) -> Option<bool> {
    match (cached.parse::<u64>(), written.parse::<u64>()) {
        (Ok(c), Ok(w)) => Some(c >= w),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::at_least;

    #[test]
    fn numbers_compare_and_opaque_versions_do_not() {
        assert_eq!(at_least("12", "9"), Some(true));
        assert_eq!(at_least("9", "9"), Some(true));
        assert_eq!(at_least("9", "12"), Some(false));
        assert_eq!(at_least("abc", "9"), None);
    }
}
