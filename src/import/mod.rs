//! `medin import terminal-bench DIR` and `medin import harbor DIR`: benchmark task directories
//! become medin task directories (see the README, "Import a benchmark").
//!
//! One submodule per format reads a task into a [`writer::Draft`] — instruction → `prompt`,
//! difficulty, category and tags → `tags:`, timeouts → `limits.timeout` / `verify.timeout`,
//! the solution → `solution/solve.sh`, the tests → `tests/` and a `verify:` that runs them as
//! the benchmark does, the Dockerfile's package installs → `environment:` (on a plain Debian,
//! Ubuntu or python base; any other base → the Dockerfile itself, with its build context, as
//! `environment.dockerfile`, and Harbor's prebuilt `docker_image` → `environment.image`: medin
//! runs those in a container), its `WORKDIR` → `environment.root`, what it `COPY`s from the
//! task → `workspace/` — and says what it could not carry over. The [`writer`] writes the draft; this module finds the tasks, names them,
//! and sums up ([`ImportReport`]).
//!
//! The input is hostile: nothing from it is run, every path from it is a [`paths::RelPath`]
//! (no `..`, nothing absolute) read without following symbolic links, and text is read with a
//! size bound. This module never touches the sandbox, the runner or the validators.

mod dockerfile;
mod harbor;
mod paths;
mod shell;
mod terminal_bench;
mod writer;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::exit::ExitStatus;
use paths::RelPath;

/// The largest file the import reads as text (a task file, a script, a Dockerfile).
const MAX_TEXT_BYTES: u64 = 1024 * 1024;

/// A benchmark's task format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Terminal-Bench: `task.yaml`, `Dockerfile`, `run-tests.sh`, `solution.sh`, `tests/`.
    TerminalBench,
    /// Harbor: `task.toml`, `instruction.md`, `environment/Dockerfile`, `solution/solve.sh`,
    /// `tests/test.sh`.
    Harbor,
}

impl Format {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Format::TerminalBench => "terminal-bench",
            Format::Harbor => "harbor",
        }
    }

    /// The file that makes a folder a task of this format.
    fn marker(self) -> &'static str {
        match self {
            Format::TerminalBench => "task.yaml",
            Format::Harbor => "task.toml",
        }
    }

    fn read(self, dir: &Path, name: &str) -> Result<writer::Draft, ImportError> {
        match self {
            Format::TerminalBench => terminal_bench::read(dir, name),
            Format::Harbor => harbor::read(dir, name),
        }
    }
}

/// Why a task (or the whole input) could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("cannot read {}: {detail}", path.display())]
    Unreadable { path: PathBuf, detail: String },
    #[error("{} holds no {format} task: give a task directory (one with {marker}) or a folder of them", path.display())]
    NoTasks {
        path: PathBuf,
        format: &'static str,
        marker: &'static str,
    },
    #[error("{} already exists; remove it or import into another folder with --out", path.display())]
    Exists { path: PathBuf },
    #[error("cannot write {}: {detail}; check the output folder's permissions and free space", path.display())]
    Write { path: PathBuf, detail: String },
}

/// One task imported: where it went and what could not be carried over (empty: imported
/// without hand edits).
#[derive(Debug)]
pub struct Imported {
    pub written: PathBuf,
    pub notes: Vec<String>,
}

/// What an import did, task by task.
#[derive(Debug, Default)]
pub struct ImportReport {
    pub tasks: Vec<(PathBuf, Result<Imported, ImportError>)>,
}

impl ImportReport {
    /// Tasks imported with nothing to check.
    pub fn clean(&self) -> usize {
        self.tasks
            .iter()
            .filter(|(_, r)| r.as_ref().is_ok_and(|i| i.notes.is_empty()))
            .count()
    }

    /// 0 when every task imported cleanly, 100 when some need hand edits, 2 when some could
    /// not be read or written.
    pub fn exit_status(&self) -> ExitStatus {
        self.tasks.iter().fold(ExitStatus::Success, |status, (_, r)| {
            status.and(match r {
                Ok(i) if i.notes.is_empty() => ExitStatus::Success,
                Ok(_) => ExitStatus::Failed,
                Err(_) => ExitStatus::Infrastructure,
            })
        })
    }

    /// Per task, what was written and what was not carried over, then the summary line.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (source, result) in &self.tasks {
            match result {
                Ok(i) if i.notes.is_empty() => {
                    let _ = writeln!(out, "imported {} → {}", source.display(), i.written.display());
                }
                Ok(i) => {
                    let _ = writeln!(
                        out,
                        "imported {} → {} (needs hand edits: see the `# medin import:` comment in its task.yaml)",
                        source.display(),
                        i.written.display()
                    );
                    for note in &i.notes {
                        let _ = writeln!(out, "  - {note}");
                    }
                }
                Err(e) => {
                    let _ = writeln!(out, "not imported {}: {e}", source.display());
                }
            }
        }
        let _ = writeln!(
            out,
            "imported {} of {} task(s) without hand edits",
            self.clean(),
            self.tasks.len()
        );
        out
    }
}

