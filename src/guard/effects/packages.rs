//! Package managers, described once: which words of each install, remove, purge its caches or
//! configure where packages come from, and which options make an operation global. The rules
//! then judge what happens to the machine, whichever manager does it:
//!
//! - **the system's own programs removed** (blocked): a system package manager (apt, dnf, yum,
//!   pacman, zypper, apk, rpm, dpkg, conda's base environment) removing the interpreter or an
//!   essential package everything else runs on (python3, perl, bash, coreutils, the C library,
//!   systemd, sudo, the package manager itself), or forcing a removal past the packages that
//!   depend on it (`pacman -Rdd`, `rpm -e --nodeps`, `dpkg --force-depends`);
//! - **packages removed outside the workspace** (warned): system packages, global tools
//!   (`npm uninstall -g`, `pipx uninstall-all`, `dotnet tool uninstall -g`, `rustup self
//!   uninstall`), whole environments (`conda remove -n env --all`, `poetry env remove --all`);
//! - **caches and stores purged** (warned): `npm cache clean --force`, `pnpm store prune`, `go
//!   clean -modcache`, `conda clean --all`, `pacman -Scc`, `nix-collect-garbage -d`, ... —
//!   getting them back needs the network, which a sandbox may not have;
//! - **a package file installed as root** (warned): `sudo dpkg -i x.deb`, `sudo rpm -ivh x.rpm`,
//!   `sudo apt install ./x.deb`, `sudo dnf install URL`, `snap install --dangerous`: no
//!   repository vouches for it, and its install scripts run as root;
//! - **installed globally** (warned): `-g`/`--global` of the npm family, `yarn global add`,
//!   `composer global require`, `sudo pip install`, `--break-system-packages`;
//! - **sources made insecure** (warned): a package index, registry, mirror or proxy over plain
//!   http off this machine, TLS, signature or checksum verification turned off, or an extra
//!   index beside the real one (dependency confusion).
//!
//! Installing into the workspace, removing one of its dependencies, and reading configuration
//! pass. A new manager is a [`Manager`] entry.

use crate::guard::rules::{block, warn};
use crate::guard::verdict::{Category, Risk, Violation};
use crate::guard::SimpleCommand;

pub const SYSTEM_REMOVED: &str = "deletion.system_package";
pub const REMOVED: &str = "deletion.packages";
pub const CACHE_PURGED: &str = super::judge::DEPENDENCY_DIR;
pub const GLOBAL_INSTALL: &str = crate::guard::rules::privilege::GLOBAL_INSTALL;
pub const LOCAL_PACKAGE: &str = crate::guard::rules::privilege::LOCAL_PACKAGE;
pub const INSECURE_SOURCE: &str = "remote_execution.insecure_source";

/// The safer alternative for the rules this module owns.
pub fn alternative(rule: &str) -> Option<&'static str> {
    Some(match rule {
        SYSTEM_REMOVED => "leave the system's packages alone; use a virtual environment or a version manager",
        REMOVED => "remove only the workspace's own dependency (npm uninstall x, without -g)",
        INSECURE_SOURCE => "install from the default registry over https, with verification on",
        _ => return None,
    })
}

/// How a package manager spells its operations.
struct Manager {
    names: &'static [&'static str],
    /// Whether it manages the system's packages (every removal is a system change).
    system: bool,
    /// Subcommand words (or, for pacman/rpm/dpkg, option prefixes) that remove packages.
    remove: &'static [&'static str],
    /// Subcommand words that install.
    install: &'static [&'static str],
    /// Options that make an install or removal global.
    global: &'static [&'static str],
    /// Subcommand word sequences that purge a cache or store.
    purge: &'static [&'static [&'static str]],
    /// Options that remove past dependencies.
    force: &'static [&'static str],
    /// Whether a global install is warned: the npm family's runs install scripts with the
    /// user's rights everywhere; `sudo pip` and `--break-system-packages` change the system's
    /// Python. A user-level tool install (`cargo install`, `pipx install`, `dotnet tool
    /// install -g`) is how those tools are meant to be installed.
    warn_global_install: bool,
}

