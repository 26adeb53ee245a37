//! `ACTIVITY_LOG.md`: one entry per task outcome, YAML front matter (timestamp, taskId,
//! category, status, duration, attempt, ...) and a markdown body (description, validation results
//! with evidence, failures). Appended under an exclusive lock as one write, flushed; read back
//! with torn entries skipped and reported.
//!
//! One entry looks like this:
//!
//! ```text
//! ---
//! timestamp: 2026-01-19T15:30:00Z
//! taskId: golden::gt-002-create-file
//! category: golden
//! status: passed
//! outcome: success
//! duration_ms: 412
//! attempt: 1
//! run_id: 20260119T153000000Z-4242
//! run_dir: target/medin/runs/20260119T153000000Z-4242/gt-002-create-file
//! agent: oracle
//! ---
//! ## golden::gt-002-create-file
//!
//! Create a file with content; a receipt is returned
//!
//! ### Validation
//! - ✅ `file_exists hello.txt` — hello.txt exists (file, 6 bytes)
//!
//! <!-- medin:data {"description":"...","validations":[...],"failures":[]} -->
//! <!-- medin:end -->
//! ```
//!
//! Agent- and command-controlled text is made inert ([`crate::inert`]) in the front matter and
//! the markdown body, so neither a terminal `cat` nor an editor sees a live escape sequence or
//! bidi control; the `medin:data` line keeps the exact text, inert by JSON escaping
//! ([`crate::inert::json`]). The markdown body is for people. The `medin:data` comment carries the description,
//! validations and failures as one line of JSON (with `<` and `>` escaped, so it can never close
//! the comment), which is what [`ActivityLog::read`] takes back, exactly. Free text in the body
//! is made harmless: description lines that could look like structure (`---`, `#`, `<!--`) get a
//! markdown backslash, validation lines are folded to one line, and multi-line failures are
//! indented under their bullet. So the only lines that are exactly `---` are front-matter
//! delimiters, and the only end marker is the real one.
//!
//! Reading splits the file at end markers. Within each piece the last two `---` lines delimit the
//! entry's front matter; anything before them is what a crashed writer left behind, reported as a
//! torn entry and skipped. A piece after the last end marker is a torn entry too. Writers that
//! find the file not ending in a newline (a torn tail) start with one, so the next entry always
//! begins on its own line.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::validate::{ValidationResult, ValidationStatus};

/// The line that closes every complete entry.
pub const END_MARKER: &str = "<!-- medin:end -->";
/// The start of the line that carries an entry's data as JSON.
pub const DATA_PREFIX: &str = "<!-- medin:data ";
const DATA_SUFFIX: &str = " -->";
const FENCE: &str = "---";

/// What an entry says happened. Reference 000's `success` and `failure` are read as `passed`
/// and `failed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryStatus {
    /// Every expectation held.
    #[serde(alias = "success")]
    Passed,
    /// An expectation did not hold (the agent's failure), or a correction found it false.
    #[serde(alias = "failure")]
    Failed,
    /// The harness could not run the task (broken spec, setup failure, missing tool).
    Error,
    /// Nothing could decide yet (a validation that could not run).
    Pending,
    /// Not run on purpose.
    Skipped,
}

impl EntryStatus {
    pub const ALL: [EntryStatus; 5] = [
        EntryStatus::Passed,
        EntryStatus::Failed,
        EntryStatus::Error,
        EntryStatus::Pending,
        EntryStatus::Skipped,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EntryStatus::Passed => "passed",
            EntryStatus::Failed => "failed",
            EntryStatus::Error => "error",
            EntryStatus::Pending => "pending",
            EntryStatus::Skipped => "skipped",
        }
    }

    /// `passed`, `failed`, ... (and reference 000's `success`, `failure`).
    pub fn parse(text: &str) -> Option<EntryStatus> {
        match text.trim().to_ascii_lowercase().as_str() {
            "success" => Some(EntryStatus::Passed),
            "failure" => Some(EntryStatus::Failed),
            t => EntryStatus::ALL.into_iter().find(|s| s.as_str() == t),
        }
    }
}

