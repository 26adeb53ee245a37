//! Preparing a task's workspace: a fresh directory, optionally seeded from a fixture tree.

use std::fs;
use std::io;
use std::path::Path;

use super::SandboxError;

pub(crate) fn prepare(fixture: Option<&Path>, dest: &Path) -> Result<(), SandboxError> {
    let ws_err = |source: io::Error| SandboxError::Workspace {
        path: dest.to_path_buf(),
        source,
    };
    match fs::symlink_metadata(dest) {
        Ok(meta) if meta.is_dir() => {
            let mut entries = fs::read_dir(dest).map_err(ws_err)?;
            if entries.next().is_some() {
                return Err(ws_err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    "the destination already exists and is not empty; use a fresh directory per attempt",
                )));
            }
        }
        Ok(_) => {
            return Err(ws_err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "the destination exists and is not a directory; use a fresh path per attempt",
            )))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => fs::create_dir_all(dest).map_err(ws_err)?,
        Err(e) => return Err(ws_err(e)),
    }
    let Some(fixture) = fixture else {
        return Ok(());
    };
    let meta = fs::metadata(fixture).map_err(|e| SandboxError::Workspace {
        path: fixture.to_path_buf(),
        source: io::Error::new(e.kind(), format!("cannot read the fixture directory: {e}")),
    })?;
    if !meta.is_dir() {
        return Err(SandboxError::Workspace {
            path: fixture.to_path_buf(),
            source: io::Error::new(io::ErrorKind::InvalidInput, "the fixture is not a directory"),
        });
    }
    copy_tree(fixture, dest)?;
    // The root keeps the fixture's permission bits too (set last, in case they are read-only).
    fs::set_permissions(dest, meta.permissions()).map_err(ws_err)
}

/// Copies the contents of `from` into the existing directory `to`.
fn copy_tree(from: &Path, to: &Path) -> Result<(), SandboxError> {
    let entries = fs::read_dir(from).map_err(|source| SandboxError::Workspace {
        path: from.to_path_buf(),
        source,
    })?;
    let mut entries: Vec<_> = entries
        .collect::<Result<_, _>>()
        .map_err(|source| SandboxError::Workspace {
            path: from.to_path_buf(),
            source,
        })?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let src = entry.path();
        let dst = to.join(entry.file_name());
        let err = |source: io::Error| SandboxError::Workspace {
            path: src.clone(),
            source,
        };
        let meta = fs::symlink_metadata(&src).map_err(err)?;
        let ft = meta.file_type();
        if ft.is_symlink() {
            let target = fs::read_link(&src).map_err(err)?;
            std::os::unix::fs::symlink(&target, &dst).map_err(err)?;
        } else if ft.is_dir() {
            fs::create_dir(&dst).map_err(err)?;
            copy_tree(&src, &dst)?;
            fs::set_permissions(&dst, meta.permissions()).map_err(err)?;
        } else if ft.is_file() {
            // fs::copy keeps the permission bits.
            fs::copy(&src, &dst).map_err(err)?;
        } else {
            return Err(err(io::Error::new(
                io::ErrorKind::Unsupported,
                "fixtures may hold only files, directories and symlinks (found a device, socket or fifo)",
            )));
        }
    }
    Ok(())
}
