//! The shared writer: a [`Draft`] — what an importer understood of one benchmark task — becomes
//! a medin task directory (`task.yaml` beside `workspace/`, `tests/`, `solution/solve.sh`).
//! Everything is written below a folder this writer creates fresh, through [`RelPath`]s, so a
//! hostile task cannot place a file anywhere else; an existing task directory is never
//! overwritten. The written `task.yaml` is then loaded by medin's own loader: a task that does
//! not load says so in its notes (it still is written, for a hand edit).

use std::fs;
use std::path::{Path, PathBuf};

use serde_yaml_ng::{Mapping, Value};

use super::paths::{copy_tree, RelPath};
use super::shell::Packages;
use super::ImportError;

/// One benchmark task, understood: what goes into the medin task directory.
#[derive(Debug, Clone, Default)]
pub struct Draft {
    /// The medin task's directory name (already plain: see `super::task_name`).
    pub name: String,
    /// The task directory it came from (for the header).
    pub source: PathBuf,
    /// `terminal-bench` or `harbor` (for the header).
    pub format: &'static str,
    pub description: String,
    pub prompt: String,
    pub tags: Vec<String>,
    /// `limits.timeout`, in whole seconds.
    pub agent_timeout: Option<u64>,
    /// `environment:` packages.
    pub packages: Packages,
    /// `environment.root` (the Dockerfile's `WORKDIR`).
    pub root: Option<String>,
    /// `environment.image`: a prebuilt image the benchmark names.
    pub image: Option<String>,
    /// `environment.dockerfile`: a Dockerfile on a base that is not the host's kind of system,
    /// carried over with its build context as `environment/`.
    pub dockerfile: Option<DockerfileDraft>,
    /// Files or folders of the task (resolved, inside it) and where they go in `workspace/`;
    /// a folder's contents go into its destination. The flag marks a build context's root,
    /// whose benchmark files (`skip`) stay out.
    pub workspace: Vec<(PathBuf, RelPath, bool)>,
    /// Names at the top of a build context that are the benchmark's own files, not the image's.
    pub skip: &'static [&'static str],
    /// The task's tests folder (resolved, inside it), copied to `tests/`.
    pub tests: Option<PathBuf>,
    /// Files written into `tests/` besides (a runner script), with their text.
    pub test_files: Vec<(RelPath, String)>,
    pub verify: Option<VerifyDraft>,
    /// `solution/solve.sh`.
    pub solution: Option<String>,
    /// What could not be carried over, one line each.
    pub notes: Vec<String>,
}

/// A Dockerfile carried over: its text, and its build context (resolved, inside the task),
/// copied without the benchmark's own files (`Draft::skip`).
#[derive(Debug, Clone, Default)]
pub struct DockerfileDraft {
    pub context: PathBuf,
    pub text: String,
}

/// Where a carried-over Dockerfile goes in the task directory (its folder is the context).
pub const DOCKERFILE: &str = "environment/Dockerfile";

/// The `verify:` block.
#[derive(Debug, Clone, Default)]
pub struct VerifyDraft {
    pub command: String,
    pub framework: Option<&'static str>,
    /// In whole seconds.
    pub timeout: Option<u64>,
    /// `reward.file`, workspace-relative.
    pub reward_file: Option<String>,
}