/// What an entry is about: reference 000's categories, and the corrections medin adds.
/// An entry written before kinds existed is a `task` entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EntryKind {
    /// A task's outcome.
    #[default]
    Task,
    /// The harness failed (the trial could not be judged).
    Error,
    /// A validation's own record.
    Validation,
    /// An error that was analysed and repaired.
    SelfHealing,
    /// A retroactive correction of an earlier entry ([`Correction`]).
    Correction,
    /// The suite's PRD: reloaded after an edit (`passed`, the diff summary as description),
    /// found invalid (`error`), a task expectation set aside because it contradicts a
    /// requirement the task names (`skipped`), or (under `medin watch`) a trial that ran while
    /// requirements it rests on changed, which waits for a person's decision (`pending`).
    Prd,
}

impl EntryKind {
    pub const ALL: [EntryKind; 6] = [
        EntryKind::Task,
        EntryKind::Error,
        EntryKind::Validation,
        EntryKind::SelfHealing,
        EntryKind::Correction,
        EntryKind::Prd,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::Task => "task",
            EntryKind::Error => "error",
            EntryKind::Validation => "validation",
            EntryKind::SelfHealing => "self-healing",
            EntryKind::Correction => "correction",
            EntryKind::Prd => "prd",
        }
    }

    pub fn parse(text: &str) -> Option<EntryKind> {
        let t = text.trim().to_ascii_lowercase();
        EntryKind::ALL.into_iter().find(|k| k.as_str() == t)
    }
}

/// What a correction found wrong with the entry it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Finding {
    /// The entry says passed, but the task did not work: it counts as failed from now on.
    FalsePositive,
}

/// A retroactive correction. On a `correction` entry it is what the entry corrects; on the
/// entry it names, [`crate::log::query`] fills it in when reading, and the status becomes the
/// corrected one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Correction {
    /// The [`ActivityEntry::id`] of the corrected entry.
    pub entry: String,
    pub finding: Finding,
    pub reason: String,
}

impl Correction {
    /// The status the corrected entry has from now on.
    pub fn corrected_status(&self) -> EntryStatus {
        match self.finding {
            Finding::FalsePositive => EntryStatus::Failed,
        }
    }
}

/// One task outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActivityEntry {
    pub timestamp: DateTime<Utc>,
    #[serde(rename = "taskId")]
    pub task_id: String,
    /// The suite category (the suite folder: golden, adversarial, regression, ...).
    pub category: String,
    /// What the entry is about (reference 000's category).
    #[serde(default)]
    pub kind: EntryKind,
    pub status: EntryStatus,
    /// The harness's judgement of the attempt (success, failure, stopped, ...), when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    pub duration_ms: u64,
    pub attempt: u32,
    pub run_id: String,
    pub run_dir: String,
    pub agent: String,
    pub description: String,
    /// See [`Correction`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correction: Option<Correction>,
    #[serde(default)]
    pub validations: Vec<ValidationResult>,
    /// Why the trial failed, one line per expectation that did not hold.
    #[serde(default)]
    pub failures: Vec<String>,
}

/// The YAML front matter of an entry.
#[derive(Debug, Serialize, Deserialize)]
struct FrontMatter {
    timestamp: DateTime<Utc>,
    #[serde(rename = "taskId")]
    task_id: String,
    category: String,
    #[serde(default)]
    kind: EntryKind,
    status: EntryStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    outcome: Option<String>,
    duration_ms: u64,
    attempt: u32,
    run_id: String,
    run_dir: String,
    agent: String,
}

/// The `medin:data` line of an entry.
#[derive(Debug, Default, Serialize, Deserialize)]
struct BodyData {
    #[serde(default)]
    description: String,
    #[serde(default)]
    validations: Vec<ValidationResult>,
    #[serde(default)]
    failures: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    correction: Option<Correction>,
}

