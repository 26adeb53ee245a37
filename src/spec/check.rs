//! `medin check`: load task files without running them and report every error, and the
//! warnings of the ones that load ([`warnings`]: what works but is probably not meant).
//!
//! A path is a task file or a directory. A directory that holds `medin.yaml` is checked as a
//! suite (the suite file, then every task file its folders hold), so fixtures and other YAML
//! next to the suite are not mistaken for tasks; any other directory is walked for
//! `*.yaml`/`*.yml` files (hidden entries skipped), in sorted order. A path to `medin.yaml`
//! itself stands for its suite.

use std::path::{Path, PathBuf};

use super::load::{load_task, SpecError};
use super::model::{TaskSpec, ValidatorSpec};
use super::suite::{self, SUITE_FILE};

/// One result per task file found below `paths`, in order. A path that cannot be read, a
/// broken `medin.yaml` or a suite folder that is missing appears as an `Err` entry for that
/// path, so the caller reports everything in one pass.
///
/// A task's `requirements:` are checked against the PRD of the suite it belongs to (the
/// nearest `medin.yaml` above it): an id the PRD does not define, or any id in a suite without
/// a PRD, is an error located in the task; a PRD that is missing or invalid is reported once,
/// as an entry of its own.
pub fn check_paths(paths: &[PathBuf]) -> Vec<(PathBuf, Result<TaskSpec, SpecError>)> {
    let mut out = Vec::new();
    let mut prds = SuitePrds::default();
    for p in paths {
        for file in expand(p, &mut out) {
            let r = load_task(&file).and_then(|spec| prds.check(&file, spec, &mut out));
            out.push((file, r));
        }
    }
    out
}

/// The PRDs of the suites the checked tasks belong to, each loaded once.
#[derive(Default)]
struct SuitePrds {
    /// Suite root → its PRD (`None`: the suite names none, or it did not load).
    loaded: std::collections::HashMap<PathBuf, Option<crate::prd::Prd>>,
}

impl SuitePrds {
    fn check(
        &mut self,
        file: &Path,
        spec: TaskSpec,
        out: &mut Vec<(PathBuf, Result<TaskSpec, SpecError>)>,
    ) -> Result<TaskSpec, SpecError> {
        if spec.requirements.is_empty() {
            return Ok(spec);
        }
        let root = file
            .ancestors()
            .skip(1)
            .find(|d| d.join(SUITE_FILE).is_file())
            .map(Path::to_path_buf);
        let prd = match &root {
            None => None,
            Some(root) => self
                .loaded
                .entry(root.clone())
                .or_insert_with(|| {
                    let prd_path = suite::load_suite(root).ok()?.prd_path()?;
                    match crate::prd::load(&prd_path) {
                        Ok(prd) => Some(prd),
                        Err(e) => {
                            out.push((prd_path, Err(e.into())));
                            None
                        }
                    }
                })
                .as_ref(),
        };
        crate::prd::check_named(file, &spec, prd)?;
        Ok(spec)
    }
}

/// Something in a task that loads and runs, but is probably not what its author meant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecWarning {
    pub path: PathBuf,
    /// 1-based line and column, when the text could be searched.
    pub at: Option<(usize, usize)>,
    pub message: String,
    pub help: String,
}

impl std::fmt::Display for SpecWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.at {
            Some((line, col)) => write!(f, "{}:{line}:{col}: warning: ", self.path.display())?,
            None => write!(f, "{}: warning: ", self.path.display())?,
        }
        write!(f, "{}\n  help: {}", self.message, self.help)
    }
}

/// The warnings of `spec`, loaded from `path`: a `command` validator that sets no timeout (it
/// gets the default, [`crate::validate::DEFAULT_TIMEOUT`]).
pub fn warnings(path: &Path, spec: &TaskSpec) -> Vec<SpecWarning> {
    let text = super::limits::read(path).unwrap_or_default();
    let default = humantime::format_duration(crate::validate::DEFAULT_TIMEOUT);
    spec.expect
        .validate
        .iter()
        .filter_map(|v| match &v.check {
            ValidatorSpec::Command(c) if c.timeout.is_none() => Some((v, c)),
            _ => None,
        })
        .map(|(v, c)| SpecWarning {
            path: path.to_path_buf(),
            at: super::load::locate_validator_command(&text, &c.run),
            message: format!(
                "the command validator `{}` sets no timeout: it gets the default {default}",
                crate::validate::check_label(v)
            ),
            help: format!(
                "give it the time it needs, e.g. `- command: {{ run: \"{}\", timeout: 2m }}`",
                crate::validate::short_command(&c.run).replace('"', "\\\"")
            ),
        })
        .collect()
}

