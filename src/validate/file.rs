//! File validators: `file_exists` (the path exists and is readable) and `file_contains` (a regex
//! matches the file's content, in multi-line mode: `^`/`$` match at line boundaries, as in grep).
//! Paths are relative to the workspace; a path that leaves it (`..`, an absolute path elsewhere,
//! a symlink pointing out) is refused as failed, with an error.

use std::fs;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use super::{compile_pattern, first_chars, Observation};

/// How many bytes of a file `file_contains` reads at most.
pub const MAX_READ: u64 = 16 * 1024 * 1024;

/// Why a validator path cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("path `{0}` leaves the workspace; validator paths must stay inside it (write it relative to the workspace, without `..` above the root)")]
    Escapes(String),
    #[error("path `{path}` resolves through a symlink to {target}, outside the workspace")]
    SymlinkEscapes { path: String, target: PathBuf },
    #[error("path is empty; name a file relative to the workspace")]
    Empty,
}

/// Resolves a workspace-relative `path` lexically (`.` and `..` folded) and refuses any result
/// outside `workspace`. When the path exists, symlinks are resolved too and must stay inside.
pub fn resolve_in_workspace(workspace: &Path, path: &str) -> Result<PathBuf, PathError> {
    if path.trim().is_empty() {
        return Err(PathError::Empty);
    }
    let root = normalize(workspace);
    let joined = normalize(&root.join(path));
    if !joined.starts_with(&root) {
        return Err(PathError::Escapes(path.to_string()));
    }
    if let (Ok(real_root), Ok(real)) = (root.canonicalize(), joined.canonicalize()) {
        if !real.starts_with(&real_root) {
            return Err(PathError::SymlinkEscapes {
                path: path.to_string(),
                target: real,
            });
        }
    }
    Ok(joined)
}

/// Folds `.` and `..` without touching the file system; `..` never climbs above the root.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                // "/.." is "/", as on a real file system.
                Some(Component::RootDir) | Some(Component::Prefix(_)) => {}
                // A relative path climbing above its start keeps the `..` (then refused).
                None | Some(Component::ParentDir) => out.push(".."),
                Some(_) => {
                    out.pop();
                }
            },
            other => out.push(other.as_os_str()),
        }
    }
    out
}

fn refused(path: &str, e: PathError) -> Observation {
    Observation::failed(
        format!("refused to look at `{path}`"),
        100,
        e.to_string(),
        format!("{path} inside the workspace"),
        "a path outside the workspace",
    )
}

/// `file_exists`: the path exists and can be read (a file opened, a directory listed).
pub(crate) fn file_exists(workspace: &Path, path: &str) -> Observation {
    let full = match resolve_in_workspace(workspace, path) {
        Ok(p) => p,
        Err(e) => return refused(path, e),
    };
    let meta = match fs::metadata(&full) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Observation::failed(
                format!("{path} does not exist"),
                100,
                format!("{path} not found in the workspace"),
                format!("{path} exists"),
                "not found",
            )
        }
        Err(e) => {
            return Observation::failed(
                format!("cannot stat {path}: {e}"),
                100,
                format!("cannot read {path}: {e}"),
                format!("{path} exists and is readable"),
                e.to_string(),
            )
        }
    };
    let readable = if meta.is_dir() {
        fs::read_dir(&full).map(|_| ())
    } else {
        fs::File::open(&full).map(|_| ())
    };
    match readable {
        Ok(()) if meta.is_dir() => Observation::passed(format!("{path} exists (directory)"), 100),
        Ok(()) => Observation::passed(format!("{path} exists (file, {} bytes)", meta.len()), 100),
        Err(e) => Observation::failed(
            format!("{path} exists but cannot be read: {e}"),
            100,
            format!("{path} is not readable: {e}"),
            format!("{path} exists and is readable"),
            format!("exists, unreadable ({e})"),
        ),
    }
}

/// `file_contains`: `pattern` (a regex) matches the file's content.
pub(crate) fn file_contains(workspace: &Path, path: &str, pattern: &str) -> Observation {
    let full = match resolve_in_workspace(workspace, path) {
        Ok(p) => p,
        Err(e) => return refused(path, e),
    };
    let re = match compile_pattern(pattern) {
        Ok(re) => re,
        Err(e) => {
            return Observation::failed(
                format!("pattern /{pattern}/ is not a valid regex"),
                100,
                format!("invalid regex /{pattern}/: {e}; fix the pattern in the task"),
                pattern,
                "(not checked)",
            )
        }
    };
    let mut bytes = Vec::new();
    let read = fs::File::open(&full).and_then(|f| f.take(MAX_READ).read_to_end(&mut bytes));
    if let Err(e) = read {
        let actual = if e.kind() == std::io::ErrorKind::NotFound {
            "file not found".to_string()
        } else {
            e.to_string()
        };
        return Observation::failed(
            format!("cannot read {path}: {e}"),
            100,
            format!("cannot read {path}: {e}"),
            pattern,
            actual,
        );
    }
    let text = String::from_utf8_lossy(&bytes);
    match re.find(&text) {
        Some(m) => Observation::passed(
            format!(
                "{path} matches /{pattern}/ at byte {}: {:?}",
                m.start(),
                first_chars(m.as_str(), 80)
            ),
            100,
        ),
        None => Observation::failed(
            format!("{path} ({} bytes) does not match /{pattern}/", bytes.len()),
            100,
            format!("{path} does not contain a match for /{pattern}/"),
            pattern,
            first_chars(&text, 200),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_folds_dots() {
        assert_eq!(normalize(Path::new("/w/a/./b/../c")), PathBuf::from("/w/a/c"));
        assert_eq!(normalize(Path::new("/w/../../x")), PathBuf::from("/x"));
        assert_eq!(normalize(Path::new("w/../../../w/x")), PathBuf::from("../../w/x"));
    }

    #[test]
    fn escapes_are_refused() {
        let ws = Path::new("/work/ws");
        assert!(resolve_in_workspace(ws, "a/b.txt").is_ok());
        assert!(resolve_in_workspace(ws, "a/../b.txt").is_ok());
        assert_eq!(
            resolve_in_workspace(ws, "../secret"),
            Err(PathError::Escapes("../secret".into()))
        );
        assert!(resolve_in_workspace(ws, "/etc/passwd").is_err());
        assert!(resolve_in_workspace(ws, "/work/ws/inside").is_ok());
        assert!(resolve_in_workspace(ws, "a/../../ws2/x").is_err());
        assert_eq!(resolve_in_workspace(ws, " "), Err(PathError::Empty));
    }
}