const NPM_FAMILY: Manager = Manager {
    names: &["npm", "pnpm", "yarn", "bun"],
    system: false,
    remove: &["uninstall", "remove", "rm", "un", "r", "unlink"],
    install: &["install", "i", "add", "link", "update", "upgrade"],
    global: &["-g", "--global", "--location=global", "global"],
    purge: &[
        &["cache", "clean"],
        &["store", "prune"],
        &["pm", "cache", "rm"],
        &["cache", "rm"],
    ],
    force: &[],
    warn_global_install: true,
};

static MANAGERS: &[Manager] = &[
    NPM_FAMILY,
    Manager {
        names: &["apt", "apt-get", "aptitude"],
        system: true,
        remove: &["remove", "purge", "autoremove"],
        install: &["install"],
        global: &[],
        purge: &[],
        force: &["--force-yes", "--allow-remove-essential"],
        warn_global_install: false,
    },
    Manager {
        names: &["dnf", "yum", "microdnf", "tdnf"],
        system: true,
        remove: &["remove", "erase", "autoremove"],
        install: &["install", "localinstall", "reinstall"],
        global: &[],
        purge: &[],
        force: &["--nodeps", "--setopt=protected_packages="],
        warn_global_install: false,
    },
    Manager {
        names: &["zypper"],
        system: true,
        remove: &["remove", "rm"],
        install: &["install", "in"],
        global: &[],
        purge: &[],
        force: &["--force-resolution"],
        warn_global_install: false,
    },
    Manager {
        names: &["apk"],
        system: true,
        remove: &["del"],
        install: &["add"],
        global: &[],
        purge: &[],
        force: &["--force-broken-world"],
        warn_global_install: false,
    },
    // Operations are options: `-R`, `-Rns`, `-Rdd`, `-e`, `--erase`, `-r`, `-P`.
    Manager {
        names: &["pacman", "yay", "paru"],
        system: true,
        remove: &["-R", "--remove"],
        install: &["-S", "--sync", "-U"],
        global: &[],
        purge: &[&["-Scc"], &["-Sc"]],
        force: &["-Rdd", "-Rndd", "-Rnsdd", "-Rsdd", "--nodeps"],
        warn_global_install: false,
    },
    Manager {
        names: &["rpm"],
        system: true,
        remove: &["-e", "--erase"],
        install: &["-i", "-U", "--install", "--upgrade"],
        global: &[],
        purge: &[],
        force: &["--nodeps"],
        warn_global_install: false,
    },
    Manager {
        names: &["dpkg"],
        system: true,
        remove: &["-r", "-P", "--remove", "--purge"],
        install: &["-i", "--install"],
        global: &[],
        purge: &[],
        force: &["--force-depends", "--force-remove-essential", "--force-all"],
        warn_global_install: false,
    },
    Manager {
        names: &["snap", "flatpak"],
        system: true,
        remove: &["remove", "uninstall"],
        install: &["install"],
        global: &[],
        purge: &[],
        force: &[],
        warn_global_install: false,
    },
    Manager {
        names: &["brew", "port"],
        system: false,
        remove: &["uninstall", "remove", "rm"],
        install: &["install"],
        global: &["uninstall", "remove", "rm"],
        purge: &[],
        force: &[],
        warn_global_install: false,
    },
    Manager {
        names: &["pip", "pip3", "pip2"],
        system: false,
        remove: &["uninstall"],
        install: &["install"],
        global: &["--break-system-packages", "--system", "--root"],
        purge: &[&["cache", "purge"]],
        force: &[],
        warn_global_install: true,
    },
    Manager {
        names: &["pipx"],
        system: false,
        remove: &["uninstall", "uninstall-all"],
        install: &[],
        global: &["uninstall", "uninstall-all"],
        purge: &[],
        force: &[],
        warn_global_install: false,
    },
    Manager {
        names: &["uv"],
        system: false,
        remove: &["uninstall"],
        install: &["install"],
        global: &["--system", "--break-system-packages"],
        purge: &[&["cache", "clean"], &["cache", "prune"]],
        force: &[],
        warn_global_install: false,
    },
    Manager {
        names: &["poetry"],
        system: false,
        remove: &[],
        install: &[],
        global: &[],
        purge: &[&["cache", "clear", "--all"], &["env", "remove"]],
        force: &[],
        warn_global_install: false,
    },
    Manager {
        names: &["conda", "mamba", "micromamba"],
        system: false,
        remove: &["remove", "uninstall"],
        install: &["install"],
        global: &["--all"],
        purge: &[&["clean"], &["env", "remove"]],
        force: &[],
        warn_global_install: false,
    },
    Manager {
        names: &["cargo"],
        system: false,
        remove: &["uninstall"],
        install: &[],
        global: &["uninstall"],
        purge: &[],
        force: &[],
        warn_global_install: false,
    },
    Manager {
        names: &["rustup"],
        system: false,
        remove: &["uninstall", "remove"],
        install: &[],
        global: &["self", "toolchain"],
        purge: &[],
        force: &[],
        warn_global_install: false,
    },
    Manager {
        names: &["gem"],
        system: false,
        remove: &["uninstall"],
        install: &[],
        global: &["-a", "--all"],
        purge: &[&["cleanup"]],
        force: &[],
        warn_global_install: false,
    },
    Manager {
        names: &["bundle"],
        system: false,
        remove: &[],
        install: &[],
        global: &[],
        purge: &[&["clean"]],
        force: &[],
        warn_global_install: false,
    },
    Manager {
        names: &["composer"],
        system: false,
        remove: &["remove"],
        install: &["require"],
        global: &["global"],
        purge: &[&["clear-cache"], &["clearcache"], &["cc"]],
        force: &[],
        warn_global_install: true,
    },
    Manager {
        names: &["dotnet"],
        system: false,
        remove: &["uninstall"],
        install: &["install"],
        global: &["-g", "--global"],
        purge: &[&["nuget", "locals"]],
        force: &[],
        warn_global_install: false,
    },
    Manager {
        names: &["go"],
        system: false,
        remove: &[],
        install: &[],
        global: &[],
        purge: &[&["clean", "-modcache"], &["clean", "-cache"]],
        force: &[],
        warn_global_install: false,
    },
    Manager {
        names: &["nix-env", "nix"],
        system: false,
        remove: &["-e", "--uninstall", "remove"],
        install: &[],
        global: &["-e", "--uninstall", "profile"],
        purge: &[],
        force: &[],
        warn_global_install: false,
    },
    Manager {
        names: &["nix-collect-garbage"],
        system: false,
        remove: &[],
        install: &[],
        global: &[],
        purge: &[&["-d"], &["--delete-old"]],
        force: &[],
        warn_global_install: false,
    },
];

