//! Protected files: the tests and test-runner configuration a verdict is judged by, put back as
//! the task shipped them before every judged run, with every agent change reported as
//! tampering.
//!
//! "Pristine" is the workspace as the agent found it (the fixture after `setup`), captured
//! before the agent's first action and kept in the harness's memory — never read back from the
//! workspace. Three kinds of protection:
//!
//! - **whole files** (a test module, `conftest.py`, `pytest.ini`, a jest config,
//!   `.cargo/config.toml`, …): a pristine one the agent changed, replaced by a link or a
//!   directory, or deleted is written back; for *runner configuration* patterns, one the agent
//!   added is removed (a new `conftest.py` reconfigures the runner without being asked to). A
//!   test module the agent adds stays: it runs inside the runner like the code under test,
//!   which is the known limit hidden checks answer (see [`super`]);
//! - **sections** of files that hold more than test configuration, read with real parsers:
//!   `pyproject.toml`'s `tool.pytest` (whatever the TOML spelling: dotted or quoted keys),
//!   `Cargo.toml`'s `lib.test`/`lib.harness`/`lib.doctest`, `package.autotests` and `[[test]]`
//!   targets, `setup.cfg`/`tox.ini`'s `[pytest]`/`[tool:pytest]` sections (INI: a header starts a
//!   line), `package.json`'s `scripts.test`, `pretest`, `posttest`, the pristine `test:*`
//!   scripts and the `jest`, `mocha`, `ava`, `c8`, `nyc`, `vitest` keys. Only those are put
//!   back; the agent's other edits (dependencies, metadata, new scripts of its own) stay;
//! - nothing else: the agent's own code is what is being judged.
//!
//! **Attribution.** Everything is put back to pristine before every judged run, but only what
//! changed *since the end of the previous judged run* is reported as the agent's tampering: a
//! test that writes its own fixture file under `testdata/` is not the agent changing the tests.
//! A mode-only change (`chmod +x`) is put back without being reported.
//!
//! **Fail closed.** A workspace too large to search for added runner configuration (more than
//! [`MAX_WALK`] entries outside [`NOT_SOURCE_DIRS`]) or one that cannot be searched is reported
//! as tampering (`unchecked`), never taken as clean.
//!
//! The defaults apply when the task does not set `protected:` and the pristine workspace holds
//! at least one file they match ("the test files the fixture ships"), or when the task is judged
//! by a verifier's tests ([`Protection::capture_for_hidden_tests`]); a task's own globs replace
//! them (whole-file protection, agent-added matches removed); `protected: []` turns it off.

use std::collections::{BTreeMap, BTreeSet};

use globset::{GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::sandbox::{Beneath, BeneathError, EntryKind, WalkLimits};

/// Folders that are never anyone's source: VCS metadata, dependency folders, build output and
/// caches. The one list of them: protection does not look inside, and TDD fix diffs leave them
/// out (with the loop's own state and cargo's home on top).
pub const NOT_SOURCE_DIRS: &[&str] = &[
    ".git",
    "node_modules",
    "target",
    "__pycache__",
    ".pytest_cache",
    ".venv",
    "venv",
];

/// Test modules and test data: restored when changed, never removed when added.
const TEST_FILES: &[&str] = &[
    "**/test_*.py",
    "**/*_test.py",
    "**/tests/**",
    "**/test/**",
    "**/__tests__/**",
    "**/testdata/**",
    "**/*.test.{js,mjs,cjs,ts,mts,cts,jsx,tsx}",
    "**/*.spec.{js,mjs,cjs,ts,mts,cts,jsx,tsx}",
    "**/*_test.go",
    "**/*_spec.rb",
    "**/spec/**",
];

/// Test-runner configuration: restored when changed, removed when the agent adds one.
const RUNNER_CONFIG: &[&str] = &[
    "**/conftest.py",
    "**/pytest.ini",
    "**/.pytest.ini",
    "**/pytest.toml",
    "**/.pytest.toml",
    "**/sitecustomize.py",
    "**/usercustomize.py",
    "**/jest.config.*",
    "**/vitest.config.*",
    "**/vitest.workspace.*",
    "**/.mocharc*",
    "**/karma.conf.*",
    "**/.babelrc",
    "**/babel.config.*",
    "**/.npmrc",
    "**/.yarnrc",
    "**/.yarnrc.yml",
    "**/.nycrc*",
    ".cargo/config",
    ".cargo/config.toml",
    "rust-toolchain",
    "rust-toolchain.toml",
    ".nextest/**",
    ".config/nextest.toml",
];

/// A file of which only some parts configure the tests, and how to read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sections {
    /// TOML: these key paths.
    Toml(&'static [&'static [&'static str]]),
    /// INI: these `[section]` names.
    Ini(&'static [&'static str]),
    /// `package.json`.
    PackageJson,
}

/// The files whose test sections (only) are protected.
const SECTION_FILES: &[(&str, Sections)] = &[
    ("pyproject.toml", Sections::Toml(&[&["tool", "pytest"]])),
    (
        "Cargo.toml",
        Sections::Toml(&[
            &["lib", "test"],
            &["lib", "harness"],
            &["lib", "doctest"],
            &["package", "autotests"],
            &["test"],
        ]),
    ),
    ("setup.cfg", Sections::Ini(&["tool:pytest"])),
    ("tox.ini", Sections::Ini(&["pytest", "tool:pytest"])),
    ("package.json", Sections::PackageJson),
];

/// Top-level `package.json` keys that configure test runners.
const PACKAGE_JSON_KEYS: &[&str] = &["jest", "mocha", "ava", "c8", "nyc", "vitest"];

/// Most bytes of protected files kept in memory.
const MAX_PRISTINE_BYTES: u64 = 64 * 1024 * 1024;

/// Most entries searched for added runner configuration before the search fails closed.
pub const MAX_WALK: usize = 200_000;

/// One change the agent made to a protected path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tampering {
    /// Workspace-relative path (`.` for the workspace as a whole).
    pub path: String,
    /// `modified`, `deleted`, `replaced` (by a link, a directory, a special file), `added`
    /// (runner configuration the task did not ship), `section` (test configuration inside a
    /// larger file), `unrestorable: …` or `unchecked: …` (the harness could not put it back or
    /// could not look: never taken as clean).
    pub change: String,
}