/// Imports `input` — one task directory of `format` or a folder of them — into `out`, one
/// medin task directory per task.
pub fn import(format: Format, input: &Path, out: &Path) -> Result<ImportReport, ImportError> {
    let meta = std::fs::symlink_metadata(input).map_err(|e| ImportError::Unreadable {
        path: input.to_path_buf(),
        detail: e.to_string(),
    })?;
    if !meta.is_dir() {
        return Err(ImportError::Unreadable {
            path: input.to_path_buf(),
            detail: "not a directory (a symbolic link is not followed)".into(),
        });
    }
    let dirs = if is_task(format, input) {
        vec![input.to_path_buf()]
    } else {
        let entries = std::fs::read_dir(input).map_err(|e| ImportError::Unreadable {
            path: input.to_path_buf(),
            detail: e.to_string(),
        })?;
        let mut dirs: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .filter(|p| is_task(format, p))
            .collect();
        dirs.sort();
        dirs
    };
    if dirs.is_empty() {
        return Err(ImportError::NoTasks {
            path: input.to_path_buf(),
            format: format.name(),
            marker: format.marker(),
        });
    }
    let mut report = ImportReport::default();
    for dir in dirs {
        let name = task_name(&dir);
        let result = format.read(&dir, &name).and_then(|draft| {
            let notes = writer::write(&draft, out)?;
            Ok(Imported {
                written: out.join(&name),
                notes,
            })
        });
        report.tasks.push((dir, result));
    }
    Ok(report)
}

/// Whether `dir` is a task of `format` (its marker file is a regular file, not a link).
fn is_task(format: Format, dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join(format.marker())).is_ok_and(|m| m.is_file())
}

/// The medin task name for the task directory `dir`: its name with anything but letters,
/// digits, `-`, `_` and `.` made `-`, never starting with a dot.
fn task_name(dir: &Path) -> String {
    let raw = dir
        .canonicalize()
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let name: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect();
    let name = name.trim_start_matches('.').to_string();
    if name.is_empty() {
        "task".into()
    } else {
        name
    }
}

/// The text of the file `name` in `dir`, if it is there: a regular file (not a link), UTF-8,
/// at most [`MAX_TEXT_BYTES`].
fn read_text(dir: &Path, name: &str) -> Result<Option<String>, ImportError> {
    let path = dir.join(name);
    let unreadable = |detail: String| ImportError::Unreadable {
        path: path.clone(),
        detail,
    };
    let meta = match std::fs::symlink_metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(unreadable(e.to_string())),
    };
    if !meta.is_file() {
        return Err(unreadable(
            "not a regular file (a symbolic link is not followed)".into(),
        ));
    }
    if meta.len() > MAX_TEXT_BYTES {
        return Err(unreadable(format!(
            "{} bytes, more than the {MAX_TEXT_BYTES} the import reads",
            meta.len()
        )));
    }
    let bytes = std::fs::read(&path).map_err(|e| unreadable(e.to_string()))?;
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| unreadable("not UTF-8 text".into()))
}

/// A folder `name` inside `dir` (not a link), if there.
fn folder(dir: &Path, name: &str) -> Option<PathBuf> {
    let path = dir.join(name);
    std::fs::symlink_metadata(&path)
        .is_ok_and(|m| m.is_dir())
        .then_some(path)
}

/// What a task's Dockerfile gives its draft: read from the build `context`, either the host's
/// system (a plain base: packages → `environment:`, what cannot come along → notes) or the
/// Dockerfile itself (any other base, or `prebuilt`, the benchmark's own image: carried over as
/// `environment.dockerfile` / `image`, built by medin as it is). Either way `WORKDIR` → `environment.root` and its `COPY`s into it → the
/// workspace, which the container shows at the root.
fn carry_image(text: &str, context: &Path, prebuilt: Option<String>, draft: &mut writer::Draft) {
    let image = dockerfile::read(text);
    let in_container = prebuilt.is_some() || !image.plain;
    if let Some(name) = prebuilt {
        draft.image = Some(name);
    } else if in_container {
        draft.dockerfile = Some(writer::DockerfileDraft {
            context: context.to_path_buf(),
            text: text.to_string(),
        });
    } else {
        draft.notes.extend(image.notes.iter().cloned());
        draft.packages.extend(&image.packages);
    }
    draft.root = image.workdir.clone();
    workspace_of(&image, context, in_container, draft);
}