/// Packages the system cannot do without: its interpreters, shells, C library, init, sudo and
/// the package manager itself.
fn essential(package: &str) -> bool {
    let p = package.to_ascii_lowercase();
    let p = p.split([':', '=']).next().unwrap_or(&p);
    let p = p.split_once('@').map_or(p, |(name, _)| name);
    // `python3.12`, `python311`: the interpreter at a version; `python3-minimal`: its core.
    let versioned = |stem: &str| {
        p.strip_prefix(stem).is_some_and(|rest| {
            let suffix = rest.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
            matches!(suffix, "" | "-minimal" | "-base" | "-stdlib")
        })
    };
    ["python", "perl", "libc6", "glibc", "libc-bin", "coreutils"]
        .iter()
        .any(|s| versioned(s))
        || matches!(
            p,
            "bash"
                | "dash"
                | "sh"
                | "systemd"
                | "systemd-sysv"
                | "init"
                | "sudo"
                | "apt"
                | "dpkg"
                | "rpm"
                | "dnf"
                | "yum"
                | "pacman"
                | "util-linux"
                | "login"
                | "passwd"
                | "base-files"
                | "base-passwd"
                | "grep"
                | "sed"
                | "tar"
                | "findutils"
                | "libpam0g"
                | "pam"
        )
}

