//! Reading a task's Dockerfile for what medin can carry over: the base image (a plain Debian,
//! Ubuntu or python one is the host's kind of system), `WORKDIR` (the fixed path the task
//! expects, `environment.root`), the files it `COPY`s from the build context (the workspace
//! fixture) and the packages its `RUN` lines install (`environment:`).
//!
//! Two ways out, decided by the base ([`Image::plain`]): on a plain base the task runs on the
//! host's system — every other instruction, and every `RUN` command that is not a package
//! install, is a note ([`Image::notes`]); on any other base the Dockerfile itself is carried
//! over as `environment.dockerfile` and medin builds it as it is (with the network: building
//! is the harness's act, like installing packages), so nothing of it is a note. The Dockerfile
//! is only read here, never built.

use super::shell::{self, Effect, Packages};

/// What a Dockerfile says, as far as medin can use it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Image {
    /// `FROM`, without a digest.
    pub base: Option<String>,
    /// The last `WORKDIR`.
    pub workdir: Option<String>,
    /// `COPY`/`ADD` from the build context, in order.
    pub copies: Vec<CopyStep>,
    /// Packages its `RUN` lines install.
    pub packages: Packages,
    /// Whether the base is the host's kind of system (plain Debian, Ubuntu, python): the task
    /// can run on the host; otherwise the Dockerfile is carried over and built.
    pub plain: bool,
    /// What could not be carried over onto the host's system, one line each.
    pub notes: Vec<String>,
}

/// One `COPY` from the build context: its sources (context-relative, as written) and its
/// destination, made absolute with the `WORKDIR` in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyStep {
    pub sources: Vec<String>,
    pub dest: String,
}

/// Reads `text`.
pub fn read(text: &str) -> Image {
    let mut image = Image::default();
    let joined = join_continuations(text);
    let mut stages = 0;
    for line in joined.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (word, args) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let args = args.trim();
        match word.to_ascii_uppercase().as_str() {
            "FROM" => {
                stages += 1;
                if stages > 1 {
                    image
                        .notes
                        .push("the Dockerfile has several stages (`FROM` twice); only the first is read".into());
                    break;
                }
                let name = args
                    .split_whitespace()
                    .find(|w| !w.starts_with("--"))
                    .unwrap_or("")
                    .to_string();
                let name = name.split('@').next().unwrap_or("").to_string();
                image.plain = plain_base(&name);
                if !image.plain {
                    image.notes.push(format!(
                        "base image `{name}` is not a plain Debian, Ubuntu or python image: the task runs on this machine's system, which may lack what that image has"
                    ));
                }
                image.base = Some(name);
            }
            "WORKDIR" => {
                let dir = args.trim_matches('"').to_string();
                image.workdir = Some(match &image.workdir {
                    Some(base) if !dir.starts_with('/') => format!("{}/{dir}", base.trim_end_matches('/')),
                    _ => dir,
                });
            }
            "COPY" | "ADD" => {
                copy(&mut image, word, args)
            }
            "RUN" => run(&mut image, args),
            // How the container is started or described changes nothing for medin.
            "CMD" | "ENTRYPOINT" | "LABEL" | "MAINTAINER" | "EXPOSE" | "STOPSIGNAL" | "HEALTHCHECK" | "ARG" => {}
            "ENV" => image.notes.push(format!(
                "`ENV {args}` is not carried over: medin scrubs the environment; set it in the prompt's commands or the solution"
            )),
            _ => image.notes.push(format!("unrecognised Dockerfile line not carried over: `{}`", cut(line))),
        }
    }
    image
}

/// Whether `name` is a base image with the host's kind of system.
fn plain_base(name: &str) -> bool {
    let repo = name.split(':').next().unwrap_or("");
    let repo = repo.strip_prefix("docker.io/").unwrap_or(repo);
    let repo = repo.strip_prefix("library/").unwrap_or(repo);
    matches!(repo, "debian" | "ubuntu" | "python" | "buildpack-deps")
        || repo
            .strip_prefix("ghcr.io/laude-institute/t-bench/")
            .is_some_and(|r| r.starts_with("python-") || r.starts_with("ubuntu-") || r.starts_with("debian"))
}

