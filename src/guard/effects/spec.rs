//! The language of program specs: what a program's arguments mean (which options take a value,
//! which words name a subcommand, which arguments are paths) and, for each subcommand and
//! option shape, the effect it has. The data itself lives in [`super::table`]; this module only
//! defines its shape and reads a command's argv against it.
//!
//! A spec is read in three steps, the same for every program:
//! 1. the program's global options are skipped (their values too, from `value_opts`);
//! 2. the subcommand words of the longest matching clause are taken (`stash clear`);
//! 3. the remaining words are split into options and positional arguments, an option in
//!    `value_opts` consuming the next word, everything after `--` positional.
//!
//! A clause fires when its [`When`] holds on those options and arguments; its [`Does`] says
//! what the command does, which [`super::judge`] turns into verdicts.

use crate::guard::options;

/// A program's spec: its names and the clauses that give its effects.
#[derive(Debug)]
pub struct Program {
    /// The command words it answers to (basenames).
    pub names: &'static [&'static str],
    /// Options that take the next word as their value (`-C dir`, `-u user`), global or not.
    pub value_opts: &'static [&'static str],
    /// Every clause that holds contributes its effect.
    pub clauses: &'static [Clause],
}

/// One shape of use: the subcommand words, a condition on the options, and the effect.
#[derive(Debug)]
pub struct Clause {
    /// Subcommand words that must come first among the positional words (empty: any).
    pub sub: &'static [&'static str],
    pub when: When,
    pub does: Does,
}

/// A condition on a command's options and positional arguments.
#[derive(Debug)]
pub enum When {
    Always,
    /// One of these options is present (`--hard`, `--prune=now`; `-f` also inside `-fdx`).
    Any(&'static [&'static str]),
    /// None of these options is present.
    NoneOf(&'static [&'static str]),
    /// An option's value (`--opt=v`, `--opt v`, `-ov`) or a positional word satisfies the test.
    Value(&'static [&'static str], Val),
    /// A positional argument (after the subcommand) satisfies the test.
    Arg(Val),
    /// The first positional argument (after the subcommand) satisfies the test.
    First(Val),
    /// The condition does not hold.
    Not(&'static When),
    /// Both hold.
    Both(&'static When, &'static When),
    /// Either holds.
    Either(&'static When, &'static When),
    /// The arguments hold a `--`: what follows are paths (`git checkout REF -- PATH`).
    DashDash,
}

/// A test on one word.
#[derive(Debug)]
pub enum Val {
    /// Equal to one of these (ASCII case-insensitive).
    Is(&'static [&'static str]),
    /// Starts with one of these.
    Prefix(&'static [&'static str]),
    /// Contains one of these.
    Contains(&'static [&'static str]),
    /// A bind specification mounting the host's root or a host socket (`/:/host`,
    /// `/var/run/docker.sock:/x`).
    HostMount,
    /// Empty, or a value that turns authentication off (`''`, `false`, `no`, `none`, `0`).
    Off,
    /// An address on every interface (`0.0.0.0`, `::`, `*`, `[::]`).
    AllInterfaces,
    /// A port publication not bound to loopback (`-p 5432:5432` listens on every interface).
    NotLoopback,
    /// A remote location: `host:path`, `user@host:path`, `rsync://host/..`.
    Remote,
    /// Zero, alone or as an assignment's value (`0`, `web=0`): a count of nothing.
    Zero,
    /// A subcommand verb, alone or after a colon (`stop`, `apps:stop`, `env:unset`).
    Verb(&'static [&'static str]),
    /// Ends with one of these.
    Suffix(&'static [&'static str]),
    /// Names a security service or agent ([`super::table::names_security_agent`]).
    SecurityAgent,
    /// A bind source that is the home directory (`$HOME`, `~`, `/home/dev`, `/Users/dev`).
    HomeMount,
    /// Any word at all.
    Any,
}

