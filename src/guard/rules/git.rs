//! Git: history and work-tree destroyers. Global options (`-C dir`, `-c k=v`, `--git-dir`,
//! `--no-pager`, ...) are skipped before the subcommand. `reset --hard`, `clean -f`,
//! `push --force`/`-f`/`+ref`/`--mirror`, `checkout -- .`/`restore .` are blocked;
//! `push --force-with-lease` and `filter-branch` are warned. Stash drops, reflog
//! destruction, ref and forced branch deletion and path restores are git's spec in the effect
//! model (`guard::effects`), and so is `checkout -f`/`switch --discard-changes` (every
//! uncommitted change thrown away to switch).
//! Deleting the remote's main branch (`push origin --delete main`, `:master`) is blocked;
//! `--no-verify` (hooks skipped) and checking out old tests (`checkout HEAD~5 -- tests/`) are
//! warned, and so are `worktree remove --force` (its uncommitted changes go too) and
//! `global_config`: `config --global|--system` of `core.hooksPath` or `url.*.insteadOf`.
//! A kept setting whose value git runs later (`core.fsmonitor`, `diff.external`, `core.pager`,
//! filters, `!` aliases, ...) given a program in a temp directory or a hidden folder is a
//! planted hook: `persistence.vcs_hook`, warned.
//! An alias definition (`-c alias.x=..`, `config alias.x ..`) is judged as the git command it
//! stands for: `config alias.pf 'push -f'` is a force push.

use super::{block, warn};
use crate::guard::verdict::{Category, Risk, Violation};
use crate::guard::SimpleCommand;

pub const RESET_HARD: &str = "git.reset_hard";
pub const CLEAN_FORCE: &str = "git.clean_force";
pub const FORCE_PUSH: &str = "git.force_push";
pub const CHECKOUT_ALL: &str = "git.checkout_all";
pub const BRANCH_DELETE: &str = "git.branch_delete";
pub const HISTORY_REWRITE: &str = "git.history_rewrite";
pub const GLOBAL_CONFIG: &str = "git.global_config";
pub const NO_VERIFY: &str = "git.no_verify";

pub fn alternative(rule: &str) -> &'static str {
    match rule {
        RESET_HARD => "git stash (keeps the changes) or git reset --soft / --mixed",
        CLEAN_FORCE => "git clean -n to see what would be deleted, then delete those paths",
        FORCE_PUSH => "git push --force-with-lease to a branch of your own, or push a new branch",
        CHECKOUT_ALL => "git stash, or restore the single files you mean (git restore path/to/file)",
        BRANCH_DELETE => "git branch -d (refuses unmerged branches)",
        NO_VERIFY => "run the hooks (drop --no-verify) and fix what they report",
        GLOBAL_CONFIG => "set it in this repository only (git config --local) if the task needs it",
        _ => "make a backup branch first (git branch backup)",
    }
}

/// The subcommand index after git's global options.
fn subcommand(argv: &[String]) -> Option<usize> {
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        match a {
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--exec-path" | "--config-env" => i += 2,
            _ if a.starts_with('-') => i += 1,
            _ => return Some(i),
        }
    }
    None
}

/// Alias definitions: `git -c alias.NAME=VALUE ...` and `git config [--global] alias.NAME VALUE`.
/// Defining an alias does nothing by itself, but an agent defines one to run it: the
/// definition is judged as the git command it stands for (`alias.pf 'push -f'` is a force
/// push, `alias.x '!git reset --hard'` a hard reset). Other shell aliases (`!sh ...`) are
/// left to the rules that read the command actually run.
fn aliases(cmd: &SimpleCommand, s: usize, out: &mut Vec<Violation>) {
    let mut values: Vec<&str> = Vec::new();
    for w in cmd.argv[1..s].windows(2) {
        if w[0] == "-c" {
            if let Some((k, v)) = w[1].split_once('=') {
                if k.to_ascii_lowercase().starts_with("alias.") {
                    values.push(v);
                }
            }
        }
    }
    if cmd.argv[s] == "config" {
        for w in cmd.argv[s + 1..].windows(2) {
            if w[0].to_ascii_lowercase().starts_with("alias.") {
                values.push(&w[1]);
            }
        }
    }
    for v in values {
        let v = v.trim();
        let words: Vec<&str> = match v.strip_prefix('!') {
            Some(shell) => match shell.split_whitespace().collect::<Vec<_>>().split_first() {
                Some((&"git", rest)) => rest.to_vec(),
                _ => continue,
            },
            None => v.split_whitespace().collect(),
        };
        if words.is_empty() {
            continue;
        }
        let expanded = SimpleCommand {
            argv: std::iter::once("git").chain(words).map(String::from).collect(),
            ..cmd.clone()
        };
        let mut found = Vec::new();
        check(&expanded, &mut found);
        for mut f in found {
            f.matched = crate::guard::rules::cut(&cmd.display(), 200);
            f.description = format!("defines a git alias for what this does: {}", f.description);
            out.push(f);
        }
    }
}

