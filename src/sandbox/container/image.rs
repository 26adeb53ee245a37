//! The image an attempt's container runs: named (`environment.image`: used when the engine has
//! it, pulled by the harness when not) or built from a Dockerfile (`environment.dockerfile`: the
//! harness builds it before the agent starts, tagged by the content of its build context, so a
//! context seen before is not built again).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::engine::{tail, Engine, CALL_TIMEOUT};
use super::ContainerError;

/// How long a pull may take.
const PULL_TIMEOUT: Duration = Duration::from_secs(600);
/// How long a build may take.
const BUILD_TIMEOUT: Duration = Duration::from_secs(1800);
/// The largest build context hashed (and so built), in bytes.
const MAX_CONTEXT_BYTES: u64 = 2 * 1024 * 1024 * 1024;
/// The repository built images are tagged in; the tag is the context's content hash.
pub const BUILD_REPOSITORY: &str = "localhost/medin-build";

/// Where an image comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageSource {
    /// By name.
    Named(String),
    /// Built from this Dockerfile; its folder is the build context.
    Dockerfile {
        file: PathBuf,
        /// Whether the build's `RUN` steps get the network (the runner gives it: building is
        /// the harness's act; `false` builds hermetically).
        network: bool,
    },
}

/// How the image was made ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readied {
    /// The engine had it.
    Present,
    /// Pulled now.
    Pulled,
    /// Built now.
    Built,
}

impl Readied {
    pub fn as_str(self) -> &'static str {
        match self {
            Readied::Present => "present",
            Readied::Pulled => "pulled",
            Readied::Built => "built",
        }
    }
}

/// An image the engine has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadyImage {
    /// The name to run.
    pub name: String,
    pub readied: Readied,
    /// What making it ready took.
    pub took: Duration,
}

/// Whether `name` is an image reference (`[host[:port]/]path[:tag][@sha256:<hex>]`): what the
/// spec loader accepts, and so never something an engine would read as an option.
pub fn image_name_is_valid(name: &str) -> bool {
    static PATTERN: OnceLock<regex::Regex> = OnceLock::new();
    let re = PATTERN.get_or_init(|| {
        let label = "[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?";
        let component = "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";
        regex::Regex::new(&format!(
            r"^(?:{label}(?:\.{label})*(?::[0-9]+)?/)?{component}(?:/{component})*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{{0,127}})?(?:@sha256:[a-f0-9]{{64}})?$"
        ))
        .expect("a valid pattern")
    });
    name.len() <= 255 && re.is_match(name)
}

/// Makes `source` an image `engine` has: a named one is looked up and pulled when missing; a
/// Dockerfile is built unless an image of the same context exists. The harness's act, before the
/// agent starts.
pub fn ready(engine: &Engine, source: &ImageSource) -> Result<ReadyImage, ContainerError> {
    let started = Instant::now();
    match source {
        ImageSource::Named(name) => {
            if !image_name_is_valid(name) {
                return Err(ContainerError::ImageMissing {
                    image: name.clone(),
                    detail: "not an image name".into(),
                });
            }
            if exists(engine, name) {
                return Ok(ReadyImage {
                    name: name.clone(),
                    readied: Readied::Present,
                    took: started.elapsed(),
                });
            }
            let pulled = engine
                .call(["pull", "--quiet", name.as_str()], PULL_TIMEOUT)
                .map_err(|detail| ContainerError::ImageMissing {
                    image: name.clone(),
                    detail: format!("`{} pull` {detail}", engine.flavour().as_str()),
                })?;
            if !pulled.status.success() {
                return Err(ContainerError::ImageMissing {
                    image: name.clone(),
                    detail: format!(
                        "the engine does not have it and `{} pull {name}` failed: {}",
                        engine.flavour().as_str(),
                        tail(&pulled.stderr, 3)
                    ),
                });
            }
            Ok(ReadyImage {
                name: name.clone(),
                readied: Readied::Pulled,
                took: started.elapsed(),
            })
        }
        ImageSource::Dockerfile { file, network } => build(engine, file, *network, started),
    }
}

/// Whether the engine has image `name`.
fn exists(engine: &Engine, name: &str) -> bool {
    engine
        .call(["image", "inspect", "--format", "{{.Id}}", name], CALL_TIMEOUT)
        .is_ok_and(|o| o.status.success())
}