/// A protected path's state: its content's hash, or what stands there instead.
#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Absent,
    File([u8; 32]),
    /// A directory, link or special file, or a file too large or unreadable.
    Other,
}

/// What the protected paths looked like right after a judged run.
#[derive(Debug, Clone, Default)]
struct Observed {
    files: BTreeMap<String, State>,
    sections: BTreeMap<String, State>,
    added: BTreeSet<String>,
}

/// What the task protects, and the pristine copies to restore it from.
#[derive(Debug, Default)]
pub struct Protection {
    /// Whole files: path → (content, mode).
    files: BTreeMap<String, (Vec<u8>, u32)>,
    /// Section files present in the pristine workspace: path → content.
    sections: BTreeMap<String, Vec<u8>>,
    /// Patterns whose agent-added matches are removed.
    remove_added: Option<GlobSet>,
    /// Section protection is on (the defaults, not a task's own list).
    with_sections: bool,
    /// The protected paths after the last judged run (`None` before the first).
    after_last: Option<Observed>,
    /// Most entries searched for added runner configuration ([`MAX_WALK`]).
    walk_limit: usize,
}

/// A `protected:` glob that does not compile, or a workspace that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ProtectError {
    #[error("protected: `{glob}` is not a valid glob ({source}); write paths relative to the workspace, e.g. `tests/**` or `conftest.py`")]
    BadGlob {
        glob: String,
        #[source]
        source: globset::Error,
    },
    #[error("cannot read the workspace to capture its protected files: {0}")]
    Workspace(#[from] BeneathError),
}

fn globset(patterns: &[&str]) -> Result<GlobSet, ProtectError> {
    let mut b = GlobSetBuilder::new();
    for p in patterns {
        let g = globset::GlobBuilder::new(p)
            .literal_separator(true)
            .build()
            .map_err(|source| ProtectError::BadGlob {
                glob: (*p).to_string(),
                source,
            })?;
        b.add(g);
    }
    b.build().map_err(|source| ProtectError::BadGlob {
        glob: patterns.join(", "),
        source,
    })
}

/// Whether `rel` lies in a folder that is never source.
fn not_source(rel: &str) -> bool {
    rel.split('/').any(|c| NOT_SOURCE_DIRS.contains(&c))
}

