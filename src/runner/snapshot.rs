//! What a workspace holds, as the harness reads it: the one walker behind the attempt's initial
//! state (`expect.files.unchanged`), PRP artifacts, TDD fix diffs and L3 reverts.
//!
//! Everything goes through [`Beneath`]: no symlink is followed, FIFOs and devices are never
//! opened, and what is read is bounded — entries, depth, bytes per file, and bytes per walk
//! (1 GiB hashed, 32 MiB of source text), so a workspace an agent filled with sparse giant files
//! costs medin neither memory nor minutes. A symlink is recorded as `symlink:<target text>` (its
//! target is never read); a file too large to hash, or past the walk's budget, as
//! `size:<bytes>`. Source texts past the budget are left out of fix diffs (and so of an L3
//! revert).

use std::collections::BTreeMap;

use crate::sandbox::{Beneath, BeneathError, EntryKind, WalkLimits};

/// Largest file hashed whole; a larger one is recorded by size.
const MAX_HASHED: u64 = 256 * 1024 * 1024;
/// Largest file read as source text for fix diffs.
const MAX_TEXT: u64 = 1024 * 1024;
/// Most source files read for fix diffs.
const MAX_TEXT_FILES: usize = 5000;
/// Most bytes of source text read per walk.
const MAX_TEXT_TOTAL: u64 = 32 * 1024 * 1024;
/// Most bytes hashed per walk.
const MAX_HASHED_TOTAL: u64 = 1024 * 1024 * 1024;

/// Path → `sha256:<hex>` (or `symlink:…`, `size:…`) of every file and symlink below the root,
/// leaving out what `skip(rel)` names (and everything under it).
pub(crate) fn hashes(ws: &Beneath, skip: impl Fn(&str) -> bool) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let Ok(walk) = ws.walk(WalkLimits::default(), |rel, _| skip(rel)) else {
        return out;
    };
    let mut hashed = 0u64;
    for e in walk.entries {
        if e.meta.kind == EntryKind::File {
            hashed = hashed.saturating_add(e.meta.size);
            if hashed > MAX_HASHED_TOTAL {
                out.insert(e.rel, format!("size:{}", e.meta.size));
                continue;
            }
        }
        if let Some(state) = state_of(ws, &e.rel, e.meta.kind, e.meta.size) {
            out.insert(e.rel, state);
        }
    }
    out
}

/// How [`hashes`] records one entry; `None` for directories, special files and what cannot be
/// read.
pub(crate) fn state_of(ws: &Beneath, rel: &str, kind: EntryKind, size: u64) -> Option<String> {
    match kind {
        EntryKind::File => match ws.hash(rel, MAX_HASHED) {
            Ok(h) => Some(h),
            Err(BeneathError::TooLarge { .. }) => Some(format!("size:{size}")),
            Err(_) => None,
        },
        EntryKind::Symlink => ws.read_link(rel).ok().map(|t| format!("symlink:{}", t.display())),
        EntryKind::Dir | EntryKind::Special => None,
    }
}

/// Path → text of every UTF-8 regular file of at most 1 MiB below the root (at most 5000),
/// leaving out what `skip(rel)` names.
pub(crate) fn texts(ws: &Beneath, skip: impl Fn(&str) -> bool) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let Ok(walk) = ws.walk(WalkLimits::default(), |rel, _| skip(rel)) else {
        return out;
    };
    let mut total = 0u64;
    for e in walk.entries {
        if out.len() >= MAX_TEXT_FILES {
            break;
        }
        if e.meta.kind != EntryKind::File
            || e.meta.size > MAX_TEXT
            || total.saturating_add(e.meta.size) > MAX_TEXT_TOTAL
        {
            continue;
        }
        if let Ok(Ok(text)) = ws.read(&e.rel, MAX_TEXT).map(String::from_utf8) {
            total += text.len() as u64;
            out.insert(e.rel, text);
        }
    }
    out
}

/// Every entry that is not a directory (files, symlinks, special files) below the root, leaving
/// out what `skip(rel)` names: what a revert must remove when it was not there before.
pub(crate) fn entries(ws: &Beneath, skip: impl Fn(&str) -> bool) -> std::collections::BTreeSet<String> {
    ws.walk(WalkLimits::default(), |rel, _| skip(rel))
        .map(|w| {
            w.entries
                .into_iter()
                .filter(|e| e.meta.kind != EntryKind::Dir)
                .map(|e| e.rel)
                .collect()
        })
        .unwrap_or_default()
}

/// Whether `rel` is, or lies below, a top-level entry named in `names`.
pub(crate) fn under_top_level(rel: &str, names: &[&str]) -> bool {
    let first = rel.split('/').next().unwrap_or(rel);
    names.contains(&first)
}

/// Whether any component of `rel` is named in `names`.
pub(crate) fn has_component(rel: &str, names: &[&str]) -> bool {
    rel.split('/').any(|c| names.contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_recorded_never_followed_and_skips_apply() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("secret"), "s").unwrap();
        let ws = t.path().join("ws");
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        std::fs::write(ws.join(".git/config"), "c").unwrap();
        std::fs::write(ws.join("a.py"), "print(1)\n").unwrap();
        std::os::unix::fs::symlink(t.path().join("secret"), ws.join("link")).unwrap();
        let b = Beneath::open(&ws).unwrap();
        let h = hashes(&b, |rel| under_top_level(rel, &[".git"]));
        assert_eq!(h.keys().collect::<Vec<_>>(), ["a.py", "link"]);
        assert!(h["link"].starts_with("symlink:"), "{h:?}");
        let x = texts(&b, |rel| has_component(rel, &[".git"]));
        assert_eq!(x.keys().collect::<Vec<_>>(), ["a.py"]);
    }
}
