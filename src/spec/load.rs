//! Loading one task file: YAML → [`TaskSpec`], with errors that carry `file:line:col`, say what
//! is wrong and how to fix it (unknown keys suggest the nearest valid key).

use std::path::{Path, PathBuf};

use super::model::TaskSpec;

/// Why a spec could not be loaded. Every variant names the file; parse and semantic errors name
/// the line and column too.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    #[error("{path}: cannot read: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// `file:line:col: message` followed by an optional `help: ...` line.
    #[error("{}", format_located(path, *line, *column, message, help.as_deref()))]
    Invalid {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
        help: Option<String>,
    },
}

fn format_located(path: &Path, line: usize, column: usize, message: &str, help: Option<&str>) -> String {
    match help {
        Some(h) => format!("{}:{}:{}: {}\n  help: {}", path.display(), line, column, message, h),
        None => format!("{}:{}:{}: {}", path.display(), line, column, message),
    }
}

/// Reads and parses the task file at `path`.
pub fn load_task(path: &Path) -> Result<TaskSpec, SpecError> {
    let text = std::fs::read_to_string(path).map_err(|source| SpecError::Io { path: path.to_path_buf(), source })?;
    parse_task(&text, path)
}

/// Parses task YAML `text`; `path` is used in error messages only.
pub fn parse_task(text: &str, path: &Path) -> Result<TaskSpec, SpecError> {
    let _ = (text, path);
    todo!("spec helper")
}

/// The candidate closest to `word` (Jaro-Winkler ≥ 0.8 or edit distance ≤ 2), if any.
pub fn nearest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (*c, strsim::jaro_winkler(word, c), strsim::levenshtein(word, c)))
        .filter(|(_, jw, lev)| *jw >= 0.8 || *lev <= 2)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(c, _, _)| c)
}
