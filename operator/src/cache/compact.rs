//! How a compact cache encodes an object: its JSON (after [`strip`](super::strip)), compressed with LZ4
//! against a dictionary that is the JSON of the first object the cache encoded.
//!
//! The objects of one kind that one operator caches are alike: the Deployments of a WebApp operator share
//! every key and most values (image, ports, probes, the defaults the API server fills in), and differ in
//! names, uids, resource versions and timestamps. Compressed against one of them, a defaulted Deployment of
//! 1,336 bytes of JSON takes a few hundred. The dictionary is fixed for the cache's life (every stored object
//! was compressed against it), and costs one object's JSON. Decoding decompresses first (about a microsecond
//! for a Deployment, against several for the JSON decode that follows).

use std::sync::OnceLock;

use super::CachedKind;
use super::objects::{Key, key_of};

/// The encoding of one compact cache; it holds the cache's dictionary.
#[derive(Default)]
pub(crate) struct Codec {
    dictionary: OnceLock<Box<[u8]>>,
}

impl Codec {
    /// The compressed JSON of `obj`, to hold compact; `None` (logged) when it does not serialize. The first
    /// object encoded becomes the dictionary.
    pub(crate) fn encode<K: CachedKind>(&self, obj: &K) -> Option<(Key, Box<[u8]>)> {
        let key = key_of(obj);
        match serde_json::to_vec(obj) {
            Ok(json) => {
                let dictionary = self
                    .dictionary
                    .get_or_init(|| json.clone().into_boxed_slice());
                let compressed =
                    lz4_flex::block::compress_prepend_size_with_dict(&json, dictionary);
                Some((key, compressed.into_boxed_slice()))
            }
            Err(e) => {
                tracing::error!(kind = %K::kind(&()), object = %key, error = %e, "a watched object does not serialize; not cached");
                None
            }
        }
    }

    /// The object (or the part of it that `T` reads) stored as `bytes` under `key`; `None` (logged) when it does
    /// not decode.
    pub(crate) fn decode<T: serde::de::DeserializeOwned>(
        &self,
        key: &str,
        bytes: &[u8],
    ) -> Option<T> {
        let dictionary = self.dictionary.get().map_or(&[][..], |d| &d[..]);
        let decoded = lz4_flex::block::decompress_size_prepended_with_dict(bytes, dictionary)
            .map_err(|e| e.to_string())
            .and_then(|json| {
                // As text, with the deserializer the watch decodes with: one deserializer per kind (see
                // `crate::json`). A cached object has no managed fields to pass over, so this is
                // `serde_json::from_str`'s result.
                let text = std::str::from_utf8(&json).map_err(|e| e.to_string())?;
                crate::unmanaged::from_str(text).map_err(|e| e.to_string())
            });
        match decoded {
            Ok(v) => Some(v),
            Err(error) => {
                tracing::error!(object = %key, %error, "a cached object does not decode; treated as absent");
                None
            }
        }
    }

    /// How many bytes the dictionary takes (none before the first object).
    #[cfg(test)]
    pub(crate) fn dictionary_len(&self) -> usize {
        self.dictionary.get().map_or(0, |d| d.len())
    }
}
