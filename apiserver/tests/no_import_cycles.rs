//! The crate's files import each other one way only: the file-level import graph of `src/` has no cycle.
//!
//! Every `.rs` file under `src/` is a node (a directory module's `mod.rs` and each of its children apart).
//! An edge goes from a file to the file that defines the module a path in it names: `crate::`, `super::` and
//! `self::` paths (in `use` trees and in code, test modules included), paths through a child module
//! declared with `mod` or a module bound by `use`. A `mod` declaration alone is no edge. Comments and string
//! literals are skipped. The test fails naming each cycle, with one import that makes each step of it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// A lexical token of Rust source, as much as path resolution needs.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    Str(String),
    PathSep,
    Punct(char),
}

/// Tokens of `src`, with their line numbers, skipping comments, char literals and lifetimes.
fn tokenize(src: &str) -> Vec<(Tok, usize)> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if chars[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if (c == 'r' || c == 'b') && raw_string_start(&chars, i).is_some() {
            let (hashes, body) = raw_string_start(&chars, i).unwrap_or((0, i));
            let start_line = line;
            let mut j = body;
            let mut text = String::new();
            loop {
                if j >= chars.len() {
                    break;
                }
                if chars[j] == '"' && (0..hashes).all(|h| chars.get(j + 1 + h) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                if chars[j] == '\n' {
                    line += 1;
                }
                text.push(chars[j]);
                j += 1;
            }
            out.push((Tok::Str(text), start_line));
            i = j;
        } else if c == '"' || (c == 'b' && next == Some('"')) {
            let start_line = line;
            let mut j = if c == 'b' { i + 2 } else { i + 1 };
            let mut text = String::new();
            while j < chars.len() && chars[j] != '"' {
                if chars[j] == '\\' {
                    j += 1;
                }
                if chars.get(j) == Some(&'\n') {
                    line += 1;
                }
                if let Some(&ch) = chars.get(j) {
                    text.push(ch);
                }
                j += 1;
            }
            out.push((Tok::Str(text), start_line));
            i = j + 1;
        } else if c == '\'' || (c == 'b' && next == Some('\'')) {
            // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
            let j = if c == 'b' { i + 1 } else { i };
            if chars.get(j + 1) == Some(&'\\') {
                let mut k = j + 2;
                while k < chars.len() && chars[k] != '\'' {
                    k += 1;
                }
                i = k + 1;
            } else if chars.get(j + 2) == Some(&'\'') {
                i = j + 3;
            } else {
                i = j + 1;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
            }
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            // `r#ident` raw identifiers.
            let word = word.strip_prefix("r#").map(str::to_owned).unwrap_or(word);
            out.push((Tok::Ident(word), line));
        } else if c.is_ascii_digit() {
            while i < chars.len()
                && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '.')
            {
                if chars[i] == '.' && !chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()) {
                    break;
                }
                i += 1;
            }
        } else if c == ':' && next == Some(':') {
            out.push((Tok::PathSep, line));
            i += 2;
        } else {
            out.push((Tok::Punct(c), line));
            i += 1;
        }
    }
    out
}

/// Where a raw string (`r"`, `r#"`, `br"`) starting at `i` has its body: the number of `#`s and the body's
/// first index.
fn raw_string_start(chars: &[char], i: usize) -> Option<(usize, usize)> {
    let mut j = i;
    if chars[j] == 'b' {
        j += 1;
    }
    if chars.get(j) != Some(&'r') {
        return None;
    }
    if i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_') {
        return None;
    }
    j += 1;
    let mut hashes = 0;
    while chars.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    (chars.get(j) == Some(&'"')).then_some((hashes, j + 1))
}

/// A path found in a file: the module scope it is written in, its segments, and its line.
struct UsePath {
    scope: Vec<String>,
    segments: Vec<String>,
    line: usize,
    /// A `use` declaration's path: its last segment (or alias) is bound in `scope`.
    binds: Option<String>,
}