/// Writes `draft` as `<out>/<name>/`, then loads it; returns the notes, including one for a
/// task that does not load.
pub fn write(draft: &Draft, out: &Path) -> Result<Vec<String>, ImportError> {
    let dir = out.join(&draft.name);
    let io = |what: &str, path: &Path, e: std::io::Error| ImportError::Write {
        path: path.to_path_buf(),
        detail: format!("{what}: {e}"),
    };
    fs::create_dir_all(out).map_err(|e| io("cannot create the output folder", out, e))?;
    match fs::create_dir(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(ImportError::Exists { path: dir });
        }
        Err(e) => return Err(io("cannot create the task directory", &dir, e)),
    }
    let mut notes = draft.notes.clone();
    let workspace = dir.join(crate::spec::taskdir::WORKSPACE_DIR);
    fs::create_dir(&workspace).map_err(|e| io("cannot create", &workspace, e))?;
    for (from, to, context_root) in &draft.workspace {
        let target = to.under(&workspace);
        let skip = |rel: &Path| *context_root && own_file(draft, rel);
        if from.is_dir() {
            let skipped = copy_tree(from, &target, &skip).map_err(|e| io("cannot copy", from, e))?;
            notes.extend(skipped);
        } else {
            if let Some(parent) = target.parent() {
                fs::create_dir_all(parent).map_err(|e| io("cannot create", parent, e))?;
            }
            fs::copy(from, &target).map_err(|e| io("cannot copy", from, e))?;
        }
    }
    if let Some(docker) = &draft.dockerfile {
        let file = dir.join(DOCKERFILE);
        let context = file.parent().unwrap_or(&dir).to_path_buf();
        let skip = |rel: &Path| own_file(draft, rel);
        let skipped = copy_tree(&docker.context, &context, &skip).map_err(|e| io("cannot copy", &docker.context, e))?;
        notes.extend(skipped);
        fs::write(&file, &docker.text).map_err(|e| io("cannot write", &file, e))?;
    }
    let tests = dir.join(crate::spec::taskdir::TESTS_DIR);
    if let Some(from) = &draft.tests {
        let skipped = copy_tree(from, &tests, &|_| false).map_err(|e| io("cannot copy", from, e))?;
        notes.extend(skipped);
    }
    for (name, text) in &draft.test_files {
        fs::create_dir_all(&tests).map_err(|e| io("cannot create", &tests, e))?;
        let path = name.under(&tests);
        fs::write(&path, text).map_err(|e| io("cannot write", &path, e))?;
    }
    if let Some(script) = &draft.solution {
        let path = dir.join(crate::spec::taskdir::SOLUTION_SCRIPT);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|e| io("cannot create", parent, e))?;
        }
        fs::write(&path, script).map_err(|e| io("cannot write", &path, e))?;
    }
    let task_file = dir.join(crate::spec::taskdir::TASK_FILE);
    let write_yaml = |notes: &[String]| {
        fs::write(&task_file, task_yaml(draft, notes)).map_err(|e| io("cannot write", &task_file, e))
    };
    write_yaml(&notes)?;
    if let Err(e) = crate::spec::load_task(&task_file) {
        let first = e.to_string().lines().next().unwrap_or_default().to_string();
        notes.push(format!("the written task.yaml does not load in this medin: {first}"));
        write_yaml(&notes)?;
    }
    Ok(notes)
}

/// Whether `rel`, a path in a build context, is (or lies in) one of the benchmark's own files
/// at the context's top (`tests/`, `solution.sh`, …).
fn own_file(draft: &Draft, rel: &Path) -> bool {
    rel.components()
        .next()
        .is_some_and(|top| draft.skip.iter().any(|s| Path::new(top.as_os_str()) == Path::new(s)))
}

/// The text of `task.yaml`: a header (where it came from, and what to check when `notes` is
/// not empty), then the keys.
fn task_yaml(draft: &Draft, notes: &[String]) -> String {
    let mut head = format!(
        "# Imported by `medin import {}` from {}.\n",
        draft.format,
        one_line(&draft.source.display().to_string())
    );
    if !notes.is_empty() {
        head.push_str("# medin import: check before use, not carried over:\n");
        for note in notes {
            head.push_str(&format!("#   - {}\n", one_line(note)));
        }
    }
    let mut map = Mapping::new();
    let s = |t: &str| Value::String(t.to_string());
    map.insert(s("description"), s(&draft.description));
    if !draft.tags.is_empty() {
        map.insert(s("tags"), Value::Sequence(draft.tags.iter().map(|t| s(t)).collect()));
    }
    map.insert(s("prompt"), s(&draft.prompt));
    if let Some(secs) = draft.agent_timeout {
        let mut limits = Mapping::new();
        limits.insert(s("timeout"), s(&format!("{secs}s")));
        map.insert(s("limits"), Value::Mapping(limits));
    }
    let mut env = Mapping::new();
    for (key, list) in [
        ("python", &draft.packages.python),
        ("node", &draft.packages.node),
        ("apt", &draft.packages.apt),
    ] {
        if !list.is_empty() {
            env.insert(s(key), Value::Sequence(list.iter().map(|p| s(p)).collect()));
        }
    }
    if let Some(root) = &draft.root {
        env.insert(s("root"), s(root));
    }
    if let Some(image) = &draft.image {
        env.insert(s("image"), s(image));
    } else if draft.dockerfile.is_some() {
        env.insert(s("dockerfile"), s(DOCKERFILE));
    }
    if !env.is_empty() {
        map.insert(s("environment"), Value::Mapping(env));
    }
    if let Some(v) = &draft.verify {
        let mut verify = Mapping::new();
        verify.insert(s("command"), s(&v.command));
        if let Some(f) = v.framework {
            verify.insert(s("framework"), s(f));
        }
        if let Some(secs) = v.timeout {
            verify.insert(s("timeout"), s(&format!("{secs}s")));
        }
        if let Some(file) = &v.reward_file {
            let mut reward = Mapping::new();
            reward.insert(s("file"), s(file));
            verify.insert(s("reward"), Value::Mapping(reward));
        }
        map.insert(s("verify"), Value::Mapping(verify));
    }
    let body = serde_yaml_ng::to_string(&Value::Mapping(map)).unwrap_or_default();
    head + &body
}

/// `text` on one line, for a comment.
fn one_line(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}