/// The task files `path` stands for; errors on the way are pushed to `out`.
fn expand(path: &Path, out: &mut Vec<(PathBuf, Result<TaskSpec, SpecError>)>) -> Vec<PathBuf> {
    if path.file_name().is_some_and(|n| n == SUITE_FILE) && path.is_file() {
        // `medin check medin.yaml` checks the suite it describes.
        return expand(
            path.parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new(".")),
            out,
        );
    }
    if !path.is_dir() {
        return vec![path.to_path_buf()];
    }
    if path.join(SUITE_FILE).is_file() {
        let found = suite::load_suite(path).and_then(|s| suite::discover(&s));
        return match found {
            Ok(files) => files.into_iter().map(|f| f.path).collect(),
            Err(e) => {
                out.push((path.join(SUITE_FILE), Err(e)));
                Vec::new()
            }
        };
    }
    match suite::yaml_files(path) {
        Ok(files) => files,
        Err(e) => {
            out.push((path.to_path_buf(), Err(e)));
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_files_and_directories() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().join("tasks");
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::fs::create_dir_all(d.join(".hidden")).unwrap();
        std::fs::write(d.join("b.yaml"), "description: ok\n").unwrap();
        std::fs::write(d.join("sub/a.yml"), "description: ok\npromt: x\n").unwrap();
        std::fs::write(d.join(".hidden/c.yaml"), "broken: [\n").unwrap();
        std::fs::write(d.join("readme.txt"), "not yaml").unwrap();
        let single = tmp.path().join("one.yaml");
        std::fs::write(&single, "description: single\n").unwrap();
        let missing = tmp.path().join("missing.yaml");

        let results = check_paths(&[d.clone(), single.clone(), missing.clone()]);
        let names: Vec<&Path> = results.iter().map(|(p, _)| p.as_path()).collect();
        assert_eq!(
            names,
            vec![
                d.join("b.yaml").as_path(),
                d.join("sub/a.yml").as_path(),
                single.as_path(),
                missing.as_path()
            ]
        );
        assert!(results[0].1.is_ok());
        assert_eq!(results[1].1.as_ref().unwrap_err().location(), Some((2, 1)));
        assert_eq!(results[2].1.as_ref().unwrap().description, "single");
        assert!(matches!(results[3].1, Err(SpecError::Io { .. })));
    }

    #[test]
    fn a_command_validator_without_a_timeout_is_a_located_warning() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("t.yaml");
        std::fs::write(
            &file,
            "description: d\nexpect:\n  validate:\n    - file_exists: a\n    - command: make test\n    - command: { run: slow, timeout: 5m }\n",
        )
        .unwrap();
        let spec = load_task(&file).unwrap();
        let found = warnings(&file, &spec);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].at, Some((5, 7)));
        let shown = found[0].to_string();
        assert!(shown.contains("t.yaml:5:7: warning: the command validator `command make test` sets no timeout: it gets the default 1m"), "{shown}");
    }

    #[test]
    fn a_suite_directory_checks_its_folders_only() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::write(root.join(SUITE_FILE), "suites: [golden]\n").unwrap();
        std::fs::create_dir_all(root.join("golden")).unwrap();
        std::fs::create_dir_all(root.join("fixtures/x")).unwrap();
        std::fs::write(root.join("golden/t.yaml"), "description: ok\n").unwrap();
        std::fs::write(root.join("fixtures/x/config.yaml"), "not: a task\n").unwrap();
        let results = check_paths(&[root.to_path_buf()]);
        assert_eq!(results.len(), 1);
        assert_eq!(results[0].0, root.join("golden/t.yaml"));
        assert!(results[0].1.is_ok());

        let via_file = check_paths(&[root.join(SUITE_FILE)]);
        assert_eq!(via_file.len(), 1);
        assert_eq!(via_file[0].0, root.join("golden/t.yaml"));

        std::fs::write(root.join(SUITE_FILE), "suites: [golden, nope]\n").unwrap();
        let results = check_paths(&[root.to_path_buf()]);
        assert_eq!(results.len(), 1);
        assert_eq!(results[0].0, root.join(SUITE_FILE));
        assert!(results[0]
            .1
            .as_ref()
            .unwrap_err()
            .to_string()
            .contains("`nope` does not exist"));
    }
}