/// Whether `name` is a package manager (its words name packages, not programs to run).
pub fn is_manager(name: &str) -> bool {
    manager(name).is_some()
}

/// The manager spec of `name`, if it is one.
fn manager(name: &str) -> Option<&'static Manager> {
    MANAGERS.iter().find(|m| m.names.contains(&name))
}

/// Whether `word` spells `op` (equal, or for option-style operations such as pacman's
/// `-Rns`, the operation letter leading a bundle).
fn spells(word: &str, op: &str) -> bool {
    if word == op {
        return true;
    }
    let short_op = op.len() == 2 && op.starts_with('-');
    short_op
        && word.len() > 2
        && !word.starts_with("--")
        && word.starts_with(op)
        && word[1..].bytes().all(|b| b.is_ascii_alphabetic())
}

/// The package-manager rules for one command.
pub fn check(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    let name = cmd.name();
    insecure_source(cmd, out);
    let Some(m) = manager(name) else { return };
    let args: Vec<&str> = cmd.argv[1..].iter().map(String::as_str).collect();
    let apt = m.names.contains(&"apt-get");
    let option_style = m.remove.first().is_some_and(|r| r.starts_with('-'));
    // Help and dry runs; pacman's `-Rh` (help) and `-Rp` (print what would go). (rpm's `-ivh`
    // prints hash marks while it installs.)
    let pacman = m.names.contains(&"pacman");
    let shows_only = |a: &str| {
        matches!(
            a,
            "--help" | "-h" | "help" | "--dry-run" | "--simulate" | "--print" | "--test"
        ) || (apt && matches!(a, "-s" | "--just-print"))
            || (pacman && a.starts_with('-') && !a.starts_with("--") && (a.contains('h') || a.contains('p')))
    };
    if args.iter().any(|a| shows_only(a)) {
        return;
    }
    let words: Vec<&str> = args.iter().copied().filter(|a| !a.starts_with('-')).collect();
    let removes = if option_style {
        args.iter().any(|a| m.remove.iter().any(|r| spells(a, r)))
    } else {
        words.iter().take(2).any(|w| m.remove.contains(w))
    };
    let installs = words.iter().take(2).any(|w| m.install.contains(w))
        || (option_style && args.iter().any(|a| m.install.iter().any(|r| spells(a, r))));
    let global = args.iter().any(|a| m.global.contains(a)) || cmd.as_root;
    if let Some(seq) = m.purge.iter().find(|seq| purges(&args, seq)) {
        out.push(warn(
            Category::Deletion,
            CACHE_PURGED,
            cmd,
            format!(
                "purges the package cache or store (`{name} {}`): getting it back needs the network",
                seq.join(" ")
            ),
        ));
    }
    if removes {
        let targets: Vec<&str> = words
            .iter()
            .copied()
            .filter(|w| !m.remove.contains(w) && !m.global.contains(w))
            .collect();
        let forced = args.iter().any(|a| m.force.contains(a));
        // conda's base environment is the installation's own interpreter.
        let base_env = m.names.contains(&"conda")
            && args
                .windows(2)
                .any(|w| matches!(w[0], "-n" | "--name") && w[1] == "base");
        let system_essential = (m.system || base_env) && targets.iter().any(|t| essential(t));
        if system_essential || (m.system && forced) {
            out.push(block(
                Category::Deletion,
                SYSTEM_REMOVED,
                Risk::Critical,
                cmd,
                "removes a package the system runs on (its interpreter, shell, C library, init or package manager), or removes past the packages that need it",
            ));
        } else if m.system || global {
            out.push(warn(
                Category::Deletion,
                REMOVED,
                cmd,
                "removes packages outside the workspace (system packages, global tools or a whole environment)",
            ));
        }
    } else if installs && m.system && (cmd.as_root || root_only(name)) && installs_unvouched(&words, &args) {
        out.push(warn(
            Category::Privilege,
            LOCAL_PACKAGE,
            cmd,
            "installs a package file as root that no configured repository vouches for: its install scripts run as root",
        ));
    } else if installs && global && !m.system && m.warn_global_install {
        out.push(warn(
            Category::Privilege,
            GLOBAL_INSTALL,
            cmd,
            "installs a package globally, outside the workspace (its install scripts run too)",
        ));
    }
}

