//! File validators: `file_exists` (the path exists and is readable) and `file_contains` (a regex
//! matches the file's content, in multi-line mode: `^`/`$` match at line boundaries, as in grep).
//!
//! Paths are relative to the workspace (an absolute path inside it is accepted and made
//! relative). A task with fixed paths ([`FixedPlaces`]) may name them as its commands see them:
//! `/app/out.txt` with `environment.root: /app` is the workspace's `out.txt`, and
//! `/logs/verifier/x` with `outputs: [/logs/verifier]` the attempt's output folder's `x` (a
//! mount's path its folder's); `..` is kept for the confinement to refuse. The workspace is the
//! agent's, so the harness reads it through
//! [`Beneath`](crate::sandbox::Beneath): `..` above the root is refused, no symlink is followed
//! (a link is reported as a link, whatever it points at), FIFOs and devices are never opened,
//! and at most [`MAX_READ`] bytes are read.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use super::{compile_pattern, first_chars, Observation};
use crate::sandbox::{Beneath, BeneathError, EntryKind, FixedPath, SandboxConfig};

/// How many bytes of a file `file_contains` reads at most.
pub const MAX_READ: u64 = 16 * 1024 * 1024;

/// The first [`MAX_READ`] bytes of regular file `rel` beneath `ws`, and whether it holds more:
/// what every check of a file's content reads (`file_contains`, `expect.files`), so a file an
/// agent made huge costs medin neither its size nor the time to read it.
pub(crate) fn read_head(ws: &Beneath, rel: &str) -> Result<(Vec<u8>, bool), BeneathError> {
    ws.read_head(rel, MAX_READ)
}

/// The fixed paths a task's checks may name (`environment.root`, `mounts`, `outputs`), and the
/// host folders they stand for: what [`FixedPlaces::resolve`] turns a check's path into.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FixedPlaces {
    /// Where commands see the workspace (`/app`).
    root: Option<FixedPath>,
    /// Each mount and output folder: where commands see it, and its host folder.
    folders: Vec<(FixedPath, PathBuf)>,
}

/// Where a check's path leads: the host folder to read beneath, the path below it, and whether
/// that folder is the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved<'a> {
    pub folder: PathBuf,
    pub rel: Cow<'a, str>,
    pub in_workspace: bool,
}

impl FixedPlaces {
    /// The fixed paths of a sandbox configuration (its root and its mounts).
    pub fn of(cfg: &SandboxConfig) -> Self {
        FixedPlaces {
            root: cfg.root.clone(),
            folders: cfg.mounts.iter().map(|m| (m.at.clone(), m.source.clone())).collect(),
        }
    }

    /// Where `path`, as a check names it, leads: a relative path is the workspace's; an
    /// absolute one below the fixed root is the workspace's too, below a mount or output its
    /// folder's, inside the workspace's host path the workspace's (`..` kept, for the
    /// confinement to refuse). Any other absolute path is refused with why.
    pub fn resolve<'a>(&self, workspace: &Path, path: &'a str) -> Result<Resolved<'a>, String> {
        if path.trim().is_empty() {
            return Err("path is empty; name a file relative to the workspace".into());
        }
        let in_workspace = |rel: Cow<'a, str>| Resolved {
            folder: workspace.to_path_buf(),
            rel,
            in_workspace: true,
        };
        let p = Path::new(path);
        if !p.is_absolute() {
            return Ok(in_workspace(path.into()));
        }
        if let Some(rel) = self.root.as_ref().and_then(|r| r.relative(path)) {
            return Ok(in_workspace(rel.into()));
        }
        if let Some((rel, folder)) = self
            .folders
            .iter()
            .find_map(|(at, folder)| Some((at.relative(path)?, folder)))
        {
            return Ok(Resolved {
                folder: folder.clone(),
                rel: rel.into(),
                in_workspace: false,
            });
        }
        match p.strip_prefix(workspace) {
            Ok(rel) if rel.as_os_str().is_empty() => Ok(in_workspace(".".into())),
            Ok(rel) => Ok(in_workspace(rel.to_string_lossy().into_owned().into())),
            Err(_) => Err(format!(
                "path `{path}` leaves the workspace; validator paths must stay inside it (write it relative to the workspace, without `..` above the root, or below one of the task's fixed paths)"
            )),
        }
    }
}

fn refused(path: &str, why: String) -> Observation {
    Observation::failed(
        format!("refused to look at `{path}`"),
        100,
        why,
        format!("{path} inside the workspace"),
        "a path outside the workspace, or through a link",
    )
}

/// The folder `path` leads to, opened, and `path` made relative to it.
fn open<'a>(places: &FixedPlaces, workspace: &Path, path: &'a str) -> Result<(Beneath, Cow<'a, str>), Observation> {
    let Resolved { folder, rel, .. } = places.resolve(workspace, path).map_err(|why| refused(path, why))?;
    let ws = Beneath::open(&folder).map_err(|e| {
        Observation::failed(
            format!("cannot open the workspace: {e}"),
            100,
            format!("cannot open the workspace: {e}"),
            format!("{path} exists"),
            e.to_string(),
        )
    })?;
    Ok((ws, rel))
}

