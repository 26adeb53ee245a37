//! Containers: `docker run -v SRC:DST IMAGE CMD..` (also `exec`, `create`, podman) where SRC is
//! the root, a home or a system directory. The container's command acts on the host's files
//! through the mount, so it is carried with DST rewritten to SRC: `docker run -v ~:/d img rm
//! -rf /d` is `rm -rf ~`. What a container does to its own files stays in it and is not
//! carried.

use super::Carried;
use crate::guard::shell::shell_quote;

/// The container's command, as what it does to the host (see the module doc); None when no
/// host directory of that kind is mounted.
pub(super) fn mounted_command(argv: &[String]) -> Option<Carried> {
    docker_mounted_command(argv).map(Carried::child)
}

/// `docker run -v SRC:DST IMAGE cmd..` where SRC is the root, a home or a system directory:
/// the container's command with DST rewritten to SRC, i.e. what it does to the host. None
/// when no such directory is mounted (what a container does to its own files stays there).
fn docker_mounted_command(argv: &[String]) -> Option<String> {
    let run = argv.iter().position(|a| a == "run" || a == "exec" || a == "create")?;
    let with_value = [
        "-v",
        "--volume",
        "--mount",
        "-w",
        "--workdir",
        "-e",
        "--env",
        "--env-file",
        "--name",
        "-p",
        "--publish",
        "--network",
        "--net",
        "--entrypoint",
        "-u",
        "--user",
        "-l",
        "--label",
        "--platform",
        "-h",
        "--hostname",
        "--cpus",
        "-m",
        "--memory",
        "--add-host",
        "--device",
        "--cap-add",
        "--cap-drop",
        "--security-opt",
        "--ulimit",
        "--restart",
        "--pull",
        "--gpus",
        "--shm-size",
        "--ipc",
        "--pid",
        "--tmpfs",
        "--log-driver",
    ];
    let mut mounts: Vec<(String, String)> = Vec::new();
    let mut i = run + 1;
    while let Some(a) = argv.get(i).filter(|a| a.starts_with('-') && a.len() > 1) {
        let (opt, value) = match a.split_once('=') {
            Some((o, v)) if a.starts_with("--") => (o.to_string(), Some(v.to_string())),
            _ => (a.clone(), None),
        };
        let value = if with_value.contains(&opt.as_str()) && value.is_none() {
            i += 1;
            argv.get(i).cloned()
        } else {
            value
        };
        if let Some(v) = value.filter(|_| opt == "-v" || opt == "--volume") {
            let mut parts = v.splitn(3, ':');
            if let (Some(src), Some(dst)) = (parts.next(), parts.next()) {
                mounts.push((src.to_string(), dst.to_string()));
            }
        }
        i += 1;
    }
    let host = |src: &str| {
        let src = src.trim_end_matches('/');
        src.is_empty()
            || matches!(
                src,
                "~" | "$HOME" | "${HOME}" | "/home" | "/Users" | "/root" | "/etc" | "/usr" | "/var"
            )
            || src.starts_with("~/")
            || src.starts_with("$HOME/")
            || src.starts_with("/home/")
            || src.starts_with("/Users/")
    };
    let mounts: Vec<(String, String)> = mounts.into_iter().filter(|(s, _)| host(s)).collect();
    if mounts.is_empty() {
        return None;
    }
    // argv[i] is the image; the rest is the container's command.
    let rest = argv.get(i + 1..).filter(|r| !r.is_empty())?;
    let script = rest.iter().map(|w| shell_quote(w)).collect::<Vec<_>>().join(" ");
    let mut out = script;
    for (src, dst) in &mounts {
        let dst = dst.trim_end_matches('/');
        if dst.is_empty() {
            continue;
        }
        let src = src.trim_end_matches('/');
        let with_slash = format!("{src}/");
        out = out
            .replace(&format!("{dst}/"), &with_slash)
            .replace(dst, if src.is_empty() { "/" } else { src });
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::super::testing::{script, scripts};
    use super::super::Runs;

    #[test]
    fn a_mounted_host_directory_is_rewritten_to_the_host_path() {
        assert_eq!(
            script(
                &["docker", "run", "--rm", "-v", "~:/d", "alpine", "rm", "-rf", "/d"],
                Runs::Child
            ),
            "'rm' '-rf' '~'"
        );
        assert_eq!(
            script(
                &["podman", "run", "--volume=/etc:/x", "img", "sh", "-c", "rm /x/passwd"],
                Runs::Child
            ),
            "'sh' '-c' 'rm /etc/passwd'"
        );
        assert_eq!(
            script(
                &["docker", "run", "-v", "/:/host", "img", "rm", "-rf", "/host"],
                Runs::Child
            ),
            "'rm' '-rf' '/'"
        );
    }

    #[test]
    fn a_container_without_host_mounts_carries_nothing() {
        assert!(scripts(&["docker", "run", "img", "rm", "-rf", "/"]).is_empty());
        assert!(scripts(&["docker", "run", "-v", "./data:/d", "img", "rm", "-rf", "/d"]).is_empty());
        assert!(scripts(&["docker", "ps", "-v", "~:/d"]).is_empty());
    }
}