/// Package managers that install only as root, so their installs are root's even without
/// `sudo` (an agent already root in a container).
fn root_only(name: &str) -> bool {
    matches!(name, "dpkg" | "rpm")
}

/// Whether an install's operands name a package file or URL rather than a repository's
/// package (`./x.deb`, `x-1.0.noarch.rpm`, `https://host/x.rpm`, `pkg.tar.zst`), or snap is
/// told to take one unsigned (`--dangerous`, `--devmode`).
fn installs_unvouched(words: &[&str], args: &[&str]) -> bool {
    const PACKAGE_FILES: &[&str] = &[
        ".deb",
        ".rpm",
        ".snap",
        ".apk",
        ".flatpak",
        ".flatpakref",
        ".txz",
        ".pkg",
    ];
    let file = |w: &&str| {
        let w = w.to_ascii_lowercase();
        PACKAGE_FILES.iter().any(|ext| w.ends_with(ext))
            || w.contains(".pkg.tar")
            || w.starts_with("http://")
            || w.starts_with("https://")
            || w.starts_with("ftp://")
    };
    // An option's value (`apk add --repository URL pkg`) names where packages come from.
    let operand = |w: &str| {
        let at = args.iter().position(|a| *a == w);
        !at.and_then(|k| k.checked_sub(1))
            .is_some_and(|k| args[k].starts_with("--") && !args[k].contains('='))
    };
    words.iter().filter(|w| operand(w)).any(file)
        || args.iter().any(|a| {
            matches!(
                *a,
                "--dangerous" | "--devmode" | "--allow-untrusted" | "--nogpgcheck" | "--no-gpg-checks"
            )
        })
}

/// Whether `args` hold the subcommand sequence `seq` (its words in order, the first one among
/// the first two words).
fn purges(args: &[&str], seq: &[&str]) -> bool {
    let Some(start) = args.iter().take(3).position(|a| *a == seq[0]) else {
        return false;
    };
    let mut rest = args[start + 1..].iter();
    seq[1..].iter().all(|s| rest.any(|a| a == s))
}

/// Package managers and tools whose configuration or install says where packages come from.
const SOURCE_TOOLS: &[&str] = &[
    "npm", "pnpm", "yarn", "bun", "pip", "pip3", "uv", "poetry", "pdm", "conda", "mamba", "gem", "bundle", "composer",
    "go", "cargo", "dotnet", "nuget", "mvn", "gradle", "apt", "apt-get", "dnf", "yum", "helm",
];

/// Settings and options that turn verification off or add an index beside the real one.
const INSECURE_WORDS: &[&str] = &[
    "--trusted-host",
    "--no-verify-ssl",
    "--insecure",
    "--allow-insecure",
    "--allow-unauthenticated",
    "--nogpgcheck",
    "--no-gpg-checks",
    "--extra-index-url",
    "--disable-tls",
    "-insecure",
];

/// Environment settings that turn verification off for every later install.
fn insecure_assignment(a: &str) -> bool {
    let Some((name, value)) = a.split_once('=') else {
        return false;
    };
    let value = value.trim_matches(|c| c == '"' || c == '\'');
    match name {
        "NODE_TLS_REJECT_UNAUTHORIZED" => value == "0",
        "GOSUMDB" | "GONOSUMCHECK" => value == "off" || name == "GONOSUMCHECK",
        "GOINSECURE" | "GONOSUMDB" | "PIP_TRUSTED_HOST" | "PIP_EXTRA_INDEX_URL" => !value.is_empty(),
        "GOFLAGS" => value.contains("-insecure"),
        "GIT_SSL_NO_VERIFY" => !value.is_empty() && value != "0" && value != "false",
        "PYTHONHTTPSVERIFY" => value == "0",
        _ => false,
    }
}

