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
//!   added is removed (a new `conftest.py` can turn failures into passes; a new test module
//!   cannot hide a protected test's failure, so it stays);
//! - **sections** of files that hold more than test configuration (`pyproject.toml`'s
//!   `[tool.pytest…]` tables, `setup.cfg`/`tox.ini`'s `[pytest]`/`[tool:pytest]`, `package.json`'s
//!   `scripts.test*`, `jest`, `mocha`, `ava`, `c8`, `nyc`): only those sections are put back,
//!   the agent's other edits (dependencies, metadata) stay;
//! - nothing else: the agent's own code is what is being judged.
//!
//! The defaults apply when the task does not set `protected:` and the pristine workspace holds
//! at least one file they match ("the test files the fixture ships"); a task's own globs replace
//! them (whole-file protection, agent-added matches removed); `protected: []` turns it off.

use std::collections::BTreeMap;

use globset::{GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};

use crate::sandbox::{Beneath, EntryKind, WalkLimits};

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
    "**/sitecustomize.py",
    "**/usercustomize.py",
    "**/jest.config.*",
    "**/vitest.config.*",
    "**/vitest.workspace.*",
    "**/.mocharc*",
    "**/karma.conf.*",
    "**/.babelrc",
    "**/babel.config.*",
    ".cargo/config",
    ".cargo/config.toml",
    "rust-toolchain",
    "rust-toolchain.toml",
    ".nextest/**",
    ".config/nextest.toml",
];

/// Files whose test sections (only) are protected.
const SECTION_FILES: &[(&str, SectionKind)] = &[
    (
        "pyproject.toml",
        SectionKind::Headers(&["tool.pytest", "tool.pytest.ini_options"]),
    ),
    ("setup.cfg", SectionKind::Headers(&["tool:pytest"])),
    ("tox.ini", SectionKind::Headers(&["pytest", "tool:pytest"])),
    ("package.json", SectionKind::Json),
];

/// Top-level `package.json` keys that configure test runners.
const PACKAGE_JSON_KEYS: &[&str] = &["jest", "mocha", "ava", "c8", "nyc", "vitest"];

/// Largest protected file kept in memory; protection stops at this total.
const MAX_PRISTINE_BYTES: u64 = 64 * 1024 * 1024;

#[derive(Debug, Clone, Copy)]
enum SectionKind {
    /// `[header]` sections of TOML or INI files, matched by header name (a TOML header also
    /// covers its sub-tables: `tool.pytest` covers `[tool.pytest.ini_options]`).
    Headers(&'static [&'static str]),
    /// `package.json`: `scripts.test*`, `scripts.pretest*`, `scripts.posttest*` and
    /// [`PACKAGE_JSON_KEYS`].
    Json,
}

/// One change the agent made to a protected path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tampering {
    /// Workspace-relative path.
    pub path: String,
    /// `modified`, `deleted`, `replaced` (by a link, a directory, a special file), `added`
    /// (runner configuration the task did not ship) or `section` (test configuration inside a
    /// larger file).
    pub change: String,
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
}

/// A `protected:` glob that does not compile.
#[derive(Debug, thiserror::Error)]
#[error("protected: `{glob}` is not a valid glob ({source}); write paths relative to the workspace, e.g. `tests/**` or `conftest.py`")]
pub struct BadGlob {
    glob: String,
    #[source]
    source: globset::Error,
}

fn globset(patterns: &[&str]) -> Result<GlobSet, BadGlob> {
    let mut b = GlobSetBuilder::new();
    for p in patterns {
        let g = globset::GlobBuilder::new(p)
            .literal_separator(true)
            .build()
            .map_err(|source| BadGlob {
                glob: (*p).to_string(),
                source,
            })?;
        b.add(g);
    }
    b.build().map_err(|source| BadGlob {
        glob: patterns.join(", "),
        source,
    })
}