impl ActivityEntry {
    /// A short stable id (12 hex digits of the SHA-256 of run id, task id, attempt and
    /// timestamp): what `medin status` shows and `medin log correct` takes. Entries written
    /// before ids existed have one too.
    pub fn id(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        for part in [
            self.run_id.as_str(),
            self.task_id.as_str(),
            &self.attempt.to_string(),
            &self.timestamp.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
        ] {
            h.update(part.as_bytes());
            h.update([0]);
        }
        h.finalize().iter().take(6).map(|b| format!("{b:02x}")).collect()
    }
}

/// The size past which the log archives itself (see [`ActivityLog::with_max_size`]): 10 MiB.
pub const DEFAULT_MAX_SIZE: u64 = 10 * 1024 * 1024;

/// The activity log file.
#[derive(Debug, Clone)]
pub struct ActivityLog {
    path: PathBuf,
    max_size: u64,
}

impl ActivityLog {
    /// The log at `path`, archiving itself past [`DEFAULT_MAX_SIZE`].
    pub fn new(path: impl Into<PathBuf>) -> Self {
        ActivityLog {
            path: path.into(),
            max_size: DEFAULT_MAX_SIZE,
        }
    }

    /// The same log, archiving itself when an append would take it past `bytes` (at least one
    /// entry always stays in the live log, however big).
    pub fn with_max_size(mut self, bytes: u64) -> Self {
        self.max_size = bytes;
        self
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `entry` as one locked write and flushes it.
    ///
    /// Creates the parent directories and the file. The write is a single `write_all` on a file
    /// opened for appending, under an exclusive `flock`, followed by `sync_data`. When the entry
    /// would take a non-empty log past its size, the log is first renamed, under its lock, to
    /// the archive [`ActivityLog::rotation_path`] names and the entry starts a new log (writers
    /// waiting on the old file notice the rename and retry on the new one).
    pub fn append(&self, entry: &ActivityEntry) -> io::Result<()> {
        let text = format_entry(entry)?;
        if let Some(parent) = self.path.parent().filter(|p| !p.as_os_str().is_empty()) {
            fs::create_dir_all(parent)?;
        }
        let mut file = lock_current(&self.path, true)?;
        let len = file.metadata()?.len();
        if len > 0 && len.saturating_add(text.len() as u64) > self.max_size {
            fs::rename(&self.path, self.rotation_path(Utc::now()))?;
            drop(file);
            file = lock_current(&self.path, true)?;
        }
        let mut buf = Vec::with_capacity(text.len() + 1);
        if !ends_with_newline(&file)? {
            buf.push(b'\n');
        }
        buf.extend_from_slice(text.as_bytes());
        file.write_all(&buf)?;
        file.flush()?;
        file.sync_data()
    }

    /// Every complete entry, oldest first, and one warning per torn or unreadable entry.
    /// A missing file is an empty log.
    pub fn read(&self) -> io::Result<(Vec<ActivityEntry>, Vec<String>)> {
        let bytes = match fs::read(&self.path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((Vec::new(), Vec::new())),
            Err(e) => return Err(e),
        };
        let (entries, warnings) = parse_log(&String::from_utf8_lossy(&bytes));
        let name = self.path.display();
        Ok((entries, warnings.into_iter().map(|w| format!("{name}:{w}")).collect()))
    }

    /// Where [`ActivityLog::archive_before`] puts entries older than `before`:
    /// `ACTIVITY_LOG.<YYYY-MM-DD>.md` beside the log.
    pub fn archive_path(&self, before: DateTime<Utc>) -> PathBuf {
        let (stem, ext) = self.stem_and_extension();
        self.path
            .with_file_name(format!("{stem}.{}.{ext}", before.format("%Y-%m-%d")))
    }

    /// Where a log past its size goes: `ACTIVITY_LOG.<YYYY-MM-DDTHH-MM-SS.mmmZ>.md` beside it
    /// (`-2`, `-3`, ... added when that name is taken). Archive names sort in time order.
    pub fn rotation_path(&self, at: DateTime<Utc>) -> PathBuf {
        let (stem, ext) = self.stem_and_extension();
        let time = at.format("%Y-%m-%dT%H-%M-%S%.3fZ");
        let mut candidate = self.path.with_file_name(format!("{stem}.{time}.{ext}"));
        let mut n = 2;
        while candidate.exists() {
            candidate = self.path.with_file_name(format!("{stem}.{time}-{n}.{ext}"));
            n += 1;
        }
        candidate
    }

    /// The archives of this log beside it (`<stem>.<date or time>.<ext>`: what
    /// [`ActivityLog::archive_before`] and a rotation past the size write), oldest first: by
    /// the date or time in the name, then by the `-N` a rotation in the same millisecond adds
    /// (as a number: `-2` before `-10`, and the unnumbered first before both, which plain name
    /// order would put last). A folder that cannot be read has none.
    pub fn archives(&self) -> Vec<PathBuf> {
        let (stem, ext) = self.stem_and_extension();
        let (prefix, suffix) = (format!("{stem}."), format!(".{ext}"));
        let dir = match self.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let Ok(read) = fs::read_dir(&dir) else {
            return Vec::new();
        };
        let mut found: Vec<PathBuf> = read
            .filter_map(|e| e.ok())
            .filter(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.len() > prefix.len() + suffix.len()
                    && name.starts_with(&prefix)
                    && name.ends_with(&suffix)
                    && name[prefix.len()..name.len() - suffix.len()].starts_with(|c: char| c.is_ascii_digit())
            })
            .map(|e| e.path())
            .collect();
        let order = |path: &PathBuf| {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let middle = name
                .get(prefix.len()..name.len().saturating_sub(suffix.len()))
                .unwrap_or_default()
                .to_string();
            match middle.rsplit_once("Z-") {
                Some((time, n)) if n.bytes().all(|b| b.is_ascii_digit()) => {
                    (format!("{time}Z"), n.parse::<u64>().unwrap_or(u64::MAX))
                }
                _ => (middle, 1),
            }
        };
        found.sort_by_cached_key(order);
        found
    }

