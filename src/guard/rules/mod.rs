//! The guard's rules, one file per category. Every rule reads parsed [`SimpleCommand`]s (never
//! raw text, except the fork-bomb shape) and returns [`Violation`]s with a stable rule id
//! `<category>.<name>`, a risk, the matched text and a description; [`alternative_for`] gives
//! the safer alternative for the strongest one.
//!
//! | category | rules (block unless noted) |
//! |---|---|
//! | deletion | `recursive_force` (rm -r of root, home, system dirs, `*` at the workspace root, outside the workspace; warn for non-literal targets), `system_file` (rm/unlink/truncate/emptying redirect of a system file; warn outside the workspace and for other writes into one), `find_delete` (also `find PATH \| xargs rm`), `rsync_delete`, `git_dir` (warn: deleting `.git`), `infrastructure` (terraform destroy, kubectl delete namespace or in prod, aws s3 rm --recursive, gh repo delete, `gh api -X DELETE repos/O/R`, cdk destroy, firebase firestore:delete --all-collections, artisan migrate:fresh, npm unpublish, rake db:drop, ...; warn for bulk docker removal, compose down -v, cargo yank, terraform state rm, kubectl drain/scale to 0, other `gh api` DELETEs, alembic downgrade base); `system_file` also covers home dotfiles, `mv` of home/system dirs or into /dev/null, `crontab -r`, writing over /bin, /lib*, /usr/bin, /usr/lib, /boot and `echo "" \| tee` onto a system file |
//! | git | `reset_hard`, `clean_force`, `force_push` (`--force`, `-f`, `+ref`, `--mirror`; warn for `--force-with-lease`; alias definitions are judged as what they stand for), `checkout_all` (`checkout -- .`, `restore .`, `checkout -f`), `branch_delete` (warn: remote branches; block for the remote's main/master), `history_rewrite` (warn: filter-branch), `no_verify` (warn), `global_config` (warn: `--global` core.hooksPath / url.*.insteadOf), `persistence.vcs_hook` (warn: a kept setting git runs, such as core.fsmonitor, diff.external or a `!` alias, given a program in a temp or hidden folder); `checkout_all` warns for old tests checked out (`checkout HEAD~5 -- tests/`) and `worktree remove --force` |
//! | database | `drop_table` (also `ALTER TABLE .. DROP COLUMN`), `delete_without_where`, `update_without_where` (SQL, and unscoped ORM/driver bulk calls in runner, console or `--eval` code), `flush` (a data-store tool's whole-store verb: `db:drop`, `ecto.reset`, `schema:drop`, `pg:reset`, `flyway clean`, redis FLUSHALL, dropDatabase; warn: `shutdown nosave`), `migrate_to_zero` (warn), `data_loss` (warn: `--accept-data-loss`) |
//! | secrets | `token` (known formats), `url_credentials`, `password_argument`, `secret_assignment`, `authorization_header` (also `X-Api-Key:`-style headers), `credential_file` (also browser password/cookie stores), `printed` (warn: the environment, a secret-named variable, a dotenv file or `/proc/*/environ` printed into the transcript), `random_literal` (a word of generated-looking characters with a symbol, a key's length, or a password option before it) |
//! | network | `exposed_bind` (warn), `docker_publish` (warn), `tunnel` (also `npx localtunnel`), `reverse_shell`, `listener` (warn), `firewall` (now judged by the effect model, below), `open_to_internet` (warn: a rule or setting given the whole-internet range `0.0.0.0/0` or `::/0`); `exposed_bind` blocks Jupyter with an empty token on every interface |
//! | disk | `device_write`, `mkfs`, `shred`, `partition`, `volume` (mdadm --stop, dmsetup remove, lvremove, cryptsetup luksFormat, zpool destroy) |
//! | privilege | `chmod_world`, `setuid`, `sudoers`, `chown_system`, `user_groups`, `lockout` (`chmod -R 000`/`chattr -R +i` outside the workspace; warn without -R), `root_shell` (warn: `sudo -s`, `su -`, `pkexec bash`), `ssh_access` (authorized_keys, sshd_config), `startup_hijack` (a startup file given a PATH led by /tmp or `.`, or `alias sudo=`), `global_install` (warn: `npm install -g`); `root_shell` also warns `ssh HOST 'sudo ..'`; `setuid` also for `install -m 4755` |
//! | process | `kill_all`, `fork_bomb`, `shutdown` (warn: `swapoff -a`), `crypto_miner` (a miner by name, or a `stratum+tcp://` pool) |
//! | remote_execution | `pipe_to_shell` (also a shell piped into nc: reverse shell), `process_substitution` (also handed as a variable's startup file or a `-f` program file), `eval_download` (also inline programs that exec/eval what they fetch), `dynamic_command` (warn for `$VAR` command words), `download_execute` (a file a downloader wrote, run later in the line: as a script, a makefile, a package installed, or a file a variable such as `NODE_OPTIONS=--require` or `LD_PRELOAD` loads), `hidden_scratch_program` (a program run from a hidden file or folder in /tmp, /var/tmp or /dev/shm), `url_package` (warn: `npx https://..`), `untrusted_source` (warn: a plain-http package index or registry) |
//! | exfiltration | `upload_secret` (also `curl -d "$SECRET_VAR"`, dotenv variants, `--post-file=`, a vendor key sent to another host), `pipe_to_network`, `substitution_to_network`, `publish` (warn: npm/cargo publish, twine upload) |
//! | test_tampering | `delete_test`, `weaken_assertions`, `skip_marker` (by any editor: sed, perl, ruby, vim/ex, ed, awk, sd, `find -exec`, appends), `shadowed_runner` (an alias or the package's test script that only prints a pass; the runner's own place, `node_modules/.bin`, `.venv/bin`, written by hand), `forged_result` (a test or coverage report written by anything but a test run), `ci_weakened` (CI made to let failures pass, `gh workflow disable`), `expected_from_actual` (actual output copied over an expected file), `expectations_regenerated` (warn: snapshot and golden updates), `relaxed_limit` (warn: time limits raised), `change_assertion` (warn, file tools) |
//! | parse | `unparseable` (block for unbalanced quotes / `$(`; warn for constructs the grammar misses), `too_large` (a pipeline of more than 128 stages, more than 64 command lines or 64 KiB carried inside one another, or more than 250 ms of the shell parser's time) |
//!
//! The effect model (`guard::effects`) runs on every command next to these rules and owns, by
//! program spec rather than rule code: `git.ref_delete`, `git.stash_drop`,
//! `git.reflog_destroy` (block), `git.prune` (warn), path restores in `git.checkout_all`;
//! `privilege.escape`, `privilege.kernel`, `privilege.passwordless` (block),
//! `privilege.system_state` (warn: a program without a spec handed a system path);
//! `network.firewall` (block: firewalls, SELinux, AppArmor, audit, security services),
//! `privilege.traces_erased` (block: the shell history cleared or turned off, system logs
//! emptied or deleted, a system file's time stamps forged),
//! `network.exposed_bind` (block: every interface with authentication off);
//! `persistence.vcs_hook`, `persistence.scheduled` (block; warn for `systemctl enable`),
//! `persistence.startup_file` (warn), `persistence.web_shell` (block: server code that runs
//! a request's parameters as commands, written outside the workspace; warn inside it);
//! `process.kill_all` by broad name or user;
//! `exfiltration.upload` (block: whole directories, home or system files; warn: a workspace
//! file); `deletion.bulk` (block), `deletion.dependency_dir` (warn).