/// Never protected: VCS metadata, dependency folders and caches.
fn ignored(rel: &str) -> bool {
    rel.split('/').any(|c| {
        matches!(
            c,
            ".git" | "node_modules" | "target" | "__pycache__" | ".pytest_cache" | ".venv" | "venv"
        )
    })
}

impl Protection {
    /// Captures the protected files of the workspace as the agent finds it. `task_globs` is the
    /// task's `protected:` list (`None`: the defaults).
    pub fn capture(ws: &Beneath, task_globs: Option<&[String]>) -> Result<Protection, BadGlob> {
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
            ..Default::default()
        };
        let walk = ws
            .walk(WalkLimits::default(), |rel, _| ignored(rel))
            .unwrap_or_default();
        let mut total = 0u64;
        for e in walk.entries {
            if e.meta.kind != EntryKind::File || total.saturating_add(e.meta.size) > MAX_PRISTINE_BYTES {
                continue;
            }
            let section = with_sections && SECTION_FILES.iter().any(|(name, _)| *name == e.rel);
            if !section && !keep.is_match(&e.rel) {
                continue;
            }
            let Ok(bytes) = ws.read(&e.rel, MAX_PRISTINE_BYTES) else {
                continue;
            };
            total += bytes.len() as u64;
            if section {
                p.sections.insert(e.rel, bytes);
            } else {
                p.files.insert(e.rel, (bytes, e.meta.mode));
            }
        }
        // The defaults protect what the task ships: a workspace without tests has none.
        if task_globs.is_none() && p.files.is_empty() {
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

    /// Puts every protected path back as it was and returns what the agent had changed.
    /// Errors writing the workspace are returned as tampering entries too (`unrestorable: …`),
    /// never silently: a verdict must not be judged on files that could not be restored.
    pub fn restore(&self, ws: &Beneath) -> Vec<Tampering> {
        let mut out = Vec::new();
        let mut note = |path: &str, change: String| {
            out.push(Tampering {
                path: path.to_string(),
                change,
            })
        };
        for (rel, (bytes, mode)) in &self.files {
            let change = match ws.entry(rel) {
                Ok(None) => Some("deleted"),
                Ok(Some(m)) if m.kind == EntryKind::File => match ws.read(rel, MAX_PRISTINE_BYTES) {
                    Ok(now) if now == *bytes && m.mode == *mode => None,
                    _ => Some("modified"),
                },
                Ok(Some(_)) | Err(_) => Some("replaced"),
            };
            if let Some(change) = change {
                if matches!(ws.entry(rel), Ok(Some(m)) if m.kind == EntryKind::Dir) {
                    let _ = ws.remove(rel);
                }
                match ws.write(rel, bytes, Some(*mode)) {
                    Ok(()) => note(rel, change.to_string()),
                    Err(e) => note(rel, format!("unrestorable: {e}")),
                }
            }
        }
        if let Some(added) = &self.remove_added {
            let walk = ws
                .walk(WalkLimits::default(), |rel, _| ignored(rel))
                .unwrap_or_default();
            for e in walk.entries {
                if e.meta.kind == EntryKind::Dir || self.files.contains_key(&e.rel) || !added.is_match(&e.rel) {
                    continue;
                }
                match ws.remove(&e.rel) {
                    Ok(_) => note(&e.rel, "added".into()),
                    Err(err) => note(&e.rel, format!("unrestorable: {err}")),
                }
            }
        }
        if self.with_sections {
            for (name, kind) in SECTION_FILES {
                let pristine = self.sections.get(*name);
                let now = match ws.entry(name) {
                    Ok(Some(m)) if m.kind == EntryKind::File => ws.read(name, MAX_PRISTINE_BYTES).ok(),
                    _ => None,
                };
                let Some(now) = now else {
                    continue; // deleted or never there: nothing can configure the runner
                };
                let judged = match kind {
                    SectionKind::Headers(headers) => merge_headers(pristine.map(Vec::as_slice), &now, headers),
                    SectionKind::Json => merge_package_json(pristine.map(Vec::as_slice), &now),
                };
                if let Some(judged) = judged {
                    match ws.write(name, &judged, None) {
                        Ok(()) => note(name, "section".into()),
                        Err(e) => note(name, format!("unrestorable: {e}")),
                    }
                }
            }
        }
        out
    }
}

/// Whether TOML/INI header `h` (without brackets) is one of `protected` or a sub-table of one.
fn protected_header(h: &str, protected: &[&str]) -> bool {
    let h = h.trim().trim_matches(|c| c == '[' || c == ']').trim();
    let h = h.trim_matches('"');
    protected
        .iter()
        .any(|p| h == *p || (h.starts_with(p) && h[p.len()..].starts_with('.')))
}

/// The file split into (header, lines) sections; the first has no header.
fn sections(text: &str) -> Vec<(Option<String>, String)> {
    let mut out: Vec<(Option<String>, String)> = vec![(None, String::new())];
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        if t.starts_with('[') {
            let header = t.trim_end().to_string();
            out.push((Some(header), line.to_string()));
        } else if let Some(last) = out.last_mut() {
            last.1.push_str(line);
        }
    }
    out
}