fn hash(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// The state of `rel` now.
fn state(ws: &Beneath, rel: &str) -> State {
    match ws.entry(rel) {
        Ok(None) => State::Absent,
        Ok(Some(m)) if m.kind == EntryKind::File => match ws.read(rel, MAX_PRISTINE_BYTES) {
            Ok(b) => State::File(hash(&b)),
            Err(_) => State::Other,
        },
        _ => State::Other,
    }
}

impl Protection {
    /// Captures the protected files of the workspace as the agent finds it. `task_globs` is the
    /// task's `protected:` list (`None`: the defaults).
    pub fn capture(ws: &Beneath, task_globs: Option<&[String]>) -> Result<Protection, ProtectError> {
        Protection::capture_with(ws, task_globs, false)
    }

    /// [`Protection::capture`] for a task judged by tests the workspace does not ship (its
    /// verifier's): the default runner configuration is guarded even when the workspace holds
    /// no test file, so a `conftest.py`, `pytest.ini` or `sitecustomize.py` the agent adds — or
    /// a `tool.pytest` section — is taken out before the verifier runs, as tampering.
    pub fn capture_for_hidden_tests(ws: &Beneath, task_globs: Option<&[String]>) -> Result<Protection, ProtectError> {
        Protection::capture_with(ws, task_globs, true)
    }

    fn capture_with(
        ws: &Beneath,
        task_globs: Option<&[String]>,
        guard_config_always: bool,
    ) -> Result<Protection, ProtectError> {
        let (keep, remove_added, with_sections) = match task_globs {
            Some(globs) => {
                let list: Vec<&str> = globs.iter().map(String::as_str).collect();
                let set = globset(&list)?;
                (set.clone(), Some(set), false)
            }
            None => {
                let all: Vec<&str> = TEST_FILES.iter().chain(RUNNER_CONFIG).copied().collect();
                (globset(&all)?, Some(globset(RUNNER_CONFIG)?), true)
            }
        };
        let mut p = Protection {
            remove_added,
            with_sections,
            walk_limit: MAX_WALK,
            ..Default::default()
        };
        let walk = ws.walk(
            WalkLimits {
                max_entries: MAX_WALK,
                max_depth: 64,
            },
            |rel, _| not_source(rel),
        )?;
        let mut total = 0u64;
        for e in walk.entries {
            if e.meta.kind != EntryKind::File || total.saturating_add(e.meta.size) > MAX_PRISTINE_BYTES {
                continue;
            }
            let section = with_sections && SECTION_FILES.iter().any(|(name, _)| *name == e.rel);
            if !section && !keep.is_match(&e.rel) {
                continue;
            }
            let bytes = ws.read(&e.rel, MAX_PRISTINE_BYTES)?;
            total += bytes.len() as u64;
            if section {
                p.sections.insert(e.rel, bytes);
            } else {
                p.files.insert(e.rel, (bytes, e.meta.mode));
            }
        }
        // The defaults protect what the task ships: a workspace without tests has none (unless
        // hidden tests judge it).
        if task_globs.is_none() && p.files.is_empty() && !guard_config_always {
            p.remove_added = None;
            p.with_sections = false;
            p.sections.clear();
        }
        Ok(p)
    }

    /// Whether anything is protected.
    pub fn is_active(&self) -> bool {
        !self.files.is_empty() || self.remove_added.is_some() || !self.sections.is_empty()
    }

    /// The protected whole files (workspace-relative).
    pub fn files(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }

    /// The protected files as a restore puts them back: path, content and mode.
    pub fn restored(&self) -> impl Iterator<Item = (&str, &[u8], u32)> {
        self.files
            .iter()
            .map(|(rel, (bytes, mode))| (rel.as_str(), bytes.as_slice(), *mode))
    }

    /// Agent-added runner configuration now in the workspace, or why it cannot be known.
    fn added(&self, ws: &Beneath) -> Result<BTreeSet<String>, String> {
        let Some(added) = &self.remove_added else {
            return Ok(BTreeSet::new());
        };
        let walk = ws
            .walk(
                WalkLimits {
                    max_entries: self.walk_limit,
                    max_depth: 64,
                },
                |rel, _| not_source(rel),
            )
            .map_err(|e| e.to_string())?;
        if walk.truncated {
            return Err(format!(
                "the workspace holds more than {} entries outside dependency and build folders",
                self.walk_limit
            ));
        }
        Ok(walk
            .entries
            .into_iter()
            .filter(|e| e.meta.kind != EntryKind::Dir && !self.files.contains_key(&e.rel) && added.is_match(&e.rel))
            .map(|e| e.rel)
            .collect())
    }

    /// What the protected paths look like now.
    fn observe_now(&self, ws: &Beneath) -> Observed {
        Observed {
            files: self.files.keys().map(|r| (r.clone(), state(ws, r))).collect(),
            sections: if self.with_sections {
                SECTION_FILES
                    .iter()
                    .map(|(name, _)| ((*name).to_string(), state(ws, name)))
                    .collect()
            } else {
                BTreeMap::new()
            },
            added: self.added(ws).unwrap_or_default(),
        }
    }

    /// Records the protected paths as a judged run left them: what changes after this, and
    /// before the next judged run, is the agent's.
    pub fn observe(&mut self, ws: &Beneath) {
        if self.is_active() {
            self.after_last = Some(self.observe_now(ws));
        }
    }

    /// Puts every protected path back as it was and returns what the agent changed since the
    /// last judged run. Errors writing the workspace are returned as tampering entries too
    /// (`unrestorable: …`), never silently: a verdict must not be judged on files that could
    /// not be restored.
    pub fn restore(&self, ws: &Beneath) -> Vec<Tampering> {
        let mut out = Vec::new();
        // Reported only when the agent made the change: it differs from what the last judged
        // run left (or, before the first, from pristine).
        let agents = |path: &str, now: &State, kind: fn(&Observed) -> &BTreeMap<String, State>| match &self.after_last {
            Some(o) => kind(o).get(path) != Some(now),
            None => true,
        };
        let mut note = |path: &str, change: String| {
            out.push(Tampering {
                path: path.to_string(),
                change,
            })
        };
        for (rel, (bytes, mode)) in &self.files {
            let now_state = state(ws, rel);
            let entry = ws.entry(rel);
            let (change, mode_only) = match (&now_state, &entry) {
                (State::Absent, _) => (Some("deleted"), false),
                (State::File(h), Ok(Some(m))) if *h == hash(bytes) => (None, (m.mode & 0o777) != (*mode & 0o777)),
                (State::File(_), _) => (Some("modified"), false),
                (State::Other, _) => (Some("replaced"), false),
            };
            if change.is_none() && !mode_only {
                continue;
            }
            match ws.write_clearing(rel, bytes, Some(*mode)) {
                Ok(()) => {
                    if let Some(c) = change.filter(|_| agents(rel, &now_state, |o| &o.files)) {
                        note(rel, c.to_string());
                    }
                }
                Err(e) => note(rel, format!("unrestorable: {e}")),
            }
        }
        match self.added(ws) {
            Ok(added) => {
                for rel in added {
                    let by_agent = self.after_last.as_ref().is_none_or(|o| !o.added.contains(&rel));
                    match ws.remove(&rel) {
                        Ok(_) if by_agent => note(&rel, "added".into()),
                        Ok(_) => {}
                        Err(e) => note(&rel, format!("unrestorable: {e}")),
                    }
                }
            }
            Err(why) => note(
                ".",
                format!("unchecked: {why}; added runner configuration cannot be ruled out"),
            ),
        }
        if self.with_sections {
            for (name, kind) in SECTION_FILES {
                let pristine = self.sections.get(*name);
                let now_state = state(ws, name);
                let now = match now_state {
                    State::File(_) => ws.read(name, MAX_PRISTINE_BYTES).ok(),
                    State::Absent => continue, // nothing there can configure the runner
                    State::Other => None,
                };
                let judged = match now {
                    None => Some(pristine.cloned().unwrap_or_default()),
                    Some(now) => match kind {
                        Sections::Toml(keys) => merge_toml(pristine.map(Vec::as_slice), &now, keys),
                        Sections::Ini(names) => merge_ini(pristine.map(Vec::as_slice), &now, names),
                        Sections::PackageJson => merge_package_json(pristine.map(Vec::as_slice), &now),
                    },
                };
                let Some(judged) = judged else { continue };
                match ws.write_clearing(name, &judged, None) {
                    Ok(()) if agents(name, &now_state, |o| &o.sections) => note(name, "section".into()),
                    Ok(()) => {}
                    Err(e) => note(name, format!("unrestorable: {e}")),
                }
            }
        }
        out
    }
}

/// The TOML document's values at `keys` (each a key path), as JSON for a comparison that
/// ignores spelling (dotted or quoted keys, spacing, comments). `None`: not TOML.
fn toml_parts(text: &str, keys: &[&[&str]]) -> Option<Vec<Option<serde_json::Value>>> {
    let v: serde_json::Value = toml_edit::de::from_str(text).ok()?;
    Some(
        keys.iter()
            .map(|path| {
                let mut cur = &v;
                for k in *path {
                    cur = cur.get(k)?;
                }
                Some(cur.clone())
            })
            .collect(),
    )
}

/// The judged version of a TOML file: the agent's document with the pristine values at `keys`
/// (or without them where pristine had none). `None` when nothing differs. An agent file that
/// is not TOML is replaced by the pristine one (or emptied).
fn merge_toml(pristine: Option<&[u8]>, now: &[u8], keys: &[&[&str]]) -> Option<Vec<u8>> {
    let pristine_text = pristine.map(String::from_utf8_lossy).unwrap_or_default();
    let now_text = String::from_utf8_lossy(now);
    let want = toml_parts(&pristine_text, keys).unwrap_or_else(|| vec![None; keys.len()]);
    let Some(have) = toml_parts(&now_text, keys) else {
        return Some(pristine.map(<[u8]>::to_vec).unwrap_or_default());
    };
    if want == have {
        return None;
    }
    let pristine_doc: toml_edit::DocumentMut = pristine_text.parse().unwrap_or_default();
    let Ok(mut doc) = now_text.parse::<toml_edit::DocumentMut>() else {
        return Some(pristine.map(<[u8]>::to_vec).unwrap_or_default());
    };
    for path in keys {
        let Some((last, parents)) = path.split_last() else {
            continue;
        };
        // Take the agent's value out (through whatever spelling it used).
        let mut table: Option<&mut dyn toml_edit::TableLike> = Some(doc.as_table_mut());
        for k in parents {
            table = table.and_then(|t| t.get_mut(k)).and_then(|i| i.as_table_like_mut());
        }
        if let Some(t) = table {
            t.remove(last);
        }
        // Put the pristine one in, if there was one.
        let mut src = Some(pristine_doc.as_item());
        for k in *path {
            src = src.and_then(|i| i.get(k));
        }
        if let Some(item) = src {
            let mut dst = doc.as_item_mut();
            for k in parents {
                if dst.get(k).is_none() {
                    dst[*k] = toml_edit::table();
                }
                dst = &mut dst[*k];
            }
            dst[*last] = item.clone();
        }
    }
    Some(doc.to_string().into_bytes())
}

/// INI sections (`name`, lines) as Python's configparser reads them: a header is a line that
/// starts with `[` at column 0; everything else (indented continuations included) belongs to
/// the section above.
fn ini_sections(text: &str) -> Vec<(Option<String>, String)> {
    let mut out: Vec<(Option<String>, String)> = vec![(None, String::new())];
    for line in text.split_inclusive('\n') {
        if let Some(rest) = line.strip_prefix('[') {
            if let Some(end) = rest.find(']') {
                out.push((Some(rest[..end].trim().to_string()), line.to_string()));
                continue;
            }
        }
        if let Some(last) = out.last_mut() {
            last.1.push_str(line);
        }
    }
    out
}

fn ini_protected(text: &str, names: &[&str]) -> String {
    ini_sections(text)
        .into_iter()
        .filter(|(h, _)| h.as_deref().is_some_and(|h| names.contains(&h)))
        .map(|(_, body)| body)
        .collect()
}

/// The judged version of an INI file: the agent's file with the pristine test sections in
/// place of its own. `None` when nothing differs.
fn merge_ini(pristine: Option<&[u8]>, now: &[u8], names: &[&str]) -> Option<Vec<u8>> {
    let now = String::from_utf8_lossy(now);
    let pristine = pristine.map(String::from_utf8_lossy).unwrap_or_default();
    let (want, have) = (ini_protected(&pristine, names), ini_protected(&now, names));
    if want == have {
        return None;
    }
    let mut out: String = ini_sections(&now)
        .into_iter()
        .filter(|(h, _)| !h.as_deref().is_some_and(|h| names.contains(&h)))
        .map(|(_, body)| body)
        .collect();
    if !want.is_empty() {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&want);
    }
    Some(out.into_bytes())
}