/// The settings a git command sets: `-c KEY=VALUE` before the subcommand (for this command),
/// and `config [--scope] KEY VALUE` (kept). Each with whether it is kept beyond this command.
fn set_values(argv: &[String], s: usize) -> Vec<(String, &str, bool)> {
    let mut found = Vec::new();
    let mut i = 1;
    while i < s {
        if argv[i] == "-c" {
            if let Some((k, v)) = argv.get(i + 1).and_then(|kv| kv.split_once('=')) {
                found.push((k.to_ascii_lowercase(), v, false));
            }
            i += 1;
        }
        i += 1;
    }
    if argv[s] == "config" {
        let rest: Vec<&String> = argv[s + 1..].iter().filter(|w| !w.starts_with('-')).collect();
        let reads = argv[s + 1..].iter().any(|a| {
            matches!(
                a.as_str(),
                "--get" | "--get-all" | "--list" | "-l" | "--unset" | "--unset-all" | "--get-regexp"
            )
        });
        if let [k, v, ..] = rest.as_slice() {
            if !reads {
                found.push((k.to_ascii_lowercase(), v.as_str(), true));
            }
        }
    }
    found
}

/// Settings that take a protection away, for this command or for good: a push refspec that
/// forces (`remote.origin.push +refs/heads/*:...`: every later push is forced), hooks pointed
/// at nothing for one command (`-c core.hooksPath=/dev/null`: `--no-verify` by another name),
/// TLS verification off, credentials kept in plain text, a hooks template for every new
/// repository, and a credential helper that sends what git hands it to another host.
fn settings(cmd: &SimpleCommand, s: usize, out: &mut Vec<Violation>) {
    let g = Category::Git;
    for (key, value, kept) in set_values(&cmd.argv, s) {
        let value = value.trim();
        let off = matches!(value.to_ascii_lowercase().as_str(), "false" | "0" | "no" | "off");
        if key.starts_with("remote.") && key.ends_with(".push") && value.starts_with('+') {
            out.push(block(
                g,
                FORCE_PUSH,
                Risk::High,
                cmd,
                "configures every push to this remote to be forced (a `+` refspec)",
            ));
        } else if key == "core.hookspath" && !kept && matches!(value, "/dev/null" | "" | "/nonexistent") {
            out.push(warn(
                g,
                NO_VERIFY,
                cmd,
                "points git's hooks at nothing: the checks they run are skipped",
            ));
        } else if (key == "http.sslverify" || (key.starts_with("http.") && key.ends_with(".sslverify"))) && off {
            out.push(warn(
                g,
                GLOBAL_CONFIG,
                cmd,
                "turns TLS verification off: any server can pose as the remote",
            ));
        } else if key == "credential.helper" && value.starts_with("store") {
            out.push(warn(
                g,
                GLOBAL_CONFIG,
                cmd,
                "stores every git credential in plain text (~/.git-credentials)",
            ));
        } else if key == "credential.helper" && value.starts_with('!') && sends_away(value) {
            out.push(block(
                Category::Exfiltration,
                GLOBAL_CONFIG,
                Risk::Critical,
                cmd,
                "a credential helper that sends the credentials git hands it to another host",
            ));
        } else if kept && planted_program(&key, value) {
            out.push(warn(
                Category::Persistence,
                crate::guard::effects::VCS_HOOK,
                cmd,
                format!(
                    "sets {key} to a program kept in a temp or hidden folder: git runs it at later commands, as a hook"
                ),
            ));
        } else if key == "init.templatedir" && kept {
            out.push(warn(
                g,
                GLOBAL_CONFIG,
                cmd,
                "plants a hooks template in every repository created or cloned from now on",
            ));
        }
    }
}