/// Whether the setting or option `key` names an HTTP proxy (`--proxy`, `https-proxy`): a
/// proxy is reached over plain http even for https traffic. Go's module proxy is a source.
fn http_proxy(key: &str) -> bool {
    let k = key.trim_start_matches('-').to_ascii_lowercase();
    k.contains("proxy") && !k.starts_with("goproxy")
}

/// A plain-http URL to another machine.
fn remote_http(word: &str) -> bool {
    let Some(rest) = word
        .trim_matches(|c| c == '"' || c == '\'')
        .find("http://")
        .map(|i| &word[i + 7..])
    else {
        return false;
    };
    let host = rest.split(['/', ':']).next().unwrap_or("");
    !matches!(host, "localhost" | "127.0.0.1" | "[::1]" | "0.0.0.0" | "") && !host.starts_with("127.")
}

/// `remote_execution.insecure_source` (warn): a package manager pointed at a plain-http index,
/// registry, mirror or proxy, verification turned off, or an extra index added.
fn insecure_source(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    let name = cmd.name();
    // `export NODE_TLS_REJECT_UNAUTHORIZED=0`: every later command of this shell, which the
    // guard judges one by one, runs with verification off.
    let exported =
        matches!(name, "export" | "declare" | "typeset") && cmd.argv[1..].iter().any(|a| insecure_assignment(a));
    let assigned = exported || cmd.assignments.iter().any(|a| insecure_assignment(a));
    let tool = SOURCE_TOOLS.contains(&name);
    if !assigned && !tool {
        return;
    }
    let args = &cmd.argv[1..];
    let lowered = |a: &str| a.to_ascii_lowercase();
    let off = |a: &str| matches!(a, "false" | "0" | "off" | "no");
    let insecure = assigned
        || (tool
            && (args.iter().any(|a| INSECURE_WORDS.iter().any(|w| a.strip_prefix(w).is_some_and(|rest| rest.is_empty() || rest.starts_with('='))))
                || args.iter().enumerate().any(|(i, a)| {
                    let key = a.split_once('=').map_or(if i > 0 { args[i - 1].as_str() } else { "" }, |(k, _)| k);
                    remote_http(a) && !http_proxy(key)
                })
                || args.iter().any(|a| insecure_assignment(a))
                // `npm config set strict-ssl false`, `conda config --set ssl_verify false`,
                // `composer config secure-http false`, `pip config set global.extra-index-url U`.
                || args.windows(2).any(|w| {
                    let key = lowered(&w[0]);
                    let key = key.trim_start_matches("global.").trim_start_matches("--");
                    (matches!(key, "strict-ssl" | "ssl_verify" | "secure-http" | "sslverify" | "verify_ssl") && off(&lowered(&w[1])))
                        || key == "extra-index-url"
                        || key.ends_with(".extra-index-url")
                })
                || args.iter().any(|a| {
                    let a = lowered(a);
                    a == "strict-ssl=false" || a == "--strict-ssl=false" || a == "sslverify=0" || a == "gpgcheck=0"
                })));
    if exported {
        out.push(warn(
            Category::RemoteExecution,
            INSECURE_SOURCE,
            cmd,
            "turns certificate or checksum verification off for every later command of this shell",
        ));
    } else if insecure {
        out.push(warn(
            Category::RemoteExecution,
            INSECURE_SOURCE,
            cmd,
            "installs from a source that is not verified (plain http off this machine, verification off, or an extra index beside the real one)",
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn essential_packages_with_versions_and_architectures() {
        for p in [
            "python3",
            "python3.12",
            "python3-minimal",
            "perl",
            "libc6:amd64",
            "bash",
            "sudo",
            "python",
        ] {
            assert!(essential(p), "{p}");
        }
        for p in [
            "python3-requests",
            "nano",
            "pythonista",
            "bash-completion",
            "docker-ce",
            "jq",
        ] {
            assert!(!essential(p), "{p}");
        }
    }

    #[test]
    fn option_style_operations_are_spelled_in_bundles() {
        assert!(spells("-Rns", "-R"));
        assert!(spells("-Rdd", "-R"));
        assert!(!spells("--recursive", "-R"));
        assert!(!spells("-R2", "-R"));
    }
}
