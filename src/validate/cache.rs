//! The validation cache: a check repeated within a few seconds (5 s by default) returns its
//! earlier result without running again, and a stale result is never returned.
//!
//! A result is keyed by the check and by the state it depends on ([`StateKey`]):
//!
//! - the cache's **epoch**, a counter that every action which could change a result moves on
//!   ([`ValidationCache::invalidate`]): the pipeline calls it for every mutating tool call,
//!   every command (the agent's `bash`, a `verify` that runs a command, every author command:
//!   setup, test, build, gate, validator) and every harness note; the runner calls it when a
//!   judged phase starts (protected files are put back, hidden checks placed), so a judged
//!   verdict is never taken from before the phase;
//! - for file checks, the **stamps** of the file and of every folder on its way from the
//!   workspace root (device, inode, type and mode, size, mtime, ctime, as `lstat` reports them):
//!   a write by anyone, even a process the agent left running, moves the ctime, which no
//!   process can set back. A stamp younger than [`RACY_WINDOW`] is not trusted (the file system
//!   clock ticks coarsely; two writes in one tick look alike), and a result is kept only when
//!   the stamps after the check equal those before it.
//!
//! What cannot be stamped is never reused across calls: a `command` or `custom` check (its own
//! run is a command, which may change what it looks at, and it may read anything), and
//! `port_listening`, `http` and `docker` (they observe live services that change with no action
//! at all). Within one [`run_all_cached`] call, a check listed twice still runs once.
//! Pending results are never kept: they said nothing about the state.
//!
//! A reused result is returned unchanged (the timestamp and duration of the run that made it).

use std::collections::HashMap;
use std::hash::Hash;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::{check_label, run_all, ValidateContext, ValidationResult, ValidationStatus, DEFAULT_CACHE_TTL};
use crate::spec::{Validator, ValidatorSpec};

/// A stamp younger than this (by mtime or ctime) is not trusted: a second write within the
/// file system's clock tick would leave the same stamp.
pub const RACY_WINDOW: Duration = Duration::from_millis(100);

/// What `lstat` says of one path: enough to tell any change to it, or to the entries of a
/// folder (a folder's mtime and ctime move when an entry is added, removed or renamed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stamp {
    Entry {
        dev: u64,
        ino: u64,
        mode: u32,
        size: u64,
        mtime_ns: i128,
        ctime_ns: i128,
    },
    Missing,
}

/// The state a cached result depends on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StateKey {
    pub epoch: u64,
    /// The stamps of the workspace root, each folder on the way, and the entry itself.
    pub stamps: Vec<Stamp>,
}