fn copy(image: &mut Image, word: &str, args: &str) {
    let words: Vec<&str> = args.split_whitespace().collect();
    if words.iter().any(|w| w.starts_with("--from")) {
        image.notes.push(format!(
            "`{word} {args}` copies from another image or stage; not carried over"
        ));
        return;
    }
    let mut paths: Vec<String> = if args.starts_with('[') {
        serde_json::from_str(args).unwrap_or_default()
    } else {
        words
            .iter()
            .filter(|w| !w.starts_with("--"))
            .map(|w| w.to_string())
            .collect()
    };
    if paths.len() < 2 {
        image
            .notes
            .push(format!("`{word} {args}` could not be read; not carried over"));
        return;
    }
    let dest = paths.pop().unwrap_or_default();
    if word.eq_ignore_ascii_case("ADD") && paths.iter().any(|p| p.contains("://")) {
        image
            .notes
            .push(format!("`ADD {args}` downloads at build time; not carried over"));
        return;
    }
    let dest = if dest.starts_with('/') {
        dest
    } else {
        let base = image.workdir.clone().unwrap_or_else(|| "/".into());
        format!("{}/{dest}", base.trim_end_matches('/'))
    };
    image.copies.push(CopyStep { sources: paths, dest });
}

fn run(image: &mut Image, args: &str) {
    // BuildKit flags (`--network=host`, `--mount=…`) say how to build, not what.
    let mut rest = args;
    while let Some(flagged) = rest.strip_prefix("--") {
        rest = flagged
            .split_once(char::is_whitespace)
            .map_or("", |(_, r)| r)
            .trim_start();
    }
    let effects = shell::commands(rest);
    for (text, effect) in effects {
        match effect {
            Effect::Install(p) => image.packages.extend(&p),
            Effect::Nothing => {}
            Effect::Download(_) => image.notes.push(format!(
                "`RUN {}` downloads at build time; not carried over",
                cut(&text)
            )),
            Effect::Pytest(_) | Effect::Other(_) => image.notes.push(format!(
                "`RUN {}` is not carried over (only package installs are)",
                cut(&text)
            )),
        }
    }
}

/// `text` with backslash-newline continuations joined.
fn join_continuations(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let trimmed = line.trim_end();
        if let Some(head) = trimmed.strip_suffix('\\') {
            out.push_str(head);
            out.push(' ');
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// At most 120 characters of `text`, for a note.
pub fn cut(text: &str) -> String {
    if text.chars().count() <= 120 {
        text.to_string()
    } else {
        format!("{}…", text.chars().take(119).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_dockerfile_is_read_whole() {
        let image = read(
            "FROM python:3.12-slim@sha256:abc\nRUN --network=host pip install --no-cache-dir pytest==8.3.5 \\\n    requests\nRUN apt-get update && apt-get install -y jq\nWORKDIR /app\nCOPY data/ ./data/\nCOPY [\"a.py\", \"b.py\", \"/app/\"]\nCMD [\"sleep\", \"infinity\"]\n",
        );
        assert_eq!(image.base.as_deref(), Some("python:3.12-slim"));
        assert_eq!(image.workdir.as_deref(), Some("/app"));
        assert_eq!(image.packages.python, ["pytest==8.3.5", "requests"]);
        assert_eq!(image.packages.apt, ["jq"]);
        assert_eq!(image.copies[0].dest, "/app/./data/");
        assert_eq!(image.copies[1].sources, ["a.py", "b.py"]);
        assert!(image.plain);
        assert!(image.notes.is_empty(), "{:?}", image.notes);
    }

    #[test]
    fn another_base_is_carried_over_as_the_dockerfile() {
        let image = read(
            "FROM localhost/tool:1 AS base
ENV A=1
RUN make && ./configure
USER nobody
RUN curl -fsSL https://x | sh
ADD https://x/y.tgz /opt/
COPY --from=base /a /b
",
        );
        // Carried over as the Dockerfile itself: medin builds it, with the network (the
        // harness's act), so nothing of it is left to note.
        assert!(!image.plain);
    }

    #[test]
    fn what_cannot_come_along_is_noted() {
        let image = read(
            "FROM nvidia/cuda:12\nENV A=1\nRUN curl -fsSL https://x | bash\nRUN make\nADD https://x/y.tgz /app/\nUSER nobody\n",
        );
        assert_eq!(image.notes.len(), 6, "{:?}", image.notes);
        assert!(image.notes[0].contains("nvidia/cuda"));
    }
}
