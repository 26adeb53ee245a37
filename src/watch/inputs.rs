//! What a task's outcome rests on, on disk, and so what `medin watch` watches: the task file,
//! its task directory (workspace, tests, solution), and every path the spec names relative to
//! itself (`workspace:`, `hidden:`, `cassette:`, `verify.files`, `environment.mounts`, the
//! Dockerfile's build context). It also makes the set of paths handed to the file watcher,
//! with no path watched twice. Nothing here loads a task or runs anything.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use notify::RecursiveMode;

use crate::spec::{taskdir, TaskSpec};

/// The files and folders whose change means `spec` (loaded from `file`) must run again,
/// besides `file` itself. Made absolute (and canonical where they exist), so a changed path
/// seen by the watcher is compared by prefix.
pub fn task_inputs(spec: &TaskSpec, file: &Path) -> Vec<PathBuf> {
    let base = file.parent().unwrap_or(Path::new("."));
    let mut named: Vec<&str> = Vec::new();
    named.extend(spec.workspace.as_deref());
    named.extend(spec.hidden.as_deref());
    named.extend(spec.cassette.as_deref());
    if let Some(verify) = &spec.verify {
        named.extend(verify.files.as_deref());
    }
    if let Some(env) = &spec.environment {
        named.extend(env.mounts.values().map(String::as_str));
    }
    let mut out: Vec<PathBuf> = named.into_iter().map(|rel| absolute(&base.join(rel))).collect();
    if let Some(dockerfile) = spec.environment.as_ref().and_then(|e| e.dockerfile.as_deref()) {
        let context = base.join(dockerfile);
        out.push(absolute(context.parent().unwrap_or(base)));
    }
    if let Some(dir) = taskdir::task_dir_of(file) {
        out.push(absolute(dir));
    }
    out.sort();
    out.dedup();
    out
}

/// `path` canonical when it exists (symbolic links and `..` resolved, as the watcher reports
/// them), else as given.
pub fn absolute(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

/// Whether `changed` is `input` or lies below it.
pub fn touches(changed: &Path, input: &Path) -> bool {
    changed.starts_with(input)
}

/// The paths to hand to the watcher: each wanted path with how deep to watch it, minus those a
/// recursive watch of an ancestor (or of the same path) already covers. A file is watched
/// through its folder (editors replace files by renaming a new one over them, which a watch
/// on the old file would miss); a path that does not exist is watched through its nearest
/// existing folder, non-recursively, so its creation is seen.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct WatchSet {
    paths: BTreeMap<PathBuf, RecursiveMode>,
}

impl WatchSet {
    /// Watch `dir` and everything below it.
    pub fn tree(&mut self, dir: &Path) {
        if dir.is_dir() {
            self.paths.insert(dir.to_path_buf(), RecursiveMode::Recursive);
        } else {
            self.entry(dir);
        }
    }

    /// Watch the single entry `path` (a file, or a folder's own entries): through its folder.
    pub fn entry(&mut self, path: &Path) {
        let mut folder = path.parent();
        while let Some(f) = folder {
            if f.is_dir() {
                self.paths.entry(f.to_path_buf()).or_insert(RecursiveMode::NonRecursive);
                return;
            }
            folder = f.parent();
        }
    }

    /// Watch `path` whatever it is: a folder as a tree, a file (or a missing path) as an entry.
    pub fn input(&mut self, path: &Path) {
        if path.is_dir() {
            self.tree(path);
        } else {
            self.entry(path);
        }
    }

    /// The paths to watch, none covered by another's recursive watch.
    pub fn reduced(&self) -> BTreeMap<PathBuf, RecursiveMode> {
        let recursive: Vec<&PathBuf> = self
            .paths
            .iter()
            .filter(|(_, m)| **m == RecursiveMode::Recursive)
            .map(|(p, _)| p)
            .collect();
        self.paths
            .iter()
            .filter(|(p, mode)| {
                !recursive
                    .iter()
                    .any(|r| p.starts_with(r) && (*p != *r || **mode == RecursiveMode::NonRecursive))
            })
            .map(|(p, m)| (p.clone(), *m))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recursive_watch_covers_what_lies_below_it_and_a_file_is_watched_through_its_folder() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("golden/sub")).unwrap();
        std::fs::create_dir_all(root.join("fixtures/a")).unwrap();
        std::fs::write(root.join("medin.yaml"), "").unwrap();
        let mut set = WatchSet::default();
        set.entry(&root.join("medin.yaml"));
        set.tree(&root.join("golden"));
        set.tree(&root.join("golden/sub"));
        set.input(&root.join("fixtures/a"));
        set.entry(&root.join("golden/t.yaml"));
        // A PRD that does not exist yet is watched through the nearest folder that does.
        set.entry(&root.join("docs/PRD.md"));
        let got = set.reduced();
        let want: BTreeMap<PathBuf, RecursiveMode> = [
            (root.clone(), RecursiveMode::NonRecursive),
            (root.join("fixtures/a"), RecursiveMode::Recursive),
            (root.join("golden"), RecursiveMode::Recursive),
        ]
        .into_iter()
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_task_rests_on_the_folders_it_names_and_its_task_directory() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("fixtures/web")).unwrap();
        std::fs::create_dir_all(root.join("golden/t1/workspace")).unwrap();
        std::fs::create_dir_all(root.join("golden/t1/hidden")).unwrap();
        let file = root.join("golden/t1/task.yaml");
        std::fs::write(
            &file,
            "description: d\nprompt: p\nworkspace: ../../fixtures/web\nhidden: hidden\nsolution: []\n",
        )
        .unwrap();
        let spec = crate::spec::load_task(&file).unwrap();
        let inputs = task_inputs(&spec, &file);
        assert_eq!(
            inputs,
            vec![
                root.join("fixtures/web"),
                root.join("golden/t1"),
                root.join("golden/t1/hidden")
            ]
        );
        assert!(touches(&root.join("fixtures/web/index.html"), &inputs[0]));
        assert!(!touches(&root.join("fixtures/website/x"), &inputs[0]));
    }
}