    fn stem_and_extension(&self) -> (String, String) {
        let stem = self
            .path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "ACTIVITY_LOG".into());
        let ext = self
            .path
            .extension()
            .map(|e| e.to_string_lossy().into_owned())
            .unwrap_or_else(|| "md".into());
        (stem, ext)
    }

    /// Moves complete entries with a timestamp before `before` to
    /// [`archive_path`](ActivityLog::archive_path) (appended, if it exists) and returns how many
    /// moved. Torn or unreadable pieces stay in the log, untouched.
    ///
    /// The archive is written and synced first, then the log is replaced by a rewritten copy
    /// (rename), all under the log's lock; a crash in between leaves entries in both files,
    /// never in neither. Writers waiting on the old file notice the rename and retry.
    pub fn archive_before(&self, before: DateTime<Utc>) -> io::Result<usize> {
        let mut file = match lock_current(&self.path, false) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(e),
        };
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let (pieces, _) = scan(&text);
        let moved: Vec<Range<usize>> = pieces
            .into_iter()
            .filter(|p| matches!(&p.entry, Ok(e) if e.timestamp < before))
            .map(|p| p.range)
            .collect();
        if moved.is_empty() {
            return Ok(0);
        }
        let mut archived = String::new();
        let mut kept = String::new();
        let mut at = 0;
        for r in &moved {
            kept.push_str(&text[at..r.start]);
            archived.push_str(&text[r.clone()]);
            if !archived.ends_with('\n') {
                archived.push('\n');
            }
            at = r.end;
        }
        kept.push_str(&text[at..]);

        let archive = self.archive_path(before);
        {
            let mut out = lock_current(&archive, true)?;
            let mut buf = Vec::new();
            if !ends_with_newline(&out)? {
                buf.push(b'\n');
            }
            buf.extend_from_slice(archived.as_bytes());
            out.write_all(&buf)?;
            out.sync_data()?;
        }
        let name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = self
            .path
            .with_file_name(format!(".{name}.archive-{}.tmp", std::process::id()));
        let written = (|| {
            let mut t = File::create(&tmp)?;
            t.write_all(kept.trim_start_matches('\n').as_bytes())?;
            t.sync_all()?;
            fs::rename(&tmp, &self.path)
        })();
        if written.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        written?;
        drop(file);
        Ok(moved.len())
    }
}