/// What one file declares and names.
#[derive(Default)]
struct FileScan {
    /// Modules declared with `mod NAME;` (scope, name, `#[path]`), and inline `mod NAME { }` (scope, name).
    file_mods: Vec<(Vec<String>, String, Option<String>)>,
    inline_mods: Vec<Vec<String>>,
    paths: Vec<UsePath>,
}

fn ident(toks: &[(Tok, usize)], i: usize) -> Option<&str> {
    match toks.get(i) {
        Some((Tok::Ident(s), _)) => Some(s),
        _ => None,
    }
}

fn is_punct(toks: &[(Tok, usize)], i: usize, c: char) -> bool {
    matches!(toks.get(i), Some((Tok::Punct(p), _)) if *p == c)
}

fn is_sep(toks: &[(Tok, usize)], i: usize) -> bool {
    matches!(toks.get(i), Some((Tok::PathSep, _)))
}

/// Parses a `use` tree from `i` into `(segments, bound name)` pairs; returns the index after it.
fn use_tree(
    toks: &[(Tok, usize)],
    mut i: usize,
    prefix: &[String],
    out: &mut Vec<(Vec<String>, Option<String>)>,
) -> usize {
    let mut path = prefix.to_vec();
    if is_sep(toks, i) {
        i += 1;
    }
    loop {
        if is_punct(toks, i, '{') {
            i += 1;
            while !is_punct(toks, i, '}') && i < toks.len() {
                i = use_tree(toks, i, &path, out);
                if is_punct(toks, i, ',') {
                    i += 1;
                }
            }
            return i + 1;
        }
        if is_punct(toks, i, '*') {
            out.push((path, None));
            return i + 1;
        }
        let Some(name) = ident(toks, i) else {
            return i + 1;
        };
        i += 1;
        if name == "self" && !path.is_empty() {
            let bound = path.last().cloned();
            out.push((path, bound));
            return i;
        }
        path.push(name.to_owned());
        if is_sep(toks, i) {
            i += 1;
            continue;
        }
        let mut bound = Some(name.to_owned());
        if ident(toks, i) == Some("as") {
            bound = ident(toks, i + 1).map(str::to_owned).filter(|b| b != "_");
            i += 2;
        }
        out.push((path, bound));
        return i;
    }
}