fn build(engine: &Engine, file: &Path, network: bool, started: Instant) -> Result<ReadyImage, ContainerError> {
    let failed = |detail: String| ContainerError::Build {
        dockerfile: file.to_path_buf(),
        detail,
    };
    let context = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let digest = context_digest(context, file).map_err(|e| failed(format!("cannot read its build context: {e}")))?;
    let tag = format!("{BUILD_REPOSITORY}:{}", &digest[..24]);
    // One build at a time in this process: trials of one task wait for the first build
    // rather than repeating it.
    static BUILDING: Mutex<()> = Mutex::new(());
    let _one = BUILDING.lock().unwrap_or_else(|p| p.into_inner());
    if exists(engine, &tag) {
        return Ok(ReadyImage {
            name: tag,
            readied: Readied::Present,
            took: started.elapsed(),
        });
    }
    let mut args: Vec<std::ffi::OsString> = vec!["build".into(), "--quiet".into()];
    if !network {
        args.extend(["--network".into(), "none".into()]);
    }
    args.extend([
        "--label".into(),
        format!("{}=1", super::engine::LABEL).into(),
        "-f".into(),
        file.as_os_str().to_owned(),
        "-t".into(),
        tag.clone().into(),
        context.as_os_str().to_owned(),
    ]);
    let out = engine
        .call(args, BUILD_TIMEOUT)
        .map_err(|e| failed(format!("`{} build` {e}", engine.flavour().as_str())))?;
    if !out.status.success() {
        let hint = if network {
            ""
        } else {
            " (the build had no network; a step that downloads needs it, or an image built beforehand named with `image:`)"
        };
        return Err(failed(format!(
            "`{} build` failed{hint}: {}",
            engine.flavour().as_str(),
            tail(&[out.stdout, out.stderr].concat(), 6)
        )));
    }
    Ok(ReadyImage {
        name: tag,
        readied: Readied::Built,
        took: started.elapsed(),
    })
}

/// SHA-256 over the build context (every entry's path, kind, mode and content, links as their
/// target text, in name order) and the Dockerfile's name: equal contexts build equal images.
fn context_digest(context: &Path, dockerfile: &Path) -> std::io::Result<String> {
    use std::os::unix::fs::PermissionsExt;
    let mut hasher = Sha256::new();
    hasher.update(b"medin-build-context-1\0");
    hasher.update(dockerfile.file_name().map(|n| n.as_encoded_bytes()).unwrap_or_default());
    let mut total = 0u64;
    for entry in walkdir::WalkDir::new(context).follow_links(false).sort_by_file_name() {
        let entry = entry.map_err(std::io::Error::other)?;
        let rel = entry.path().strip_prefix(context).unwrap_or(entry.path());
        let meta = entry.path().symlink_metadata()?;
        hasher.update([0]);
        hasher.update(rel.as_os_str().as_encoded_bytes());
        hasher.update([0]);
        hasher.update(meta.permissions().mode().to_le_bytes());
        if meta.is_symlink() {
            hasher.update(b"L");
            hasher.update(std::fs::read_link(entry.path())?.as_os_str().as_encoded_bytes());
        } else if meta.is_file() {
            total = total.saturating_add(meta.len());
            if total > MAX_CONTEXT_BYTES {
                return Err(std::io::Error::other(format!(
                    "the build context {} holds more than {MAX_CONTEXT_BYTES} bytes",
                    context.display()
                )));
            }
            hasher.update(b"F");
            hasher.update(meta.len().to_le_bytes());
            let mut f = std::fs::File::open(entry.path())?;
            std::io::copy(&mut f, &mut hasher)?;
        } else {
            hasher.update(b"D");
        }
    }
    Ok(hex::encode(hasher.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_names_are_references_and_never_options() {
        for good in [
            "debian",
            "debian:bookworm-slim",
            "localhost/medin-busybox:1",
            "registry.example:5000/team/tool:v1.2",
            "python:3.12-slim@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "ghcr.io/laude-institute/t-bench/python-3-13:20250620",
        ] {
            assert!(image_name_is_valid(good), "{good}");
        }
        for bad in [
            "",
            "--privileged",
            "-v",
            "Debian",
            "debian:",
            "a b",
            "debian;rm",
            "../x",
            "x//y",
            "debian@sha256:short",
        ] {
            assert!(!image_name_is_valid(bad), "{bad}");
        }
    }

    #[test]
    fn the_context_digest_follows_content_modes_and_names() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = dir.path();
        std::fs::write(ctx.join("Dockerfile"), "FROM x\n").unwrap();
        std::fs::write(ctx.join("a.txt"), "a").unwrap();
        let file = ctx.join("Dockerfile");
        let first = context_digest(ctx, &file).unwrap();
        assert_eq!(first, context_digest(ctx, &file).unwrap());
        std::fs::write(ctx.join("a.txt"), "b").unwrap();
        let changed = context_digest(ctx, &file).unwrap();
        assert_ne!(first, changed);
        std::fs::rename(ctx.join("a.txt"), ctx.join("b.txt")).unwrap();
        assert_ne!(changed, context_digest(ctx, &file).unwrap());
        let renamed = context_digest(ctx, &file).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(ctx.join("b.txt"), std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_ne!(renamed, context_digest(ctx, &file).unwrap());
    }
}