/// Whether `value`, kept under `key`, makes git run a program from a temp directory or a
/// hidden folder at later commands (`core.fsmonitor /tmp/.w`, `diff.external ~/.cache/.d/x`,
/// `alias.st '!/dev/shm/x'`): the keys whose value git runs ([`crate::guard::carriers::git_setting_runs_program`]), with a program
/// where no tool is installed but a dropped file is. Tools installed the usual way
/// (`core.editor vim`, `core.pager 'delta'`, `core.fsmonitor .git/hooks/fsmonitor-watchman`) pass.
fn planted_program(key: &str, value: &str) -> bool {
    if !crate::guard::carriers::git_setting_runs_program(key) {
        return false;
    }
    // Aliases and credential helpers run a shell command only after `!`.
    let command = if key.starts_with("alias.") || key == "credential.helper" {
        match value.strip_prefix('!') {
            Some(c) => c,
            None => return false,
        }
    } else {
        value
    };
    // The program of each command of the line: its first word, and the first after `;`, `&`
    // or `|`.
    let programs = command
        .split([';', '&', '|', '\n'])
        .filter_map(|c| c.split_whitespace().next());
    programs.into_iter().any(|word| {
        let word = word.trim_matches(|c| c == '"' || c == '\'' || c == '(');
        let temp = ["/tmp/", "/var/tmp/", "/dev/shm/", "$TMPDIR/", "${TMPDIR}/"]
            .iter()
            .any(|t| word.starts_with(t));
        // Tools' own install folders are hidden too (`~/.cargo/bin/delta`), and planted nowhere.
        let hidden = word.contains('/')
            && word.split('/').any(|c| {
                c.len() > 1
                    && c.starts_with('.')
                    && !matches!(
                        c,
                        ".." | ".git"
                            | ".local"
                            | ".cargo"
                            | ".nix-profile"
                            | ".rustup"
                            | ".npm-global"
                            | ".deno"
                            | ".bun"
                            | ".pyenv"
                            | ".rbenv"
                            | ".asdf"
                            | ".volta"
                            | ".nvm"
                            | ".go"
                            | ".dotnet"
                    )
            });
        temp || hidden
    })
}

/// Shell text that sends something to a host off this machine (`curl ... https://host`).
fn sends_away(text: &str) -> bool {
    let sender = [
        "curl ",
        "wget ",
        "nc ",
        "ncat ",
        "socat ",
        "http ",
        "python",
        "/dev/tcp/",
    ]
    .iter()
    .any(|w| text.contains(w));
    let remote = text.split_whitespace().any(|w| {
        let w = w.trim_matches(|c| c == '"' || c == '\'' || c == ';' || c == '}');
        (w.starts_with("http://") || w.starts_with("https://") || w.contains("/dev/tcp/"))
            && !["localhost", "127.0.0.1", "[::1]"]
                .iter()
                .any(|l| w.split("://").nth(1).unwrap_or(w).starts_with(l))
    });
    sender && remote
}