/// The workspace fixture: what `image` copies from the build `context` into its `WORKDIR`.
/// Copies from outside the task or through links become notes; so do copies elsewhere, unless
/// the image is `built` (then the build makes them).
fn workspace_of(image: &dockerfile::Image, context: &Path, built: bool, draft: &mut writer::Draft) {
    let Some(root) = image.workdir.as_deref() else {
        if !image.copies.is_empty() && !built {
            draft
                .notes
                .push("the Dockerfile copies files but sets no WORKDIR: they are not carried over".into());
        }
        return;
    };
    let root = format!("{}/", root.trim_end_matches('/'));
    for step in &image.copies {
        let dest = normalize_abs(&step.dest);
        let into_dir = step.dest.ends_with('/') || step.sources.len() > 1;
        let Some(rel) = format!("{dest}/")
            .strip_prefix(&root)
            .map(|r| r.trim_end_matches('/').to_string())
        else {
            if built {
                continue;
            }
            draft.notes.push(format!(
                "`COPY {} {}` puts files outside the WORKDIR {root}: not carried over",
                step.sources.join(" "),
                step.dest
            ));
            continue;
        };
        let dest_rel = match RelPath::parse(&rel) {
            Ok(p) => p,
            Err(e) => {
                draft.notes.push(format!("COPY destination {e}: not carried over"));
                continue;
            }
        };
        for source in &step.sources {
            if source.contains(['*', '?', '[']) {
                draft.notes.push(format!(
                    "`COPY {source}` uses a wildcard, which the import does not expand"
                ));
                continue;
            }
            let resolved = RelPath::parse(source).and_then(|s| paths::resolve_beneath(context, &s).map(|p| (s, p)));
            match resolved {
                Ok((src, path)) => {
                    let target = if path.is_dir() || !into_dir {
                        dest_rel.clone()
                    } else {
                        dest_rel.join(&RelPath::name(src.file_name().unwrap_or("file")).unwrap_or_default())
                    };
                    draft.workspace.push((path, target, src.is_empty()));
                }
                Err(e) => draft.notes.push(format!("COPY source {e}: not carried over")),
            }
        }
    }
}

/// An absolute path with `.` parts and repeated slashes removed (`..` is left for
/// [`RelPath::parse`] to refuse).
fn normalize_abs(path: &str) -> String {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    format!("/{}", parts.join("/"))
}

/// Seconds as written in a task (`600`, `600.0`) in whole seconds, rounded up; nothing for a
/// value that is not a positive number.
fn whole_seconds(value: f64) -> Option<u64> {
    (value.is_finite() && value > 0.0 && value < 1e9).then(|| value.ceil() as u64)
}

/// A one-line description from a prompt: its first non-empty line, cut to 100 characters.
fn describe(prompt: &str) -> String {
    let line = prompt
        .lines()
        .map(|l| l.trim().trim_start_matches('#').trim())
        .find(|l| !l.is_empty())
        .unwrap_or("imported task");
    if line.chars().count() <= 100 {
        line.to_string()
    } else {
        format!("{}…", line.chars().take(99).collect::<String>())
    }
}

/// `tags:` from a benchmark's metadata: its own tags, then `difficulty:…` and `category:…`
/// (so metrics can group by them), each without spaces.
fn tags_of(tags: Vec<String>, difficulty: Option<String>, category: Option<String>) -> Vec<String> {
    let clean = |t: &str| t.trim().replace(char::is_whitespace, "-");
    let mut out: Vec<String> = tags.iter().map(|t| clean(t)).filter(|t| !t.is_empty()).collect();
    if let Some(d) = difficulty.filter(|d| !d.trim().is_empty()) {
        out.push(format!("difficulty:{}", clean(&d)));
    }
    if let Some(c) = category.filter(|c| !c.trim().is_empty()) {
        out.push(format!("category:{}", clean(&c)));
    }
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_descriptions_and_tags_are_plain() {
        let dir = tempfile::tempdir().unwrap();
        let task = dir.path().join("..hello world!");
        std::fs::create_dir(&task).unwrap();
        assert_eq!(task_name(&task), "hello-world-");
        assert_eq!(describe("\n# Fix the bug\nmore"), "Fix the bug");
        assert_eq!(
            tags_of(
                vec!["file ops".into()],
                Some("hard".into()),
                Some("software engineering".into())
            ),
            ["file-ops", "difficulty:hard", "category:software-engineering"]
        );
        assert_eq!(whole_seconds(120.5), Some(121));
        assert_eq!(whole_seconds(-1.0), None);
    }
}