/// Entries as a pretty JSON array (what `medin status --format json` prints).
pub fn export_json(entries: &[ActivityEntry]) -> String {
    // These types serialize infallibly (strings, numbers, RFC 3339 times).
    serde_json::to_string_pretty(entries).unwrap_or_else(|e| format!("{{\"error\": {:?}}}", e.to_string()))
}

// ---------------------------------------------------------------- locking

#[cfg(unix)]
type Locked = nix::fcntl::Flock<File>;
#[cfg(not(unix))]
type Locked = File;

/// Opens `path` (appending, creating it when `create`), takes an exclusive lock, and makes sure
/// the path still names the locked file (an archive may have replaced it meanwhile).
fn lock_current(path: &Path, create: bool) -> io::Result<Locked> {
    let mut last = None;
    for _ in 0..50 {
        let file = OpenOptions::new().read(true).append(true).create(create).open(path)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let locked = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
                .map_err(|(_, errno)| io::Error::from(errno))?;
            let held = locked.metadata()?;
            match fs::metadata(path) {
                Ok(now) if now.ino() == held.ino() && now.dev() == held.dev() => return Ok(locked),
                Ok(_) => {
                    last = Some(io::Error::other(format!(
                        "{} was replaced while waiting for its lock",
                        path.display()
                    )))
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound && !create => return Err(e),
                Err(e) => last = Some(e),
            }
        }
        #[cfg(not(unix))]
        {
            let _ = &mut last;
            return Ok(file);
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other(format!("cannot lock {}", path.display()))))
}

fn ends_with_newline(file: &File) -> io::Result<bool> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(true);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        let mut last = [0u8; 1];
        file.read_exact_at(&mut last, len - 1)?;
        Ok(last[0] == b'\n')
    }
    #[cfg(not(unix))]
    {
        Ok(true)
    }
}

// ---------------------------------------------------------------- writing

