//! Security settings written by content. A configuration file of a protection is not dangerous
//! to write as such (a proxy line in apt's settings, a rotation size for the journal, a
//! comment in the audit rules): the *setting* written decides. A table pairs each kind of
//! security-relevant configuration with the settings that turn its protection off or let
//! anyone in without a password (`SELINUX=permissive`, `trust` in `pg_hba.conf`, `-a never`
//! audit rules, `protected-mode no`, a Docker API on `tcp://0.0.0.0`, `selinux=0` on the kernel
//! command line, `no_root_squash` exports), and, for the files whose every line is a
//! protection (audit rules, log forwarding, firewall rules, host access lists), an edit that
//! comments lines out or deletes them.
//!
//! What is written is read the same way whatever writes it: the text of `echo`/`printf` into
//! a redirect, a here-document or here-string handed to `cat`/`tee`, `echo .. | tee`, and the
//! replacement and appended text of a `sed -i`/`perl -pi` script (never its pattern:
//! `s/SELINUX=permissive/SELINUX=enforcing/` turns the protection on).

/// What a dangerous setting does: a protection off, or a service's authentication off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weakens {
    Protection,
    Authentication,
}

/// One kind of security-relevant configuration.
struct Config {
    /// Where it lives: absolute path prefixes, or (starting with `*`) a file-name suffix.
    paths: &'static [&'static str],
    /// Settings that weaken it, lowercase, with spaces around `=` and `:` removed.
    settings: &'static [&'static str],
    /// Every line is a protection: commenting one out or deleting it turns it off.
    lines_protect: bool,
    weakens: Weakens,
    what: &'static str,
}

const CONFIGS: &[Config] = &[
    Config {
        paths: &["/etc/selinux/config", "/etc/sysconfig/selinux"],
        settings: &["selinux=permissive", "selinux=disabled", "selinuxtype=minimum"],
        lines_protect: false,
        weakens: Weakens::Protection,
        what: "turns SELinux off",
    },
    Config {
        paths: &["/etc/audit/"],
        settings: &["never", "-e 0"],
        lines_protect: true,
        weakens: Weakens::Protection,
        what: "stops the audit system from recording",
    },
    Config {
        paths: &[
            "/etc/rsyslog.conf",
            "/etc/rsyslog.d/",
            "/etc/syslog.conf",
            "/etc/syslog-ng/",
            "/etc/audisp/",
            "/etc/audit/plugins.d/",
        ],
        settings: &["*.* stop", "*.* ~", "& stop", "& ~", "active=no"],
        lines_protect: true,
        weakens: Weakens::Protection,
        what: "stops the machine's logs from being kept or forwarded",
    },
    Config {
        paths: &["/etc/systemd/journald.conf"],
        settings: &["storage=none"],
        lines_protect: false,
        weakens: Weakens::Protection,
        what: "stops the system journal from being kept",
    },
    Config {
        paths: &[
            "/etc/default/ufw",
            "/etc/ufw/",
            "/etc/firewalld/",
            "/etc/nftables.conf",
            "/etc/iptables/",
            "/etc/sysconfig/iptables",
            "/etc/hosts.deny",
            "/etc/fail2ban/",
        ],
        settings: &[
            "enabled=no",
            "default_input_policy=accept",
            "default_forward_policy=accept",
            "defaultzone=trusted",
            "enabled=false",
        ],
        lines_protect: true,
        weakens: Weakens::Protection,
        what: "turns the firewall off or lets everything through",
    },
    Config {
        paths: &["/etc/default/grub", "/etc/kernel/cmdline", "/boot/loader/entries/"],
        settings: &[
            "selinux=0",
            "apparmor=0",
            "audit=0",
            "enforcing=0",
            "security=none",
            "lockdown=none",
            "module.sig_enforce=0",
        ],
        lines_protect: false,
        weakens: Weakens::Protection,
        what: "turns a protection off from the next boot",
    },
    Config {
        paths: &[
            "/etc/sysctl.conf",
            "/etc/sysctl.d/",
            "/usr/lib/sysctl.d/",
            "/run/sysctl.d/",
        ],
        settings: &[
            "kernel.randomize_va_space=0",
            "kernel.yama.ptrace_scope=0",
            "kernel.core_pattern=|",
            "kernel.unprivileged_bpf_disabled=0",
            "kernel.kexec_load_disabled=0",
            "fs.suid_dumpable=",
        ],
        lines_protect: false,
        weakens: Weakens::Protection,
        what: "turns a kernel protection off (address randomisation, ptrace scope, core dumps piped to a program)",
    },
    Config {
        paths: &["*pg_hba.conf"],
        settings: &["trust"],
        lines_protect: false,
        weakens: Weakens::Authentication,
        what: "lets database clients in without a password (trust)",
    },
    Config {
        paths: &["*redis.conf", "/etc/redis/", "*valkey.conf", "/etc/valkey/"],
        settings: &["protected-mode no"],
        lines_protect: false,
        weakens: Weakens::Authentication,
        what: "turns Redis's protected mode off",
    },
    Config {
        paths: &["*mongod.conf"],
        settings: &["authorization:disabled"],
        lines_protect: false,
        weakens: Weakens::Authentication,
        what: "turns MongoDB's authorization off",
    },
    Config {
        paths: &["*my.cnf", "/etc/mysql/", "/etc/my.cnf.d/"],
        settings: &["skip-grant-tables", "skip_grant_tables"],
        lines_protect: false,
        weakens: Weakens::Authentication,
        what: "lets every MySQL client in without a password",
    },
    Config {
        paths: &["/etc/docker/daemon.json", "*/docker.service.d/"],
        settings: &["tcp://0.0.0.0", "tcp://:", "tcp://[::]"],
        lines_protect: false,
        weakens: Weakens::Authentication,
        what: "serves the Docker API on the network: root for whoever reaches the port",
    },
    Config {
        paths: &["*elasticsearch.yml"],
        settings: &["xpack.security.enabled:false"],
        lines_protect: false,
        weakens: Weakens::Authentication,
        what: "turns Elasticsearch's security off",
    },
    Config {
        paths: &["*mosquitto.conf", "/etc/mosquitto/"],
        settings: &["allow_anonymous true"],
        lines_protect: false,
        weakens: Weakens::Authentication,
        what: "lets anyone use the MQTT broker",
    },
    Config {
        paths: &["*vsftpd.conf"],
        settings: &["anon_upload_enable=yes", "anon_mkdir_write_enable=yes"],
        lines_protect: false,
        weakens: Weakens::Authentication,
        what: "lets anonymous FTP users write",
    },
    Config {
        paths: &["/etc/exports", "/etc/exports.d/"],
        settings: &["no_root_squash"],
        lines_protect: false,
        weakens: Weakens::Authentication,
        what: "exports a file system with root's rights to its clients",
    },
    Config {
        paths: &["/etc/doas.conf", "/usr/local/etc/doas.conf"],
        settings: &["nopass"],
        lines_protect: false,
        weakens: Weakens::Authentication,
        what: "lets a user act as root without a password",
    },
];