/// The protected sections of `text`, concatenated (for comparison).
fn protected_part(text: &str, headers: &[&str]) -> String {
    sections(text)
        .into_iter()
        .filter(|(h, _)| h.as_deref().is_some_and(|h| protected_header(h, headers)))
        .map(|(_, body)| body)
        .collect()
}

/// The judged version of a TOML/INI file: the agent's file with the pristine test sections in
/// place of its own. `None` when nothing differs.
fn merge_headers(pristine: Option<&[u8]>, now: &[u8], headers: &[&str]) -> Option<Vec<u8>> {
    let now = String::from_utf8_lossy(now);
    let pristine = pristine.map(String::from_utf8_lossy).unwrap_or_default();
    let (want, have) = (protected_part(&pristine, headers), protected_part(&now, headers));
    if want == have {
        return None;
    }
    let mut out: String = sections(&now)
        .into_iter()
        .filter(|(h, _)| !h.as_deref().is_some_and(|h| protected_header(h, headers)))
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

/// Whether `package.json` key `scripts.<name>` is test configuration.
fn test_script(name: &str) -> bool {
    ["test", "pretest", "posttest"]
        .iter()
        .any(|p| name == *p || name.starts_with(&format!("{p}:")))
}

/// The judged version of `package.json`: the agent's file with the pristine test scripts and
/// runner keys. `None` when nothing differs. An agent file that is not JSON is replaced by the
/// pristine one whole (or emptied of meaning: `{}` when there was none).
fn merge_package_json(pristine: Option<&[u8]>, now: &[u8]) -> Option<Vec<u8>> {
    use serde_json::{Map, Value};
    let pristine: Value = pristine
        .and_then(|b| serde_json::from_slice(b).ok())
        .unwrap_or(Value::Object(Map::new()));
    let Ok(mut now) = serde_json::from_slice::<Value>(now) else {
        return Some(serde_json::to_vec_pretty(&pristine).unwrap_or_default());
    };
    let pick = |v: &Value| -> Value {
        let mut m = Map::new();
        if let Some(o) = v.as_object() {
            for k in PACKAGE_JSON_KEYS {
                if let Some(x) = o.get(*k) {
                    m.insert((*k).to_string(), x.clone());
                }
            }
            if let Some(s) = o.get("scripts").and_then(Value::as_object) {
                for (k, x) in s {
                    if test_script(k) {
                        m.insert(format!("scripts.{k}"), x.clone());
                    }
                }
            }
        }
        Value::Object(m)
    };
    if pick(&pristine) == pick(&now) {
        return None;
    }
    let Some(obj) = now.as_object_mut() else {
        return Some(serde_json::to_vec_pretty(&pristine).unwrap_or_default());
    };
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
    scripts.retain(|k, _| !test_script(k));
    if let Some(s) = pristine.get("scripts").and_then(Value::as_object) {
        for (k, v) in s {
            if test_script(k) {
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
}