/// The text of one entry, from its opening `---` to its end marker and a blank line.
pub fn format_entry(entry: &ActivityEntry) -> io::Result<String> {
    // Everything shown to people is made inert; the data line keeps the exact text, inert by
    // JSON escaping.
    let inert = |t: &str| crate::inert::text(t).into_owned();
    let fm = FrontMatter {
        timestamp: entry.timestamp,
        task_id: inert(&entry.task_id),
        category: inert(&entry.category),
        kind: entry.kind,
        status: entry.status,
        outcome: entry.outcome.as_deref().map(inert),
        duration_ms: entry.duration_ms,
        attempt: entry.attempt,
        run_id: inert(&entry.run_id),
        run_dir: inert(&entry.run_dir),
        agent: inert(&entry.agent),
    };
    let yaml = serde_yaml_ng::to_string(&fm).map_err(io::Error::other)?;
    let data = BodyData {
        description: entry.description.clone(),
        validations: entry.validations.clone(),
        failures: entry.failures.clone(),
        correction: entry.correction.clone(),
    };
    let json = crate::inert::json(&serde_json::to_string(&data).map_err(io::Error::other)?)
        .replace('<', "\\u003c")
        .replace('>', "\\u003e");

    let mut s = String::new();
    s.push_str(FENCE);
    s.push('\n');
    // As written: a last field that ends in newlines (a YAML `|+` block) keeps its trailing
    // blank lines, which belong to its value.
    s.push_str(&yaml);
    if !yaml.ends_with('\n') {
        s.push('\n');
    }
    s.push_str(FENCE);
    s.push('\n');
    s.push_str(&format!("## {}\n\n", one_line(&entry.task_id)));
    let description = crate::inert::text(&entry.description);
    let description = description.trim_matches('\n');
    if !description.is_empty() {
        for line in description.split('\n') {
            s.push_str(&escape_line(line));
            s.push('\n');
        }
        s.push('\n');
    }
    s.push_str("### Validation\n");
    if entry.validations.is_empty() {
        s.push_str("_none_\n");
    }
    for v in &entry.validations {
        let mark = match v.status {
            ValidationStatus::Passed => "✅",
            ValidationStatus::Failed => "❌",
            ValidationStatus::Pending => "⏳",
        };
        let check = one_line(&v.check).replace('`', "'");
        s.push_str(&format!("- {mark} `{check}` — {}\n", one_line(&v.evidence)));
    }
    s.push('\n');
    if !entry.failures.is_empty() {
        s.push_str("### Failures\n");
        for f in &entry.failures {
            let f = crate::inert::text(f);
            let mut lines = f.trim_end_matches('\n').split('\n');
            s.push_str(&format!(
                "- {}\n",
                lines.next().unwrap_or_default().trim_end_matches('\r')
            ));
            for line in lines {
                s.push_str("  ");
                s.push_str(line.trim_end_matches('\r'));
                s.push('\n');
            }
        }
        s.push('\n');
    }
    s.push_str(DATA_PREFIX);
    s.push_str(&json);
    s.push_str(DATA_SUFFIX);
    s.push('\n');
    s.push_str(END_MARKER);
    s.push_str("\n\n");
    Ok(s)
}

/// Made inert, newlines and tabs folded to spaces.
fn one_line(text: &str) -> String {
    crate::inert::line(text.trim()).into_owned()
}

/// A description line that could look like structure gets a markdown backslash.
fn escape_line(line: &str) -> String {
    let line = line.trim_end_matches('\r');
    let t = line.trim_start();
    if t.starts_with('-') || t.starts_with('#') || t.starts_with("<!--") || t.starts_with('\\') {
        format!("\\{line}")
    } else {
        line.to_string()
    }
}

fn unescape_line(line: &str) -> &str {
    line.strip_prefix('\\').unwrap_or(line)
}

// ---------------------------------------------------------------- reading

/// One piece of the log that ended with an end marker.
struct Piece {
    /// Bytes of the entry, from its opening `---` through the end-marker line.
    range: Range<usize>,
    entry: Result<ActivityEntry, String>,
}

/// Parses the text of an activity log: every complete entry, oldest first (file order), and a
/// warning (`line N: ...`) per torn or unreadable piece. Never panics, whatever the text.
pub fn parse_log(text: &str) -> (Vec<ActivityEntry>, Vec<String>) {
    let (pieces, mut warnings) = scan(text);
    let mut entries = Vec::new();
    let mut errors = Vec::new();
    for p in pieces {
        match p.entry {
            Ok(e) => entries.push(e),
            Err(w) => errors.push(w),
        }
    }
    errors.append(&mut warnings);
    errors.sort_by_key(|w| {
        w.split(':')
            .next()
            .and_then(|l| l.trim_start_matches("line ").parse::<usize>().ok())
    });
    (entries, errors)
}