pub fn check(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    // The history rewriters that are programs of their own: `git-filter-repo` (what `git
    // filter-repo` runs) and the BFG Repo-Cleaner.
    if matches!(cmd.name(), "git-filter-repo" | "bfg")
        && !cmd.argv[1..]
            .iter()
            .any(|a| matches!(a.as_str(), "--help" | "-h" | "--version" | "--analyze" | "--dry-run"))
    {
        out.push(warn(Category::Git, HISTORY_REWRITE, cmd, "rewrites the whole history"));
        return;
    }
    if cmd.name() != "git" {
        return;
    }
    let Some(s) = subcommand(&cmd.argv) else { return };
    aliases(cmd, s, out);
    settings(cmd, s, out);
    // `git push -n -f`, `git push --dry-run --force`: shown, not done.
    if crate::guard::effects::shown_not_done(&cmd.argv) {
        return;
    }
    let args: Vec<&str> = cmd.argv[s + 1..].iter().map(String::as_str).collect();
    // git takes a long option's unambiguous prefix: `--mirr`, `--har`.
    let has = |f: &str| {
        args.iter()
            .any(|a| *a == f || crate::guard::effects::spec::abbreviates(a, f))
    };
    // Short flags may be bundled: `-fd`, `-fdx`.
    let short = |c: char| {
        args.iter()
            .any(|a| a.starts_with('-') && !a.starts_with("--") && a[1..].contains(c))
    };
    let g = Category::Git;
    match cmd.argv[s].as_str() {
        "reset" if has("--hard") => out.push(block(
            g,
            RESET_HARD,
            Risk::High,
            cmd,
            "git reset --hard discards every uncommitted change in the work tree",
        )),
        "clean"
            if (short('f') || has("--force"))
                && !(short('n') || args.iter().any(|a| a.len() >= 5 && "--dry-run".starts_with(*a))) =>
        {
            out.push(block(
                g,
                CLEAN_FORCE,
                Risk::High,
                cmd,
                "git clean -f deletes every untracked file (and with -x the ignored ones)",
            ))
        }
        "push" => {
            let lease = args
                .iter()
                .any(|a| a.starts_with("--force-with-lease") || a.starts_with("--force-if-includes"));
            let force = has("--force") || short('f') || has("--mirror");
            // `+ref` refspecs force-push that ref.
            let plus = args.iter().any(|a| a.starts_with('+') && a.len() > 1);
            if force || plus {
                out.push(block(
                    g,
                    FORCE_PUSH,
                    Risk::High,
                    cmd,
                    "force push overwrites the remote branch's history",
                ));
            } else if lease {
                out.push(warn(
                    g,
                    FORCE_PUSH,
                    cmd,
                    "force push (with lease) rewrites the remote branch's history",
                ));
            } else if has("--delete") || short('d') || args.iter().any(|a| a.starts_with(':') && a.len() > 1) {
                // Deleting the remote's main line is as bad as overwriting it.
                let main = args
                    .iter()
                    .map(|a| a.trim_start_matches(':').trim_start_matches("refs/heads/"))
                    .any(|b| matches!(b, "main" | "master" | "trunk" | "develop" | "production"));
                if main {
                    out.push(block(
                        g,
                        BRANCH_DELETE,
                        Risk::High,
                        cmd,
                        "deletes the remote's main branch",
                    ));
                } else {
                    out.push(warn(g, BRANCH_DELETE, cmd, "deletes a branch on the remote"));
                }
            } else if has("--no-verify") {
                out.push(warn(g, NO_VERIFY, cmd, "pushes without running the pre-push hooks"));
            }
        }
        "commit" | "merge" | "am" if has("--no-verify") => {
            out.push(warn(g, NO_VERIFY, cmd, "commits without running the pre-commit hooks"));
        }
        "checkout" | "restore" => {
            let after_dd = args.iter().position(|a| *a == "--").map(|i| &args[i + 1..]);
            let paths: Vec<&str> = match after_dd {
                Some(p) => p.to_vec(),
                None => args.iter().copied().filter(|a| !a.starts_with('-')).collect(),
            };
            let all = paths.iter().any(|p| matches!(*p, "." | "./" | "*" | ":/" | "/"));
            // `git checkout HEAD~5 -- tests/`: the tests put back to an older version.
            let old_tests = after_dd.is_some()
                && args
                    .first()
                    .is_some_and(|r| r.contains('~') || r.contains('^') || r.contains("@{"))
                && paths
                    .iter()
                    .any(|p| crate::guard::rules::test_tampering::is_test_path(p));
            if old_tests {
                out.push(warn(
                    g,
                    CHECKOUT_ALL,
                    cmd,
                    "replaces the tests with an older version of them",
                ));
                return;
            }
            let is_restore = cmd.argv[s] == "restore";
            if all
                && (after_dd.is_some() || is_restore || paths.len() == 1)
                && !(is_restore && (has("--staged") || has("-S")) && !(has("--worktree") || has("-W")))
            {
                out.push(block(
                    g,
                    CHECKOUT_ALL,
                    Risk::High,
                    cmd,
                    "discards every uncommitted change in the work tree",
                ));
            }
        }
        // Stash drops, reflog destruction, ref and forced branch deletion: the effect model
        // (`guard::effects`, git's spec) judges them.
        "filter-branch" | "filter-repo" => out.push(warn(g, HISTORY_REWRITE, cmd, "rewrites the whole history")),
        // `git worktree remove --force`: the worktree's uncommitted changes go with it.
        "worktree" if args.first() == Some(&"remove") && (has("--force") || short('f')) => out.push(warn(
            g,
            CHECKOUT_ALL,
            cmd,
            "removes a worktree with its uncommitted changes",
        )),
        // `git config --global core.hooksPath /tmp/x`, `url.X.insteadOf`: every later git
        // command in every repository runs other hooks or talks to another server.
        "config"
            if (has("--global") || has("--system"))
                && args.iter().any(|a| {
                    let k = a.to_ascii_lowercase();
                    k == "core.hookspath"
                        || (k.starts_with("url.") && (k.ends_with(".insteadof") || k.ends_with(".pushinsteadof")))
                }) =>
        {
            out.push(warn(
                g,
                GLOBAL_CONFIG,
                cmd,
                "changes, for every repository, which hooks git runs or which server a URL reaches",
            ))
        }
        _ => {}
    }
}