pub mod database;
pub mod deletion;
pub mod disk;
pub mod exfiltration;
pub mod git;
pub mod network;
pub mod privilege;
pub mod process;
pub mod project;
pub mod remote_execution;
pub mod secrets;
pub mod test_tampering;

use super::verdict::{Category, Recommendation, Risk, Violation};
use super::{GuardContext, Pipeline, SimpleCommand};

pub const UNPARSEABLE: &str = "parse.unparseable";
pub const TOO_LARGE: &str = "parse.too_large";

/// Every rule that applies to a pipeline.
pub fn check_pipeline(pipeline: &Pipeline, ctx: &GuardContext<'_>) -> Vec<Violation> {
    let mut out = Vec::new();
    for (i, cmd) in pipeline.iter().enumerate() {
        if cmd.upstream_copy {
            continue;
        }
        // `prog --help`, `prog --version`: the program prints and exits. Not one named by a
        // path (`/tmp/.x --help`): a program nobody knows does what it likes with the flag.
        if cmd.argv.len() == 2
            && !cmd.dynamic_name
            && !cmd.argv[0].contains('/')
            && matches!(cmd.argv[1].as_str(), "--help" | "--version")
        {
            continue;
        }
        let start = out.len();
        deletion::check(pipeline, i, ctx, &mut out);
        git::check(cmd, &mut out);
        database::check(pipeline, i, &mut out);
        secrets::check(cmd, &mut out);
        secrets::printed(pipeline, i, &mut out);
        // Once per pipeline: `printf 'u:PW' | chpasswd` is one password, seen in the `printf`
        // or where it is fed.
        if !out.iter().any(|v| v.category == Category::Secrets) {
            secrets::fed_password(pipeline, i, &mut out);
        }
        network::check(cmd, &mut out);
        disk::check(cmd, ctx, &mut out);
        privilege::check(cmd, ctx, &mut out);
        process::check(cmd, &mut out);
        remote_execution::check(pipeline, i, ctx, &mut out);
        exfiltration::check(pipeline, i, ctx, &mut out);
        test_tampering::check_command(cmd, ctx, &mut out);
        super::effects::check(pipeline, i, ctx, &mut out);
        // `c=rm; $c -rf /tmp`: a flagged command whose program was hidden.
        if let Some(v) = remote_execution::disguised(cmd, &out[start..]) {
            out.push(v);
        }
    }
    out
}