/// The stamps of `rel` beneath `workspace`: the root, each folder on the way, the entry (the
/// walk stops at the first missing one). `None` when they cannot be trusted: a path that
/// leaves the workspace, a stat that failed other than "not found", a stamp younger than
/// [`RACY_WINDOW`].
pub fn stamps(workspace: &Path, rel: &str) -> Option<Vec<Stamp>> {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?.as_nanos() as i128;
    let racy = RACY_WINDOW.as_nanos() as i128;
    let mut path = workspace.to_path_buf();
    let mut out = Vec::new();
    let mut parts = vec![None];
    for c in Path::new(rel).components() {
        match c {
            Component::Normal(name) => parts.push(Some(name.to_os_string())),
            Component::CurDir => {}
            // `..`, a root or a prefix: not a plain path beneath the workspace.
            _ => return None,
        }
    }
    for part in parts {
        if let Some(name) = part {
            path.push(name);
        }
        match std::fs::symlink_metadata(&path) {
            Ok(m) => {
                let mtime_ns = m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128;
                let ctime_ns = m.ctime() as i128 * 1_000_000_000 + m.ctime_nsec() as i128;
                if now - mtime_ns.max(ctime_ns) < racy {
                    return None;
                }
                out.push(Stamp::Entry {
                    dev: m.dev(),
                    ino: m.ino(),
                    mode: m.mode(),
                    size: m.size(),
                    mtime_ns,
                    ctime_ns,
                });
                if !m.is_dir() {
                    // A file, link or device on the way: nothing lies beneath it.
                    break;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                out.push(Stamp::Missing);
                break;
            }
            Err(_) => return None,
        }
    }
    Some(out)
}

/// `path` (as a validator writes it: relative, or absolute inside the workspace) relative to
/// `workspace`.
fn relative(workspace: &Path, path: &str) -> Option<String> {
    let p = Path::new(path);
    if !p.is_absolute() {
        return Some(path.to_string());
    }
    p.strip_prefix(workspace).ok().map(|r| r.to_string_lossy().into_owned())
}

/// The workspace path a check depends on, when it can be stamped (file checks only).
fn stamped_path(spec: &ValidatorSpec) -> Option<&str> {
    match spec {
        ValidatorSpec::FileExists(path) => Some(path),
        ValidatorSpec::FileContains(c) => Some(&c.path),
        ValidatorSpec::Command(_)
        | ValidatorSpec::Custom(_)
        | ValidatorSpec::PortListening(_)
        | ValidatorSpec::Http(_)
        | ValidatorSpec::Docker(_) => None,
    }
}

/// One kind of cached value, keyed by `K`, each entry with the state it was made in.
#[derive(Debug)]
pub(crate) struct Shelf<K, V> {
    entries: Mutex<HashMap<K, (Instant, StateKey, V)>>,
}

impl<K: Hash + Eq, V: Clone> Shelf<K, V> {
    fn new() -> Self {
        Shelf {
            entries: Mutex::new(HashMap::new()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<K, (Instant, StateKey, V)>> {
        // A panic while holding the lock leaves a plain map: still usable.
        self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The value kept for `key` in exactly `state`, younger than `ttl`.
    pub(crate) fn get(&self, key: &K, state: &StateKey, ttl: Duration) -> Option<V> {
        let mut map = self.lock();
        match map.get(key) {
            Some((at, kept, value)) if at.elapsed() < ttl && kept == state => Some(value.clone()),
            Some(_) => {
                map.remove(key);
                None
            }
            None => None,
        }
    }

    pub(crate) fn put(&self, key: K, state: StateKey, value: V, ttl: Duration) {
        let mut map = self.lock();
        map.retain(|_, (at, _, _)| at.elapsed() < ttl);
        map.insert(key, (Instant::now(), state, value));
    }

    fn clear(&self) {
        self.lock().clear();
    }

    fn len(&self) -> usize {
        self.lock().len()
    }
}

/// The cache of one attempt (its pipeline holds it; see the module doc).
#[derive(Debug)]
pub struct ValidationCache {
    ttl: Duration,
    epoch: AtomicU64,
    validations: Shelf<(PathBuf, String), ValidationResult>,
    /// The agent's `verify` tool's file checks, keyed by their words.
    pub(crate) verify: Shelf<String, crate::tools::VerifiedCheck>,
}

impl Default for ValidationCache {
    fn default() -> Self {
        ValidationCache::new(DEFAULT_CACHE_TTL)
    }
}

impl ValidationCache {
    pub fn new(ttl: Duration) -> Self {
        ValidationCache {
            ttl,
            epoch: AtomicU64::new(0),
            validations: Shelf::new(),
            verify: Shelf::new(),
        }
    }

    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// The current epoch: it moves on with every [`ValidationCache::invalidate`].
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::SeqCst)
    }

    /// Something happened that could change any result: nothing kept so far is reused.
    pub fn invalidate(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
        self.validations.clear();
        self.verify.clear();
    }

    /// The state `rel` in `workspace` is in now, for a check that depends on that path alone;
    /// `None` when it cannot be trusted (see [`stamps`]).
    pub fn state_of_path(&self, workspace: &Path, rel: &str) -> Option<StateKey> {
        let epoch = self.epoch();
        let stamps = stamps(workspace, rel)?;
        Some(StateKey { epoch, stamps })
    }

    /// The state `spec` depends on now, when it can be stamped; `None` for a check that is
    /// never reused across calls.
    pub fn state_of(&self, spec: &ValidatorSpec, ctx: &ValidateContext) -> Option<StateKey> {
        let rel = relative(&ctx.workspace, stamped_path(spec)?)?;
        self.state_of_path(&ctx.workspace, &rel)
    }

    fn key(ctx: &ValidateContext, spec: &ValidatorSpec) -> (PathBuf, String) {
        // A spec serializes infallibly (strings, numbers, options); fall back to Debug.
        let text = serde_json::to_string(spec).unwrap_or_else(|_| format!("{spec:?}"));
        (ctx.workspace.clone(), text)
    }

    /// The result kept for `v` in the state the workspace is in now, if any.
    pub fn get(&self, v: &Validator, ctx: &ValidateContext) -> Option<ValidationResult> {
        let state = self.state_of(&v.check, ctx)?;
        let mut hit = self.validations.get(&Self::key(ctx, &v.check), &state, self.ttl)?;
        hit.check = check_label(v);
        Some(hit)
    }

    /// Keeps `result` of `v`, made in `before` (the state taken just before it ran), if the
    /// state is still `before` now and the result is not pending.
    pub fn put(&self, v: &Validator, ctx: &ValidateContext, before: StateKey, result: &ValidationResult) {
        if result.status == ValidationStatus::Pending || self.state_of(&v.check, ctx).as_ref() != Some(&before) {
            return;
        }
        self.validations
            .put(Self::key(ctx, &v.check), before, result.clone(), self.ttl);
    }

    /// Number of results held (fresh or not yet evicted).
    pub fn len(&self) -> usize {
        self.validations.len() + self.verify.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// [`run_all`] through `cache`: a check whose state is unchanged since it last ran (within the
/// cache's time) is not run again; the rest run in parallel and are kept when their state
/// held still while they ran. A check listed twice runs once. Results come back in the order
/// of `specs`, each labelled by its own validator.
pub fn run_all_cached(specs: &[Validator], ctx: &ValidateContext, cache: &ValidationCache) -> Vec<ValidationResult> {
    // One run per distinct check.
    let mut distinct: Vec<&Validator> = Vec::new();
    let mut which: Vec<usize> = Vec::with_capacity(specs.len());
    for v in specs {
        match distinct.iter().position(|d| d.check == v.check) {
            Some(i) => which.push(i),
            None => {
                which.push(distinct.len());
                distinct.push(v);
            }
        }
    }
    let before: Vec<Option<StateKey>> = distinct.iter().map(|v| cache.state_of(&v.check, ctx)).collect();
    let mut results: Vec<Option<ValidationResult>> = distinct.iter().map(|v| cache.get(v, ctx)).collect();
    let to_run: Vec<usize> = (0..distinct.len()).filter(|&i| results[i].is_none()).collect();
    let run_specs: Vec<Validator> = to_run.iter().map(|&i| distinct[i].clone()).collect();
    for (i, result) in to_run.into_iter().zip(run_all(&run_specs, ctx)) {
        if let Some(state) = before[i].clone() {
            cache.put(distinct[i], ctx, state, &result);
        }
        results[i] = Some(result);
    }
    specs
        .iter()
        .zip(which)
        .filter_map(|(v, i)| {
            let mut r = results[i].clone()?;
            r.check = check_label(v);
            Some(r)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn validator(json: &str) -> Validator {
        serde_json::from_str::<ValidatorSpec>(json).unwrap().into()
    }

    /// Ages `path` past the racy window (as if written a while ago).
    fn settle() {
        std::thread::sleep(RACY_WINDOW + Duration::from_millis(20));
    }

    #[test]
    fn a_repeat_is_a_hit_and_a_change_by_anyone_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "hello").unwrap();
        settle();
        let ctx = ValidateContext::new(dir.path());
        let cache = ValidationCache::default();
        let spec = validator(r#"{"file_contains": {"path": "a.txt", "pattern": "hello"}}"#);
        let first = run_all_cached(std::slice::from_ref(&spec), &ctx, &cache);
        assert!(first[0].passed);
        assert_eq!(cache.len(), 1);
        let again = run_all_cached(std::slice::from_ref(&spec), &ctx, &cache);
        assert_eq!(
            again, first,
            "a hit returns the earlier result unchanged (same timestamp)"
        );

        // Same size, no action through the pipeline: the stamp moves, the hit is gone.
        std::fs::write(dir.path().join("a.txt"), "jello").unwrap();
        assert!(cache.get(&spec, &ctx).is_none());
        settle();
        let after = run_all_cached(std::slice::from_ref(&spec), &ctx, &cache);
        assert!(!after[0].passed, "{after:?}");
    }

    #[test]
    fn invalidation_forgets_everything() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), "x").unwrap();
        settle();
        let ctx = ValidateContext::new(dir.path());
        let cache = ValidationCache::default();
        let spec = validator(r#"{"file_exists": "a"}"#);
        run_all_cached(std::slice::from_ref(&spec), &ctx, &cache);
        assert!(cache.get(&spec, &ctx).is_some());
        let epoch = cache.epoch();
        cache.invalidate();
        assert_eq!(cache.epoch(), epoch + 1);
        assert!(cache.get(&spec, &ctx).is_none() && cache.is_empty());
    }

    #[test]
    fn a_file_that_appears_or_a_folder_renamed_on_the_way_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("d")).unwrap();
        settle();
        let ctx = ValidateContext::new(dir.path());
        let cache = ValidationCache::default();
        let spec = validator(r#"{"file_exists": "d/x"}"#);
        assert!(!run_all_cached(std::slice::from_ref(&spec), &ctx, &cache)[0].passed);
        assert!(cache.get(&spec, &ctx).is_some(), "a missing file's result is kept");
        std::fs::write(dir.path().join("d/x"), "").unwrap();
        assert!(cache.get(&spec, &ctx).is_none());

        settle();
        assert!(run_all_cached(std::slice::from_ref(&spec), &ctx, &cache)[0].passed);
        std::fs::rename(dir.path().join("d"), dir.path().join("e")).unwrap();
        std::fs::create_dir(dir.path().join("d")).unwrap();
        assert!(cache.get(&spec, &ctx).is_none());
    }

    #[test]
    fn fresh_files_live_checks_and_pending_results_are_never_kept() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ValidateContext::new(dir.path());
        let cache = ValidationCache::default();
        std::fs::write(dir.path().join("new"), "x").unwrap();
        let fresh = validator(r#"{"file_exists": "new"}"#);
        run_all_cached(std::slice::from_ref(&fresh), &ctx, &cache);
        assert!(cache.is_empty(), "a stamp inside the racy window is not trusted");
        for live in [
            r#"{"port_listening": {"port": 1}}"#,
            r#"{"http": {"url": "http://127.0.0.1:1/"}}"#,
            r#"{"docker": {"container": "web"}}"#,
            r#"{"command": "true"}"#,
            r#"{"custom": {"command": "true"}}"#,
        ] {
            assert!(cache.state_of(&validator(live).check, &ctx).is_none(), "{live}");
        }
        assert!(stamps(dir.path(), "../etc/passwd").is_none());
    }

    fn action(tool: &str, input: serde_json::Value) -> crate::agent::Action {
        crate::agent::Action {
            id: String::new(),
            tool: tool.into(),
            input: crate::tools::ActionInput::Json(input),
        }
    }

    #[test]
    fn the_agents_actions_through_the_pipeline_invalidate_and_reads_do_not() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "hello").unwrap();
        settle();
        let ctx = ValidateContext::new(dir.path());
        let pipe = &ctx.pipeline;
        let cache = pipe.validation_cache();
        let spec = validator(r#"{"file_exists": "a.txt"}"#);
        let first = run_all_cached(std::slice::from_ref(&spec), &ctx, cache);
        use crate::pipeline::Origin;
        let verify = action(
            "verify",
            serde_json::json!({"type": "file_contains", "target": "a.txt", "expected": "hel+o"}),
        );
        let r = pipe.pass(Origin::Agent, &verify).unwrap().receipt;
        assert!(!r.is_error(), "{r:?}");
        assert_eq!(
            cache.len(),
            2,
            "the verify tool's file check is kept beside the validator's"
        );
        // Reading changes nothing: both stay, and the validator's result is a hit.
        pipe.pass(
            Origin::Agent,
            &action("read_file", serde_json::json!({"path": "a.txt"})),
        )
        .unwrap();
        pipe.pass(Origin::Agent, &verify).unwrap();
        assert_eq!(cache.len(), 2);
        assert_eq!(run_all_cached(std::slice::from_ref(&spec), &ctx, cache), first);

        // Any command may change what a check sees, even one that leaves a.txt alone.
        let epoch = cache.epoch();
        pipe.pass(Origin::Agent, &action("bash", serde_json::json!({"command": "true"})))
            .unwrap();
        assert!(cache.epoch() > epoch && cache.is_empty());
        let again = run_all_cached(std::slice::from_ref(&spec), &ctx, cache);
        assert_ne!(again[0].timestamp, first[0].timestamp, "ran again after the action");
        assert!(again[0].passed);

        // So do a mutating tool call and an author's command.
        for act in [
            action("write_file", serde_json::json!({"path": "b.txt", "content": "x"})),
            action(
                "verify",
                serde_json::json!({"type": "command_succeeds", "target": "true"}),
            ),
        ] {
            let epoch = cache.epoch();
            pipe.pass(Origin::Agent, &act).unwrap();
            assert!(cache.epoch() > epoch, "{act:?}");
        }
        let epoch = cache.epoch();
        let options = crate::pipeline::CommandOptions {
            timeout: None,
            judged: false,
        };
        pipe.command(Origin::Setup, "medin.setup", "true", options).unwrap();
        assert!(cache.epoch() > epoch);
    }

    #[test]
    fn a_check_listed_twice_runs_once_and_keeps_each_name() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ValidateContext::new(dir.path());
        let cache = ValidationCache::default();
        // Each run of this command appends a line: two runs would leave two.
        let run = r#"{"command": "echo run >> runs.log"}"#;
        let named = Validator {
            name: Some("again".into()),
            ..validator(run)
        };
        let results = run_all_cached(&[validator(run), named], &ctx, &cache);
        assert_eq!(results.len(), 2);
        assert_eq!(results[1].check, "again");
        assert_eq!(results[0].timestamp, results[1].timestamp);
        let log = std::fs::read_to_string(dir.path().join("runs.log")).unwrap();
        assert_eq!(log.lines().count(), 1, "{log}");
    }
}