/// Splits `text` at end markers into pieces and leftover warnings.
fn scan(text: &str) -> (Vec<Piece>, Vec<String>) {
    let mut pieces = Vec::new();
    let mut warnings = Vec::new();
    // (line number, byte offset) of each `---` line in the current piece.
    let mut fences: Vec<(usize, usize)> = Vec::new();
    let mut piece_start = 1usize;
    let mut lines: Vec<(usize, usize, &str)> = Vec::new();
    let mut offset = 0;
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        let line_no = i + 1;
        let line = raw.trim_end_matches('\n').trim_end_matches('\r');
        let start = offset;
        offset += raw.len();
        lines.push((line_no, start, line));
        if line.trim_end() == FENCE {
            fences.push((line_no, start));
        } else if line.trim_end() == END_MARKER {
            let piece_lines = std::mem::take(&mut lines);
            let piece_fences = std::mem::take(&mut fences);
            let first_line = piece_start;
            piece_start = line_no + 1;
            if piece_fences.len() < 2 {
                warnings.push(format!(
                    "line {first_line}: entry ending at line {line_no} has no front matter (`---` ... `---`); skipped"
                ));
                continue;
            }
            let (open_line, open_byte) = piece_fences[piece_fences.len() - 2];
            let (close_line, _) = piece_fences[piece_fences.len() - 1];
            // Anything but blank lines before the entry is what a crashed writer left.
            if let Some((torn_line, _, _)) = piece_lines
                .iter()
                .find(|(n, _, l)| *n < open_line && !l.trim().is_empty())
            {
                warnings.push(format!(
                    "line {torn_line}: torn entry skipped (it has no end marker; the writer stopped mid-entry)"
                ));
            }
            let fm: Vec<&str> = piece_lines
                .iter()
                .filter(|(n, _, _)| *n > open_line && *n < close_line)
                .map(|(_, _, l)| *l)
                .collect();
            let body: Vec<(usize, &str)> = piece_lines
                .iter()
                .filter(|(n, _, _)| *n > close_line && *n < line_no)
                .map(|(n, _, l)| (*n, *l))
                .collect();
            pieces.push(Piece {
                range: open_byte..offset,
                entry: build_entry(open_line, &fm, &body),
            });
        }
    }
    if let Some(&(first_line, _, _)) = lines.iter().find(|(_, _, l)| !l.trim().is_empty()) {
        warnings.push(format!(
            "line {first_line}: torn entry skipped (it has no end marker; the writer stopped mid-entry)"
        ));
    }
    (pieces, warnings)
}

fn build_entry(open_line: usize, fm: &[&str], body: &[(usize, &str)]) -> Result<ActivityEntry, String> {
    // Every line ends with its newline, as written: a `|+` block keeps its trailing ones.
    let front: FrontMatter = serde_yaml_ng::from_str(&(fm.join("\n") + "\n"))
        .map_err(|e| format!("line {}: entry skipped, unparseable front matter: {e}", open_line + 1))?;
    let data = match body.iter().find(|(_, l)| l.starts_with(DATA_PREFIX)) {
        Some((n, l)) => {
            let json = l[DATA_PREFIX.len()..].trim_end();
            let json = json.strip_suffix(DATA_SUFFIX.trim_start()).unwrap_or(json);
            serde_json::from_str::<BodyData>(json)
                .map_err(|e| format!("line {n}: entry skipped, unreadable medin:data line: {e}"))?
        }
        None => body_from_markdown(body),
    };
    Ok(ActivityEntry {
        timestamp: front.timestamp,
        task_id: front.task_id,
        category: front.category,
        kind: front.kind,
        status: front.status,
        outcome: front.outcome,
        duration_ms: front.duration_ms,
        attempt: front.attempt,
        run_id: front.run_id,
        run_dir: front.run_dir,
        agent: front.agent,
        description: data.description,
        validations: data.validations,
        failures: data.failures,
        correction: data.correction,
    })
}