/// Rules that read the raw text (shapes the grammar parses as function definitions).
pub fn check_text(command: &str, out: &mut Vec<Violation>) {
    process::fork_bomb(command, out);
}

/// Rules that read the whole line's commands in order (what one command leaves for a later
/// one).
pub fn check_line(pipelines: &[Pipeline], ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    remote_execution::download_then_run(pipelines, out);
    super::effects::check_line(pipelines, ctx, out);
}

/// The safer alternative for the strongest violation.
pub fn alternative_for(violations: &[Violation]) -> Option<String> {
    let worst = violations.iter().max_by_key(|v| (v.recommendation, v.severity))?;
    if let Some(text) = super::effects::alternative(&worst.rule) {
        return Some(text.to_string());
    }
    let text = match worst.category {
        Category::Deletion => deletion::alternative(&worst.rule),
        Category::Git => git::alternative(&worst.rule),
        Category::Database => database::alternative(&worst.rule),
        Category::Secrets => secrets::alternative(&worst.rule),
        Category::Network => network::alternative(&worst.rule),
        Category::Disk => "work on an image file inside the workspace (e.g. dd of=./disk.img), never on a device",
        Category::Privilege => privilege::alternative(&worst.rule),
        Category::Process => process::alternative(&worst.rule),
        Category::RemoteExecution => remote_execution::alternative(&worst.rule),
        Category::Exfiltration if worst.rule == exfiltration::PUBLISH => {
            "check the package with a dry run (npm publish --dry-run, cargo publish --dry-run) and leave publishing to the user"
        }
        Category::Exfiltration => {
            "keep credentials and private files on this machine; send only the workspace files the task needs"
        }
        Category::TestTampering => {
            "make the code pass the tests as written; change a test only when the task asks for it"
        }
        Category::Persistence => "run the command once, in the workspace, instead of planting it for later",
        Category::Parse if worst.rule == TOO_LARGE => {
            "run the steps as separate, smaller commands, or write the script to a file and run it"
        }
        Category::Parse => "balance the quotes, `$(` and backticks, or write the script to a file and run it",
    };
    Some(text.to_string())
}