/// The configuration `path` (absolute, normalised) is, if any.
fn config_of(path: &str) -> Option<&'static Config> {
    CONFIGS.iter().find(|c| {
        c.paths.iter().any(|p| match p.strip_prefix('*') {
            Some(suffix) if suffix.ends_with('/') => path.contains(suffix),
            Some(suffix) => path.ends_with(suffix),
            None => path.starts_with(p),
        })
    })
}

/// Whether `path` is a security-relevant configuration the table knows.
pub fn is_security_config(path: &str) -> bool {
    config_of(path).is_some()
}

/// The text as the table spells settings: lowercase, quotes dropped, blank runs folded to one
/// space, and no space around `=` or `:`.
fn normalise(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars().filter(|c| *c != '"' && *c != '\'') {
        let c = if c.is_whitespace() { ' ' } else { c.to_ascii_lowercase() };
        if c == ' ' && (out.ends_with(' ') || out.ends_with('=') || out.ends_with(':')) {
            continue;
        }
        if (c == '=' || c == ':') && out.ends_with(' ') {
            out.pop();
        }
        out.push(c);
    }
    out
}

/// Whether `setting` occurs in `text` as a whole word (not inside a longer name: `trust` is not
/// `trusted`, `-d` is not `-dir`).
fn holds_setting(text: &str, setting: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    text.match_indices(setting).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + setting.len()..].chars().next();
        let starts_word = setting.starts_with(|c: char| !word(c)) || before.is_none_or(|c| !word(c));
        let ends_word = setting.ends_with(|c: char| !word(c)) || after.is_none_or(|c| !word(c));
        starts_word && ends_word
    })
}

/// How a text weakens the configuration at `path`: the setting's kind and what it does. `text`
/// is what is written there; `removes_lines` says the edit comments lines out or deletes them.
pub fn weakening(path: &str, text: &str, removes_lines: bool) -> Option<(Weakens, &'static str)> {
    let config = config_of(path)?;
    if removes_lines && config.lines_protect {
        return Some((config.weakens, config.what));
    }
    let text = normalise(text);
    config
        .settings
        .iter()
        .any(|s| holds_setting(&text, s))
        .then_some((config.weakens, config.what))
}