/// `file_exists`: the path exists and can be read (a regular file opened, a directory listed).
/// A symlink, FIFO or device is not readable to the harness, so it fails with what it is.
pub(crate) fn file_exists(places: &FixedPlaces, workspace: &Path, path: &str) -> Observation {
    let (ws, rel) = match open(places, workspace, path) {
        Ok(x) => x,
        Err(o) => return o,
    };
    let unreadable = |why: String| {
        Observation::failed(
            format!("{path} exists but cannot be read: {why}"),
            100,
            format!("{path} is not readable: {why}"),
            format!("{path} exists and is readable"),
            format!("exists, unreadable ({why})"),
        )
    };
    match ws.entry(&rel) {
        Ok(None) => Observation::failed(
            format!("{path} does not exist"),
            100,
            format!("{path} not found in the workspace"),
            format!("{path} exists"),
            "not found",
        ),
        Err(e @ (BeneathError::Outside(_) | BeneathError::Symlink(_))) => refused(path, e.to_string()),
        Err(e) => Observation::failed(
            format!("cannot stat {path}: {e}"),
            100,
            format!("cannot read {path}: {e}"),
            format!("{path} exists and is readable"),
            e.to_string(),
        ),
        Ok(Some(m)) => match m.kind {
            EntryKind::Dir => match ws.walk(
                crate::sandbox::WalkLimits {
                    max_entries: 1,
                    max_depth: 0,
                },
                |_, _| false,
            ) {
                Ok(_) => Observation::passed(format!("{path} exists (directory)"), 100),
                Err(e) => unreadable(e.to_string()),
            },
            EntryKind::File => match ws.read(&rel, 0) {
                // Opened (the bound of 0 bytes only cuts the read short).
                Ok(_) | Err(BeneathError::TooLarge { .. }) => {
                    Observation::passed(format!("{path} exists (file, {} bytes)", m.size), 100)
                }
                Err(e) => unreadable(e.to_string()),
            },
            EntryKind::Symlink | EntryKind::Special => unreadable(format!(
                "it is a {}, which the harness does not follow or open",
                m.kind.describe()
            )),
        },
    }
}

/// `file_contains`: `pattern` (a regex) matches the file's content (its first [`MAX_READ`]
/// bytes).
pub(crate) fn file_contains(places: &FixedPlaces, workspace: &Path, path: &str, pattern: &str) -> Observation {
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
    let (ws, rel) = match open(places, workspace, path) {
        Ok(x) => x,
        Err(o) => return o,
    };
    let bytes = match read_head(&ws, &rel).map(|(b, _)| b) {
        Err(e @ (BeneathError::Outside(_) | BeneathError::Symlink(_))) => return refused(path, e.to_string()),
        Err(e) => {
            let actual = if e.is_not_found() {
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
        Ok(b) => b,
    };
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

    use crate::validate::ValidationStatus;

    fn ok(o: &Observation) -> bool {
        o.status == ValidationStatus::Passed
    }

    #[test]
    fn escapes_and_links_are_refused_and_special_files_never_opened() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("secret"), "TOP-SECRET-42").unwrap();
        let ws = t.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        std::fs::write(ws.join("a.txt"), "hello").unwrap();
        std::os::unix::fs::symlink(t.path().join("secret"), ws.join("link")).unwrap();
        std::os::unix::fs::symlink("a.txt", ws.join("inner")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", ws.join("zero")).unwrap();
        let none = FixedPlaces::default();
        assert!(ok(&file_exists(&none, &ws, "a.txt")));
        assert!(ok(&file_exists(&none, &ws, &ws.join("a.txt").display().to_string())));
        assert!(ok(&file_contains(&none, &ws, "./x/../a.txt", "hel+o")));
        for p in ["../secret", "/etc/passwd", "link", "inner", "zero", " "] {
            assert!(!ok(&file_exists(&none, &ws, p)), "{p}");
            let o = file_contains(&none, &ws, p, ".");
            assert!(!ok(&o), "{p}");
            assert!(!format!("{o:?}").contains("s3cret\""), "{p}: {o:?}");
        }
    }

    #[test]
    fn fixed_paths_lead_to_the_workspace_and_to_their_folders_and_nowhere_else() {
        let t = tempfile::tempdir().unwrap();
        let ws = t.path().join("ws");
        let out = t.path().join("outputs/logs/verifier");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(ws.join("out.txt"), "hello\n").unwrap();
        std::fs::write(out.join("reward.txt"), "1\n").unwrap();
        std::fs::write(t.path().join("secret"), "TOP-SECRET-42").unwrap();
        let fixed = |p: &str| FixedPath::parse(p).unwrap();
        let places = FixedPlaces {
            root: Some(fixed("/app")),
            folders: vec![(fixed("/logs/verifier"), out.clone())],
        };
        assert!(ok(&file_exists(&places, &ws, "/app/out.txt")));
        assert!(ok(&file_exists(&places, &ws, "/app")));
        assert!(ok(&file_contains(&places, &ws, "/app/out.txt", "^hello$")));
        assert!(ok(&file_exists(&places, &ws, "/logs/verifier/reward.txt")));
        assert!(ok(&file_contains(&places, &ws, "/logs/verifier/reward.txt", "^1$")));
        assert!(!ok(&file_exists(&places, &ws, "/logs/verifier/missing.txt")));
        let resolved = places.resolve(&ws, "/logs/verifier/reward.txt").unwrap();
        assert_eq!((resolved.folder, resolved.in_workspace), (out.clone(), false));
        for p in [
            "/app/../secret",
            "/app/../../etc/passwd",
            "/logs/verifier/../../secret",
            "/apple/out.txt",
            "/etc/passwd",
        ] {
            let o = file_contains(&places, &ws, p, ".");
            assert!(!ok(&o), "{p}");
            assert!(!format!("{o:?}").contains("TOP-SECRET"), "{p}: {o:?}");
        }
    }
}