/// `parse.unparseable`: the command line could not be parsed. Clearly malformed input
/// (unbalanced quotes or `$(`) is blocked: bash would read something else than what was
/// checked. A construct the grammar does not know is warned; the rules still ran on what
/// could be parsed.
pub fn unparseable(command: &str, reason: &str, clear: bool) -> Violation {
    Violation {
        category: Category::Parse,
        rule: UNPARSEABLE.into(),
        severity: if clear { Risk::High } else { Risk::Medium },
        matched: cut(command, 200),
        description: format!("the command could not be parsed ({reason}); the guard may have missed part of it"),
        recommendation: if clear {
            Recommendation::Block
        } else {
            Recommendation::Warn
        },
    }
}

/// A line larger than the guard reads (the bounds of `crate::guard::budget`, a pipeline of
/// more stages than [`crate::guard::MAX_PIPELINE_STAGES`]): what the rest would do is
/// unknown, so it is blocked.
/// `beyond` says what was too large.
pub fn too_large(command: &str, beyond: &str) -> Violation {
    Violation {
        category: Category::Parse,
        rule: TOO_LARGE.into(),
        severity: Risk::High,
        matched: cut(command, 200),
        description: format!("the command {beyond}, more than the guard reads; run it as separate, smaller commands"),
        recommendation: Recommendation::Block,
    }
}

/// A violation; `matched` is cut to 200 characters.
pub(crate) fn violation(
    category: Category,
    rule: &str,
    rec: Recommendation,
    severity: Risk,
    matched: &str,
    description: impl Into<String>,
) -> Violation {
    Violation {
        category,
        rule: rule.to_string(),
        severity,
        matched: cut(matched, 200),
        description: description.into(),
        recommendation: rec,
    }
}

/// Shorthand for a blocking violation on a command.
pub(crate) fn block(cat: Category, rule: &str, risk: Risk, cmd: &SimpleCommand, what: impl Into<String>) -> Violation {
    violation(cat, rule, Recommendation::Block, risk, &cmd.display(), what)
}

/// Shorthand for a warning on a command.
pub(crate) fn warn(cat: Category, rule: &str, cmd: &SimpleCommand, what: impl Into<String>) -> Violation {
    violation(cat, rule, Recommendation::Warn, Risk::Medium, &cmd.display(), what)
}

pub(crate) fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let mut s: String = text.chars().take(max).collect();
        s.push('…');
        s
    }
}

/// Commands that send data over the network.
pub(crate) const NET_SENDERS: &[&str] = &[
    "curl",
    "wget",
    "nc",
    "ncat",
    "netcat",
    "socat",
    "ssh",
    "scp",
    "sftp",
    "telnet",
    "ftp",
    "rsync",
    "http",
    "https",
    "xh",
    "aria2c",
    "openssl",
    "dig",
    "nslookup",
    "host",
    "ping",
    "ping6",
    "traceroute",
];

/// Commands that fetch content from the network.
pub(crate) const FETCHERS: &[&str] = &[
    "curl",
    "wget",
    "fetch",
    "http",
    "https",
    "xh",
    "aria2c",
    "nc",
    "ncat",
    "netcat",
    "socat",
    "telnet",
    "socket",
    "gnutls-cli",
    "websocat",
    "cryptcat",
    "pwncat",
    "lwp-request",
    "GET",
    "iwr",
    "irm",
    "Invoke-WebRequest",
    "Invoke-RestMethod",
    // A DNS lookup prints the records the zone's owner wrote (a TXT record holds any text).
    "dig",
    "nslookup",
    "drill",
    "kdig",
    "delv",
];
