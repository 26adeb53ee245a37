//! The effect model: what a command *does*, read from data-driven specs of programs'
//! arguments, and the rules that judge those effects.
//!
//! The older rule files (one per category, `super::rules`) each recognise the commands of
//! their category by name and shape. This module is the method that generalises: a program is
//! described once in [`table`] (which options take a value, which words are subcommands, which
//! arguments are paths, what each subcommand or option shape does), a command's argv is read
//! against that spec ([`spec`]), and every path it writes, deletes or sends is placed
//! ([`place`]: workspace, VCS metadata and hooks, dependency folders, home, startup files,
//! persistence locations, system, kernel state, devices, temp). [`judge`] then decides on the
//! effects, not on the program: a write into `.git/hooks/` is a planted command whoever writes
//! it (`tee`, `cp`, a redirect of any program), a kill by a broad process name is a mass kill
//! whether it is spelled `pkill` or `killall`, and a service with authentication off on every
//! interface is blocked whatever the service is. A new program is a spec entry.
//!
//! What the specs say, effect by effect:
//! - **VCS state**: work-tree restores, ref and forced branch deletion, stash drops, reflog
//!   destruction, immediate pruning — after any global options (`git -C dir --no-pager ...`).
//! - **privilege**: container and namespace escapes (privileged containers, host namespaces,
//!   host root or container socket mounted, `nsenter -t 1`, `unshare -r`, `chroot`, mounting a
//!   host disk), kernel state (sysctl writes, modules, writes under `/proc/sys` and `/sys`),
//!   accounts made passwordless.
//! - **protections torn down**: firewalls flushed or opened, security services stopped, SELinux
//!   and AppArmor off, audit rules deleted; a security, audit or log agent stopped or killed by
//!   any spelling (its unit, init script, own control program, or a kill fed by a lookup of its
//!   name); logs emptied by `find`; system files' time stamps forged; macOS's SIP, Gatekeeper,
//!   FileVault, application firewall and unified log turned off (one exception, quarantine
//!   removed from a download, backups paused: warned).
//! - **security settings by content** ([`settings`]): what is written into a protection's or a
//!   service's configuration (`SELINUX=permissive`, `trust` in `pg_hba.conf`, `-a never`,
//!   `protected-mode no`, `nopass`, a Docker API on `tcp://0.0.0.0`), by echo, tee, a
//!   here-document or a `sed -i` replacement (never its pattern), or lines of a file whose every
//!   line protects commented out or deleted.
//! - **root from a temp directory**: a program, script, search path or preloaded library from
//!   `/tmp`, `/var/tmp` or `/dev/shm` run under sudo (or `run-parts` over such a directory),
//!   or a script from there handed to a root program in any word (`sudo certbot
//!   --manual-auth-hook /tmp/x.sh`): whoever wrote there gets root. A library from the
//!   workspace loaded into a root program (`sudo openssl req -engine ./x.so`) is the agent's
//!   own code run as root.
//! - **files encrypted where they lie** ([`encryption`]): the user's or the system's files
//!   encrypted in place or in bulk (ransomware's method), whichever encryptor does it.
//! - **others' secrets**: another process's memory or system calls (`gcore`, `gdb -p` on a
//!   secret holder, `strace` of its reads and writes as root), every process's environment,
//!   raw input devices and keyloggers (blocked); packet capture aimed at logins, screen and
//!   session recording (warned); credential dumpers.
//! - **ways in by their text** ([`payload`]): a sudoers rule granting root, an SSH public key,
//!   a root crontab line or a uid-0 passwd entry handed to a root program or one given a
//!   path outside the workspace, or written outside the workspace through any filters
//!   (otherwise warned).
//! - **services**: a listener on every interface with its authentication off.
//! - **persistence**: writes into VCS hooks, cron, systemd units, init scripts, autostart,
//!   loader preload, package managers' and network events' hook directories, Python start-up
//!   hooks (`.pth` in a site directory outside the project, `sitecustomize.py`); crontabs
//!   installed; unit files and property lists registered where they lie (`systemctl link`,
//!   `launchctl load`: from a temp or hidden directory blocked); system services enabled at
//!   boot by any init system, lingering (warned).
//! - **process control**: kills by a name that stands for a whole class of processes, or every
//!   process of a user.
//! - **exfiltration**: workspace directories, home or system files sent to a remote host with
//!   scp/rsync/sftp or an HTTP client's upload options, directly, through a pipe from a packer,
//!   or packed into an archive first and sent later in the same line.
//! - **bulk deletion**: `find` deleting from the workspace root without a narrowing test,
//!   `xargs rm` fed by a listing of everything; deleting dependency and build folders is warned.
//! - **disguised shells**: a shell copied or linked under another name (`cp /bin/sh
//!   /tmp/x/rustc`, `ln -s /bin/sh git-x`), or handed over with `-p` after any options.
//! - **checks' own places**: a test or coverage report (`junit.xml`, `coverage.xml`,
//!   `test-results/`) written by anything but a test run forges the verdict; a program in the
//!   runner's own location (`node_modules/.bin`, `.venv/bin`, `vendor/bin`) written by hand
//!   shadows it ([`place::check_place`]); both blocked under `test_tampering.*`.
//! - **staged files**: text written earlier in the line (`echo`, `printf`, `cat <<EOF`) is judged
//!   when a later command runs it, makes it executable, takes it as its configuration (from a
//!   temp directory: one that hands over a shell or a temp-dir library is planted), or, from a
//!   temp directory, takes it as input without being known to only read it.
//!
//! And for programs without a spec: **match the safe ones**. A program in [`table::QUIET`]
//! (known to read, build or test) passes quietly; any other program handed a path in kernel
//! state, a persistence location, VCS hooks or a system directory is warned, because nothing
//! says it only reads it. A spec says only what its clauses say: a use of a specified program
//! that no clause describes is judged the same way, unless the spec describes every effect the
//! program has ([`table::FULLY_DESCRIBED`]: `smartctl -a`, `parted print`, `launchctl list`).
//!
//! Like the rest of the guard, this never touches the file system and never runs anything.

mod encryption;
mod judge;
mod option_names;
mod packages;
mod payload;
mod place;
mod settings;
pub(crate) mod spec;
mod table;

pub(crate) use judge::{
    destroys_each_fed_file, names_stdin, reads_script_from_stdin, runs_unknown_program, script_option_files, VCS_HOOK,
};

/// Whether a command handed file names acts on each file in a way the guard judges by what
/// a listing feeds it: destroys it ([`destroys_each_fed_file`]) or encrypts it.
pub(crate) fn acts_on_each_named_file(cmd: &crate::guard::SimpleCommand) -> bool {
    destroys_each_fed_file(cmd) || encryption::is_encryptor(cmd.name())
}
pub use judge::{asks_or_previews, shown_not_done};

/// The safer alternative for a rule of the effect model, or None for ids it does not own.
pub fn alternative(rule: &str) -> Option<&'static str> {
    judge::alternative(rule)
        .or_else(|| packages::alternative(rule))
        .or_else(|| encryption::alternative(rule))
}
pub use place::{check_place, holds_actual, holds_expected, CheckPlace};
pub(crate) use table::TIMER_OPTIONS;

use super::verdict::Violation;
use super::{GuardContext, Pipeline};

/// The effect rules for command `i` of `pipeline`.
pub fn check(pipeline: &Pipeline, i: usize, ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    judge::command(pipeline, i, ctx, out);
}

/// The effect rules that read the whole line in order (an archive packed by one command and
/// sent by a later one).
pub fn check_line(pipelines: &[Pipeline], ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    judge::line(pipelines, ctx, out);
}