/// What a matched clause does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Does {
    /// Work-tree changes thrown away for the positional paths.
    DiscardWorktree,
    /// Refs or branches deleted (with their own reflog).
    DeleteRefs,
    /// Stashed changes dropped.
    DropStash,
    /// The reflog (git's undo history) destroyed.
    DestroyReflog,
    /// Unreachable objects pruned at once: what the reflog still held is gone.
    PruneObjects,
    /// Joins or grants the host's namespaces or root: a way out of any confinement.
    Escape(&'static str),
    /// Changes kernel state (a tunable, a module, a mount).
    Kernel(&'static str),
    /// Tears down a protection of the machine (firewall, MAC, audit).
    SecurityOff(&'static str),
    /// Erases or stops the record of what ran: the shell history, the system journal.
    TracesErased(&'static str),
    /// Makes an account usable without a password.
    Passwordless,
    /// Starts a service reachable from every interface.
    ExposedService,
    /// Starts a service with its authentication off.
    AuthOff,
    /// The positional arguments are paths it writes (the last one only: `cp a b DEST`).
    WritesLast,
    /// The positional arguments are paths it writes.
    Writes,
    /// Kills processes matched by name (the positional arguments are the names or patterns).
    KillByName,
    /// Kills every process of a user.
    KillUser,
    /// Sends the positional paths to a remote host (`host:path` among the arguments).
    CopyToRemote,
    /// Registers a command the system runs later (a crontab, a timer, a login item).
    Persist(&'static str),
    /// Enables a system service to start at every boot (warned: often the task's own service).
    EnableService,
    /// Overwrites or erases a whole device (`nwipe`, `blkdiscard`, `badblocks -w`).
    WipeDevice,
    /// Changes the machine's network configuration (addresses, routes, links, open ports).
    NetworkConfig,
    /// Shuts down, reboots or replaces the running system (`systemctl soft-reboot`, `kexec -e`).
    Shutdown,
    /// Deletes a user's home directory and files with the account.
    DeleteUserFiles,
    /// Opens a tunnel that lets a remote party reach this machine (`code tunnel`).
    Tunnel,
    /// Exports secret keys (`gpg --export-secret-keys`).
    ExportSecrets,
    /// Hands the positional files to a file-sharing service (`ffsend upload`, `croc send`).
    ShareFiles,
    /// Powers off, suspends, restarts or resets a machine (a VM, or this one).
    MachinePower,
    /// Changes how the machine boots (kernels, boot entries, kernel arguments).
    BootConfig,
    /// Changes a security policy (SELinux mappings, booleans, ports).
    SecurityPolicy,
    /// Kills whatever holds a port, a file or a connection.
    KillHolders,
    /// Throws away every uncommitted change and untracked file of a repository at once
    /// (`git clear`, `hg update --clean`, `hg purge`).
    DiscardEverything,
    /// Deletes data this machine keeps that nothing brings back: the trash, snapshots,
    /// backups, a container's volumes, a database role, queued tasks.
    DeleteLocalData(&'static str),
    /// Changes a disk, a partition or a volume in place (rename, resize, convert, relabel).
    ChangeDisk,
    /// Opens the crontab in an editor: what is saved runs on a schedule.
    EditSchedule,
    /// Prints or stores a secret from a password manager or secret store (judged only when the
    /// secret reaches the transcript or a file, not when it is piped into the program that
    /// needs it).
    ReadSecret,
    /// Deletes resources of a remote service or cloud account (clusters, databases, apps,
    /// buckets): nothing on this machine brings them back.
    DestroyRemote,
    /// Overwrites the remote's history with the local one (`hg push --force`).
    ForcePush,
    /// Throws away changes or revisions that only the tool's own undo history still holds
    /// (`jj abandon`, `jj restore`: `jj undo` brings them back).
    DiscardUndoable,
    /// Runs without the repository's hooks (`hg --config hooks.precommit=`).
    SkipHooks,
    /// Stops or scales to nothing a remote machine or workload (`aws ec2 stop-instances`,
    /// `heroku ps:scale web=0`).
    StopRemote,
    /// Removes one setting, member or attachment of a remote service (`netlify env:unset`).
    RemoveRemote,
    /// Makes a private resource public (`gh repo edit --visibility public`).
    Publish,
    /// Applies infrastructure changes without the plan shown for approval (`cdk deploy
    /// --require-approval never`, `pulumi up --yes --skip-preview`).
    ApplyUnreviewed,
    /// Registers the positional files (units, property lists) as definitions the system runs
    /// (`systemctl link FILE`, `launchctl load FILE`): judged by where the file lives.
    RegistersFile,
    /// Runs every program in the positional directories (`run-parts DIR`): judged by where
    /// they live.
    RunsPrograms,
    /// Reaches the host from a container or pod by design (a node debug pod, the home
    /// directory mounted): warned.
    HostAccess(&'static str),
    /// Records the keystrokes of the machine's input devices.
    Keylog,
    /// Asks the user for their password in a dialog made to look like the system's, and keeps
    /// the answer (`osascript -e 'display dialog .. with hidden answer'`).
    PhishPassword,
    /// Listens in on what passes the machine or its screen (packet capture, screenshots):
    /// others' passwords and secrets pass there.
    Eavesdrop(&'static str),
    /// Loosens one protection without turning it off (a firewall exception, an app allowed
    /// past Gatekeeper, the quarantine mark removed, backups paused): warned.
    Loosens(&'static str),
    /// Reads another process's memory or system calls (`gcore`, `gdb -p`, `strace -p`):
    /// whatever secrets it holds.
    ReadsProcess,
}

/// A command's argv read against a spec: the subcommand words taken, options and positional
/// arguments apart.
#[derive(Debug, Default)]
pub struct Reading<'a> {
    pub options: Vec<(&'a str, Option<&'a str>)>,
    pub positional: Vec<&'a str>,
    /// Index in `positional` where the words after `--` start.
    pub dashdash: Option<usize>,
}

impl Program {
    /// Whether `word` is an option that consumes the next word.
    fn takes_value(&self, word: &str) -> bool {
        self.value_opts.contains(&word)
    }

    /// `-fo` when `-o` takes a value: the flags before it (`-f`) and the option itself, whose
    /// value is the next word (see [`crate::guard::options`]). Programs with single-dash long
    /// options (`xxd -ps`, `ip -netns`) do not bundle.
    fn bundle_taking_next<'a>(&self, word: &'a str) -> Option<(&'a str, &'static str)> {
        if self.value_opts.iter().any(|o| o.len() > 2 && !o.starts_with("--")) {
            return None;
        }
        let b = options::bundle(word, |c| options::listed(self.value_opts, c)).filter(|b| b.takes_next())?;
        Some((&word[..1 + b.flags.len()], options::dashed(b.value_letter?)?))
    }

    /// Reads `args` (argv without the command word): options with their values, positional
    /// words in order.
    pub fn read<'a>(&self, args: &'a [String]) -> Reading<'a> {
        let mut r = Reading::default();
        let mut i = 0;
        let mut rest_positional = false;
        while i < args.len() {
            let a = args[i].as_str();
            if rest_positional || !a.starts_with('-') || a == "-" {
                r.positional.push(a);
            } else if a == "--" {
                rest_positional = true;
                r.dashdash = Some(r.positional.len());
            } else if let Some((name, value)) = a.split_once('=').filter(|_| a.starts_with("--")) {
                r.options.push((name, Some(value)));
            } else if self.takes_value(a) {
                r.options.push((a, args.get(i + 1).map(String::as_str)));
                i += 1;
            } else if let Some((flags, letter)) = self.bundle_taking_next(a) {
                // `-fo FILE`: a bundle whose last letter takes the next word as its value.
                if flags.len() > 1 {
                    r.options.push((flags, None));
                }
                r.options.push((letter, args.get(i + 1).map(String::as_str)));
                i += 1;
            } else {
                r.options.push((a, None));
            }
            i += 1;
        }
        r
    }

    /// The clauses that hold for `args`, each with its operands: the positional words after
    /// its subcommand (after `--` when there is one).
    pub fn effects<'a>(&'static self, args: &'a [String]) -> Vec<(&'static Clause, Vec<&'a str>)> {
        let reading = self.read(args);
        let mut out = Vec::new();
        for clause in self.clauses {
            let n = clause.sub.len();
            if reading.positional.len() < n
                || !clause
                    .sub
                    .iter()
                    .zip(&reading.positional)
                    .all(|(s, p)| s.eq_ignore_ascii_case(p))
            {
                continue;
            }
            let after = &reading.positional[n..];
            let dashdash = reading.dashdash.filter(|d| *d >= n);
            if clause.when.holds(&reading.options, after, dashdash.is_some()) {
                let operands = match dashdash {
                    Some(d) => &reading.positional[d..],
                    None => after,
                };
                out.push((clause, operands.to_vec()));
            }
        }
        out
    }
}

/// Whether the written option `written` is `flag`: equal, `flag=value`, a short flag inside a
/// bundle of single-letter flags (`-f` in `-fdx`), or, for a `flag*`, the option with a value
/// glued to it (`-i*` is `-i.bak`).
pub fn is_flag(written: &str, flag: &str) -> bool {
    // `-i*`: the option with an optional value glued to it (`-i.bak`, `--in-place=.bak`).
    if let Some(option) = flag.strip_suffix('*') {
        return written.starts_with(option);
    }
    if written.eq_ignore_ascii_case(flag) && (flag.starts_with("--") || written == flag) {
        return true;
    }
    if abbreviates(written, flag) {
        return true;
    }
    let short = flag.len() == 2 && flag.starts_with('-') && flag != "--";
    // A bundle is a few letters (`-fdx`, `-qf`); a longer word is a value glued to its option
    // (`-bfeature` is `-b feature`).
    short
        && written.starts_with('-')
        && !written.starts_with("--")
        && written.len() > 2
        && written.len() <= 6
        && written[1..].chars().all(|c| c.is_ascii_alphabetic())
        && written[1..].contains(&flag[1..])
}

/// Whether `written` is `flag` abbreviated the way getopt_long, git and argparse accept
/// (`--al` for `--all`, `--mirr` for `--mirror`): two letters or more, cut inside a word of the
/// flag. A cut at a dash or underscore is left alone: `--force` is an option of its own, not
/// `--force-with-lease` shortened, nor `--bind_ip` `--bind_ip_all`.
pub fn abbreviates(written: &str, flag: &str) -> bool {
    let (Some(w), Some(f)) = (written.strip_prefix("--"), flag.strip_prefix("--")) else {
        return false;
    };
    let w = w.split_once('=').map_or(w, |(name, _)| name);
    w.len() >= 2
        && w.len() < f.len()
        && f.is_char_boundary(w.len())
        && f[..w.len()].eq_ignore_ascii_case(w)
        && !matches!(f.as_bytes()[w.len()], b'-' | b'_')
        && !w.ends_with(['-', '_'])
}

impl When {
    fn holds(&self, options: &[(&str, Option<&str>)], args: &[&str], dashdash: bool) -> bool {
        let has = |flags: &[&str]| options.iter().any(|(o, _)| flags.iter().any(|f| is_flag(o, f)));
        match self {
            When::Always => true,
            When::Any(flags) => has(flags),
            When::NoneOf(flags) => !has(flags),
            When::Value(names, test) => options.iter().any(|(o, v)| {
                names.iter().any(|n| {
                    if o.eq_ignore_ascii_case(n) {
                        v.is_some_and(|v| test.holds(v))
                    } else {
                        // `-oVALUE`: a short option glued to its value.
                        n.len() == 2 && !n.starts_with("--") && o.len() > 2 && o.starts_with(n) && test.holds(&o[2..])
                    }
                })
            }),
            When::Arg(test) => args.iter().any(|a| test.holds(a)),
            When::First(test) => args.first().is_some_and(|a| test.holds(a)),
            When::Not(inner) => !inner.holds(options, args, dashdash),
            When::Both(a, b) => a.holds(options, args, dashdash) && b.holds(options, args, dashdash),
            When::Either(a, b) => a.holds(options, args, dashdash) || b.holds(options, args, dashdash),
            When::DashDash => dashdash,
        }
    }
}

impl Val {
    pub fn holds(&self, word: &str) -> bool {
        let w = word.trim_matches(|c| c == '"' || c == '\'');
        let lower = w.to_ascii_lowercase();
        match self {
            Val::Is(set) => set.iter().any(|s| lower == *s),
            Val::Prefix(set) => set.iter().any(|s| lower.starts_with(s)),
            Val::Contains(set) => set.iter().any(|s| lower.contains(s)),
            Val::HostMount => {
                let source = bind_source(&lower);
                matches!(
                    source,
                    "/" | "/etc" | "/root" | "/proc" | "/sys" | "/dev" | "/home" | "/var/lib/docker"
                ) || source.ends_with("docker.sock")
                    || source.ends_with("containerd.sock")
                    || source.ends_with("podman.sock")
                    || lower.contains("source=/,")
                    || lower.contains("src=/,")
                    || lower.ends_with("source=/")
                    || lower.ends_with("src=/")
            }
            Val::Off => matches!(lower.as_str(), "" | "false" | "no" | "none" | "0" | "off" | "disabled"),
            Val::AllInterfaces => {
                let host = lower
                    .rsplit_once(':')
                    .map(|(h, _)| h)
                    .filter(|h| !h.is_empty() && *h != "[");
                let host = host.unwrap_or(&lower);
                matches!(host, "0.0.0.0" | "::" | "[::]" | "*" | "0" | "all")
            }
            Val::NotLoopback => {
                let parts: Vec<&str> = lower.split(':').collect();
                // `8080`, `8080:80`: every interface; `127.0.0.1:8080:80`: loopback only.
                parts.len() < 3
                    || !(parts[0].starts_with("127.") || parts[0] == "localhost" || lower.starts_with("[::1]"))
            }
            Val::Remote => {
                const REMOTE_SCHEMES: &[&str] = &[
                    "rsync://", "s3://", "gs://", "az://", "wasb://", "wasbs://", "abfs://", "r2://", "b2://",
                    "sftp://", "ftp://", "ftps://",
                ];
                if REMOTE_SCHEMES.iter().any(|s| lower.starts_with(s)) {
                    return true;
                }
                // `host:path` (not a drive letter, not a path with a colon after a slash).
                match w.split_once(':') {
                    Some((host, _)) => {
                        !host.is_empty()
                            && host.len() > 1
                            && !host.contains('/')
                            && host
                                .chars()
                                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '@' | '.' | '-' | '_' | '[' | ']'))
                    }
                    None => false,
                }
            }
            Val::Zero => lower == "0" || lower.ends_with("=0") || lower.ends_with(":0"),
            Val::Verb(set) => {
                let verb = lower.rsplit(':').next().unwrap_or(&lower);
                set.contains(&verb)
            }
            Val::Suffix(set) => set.iter().any(|s| lower.ends_with(s)),
            Val::SecurityAgent => super::table::names_security_agent(w),
            Val::HomeMount => {
                let source = bind_source(&lower).trim_end_matches('/');
                matches!(source, "$home" | "${home}" | "~")
                    || (["/home/", "/users/"].iter().any(|h| {
                        source
                            .strip_prefix(h)
                            .is_some_and(|user| !user.is_empty() && !user.contains('/'))
                    }))
            }
            Val::Any => true,
        }
    }
}

/// The host side of a bind specification: `SRC:DST[:opts]`, or the `source=`/`src=` of a
/// `--mount` list.
fn bind_source(spec: &str) -> &str {
    if spec.starts_with("type=") || spec.starts_with("source=") || spec.starts_with("src=") {
        if let Some(source) = spec
            .split(',')
            .find_map(|kv| kv.strip_prefix("source=").or_else(|| kv.strip_prefix("src=")))
        {
            return source;
        }
    }
    spec.split(':').next().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_flags_are_found_in_bundles_and_long_ones_with_values() {
        assert!(is_flag("-fdx", "-f"));
        assert!(is_flag("-f", "-f"));
        assert!(!is_flag("-F", "-f"));
        assert!(!is_flag("--force", "-f"));
        assert!(is_flag("--force", "--force"));
        assert!(!is_flag("-9", "-f"));
    }

    #[test]
    fn host_mounts_and_interfaces_are_recognised() {
        assert!(Val::HostMount.holds("/:/host"));
        assert!(Val::HostMount.holds("/var/run/docker.sock:/var/run/docker.sock"));
        assert!(Val::HostMount.holds("type=bind,source=/,target=/host"));
        assert!(!Val::HostMount.holds("./data:/data"));
        assert!(!Val::HostMount.holds("/work/app:/app"));
        assert!(Val::HostMount.holds("type=bind,src=/var/run/docker.sock,dst=/d"));
        assert!(Val::HomeMount.holds("$HOME:/home/dev"));
        assert!(Val::HomeMount.holds("/home/dev/:/h:ro"));
        assert!(Val::HomeMount.holds("type=bind,source=/Users/dev,target=/h"));
        assert!(!Val::HomeMount.holds("/home/dev/project:/app"));
        assert!(!Val::HomeMount.holds("./data:/data"));
        assert!(Val::AllInterfaces.holds("0.0.0.0"));
        assert!(Val::AllInterfaces.holds("0.0.0.0:8080"));
        assert!(Val::AllInterfaces.holds("[::]:80"));
        assert!(!Val::AllInterfaces.holds("127.0.0.1:8080"));
        assert!(!Val::AllInterfaces.holds("8080"));
    }
}
