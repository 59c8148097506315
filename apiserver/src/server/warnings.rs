//! The `Warning` headers of a response, written as kube-apiserver's warning recorder writes them
//! (`k8s.io/apiserver/pkg/endpoints/filters/warning.go`, agent `-`).
//!
//! A text is written once (repeats are dropped), empty texts and texts with control characters are dropped,
//! `"` and `\` are escaped. Once the texts written pass 4096 characters, every text is cut to its first 256
//! characters and the headers are written again; texts added after that are cut too, until 4096 characters
//! are written again, after which the rest are dropped.

use std::collections::HashSet;

/// The characters of warning text written before texts are cut.
const TOTAL_CHARS: usize = 4 * 1024;
/// The characters a text keeps once texts are cut.
const ITEM_CHARS: usize = 256;

/// The `Warning` header values for `texts`, in order.
pub(super) fn headers(texts: &[String]) -> Vec<String> {
    let mut seen: HashSet<&str> = HashSet::new();
    let mut ordered: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    let mut written = 0;
    let mut truncating = false;
    for text in texts {
        if text.is_empty() {
            continue;
        }
        if truncating && written >= TOTAL_CHARS {
            break;
        }
        if !seen.insert(text) {
            continue;
        }
        ordered.push(text);
        let (text, chars) = if truncating {
            cut(text)
        } else {
            (text.as_str(), text.chars().count())
        };
        let Some(value) = header(text) else {
            continue;
        };
        if written + chars <= TOTAL_CHARS || truncating {
            written += chars;
            out.push(value);
            continue;
        }
        truncating = true;
        written = 0;
        out.clear();
        for text in &ordered {
            let (text, chars) = cut(text);
            if let Some(value) = header(text) {
                written += chars;
                out.push(value);
            }
        }
    }
    out
}

/// `text`'s first 256 characters, and how many characters that is.
fn cut(text: &str) -> (&str, usize) {
    match text.char_indices().nth(ITEM_CHARS) {
        Some((end, _)) => (&text[..end], ITEM_CHARS),
        None => (text, text.chars().count()),
    }
}

/// `299 - "TEXT"`; `None` for a text with control characters (Go's `net.NewWarningHeader` refuses it).
fn header(text: &str) -> Option<String> {
    if text.chars().any(char::is_control) {
        return None;
    }
    let escaped = text.replace('\\', "\\\\").replace('"', "\\\"");
    Some(format!("299 - \"{escaped}\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn repeats_empty_texts_and_control_characters_are_dropped() {
        let out = headers(&texts(&["a", "", "a", "b\u{7}c", "say \"hi\" \\ ok", "é"]));
        assert_eq!(
            out,
            [r#"299 - "a""#, r#"299 - "say \"hi\" \\ ok""#, "299 - \"é\"",]
        );
    }

    #[test]
    fn past_4096_characters_every_text_is_cut_to_256() {
        let long = |c: char, n: usize| c.to_string().repeat(n);
        let list = vec![long('a', 3000), long('b', 1000), long('c', 300)];
        let out = headers(&list);
        assert_eq!(out.len(), 3);
        assert_eq!(out[0], format!("299 - \"{}\"", long('a', 256)));
        assert_eq!(out[1], format!("299 - \"{}\"", long('b', 256)));
        assert_eq!(out[2], format!("299 - \"{}\"", long('c', 256)));
    }

    #[test]
    fn under_the_limit_texts_are_whole() {
        let list = vec!["x".repeat(4000), "y".repeat(96)];
        let out = headers(&list);
        assert_eq!(out[0].len(), 4000 + 8);
        assert_eq!(out[1].len(), 96 + 8);
    }

    #[test]
    fn once_cut_texts_stop_after_4096_characters() {
        // 20 texts of 300 characters: the fourteenth passes 4096, every text is then cut to 256; 16 texts of 256
        // reach 4096 and the rest are dropped.
        let list: Vec<String> = (0..20)
            .map(|i| format!("{i:02}{}", "z".repeat(298)))
            .collect();
        let out = headers(&list);
        assert_eq!(out.len(), 16);
        assert!(out.iter().all(|h| h.len() == 256 + 8));
    }
}