/// What a `sed`/`perl` edit script writes: the replacement of each `s` command and the text of
/// each `a`/`i`/`c` command; and whether it comments lines out (`s/^X/#&/`, `s/^/# /`) or
/// deletes them (`/X/d`).
pub fn edit_script(script: &str) -> (String, bool) {
    let mut written = String::new();
    let mut removes = false;
    for part in script.split(['\n', ';']) {
        let cmd = skip_address(part.trim());
        if let Some(rest) = cmd.strip_prefix('s') {
            if let Some((_, replacement)) = substitution(rest) {
                removes |= replacement.trim_start().starts_with('#');
                written.push_str(replacement);
                written.push('\n');
            }
        } else if cmd == "d" || cmd.starts_with("d ") {
            removes = true;
        } else if let Some(text) = cmd.strip_prefix(['a', 'i', 'c']) {
            written.push_str(text.trim_start_matches('\\').trim());
            written.push('\n');
        }
    }
    (written, removes)
}

/// `part` without its leading address: a line number, `$`, `/regex/`, or a range of them.
fn skip_address(part: &str) -> &str {
    let mut rest = part;
    for _ in 0..2 {
        rest = if let Some(r) = rest.strip_prefix('/') {
            r.find('/').map_or("", |end| &r[end + 1..])
        } else {
            rest.trim_start_matches(|c: char| c.is_ascii_digit() || c == '$')
        };
        match rest.strip_prefix(',') {
            Some(r) => rest = r,
            None => break,
        }
    }
    rest.trim_start()
}

/// The pattern and replacement of an `s` command's text after the `s` (`/a/b/g`, `|a|b|`).
fn substitution(rest: &str) -> Option<(&str, &str)> {
    let delim = rest.chars().next().filter(|c| !c.is_alphanumeric() && *c != ' ')?;
    let body = &rest[delim.len_utf8()..];
    let mut parts = Vec::with_capacity(2);
    let mut start = 0;
    let mut escaped = false;
    for (at, c) in body.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == delim {
            parts.push(&body[start..at]);
            start = at + c.len_utf8();
            if parts.len() == 2 {
                break;
            }
        }
    }
    match parts[..] {
        [pattern, replacement] => Some((pattern, replacement)),
        // `s/a/b` without the closing delimiter.
        [pattern] => Some((pattern, &body[start..])),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_read_from_what_is_written_not_from_what_is_matched() {
        let (text, removes) = edit_script("s/^SELINUX=.*/SELINUX=permissive/");
        assert!(!removes);
        assert!(weakening("/etc/selinux/config", &text, removes).is_some());
        let (text, removes) = edit_script("s/SELINUX=permissive/SELINUX=enforcing/");
        assert!(weakening("/etc/selinux/config", &text, removes).is_none());
        let (_, removes) = edit_script(r"s/^\*\.\* @@siem\.corp\.internal:514/#&/");
        assert!(removes);
        let (_, removes) = edit_script("/@@siem/d");
        assert!(removes);
        assert_eq!(edit_script("s").0, "");
        assert_eq!(edit_script("sx").0, "");
        assert_eq!(edit_script("s/a/b").0, "b\n");
        let (text, _) = edit_script("$a auth sufficient pam_permit.so");
        assert_eq!(text.trim(), "auth sufficient pam_permit.so");
    }

    #[test]
    fn settings_are_whole_words_in_a_normalised_text() {
        assert!(weakening(
            "/etc/postgresql/16/main/pg_hba.conf",
            "host all all 0.0.0.0/0 trust",
            false
        )
        .is_some());
        assert!(weakening(
            "/etc/postgresql/16/main/pg_hba.conf",
            "host all all 10.0.0.0/8 scram-sha-256",
            false
        )
        .is_none());
        assert!(weakening("/etc/redis/redis.conf", "protected-mode   no", false).is_some());
        assert!(weakening("/etc/mongod.conf", "security:\n  authorization: disabled", false).is_some());
        assert!(weakening("/etc/audit/rules.d/00.rules", "-a never,task", false).is_some());
        assert!(weakening("/etc/audit/rules.d/audit.rules", "# temporary exclusion", false).is_none());
        assert!(weakening("/etc/hosts", "10.0.0.9 registry", true).is_none());
    }
}