/// Scans one file's tokens: module declarations, `use` trees and qualified paths, per module scope.
fn scan(toks: &[(Tok, usize)]) -> FileScan {
    let mut scan = FileScan::default();
    // The stack of open braces: `Some(name)` where an inline module's body opened.
    let mut braces: Vec<Option<String>> = Vec::new();
    let scope_of = |braces: &Vec<Option<String>>| -> Vec<String> {
        braces.iter().flatten().cloned().collect()
    };
    let mut pending_path: Option<String> = None;
    let mut i = 0;
    while i < toks.len() {
        match &toks[i].0 {
            Tok::Punct('{') => braces.push(None),
            Tok::Punct('}') => {
                braces.pop();
            }
            Tok::Punct('#') if is_punct(toks, i + 1, '[') && ident(toks, i + 2) == Some("path") => {
                if let Some((Tok::Str(p), _)) = toks.get(i + 4) {
                    pending_path = Some(p.clone());
                }
                i += 5;
                continue;
            }
            Tok::Ident(w) if w == "mod" && ident(toks, i + 1).is_some() && !is_sep(toks, i + 2) => {
                let name = ident(toks, i + 1).unwrap_or_default().to_owned();
                let scope = scope_of(&braces);
                if is_punct(toks, i + 2, ';') {
                    scan.file_mods.push((scope, name, pending_path.take()));
                    i += 3;
                } else if is_punct(toks, i + 2, '{') {
                    let mut inner = scope;
                    inner.push(name.clone());
                    scan.inline_mods.push(inner);
                    braces.push(Some(name));
                    pending_path = None;
                    i += 3;
                } else {
                    i += 2;
                }
                continue;
            }
            Tok::Ident(w) if w == "use" && (i == 0 || !is_sep(toks, i - 1)) => {
                let line = toks[i].1;
                let mut trees = Vec::new();
                let end = use_tree(toks, i + 1, &[], &mut trees);
                let scope = scope_of(&braces);
                for (segments, binds) in trees {
                    scan.paths.push(UsePath {
                        scope: scope.clone(),
                        segments,
                        line,
                        binds,
                    });
                }
                i = end;
                continue;
            }
            Tok::Ident(w) if is_sep(toks, i + 1) && !(i > 0 && is_sep(toks, i - 1)) => {
                // A qualified path in code: `crate::a::b`, `super::x`, `child::f`, `$crate::m`.
                if i > 1 && ident(toks, i - 1) == Some("in") && is_punct(toks, i - 2, '(') {
                    i += 1;
                    continue;
                }
                let line = toks[i].1;
                let mut segments = vec![w.clone()];
                let mut j = i + 1;
                while is_sep(toks, j) {
                    match ident(toks, j + 1) {
                        Some(s) => segments.push(s.to_owned()),
                        None => break,
                    }
                    j += 2;
                }
                scan.paths.push(UsePath {
                    scope: scope_of(&braces),
                    segments,
                    line,
                    binds: None,
                });
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    scan
}

/// The crate's module tree: every module path, the file that holds it.
struct Crate {
    src: PathBuf,
    module_file: BTreeMap<Vec<String>, PathBuf>,
    scans: BTreeMap<PathBuf, FileScan>,
}

fn load(src: &Path) -> Crate {
    let mut krate = Crate {
        src: src.to_owned(),
        module_file: BTreeMap::new(),
        scans: BTreeMap::new(),
    };
    let mut queue = vec![(Vec::<String>::new(), src.join("lib.rs"))];
    while let Some((module, file)) = queue.pop() {
        let text =
            fs::read_to_string(&file).unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
        let found = scan(&tokenize(&text));
        krate.module_file.insert(module.clone(), file.clone());
        let dir = file.parent().expect("a file has a directory").to_owned();
        let stem = file
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_owned();
        // Where `mod x;` looks for `x.rs`: beside lib.rs/mod.rs, else in the directory named after the file.
        let children = if stem == "lib" || stem == "mod" {
            dir.clone()
        } else {
            dir.join(&stem)
        };
        for inline in &found.inline_mods {
            let mut m = module.clone();
            m.extend(inline.iter().cloned());
            krate.module_file.insert(m, file.clone());
        }
        for (scope, name, path_attr) in &found.file_mods {
            let mut m = module.clone();
            m.extend(scope.iter().cloned());
            m.push(name.clone());
            let child = match path_attr {
                Some(p) => dir.join(p),
                None => {
                    let base = scope.iter().fold(children.clone(), |d, s| d.join(s));
                    let flat = base.join(format!("{name}.rs"));
                    if flat.exists() {
                        flat
                    } else {
                        base.join(name).join("mod.rs")
                    }
                }
            };
            queue.push((m, child));
        }
        krate.scans.insert(file, found);
    }
    krate
}

/// The file-level graph: for each file, the files it names, with the line of one path naming each.
fn graph(krate: &Crate) -> BTreeMap<PathBuf, BTreeMap<PathBuf, usize>> {
    let file_module: BTreeMap<&PathBuf, &Vec<String>> = krate
        .module_file
        .iter()
        .filter(|(m, f)| {
            krate
                .module_file
                .iter()
                .all(|(m2, f2)| f2 != *f || m2.len() >= m.len())
        })
        .map(|(m, f)| (f, m))
        .collect();
    let mut edges: BTreeMap<PathBuf, BTreeMap<PathBuf, usize>> = BTreeMap::new();
    for (file, found) in &krate.scans {
        let module = file_module[file];
        let out = edges.entry(file.clone()).or_default();
        // Names bound per scope to a module: declared children, and `use`d modules.
        let mut bound: BTreeMap<(Vec<String>, String), Vec<String>> = BTreeMap::new();
        for m in krate.module_file.keys() {
            if m.len() > module.len() && m.starts_with(module) {
                let scope = m[module.len()..m.len() - 1].to_vec();
                bound.insert((scope, m[m.len() - 1].clone()), m.clone());
            }
        }
        let resolve = |p: &UsePath,
                       bound: &BTreeMap<(Vec<String>, String), Vec<String>>|
         -> Option<Vec<String>> {
            let mut here: Vec<String> = module.clone();
            here.extend(p.scope.iter().cloned());
            let mut segs = p.segments.iter().peekable();
            let mut base = match segs.peek().map(|s| s.as_str()) {
                Some("crate") => Vec::new(),
                Some("self") => here.clone(),
                Some("super") => here.clone(),
                Some(first) => {
                    // A name bound in this scope or an enclosing inline scope.
                    let found = (0..=p.scope.len())
                        .rev()
                        .find_map(|n| bound.get(&(p.scope[..n].to_vec(), first.to_owned())))?;
                    segs.next();
                    let mut b = found.clone();
                    b.extend(segs.cloned());
                    return Some(b);
                }
                None => return None,
            };
            let first = segs.next().cloned();
            if first.as_deref() == Some("super") {
                base.pop();
            }
            while segs.peek().map(|s| s.as_str()) == Some("super") {
                segs.next();
                base.pop();
            }
            base.extend(segs.cloned());
            Some(base)
        };
        // `use` bindings first (they hold in their whole scope), then every path.
        for p in &found.paths {
            if let (Some(name), Some(target)) = (&p.binds, resolve(p, &bound))
                && krate.module_file.contains_key(&target)
            {
                bound.insert((p.scope.clone(), name.clone()), target);
            }
        }
        for p in &found.paths {
            let Some(target) = resolve(p, &bound) else {
                continue;
            };
            let owner = (0..=target.len())
                .rev()
                .find_map(|n| krate.module_file.get(&target[..n]));
            if let Some(owner) = owner
                && owner != file
            {
                out.entry(owner.clone()).or_insert(p.line);
            }
        }
    }
    edges
}

/// Strongly connected components with more than one file (Tarjan's algorithm).
fn cycles(edges: &BTreeMap<PathBuf, BTreeMap<PathBuf, usize>>) -> Vec<Vec<PathBuf>> {
    struct State<'a> {
        edges: &'a BTreeMap<PathBuf, BTreeMap<PathBuf, usize>>,
        index: BTreeMap<&'a PathBuf, usize>,
        low: BTreeMap<&'a PathBuf, usize>,
        stack: Vec<&'a PathBuf>,
        on: BTreeSet<&'a PathBuf>,
        found: Vec<Vec<PathBuf>>,
    }
    fn strong<'a>(s: &mut State<'a>, v: &'a PathBuf) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        for w in s.edges.get(v).into_iter().flat_map(|e| e.keys()) {
            if !s.index.contains_key(w) {
                strong(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                comp.push(w.clone());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.found.push(comp);
            }
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v) {
            strong(&mut s, v);
        }
    }
    s.found
}

/// One cycle through the files of `comp`, as `a.rs:LINE -> b.rs:LINE -> ... -> a.rs`.
fn describe(
    krate: &Crate,
    edges: &BTreeMap<PathBuf, BTreeMap<PathBuf, usize>>,
    comp: &[PathBuf],
) -> String {
    let inside: BTreeSet<&PathBuf> = comp.iter().collect();
    let start = &comp[0];
    // Breadth-first from the start's successors back to it, inside the component.
    let mut prev: BTreeMap<&PathBuf, &PathBuf> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    let mut back = None;
    while let Some(v) = queue.pop_front() {
        for w in edges[v].keys().filter(|w| inside.contains(w)) {
            if w == start {
                back = Some(v);
                break;
            }
            if !prev.contains_key(w) {
                prev.insert(w, v);
                queue.push_back(w);
            }
        }
        if back.is_some() {
            break;
        }
    }
    let mut chain = vec![start];
    let mut v = back.expect("a component of two or more files has a cycle through each");
    while v != start {
        chain.push(v);
        v = prev[v];
    }
    chain[1..].reverse();
    chain.push(start);
    let name = |p: &PathBuf| {
        p.strip_prefix(&krate.src)
            .unwrap_or(p)
            .display()
            .to_string()
    };
    let steps: Vec<String> = chain
        .windows(2)
        .map(|w| format!("{}:{}", name(w[0]), edges[w[0]][w[1]]))
        .collect();
    let within: Vec<String> = comp
        .iter()
        .flat_map(|f| {
            edges[f]
                .iter()
                .filter(|(w, _)| inside.contains(w))
                .map(move |(w, line)| (f, w, line))
        })
        .map(|(f, w, line)| format!("    {}:{line} -> {}", name(f), name(w)))
        .collect();
    format!(
        "{} files [{}]: {} -> {}\n  imports inside it:\n{}",
        comp.len(),
        comp.iter().map(name).collect::<Vec<_>>().join(", "),
        steps.join(" -> "),
        name(start),
        within.join("\n")
    )
}

#[test]
fn no_file_imports_a_file_that_imports_it_back() {
    let krate = load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let edges = graph(&krate);
    assert!(
        krate.scans.len() > 100,
        "the module tree was read: {} files",
        krate.scans.len()
    );
    let found = cycles(&edges);
    let report: Vec<String> = found.iter().map(|c| describe(&krate, &edges, c)).collect();
    assert!(
        report.is_empty(),
        "{} import cycles between files of src/:\n{}",
        report.len(),
        report.join("\n")
    );
}

#[test]
fn the_scanner_resolves_paths_and_finds_a_cycle() {
    let dir = std::env::temp_dir().join(format!("no_import_cycles_{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("a")).expect("temp dir");
    let write = |p: &str, s: &str| fs::write(dir.join(p), s).expect("write");
    write(
        "lib.rs",
        "mod a;\nmod b;\nmod c;\npub use a::X;\n// crate::c::Z in a comment\nfn l() { for _ in b::g() {} }\n",
    );
    write(
        "a.rs",
        "mod inner;\npub struct X;\nconst S: &str = \"crate::c::Y\";\n",
    );
    write(
        "a/inner.rs",
        "use super::super::b::{self, Y as _};\nfn f() { b::g(); }\n",
    );
    write(
        "b.rs",
        "pub struct Y;\npub fn g() -> Vec<u8> { vec![] }\nfn h() -> crate::c::Z { todo!() }\n",
    );
    write(
        "c.rs",
        "pub struct Z;\n#[cfg(test)]\nmod tests {\n    use crate::a::inner;\n}\n",
    );
    let krate = load(&dir);
    let edges = graph(&krate);
    let e = |from: &str, to: &str| edges[&dir.join(from)].contains_key(&dir.join(to));
    assert!(
        e("lib.rs", "a.rs") && e("lib.rs", "b.rs") && !e("lib.rs", "c.rs") && !e("a.rs", "c.rs")
    );
    assert!(e("a/inner.rs", "b.rs") && e("b.rs", "c.rs") && e("c.rs", "a/inner.rs"));
    let found = cycles(&edges);
    assert_eq!(found.len(), 1);
    let text = describe(&krate, &edges, &found[0]);
    assert!(
        text.starts_with(
            "3 files [a/inner.rs, b.rs, c.rs]: a/inner.rs:1 -> b.rs:3 -> c.rs:4 -> a/inner.rs"
        ),
        "{text}"
    );
    let _ = fs::remove_dir_all(&dir);
}