/// An entry written by hand, without a `medin:data` line: the description (text under the
/// `##` heading up to the first `###`) and the failure bullets; validations are not recovered.
fn body_from_markdown(body: &[(usize, &str)]) -> BodyData {
    let mut description = Vec::new();
    let mut failures: Vec<String> = Vec::new();
    let mut section = "";
    for (_, line) in body {
        if line.starts_with("## ") && section.is_empty() {
            section = "description";
        } else if let Some(h) = line.strip_prefix("### ") {
            section = if h.trim().eq_ignore_ascii_case("failures") {
                "failures"
            } else {
                "other"
            };
        } else if section == "description" {
            description.push(unescape_line(line));
        } else if section == "failures" {
            if let Some(b) = line.strip_prefix("- ") {
                failures.push(b.to_string());
            } else if let (Some(c), Some(last)) = (line.strip_prefix("  "), failures.last_mut()) {
                last.push('\n');
                last.push_str(c);
            }
        }
    }
    BodyData {
        description: description.join("\n").trim_matches('\n').to_string(),
        validations: Vec::new(),
        failures,
        correction: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn archives_rotated_in_one_millisecond_come_in_the_order_they_were_made() {
        let dir = tempfile::tempdir().unwrap();
        let log = ActivityLog::new(dir.path().join("ACTIVITY_LOG.md"));
        let at: DateTime<Utc> = "2026-01-01T00:00:00.123Z".parse().unwrap();
        let mut made = vec![log.archive_path("2025-12-31T00:00:00Z".parse().unwrap())];
        fs::write(&made[0], "").unwrap();
        for _ in 0..11 {
            let next = log.rotation_path(at);
            fs::write(&next, "").unwrap();
            made.push(next);
        }
        let later = log.rotation_path("2026-01-01T00:00:00.124Z".parse().unwrap());
        fs::write(&later, "").unwrap();
        made.push(later);
        assert_eq!(log.archives(), made);
    }

    fn entry() -> ActivityEntry {
        ActivityEntry {
            timestamp: "2026-01-19T15:30:00Z".parse().unwrap(),
            task_id: "golden::gt-002: odd\n---\n- id".into(),
            category: "golden".into(),
            kind: EntryKind::Task,
            status: EntryStatus::Failed,
            outcome: Some("failure".into()),
            duration_ms: 1500,
            attempt: 2,
            run_id: "r1".into(),
            run_dir: "<!-- medin:end -->".into(),
            agent: "---".into(),
            description: "line one\n---\n<!-- medin:end -->\n# not a heading".into(),
            validations: vec![],
            failures: vec!["a\n---\n<!-- medin:end -->\nb".into()],
            correction: None,
        }
    }

    #[test]
    fn hostile_text_round_trips_without_breaking_the_format() {
        let e = entry();
        let text = format_entry(&e).unwrap();
        assert_eq!(text.lines().filter(|l| *l == FENCE).count(), 2, "{text}");
        assert_eq!(text.lines().filter(|l| *l == END_MARKER).count(), 1, "{text}");
        let (entries, warnings) = parse_log(&text);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(entries, vec![e]);
    }

    #[test]
    fn a_last_front_matter_field_ending_in_newlines_keeps_them() {
        // `agent` is the last field: YAML writes `agent: |+` and the newlines as blank lines.
        for agent in ["\n", "x\n\n", "\n\n\n"] {
            let e = ActivityEntry {
                agent: agent.into(),
                ..entry()
            };
            let (entries, warnings) = parse_log(&format_entry(&e).unwrap());
            assert!(warnings.is_empty(), "{warnings:?}");
            assert_eq!(entries, vec![e]);
        }
    }

    #[test]
    fn an_entry_without_data_line_is_read_from_markdown() {
        let text = "---\ntimestamp: 2026-01-19T15:30:00Z\ntaskId: t\ncategory: c\nstatus: passed\nduration_ms: 1\nattempt: 1\nrun_id: r\nrun_dir: d\nagent: a\n---\n## t\n\nHello\n\\# there\n\n### Failures\n- one\n  more\n- two\n<!-- medin:end -->\n";
        let (entries, warnings) = parse_log(text);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(entries[0].description, "Hello\n# there");
        assert_eq!(entries[0].failures, vec!["one\nmore".to_string(), "two".to_string()]);
    }

    #[test]
    fn escaping_is_reversible() {
        for line in ["---", "- x", "# h", "<!-- c", "\\x", "plain"] {
            assert_eq!(unescape_line(&escape_line(line)), line);
        }
    }
}