/// Whether `package.json` script `name` is test configuration: what `npm test` runs
/// (`test`, `pretest`, `posttest`), and the `test:*` scripts the task shipped.
fn test_script(name: &str, pristine: &serde_json::Value) -> bool {
    matches!(name, "test" | "pretest" | "posttest")
        || (name.starts_with("test:") && pristine.get("scripts").and_then(|s| s.get(name)).is_some())
}

/// The judged version of `package.json`: the agent's file with the pristine test scripts and
/// runner keys. `None` when nothing differs. An agent file that is not a JSON object is
/// replaced by the pristine one (or `{}` when there was none).
fn merge_package_json(pristine: Option<&[u8]>, now: &[u8]) -> Option<Vec<u8>> {
    use serde_json::{Map, Value};
    let pristine: Value = pristine
        .and_then(|b| serde_json::from_slice(b).ok())
        .unwrap_or(Value::Object(Map::new()));
    let mut now: Value = match serde_json::from_slice::<Value>(now) {
        Ok(v) if v.is_object() => v,
        _ => return Some(serde_json::to_vec_pretty(&pristine).unwrap_or_default()),
    };
    let pick = |v: &Value| -> Value {
        let mut m = Map::new();
        for k in PACKAGE_JSON_KEYS {
            if let Some(x) = v.get(*k) {
                m.insert((*k).to_string(), x.clone());
            }
        }
        if let Some(s) = v.get("scripts").and_then(Value::as_object) {
            for (k, x) in s {
                if test_script(k, &pristine) {
                    m.insert(format!("scripts.{k}"), x.clone());
                }
            }
        }
        Value::Object(m)
    };
    if pick(&pristine) == pick(&now) {
        return None;
    }
    let obj = now.as_object_mut()?;
    for k in PACKAGE_JSON_KEYS {
        match pristine.get(*k) {
            Some(v) => {
                obj.insert((*k).to_string(), v.clone());
            }
            None => {
                obj.remove(*k);
            }
        }
    }
    let mut scripts = obj
        .get("scripts")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    scripts.retain(|k, _| !test_script(k, &pristine));
    if let Some(s) = pristine.get("scripts").and_then(Value::as_object) {
        for (k, v) in s {
            if test_script(k, &pristine) {
                scripts.insert(k.clone(), v.clone());
            }
        }
    }
    obj.insert("scripts".into(), Value::Object(scripts));
    let mut bytes = serde_json::to_vec_pretty(&now).unwrap_or_default();
    bytes.push(b'\n');
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws() -> (tempfile::TempDir, Beneath) {
        let t = tempfile::tempdir().unwrap();
        let b = Beneath::open(t.path()).unwrap();
        (t, b)
    }

    #[test]
    fn changed_deleted_linked_and_added_protected_files_are_put_back_and_reported() {
        let (t, b) = ws();
        let p = t.path();
        std::fs::write(p.join("calc.py"), "def add(a, b): return a - b\n").unwrap();
        std::fs::write(p.join("test_calc.py"), "assert add(2, 3) == 5\n").unwrap();
        std::fs::create_dir(p.join("tests")).unwrap();
        std::fs::write(p.join("tests/test_more.py"), "more\n").unwrap();
        let prot = Protection::capture(&b, None).unwrap();
        assert!(prot.is_active());
        assert_eq!(prot.files().collect::<Vec<_>>(), ["test_calc.py", "tests/test_more.py"]);
        // The agent's moves: rewrite one test, delete another, plant a conftest, fix the code.
        std::fs::write(p.join("test_calc.py"), "assert True\n").unwrap();
        std::fs::remove_file(p.join("tests/test_more.py")).unwrap();
        std::fs::write(p.join("conftest.py"), "# turn failures into passes\n").unwrap();
        std::fs::write(p.join("test_mine.py"), "mine\n").unwrap();
        std::fs::write(p.join("calc.py"), "def add(a, b): return a + b\n").unwrap();
        let t1 = prot.restore(&b);
        let got: Vec<(&str, &str)> = t1.iter().map(|t| (t.path.as_str(), t.change.as_str())).collect();
        assert_eq!(
            got,
            [
                ("test_calc.py", "modified"),
                ("tests/test_more.py", "deleted"),
                ("conftest.py", "added")
            ]
        );
        assert_eq!(
            std::fs::read_to_string(p.join("test_calc.py")).unwrap(),
            "assert add(2, 3) == 5\n"
        );
        assert!(!p.join("conftest.py").exists());
        assert!(p.join("test_mine.py").exists(), "the agent's own new tests stay");
        assert!(std::fs::read_to_string(p.join("calc.py")).unwrap().contains("a + b"));
        // Restored: nothing more to report.
        assert!(prot.restore(&b).is_empty());
        // A link over a protected file is replaced by the file.
        std::fs::remove_file(p.join("test_calc.py")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", p.join("test_calc.py")).unwrap();
        assert_eq!(prot.restore(&b)[0].change, "replaced");
        assert!(!std::fs::symlink_metadata(p.join("test_calc.py"))
            .unwrap()
            .file_type()
            .is_symlink());
    }

    #[test]
    fn a_workspace_without_tests_protects_nothing_by_default_and_a_task_list_replaces_the_defaults() {
        let (t, b) = ws();
        std::fs::write(t.path().join("notes.md"), "x").unwrap();
        let prot = Protection::capture(&b, None).unwrap();
        assert!(!prot.is_active());
        std::fs::write(t.path().join("conftest.py"), "x").unwrap();
        assert!(prot.restore(&b).is_empty());
        let prot = Protection::capture(&b, Some(&["notes.md".to_string()])).unwrap();
        std::fs::write(t.path().join("notes.md"), "y").unwrap();
        assert_eq!(prot.restore(&b)[0].path, "notes.md");
        assert!(Protection::capture(&b, Some(&["[".to_string()])).is_err());
    }

    #[test]
    fn hidden_tests_guard_the_runner_configuration_of_a_workspace_without_tests() {
        let (t, b) = ws();
        let p = t.path();
        std::fs::write(p.join("calc.py"), "x").unwrap();
        let prot = Protection::capture_for_hidden_tests(&b, None).unwrap();
        assert!(prot.is_active());
        std::fs::write(p.join("conftest.py"), "x").unwrap();
        std::fs::create_dir(p.join("lib")).unwrap();
        std::fs::write(p.join("lib/sitecustomize.py"), "x").unwrap();
        std::fs::write(
            p.join("pyproject.toml"),
            "[tool.pytest.ini_options]\naddopts = \"-p evil\"\n",
        )
        .unwrap();
        std::fs::write(p.join("test_mine.py"), "x").unwrap();
        let found: Vec<(String, String)> = prot.restore(&b).into_iter().map(|t| (t.path, t.change)).collect();
        assert_eq!(
            found,
            [
                ("conftest.py".to_string(), "added".to_string()),
                ("lib/sitecustomize.py".to_string(), "added".to_string()),
                ("pyproject.toml".to_string(), "section".to_string()),
            ]
        );
        assert!(!p.join("conftest.py").exists() && p.join("test_mine.py").exists());
        assert!(!std::fs::read_to_string(p.join("pyproject.toml"))
            .unwrap()
            .contains("evil"));
    }

    #[test]
    fn only_test_sections_of_shared_config_files_are_protected() {
        let (t, b) = ws();
        let p = t.path();
        std::fs::write(p.join("test_a.py"), "t\n").unwrap();
        std::fs::write(
            p.join("pyproject.toml"),
            "[project]\nname = \"x\"\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n",
        )
        .unwrap();
        std::fs::write(
            p.join("package.json"),
            "{\"name\": \"x\", \"scripts\": {\"test\": \"node --test\"}}",
        )
        .unwrap();
        let prot = Protection::capture(&b, None).unwrap();
        // Unchanged sections, other edits: untouched.
        std::fs::write(
            p.join("pyproject.toml"),
            "[project]\nname = \"x\"\ndependencies = [\"y\"]\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n",
        )
        .unwrap();
        assert!(prot.restore(&b).is_empty());
        // A deselecting addopts and a test script that always passes: put back.
        std::fs::write(
            p.join("pyproject.toml"),
            "[project]\nname = \"x\"\ndependencies = [\"y\"]\n\n[tool.pytest.ini_options]\naddopts = \"-q --deselect test_a.py\"\n[tool.other]\nk = 1\n",
        )
        .unwrap();
        std::fs::write(
            p.join("package.json"),
            "{\"name\": \"x\", \"dependencies\": {\"z\": \"1\"}, \"scripts\": {\"test\": \"true\", \"build\": \"b\"}, \"jest\": {}}",
        )
        .unwrap();
        let got = prot.restore(&b);
        assert_eq!(got.len(), 2, "{got:?}");
        let toml = std::fs::read_to_string(p.join("pyproject.toml")).unwrap();
        assert!(
            toml.contains("dependencies = [\"y\"]") && toml.contains("[tool.other]"),
            "{toml}"
        );
        assert!(
            toml.contains("addopts = \"-q\"\n") && !toml.contains("--deselect"),
            "{toml}"
        );
        let pkg: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(p.join("package.json")).unwrap()).unwrap();
        assert_eq!(pkg["scripts"]["test"], "node --test");
        assert_eq!(pkg["scripts"]["build"], "b");
        assert_eq!(pkg["dependencies"]["z"], "1");
        assert!(pkg.get("jest").is_none());
    }

    #[test]
    fn test_config_is_found_whatever_its_toml_or_ini_spelling() {
        let (t, b) = ws();
        let p = t.path();
        std::fs::write(p.join("test_a.py"), "t\n").unwrap();
        std::fs::write(p.join("pyproject.toml"), "[project]\nname = \"x\"\n").unwrap();
        std::fs::write(p.join("setup.cfg"), "[metadata]\nname = x\n").unwrap();
        std::fs::write(
            p.join("Cargo.toml"),
            "[package]\nname = \"x\"\nversion = \"0.1.0\"\n\n[dependencies]\n",
        )
        .unwrap();
        let prot = Protection::capture(&b, None).unwrap();
        for (file, text) in [
            (
                "pyproject.toml",
                "[project]\nname = \"x\"\n\n[tool.\"pytest\".ini_options]\naddopts = \"-k 'not test_add'\"\n",
            ),
            (
                "pyproject.toml",
                "[project]\nname = \"x\"\n\n[tool . pytest]\naddopts = \"-x\"\n",
            ),
            (
                "pyproject.toml",
                "[project]\nname = \"x\"\n\n[tool]\npytest.ini_options.addopts = \"-k nothing\"\n",
            ),
            (
                "Cargo.toml",
                "[package]\nname = \"x\"\nversion = \"0.1.0\"\nautotests = false\n\n[lib]\ntest = false\n",
            ),
        ] {
            std::fs::write(p.join(file), text).unwrap();
            let got = prot.restore(&b);
            assert_eq!(got.len(), 1, "{file}: {text}: {got:?}");
            assert_eq!(got[0].change, "section");
            let back = std::fs::read_to_string(p.join(file)).unwrap();
            assert!(
                !back.contains("pytest") && !back.contains("test = false") && !back.contains("autotests"),
                "{back}"
            );
            assert!(back.contains("name = \"x\""), "the agent's other keys stay: {back}");
            prot.restore(&b);
        }
        // INI: an indented line that starts with `[` continues the section above.
        std::fs::write(
            p.join("setup.cfg"),
            "[metadata]\nname = x\n[tool:pytest]\naddopts =\n  -p no:x\n  [not a header]\n",
        )
        .unwrap();
        assert_eq!(prot.restore(&b).len(), 1);
        let back = std::fs::read_to_string(p.join("setup.cfg")).unwrap();
        assert_eq!(back, "[metadata]\nname = x\n");
    }

    #[test]
    fn what_a_judged_run_changes_is_put_back_without_blaming_the_agent() {
        let (t, b) = ws();
        let p = t.path();
        std::fs::create_dir(p.join("testdata")).unwrap();
        std::fs::write(p.join("testdata/last_run.txt"), "never\n").unwrap();
        std::fs::write(p.join("test_a.py"), "t\n").unwrap();
        let mut prot = Protection::capture(&b, None).unwrap();
        assert!(prot.restore(&b).is_empty());
        // The tests write their own record while they run...
        std::fs::write(p.join("testdata/last_run.txt"), "just now\n").unwrap();
        prot.observe(&b);
        // ...which is put back before the next run, but is not the agent's doing.
        assert!(prot.restore(&b).is_empty());
        assert_eq!(
            std::fs::read_to_string(p.join("testdata/last_run.txt")).unwrap(),
            "never\n"
        );
        prot.observe(&b);
        // The agent's own edit between runs is.
        std::fs::write(p.join("test_a.py"), "weakened\n").unwrap();
        assert_eq!(prot.restore(&b)[0].change, "modified");
        // A mode-only change is put back silently.
        prot.observe(&b);
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(p.join("test_a.py"), std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(prot.restore(&b).is_empty());
        let mode = std::fs::metadata(p.join("test_a.py")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o644);
    }

    #[test]
    fn new_npm_scripts_of_the_agent_are_its_own_and_a_workspace_too_big_to_search_fails_closed() {
        let (t, b) = ws();
        let p = t.path();
        std::fs::write(p.join("calc.test.js"), "t\n").unwrap();
        std::fs::write(
            p.join("package.json"),
            "{\"scripts\": {\"test\": \"node --test\", \"test:unit\": \"node --test\"}}",
        )
        .unwrap();
        let mut prot = Protection::capture(&b, None).unwrap();
        prot.walk_limit = 100;
        std::fs::write(
            p.join("package.json"),
            "{\"scripts\": {\"test\": \"node --test\", \"test:unit\": \"node --test\", \"test:watch\": \"node --test --watch\"}}",
        )
        .unwrap();
        assert!(
            prot.restore(&b).is_empty(),
            "a script of its own is the agent's business"
        );
        std::fs::write(
            p.join("package.json"),
            "{\"scripts\": {\"test\": \"node --test\", \"test:unit\": \"true\"}}",
        )
        .unwrap();
        assert_eq!(prot.restore(&b).len(), 1, "a shipped test:* script is protected");
        // More entries than the search may look at: not taken as clean.
        let d = p.join("many");
        std::fs::create_dir(&d).unwrap();
        for j in 0..101 {
            std::fs::write(d.join(format!("f{j}")), "").unwrap();
        }
        let got = prot.restore(&b);
        assert!(got.iter().any(|t| t.change.starts_with("unchecked")), "{got:?}");
    }
}
