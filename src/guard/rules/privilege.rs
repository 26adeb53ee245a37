//! Privilege: world-writable permissions on system paths (`chmod -R 777 /`), setuid/setgid
//! bits and capabilities, sudoers and doas.conf edits, `chown -R` of system directories, adding
//! users to groups whose members are root in all but name (sudo, wheel, admin, docker, lxd,
//! incus-admin, libvirt, disk, shadow, kmem, gid 0; by usermod, gpasswd, adduser, pw,
//! dseditgroup or dscl), a second uid 0, root's password replaced, writes to
//! `/etc/passwd`/`/etc/shadow`. `lockout`: `chmod -R 000` /
//! `chattr -R +i` of a tree outside the workspace (blocked; warned without `-R`);
//! `root_shell`: `sudo -s`/`-i`, `su -`, `pkexec bash` (blocked). `install -m 4755` is a setuid
//! change like `chmod`. `ssh_access`: writing `~/.ssh/authorized_keys` or the SSH daemon's
//! configuration (a login for someone else, root login turned on). `startup_hijack`: a shell
//! startup file given a PATH that starts with /tmp, /dev/shm or `.` (or an `alias sudo=`).
//! Warned: `ssh HOST 'sudo ..'` (`root_shell`, root on another machine). `global_install`
//! (`npm install -g`, `yarn global add`, `sudo pip install`) is decided by the effect model's
//! package managers (`effects/packages.rs`), which use this id and its alternative.

use super::{block, warn};
use crate::guard::targets::{classify_target, home_relative, startup_file, TEMP_DIRS};
use crate::guard::verdict::{Category, Risk, Violation};
use crate::guard::{GuardContext, SimpleCommand};

pub const CHMOD_WORLD: &str = "privilege.chmod_world";
pub const SETUID: &str = "privilege.setuid";
pub const SUDOERS: &str = "privilege.sudoers";
pub const CHOWN_SYSTEM: &str = "privilege.chown_system";
pub const USER_GROUPS: &str = "privilege.user_groups";
pub const ROOT_SHELL: &str = "privilege.root_shell";
pub const LOCKOUT: &str = "privilege.lockout";
pub const SSH_ACCESS: &str = "privilege.ssh_access";
pub const GLOBAL_INSTALL: &str = "privilege.global_install";
/// `privilege.local_package` (warn): a system package manager installing, as root, a package
/// file or URL that no configured repository vouches for; its install scripts run as root.
pub const LOCAL_PACKAGE: &str = "privilege.local_package";
pub const STARTUP_HIJACK: &str = "privilege.startup_hijack";

/// `export PATH=/tmp/x:$PATH`, `PATH=.:$PATH`, `alias sudo=..`: text that, in a startup file,
/// puts a world-writable or relative directory first on the PATH or redefines `sudo`/`su`.
fn hijacking_text(text: &str) -> bool {
    text.split(['\n', ';']).any(|line| {
        let line = line.trim().trim_start_matches("export ").trim();
        if let Some(v) = line.strip_prefix("PATH=") {
            let first = v
                .trim_matches(|c| c == '"' || c == '\'')
                .split(':')
                .next()
                .unwrap_or("");
            return TEMP_DIRS
                .iter()
                .chain(&["."])
                .any(|d| first == *d || first.starts_with(&format!("{d}/")))
                || first.is_empty() && v.starts_with(':');
        }
        line.starts_with("alias sudo=") || line.starts_with("alias su=")
    })
}

/// `~/.ssh/authorized_keys` (any home spelling) or the SSH daemon's configuration.
fn ssh_access_file(w: &str) -> bool {
    let w = w.trim_start_matches("of=");
    w.starts_with("/etc/ssh/sshd_config")
        || home_relative(w).is_some_and(|r| r == ".ssh/authorized_keys" || r == ".ssh/authorized_keys2")
}

pub fn alternative(rule: &str) -> &'static str {
    match rule {
        CHMOD_WORLD => "grant the least permission on the file you need, e.g. chmod u+x script.sh",
        ROOT_SHELL => "run the one command that needs root with sudo, not a root shell",
        LOCKOUT => "change the permissions or attributes of the workspace files you mean, not a tree outside it",
        SSH_ACCESS => "leave SSH logins and keys to the user; ask them to add a key if one is needed",
        GLOBAL_INSTALL => "install it into the workspace (npm install -D x, then npx x) instead of globally",
        LOCAL_PACKAGE => "install from the distribution's repositories, or unpack the package without running its scripts (dpkg-deb -x, rpm2cpio)",
        STARTUP_HIJACK => "put tools in a directory only you can write (~/.local/bin) and append it after $PATH",
        _ => "do not change system privileges; ask the user to do it",
    }
}

fn world_writable(mode: &str) -> bool {
    if mode.chars().all(|c| c.is_ascii_digit()) {
        return mode.chars().last().is_some_and(|c| matches!(c, '2' | '3' | '6' | '7'));
    }
    mode.split(',')
        .any(|m| (m.starts_with('o') || m.starts_with('a') || m.starts_with('+')) && m.contains('+') && m.contains('w'))
}

fn setuid_mode(mode: &str) -> bool {
    if mode.chars().all(|c| c.is_ascii_digit()) {
        return mode.len() == 4 && matches!(mode.chars().next(), Some('2' | '4' | '6' | '7'));
    }
    // Symbolic modes: `u+s`, `g+xs`, `a=rwxs`, `+s`; every clause of `u+x,g+s` counts.
    mode.split(',').any(|clause| {
        clause
            .split_once(['+', '='])
            .is_some_and(|(who, perms)| who.chars().all(|c| "ugoa".contains(c)) && perms.contains('s'))
    })
}

const PROTECTED: &[&str] = &[
    "/etc/sudoers",
    "/usr/local/etc/sudoers",
    "/etc/doas.conf",
    "/usr/local/etc/doas.conf",
    "/etc/passwd",
    "/etc/shadow",
    "/etc/group",
    "/etc/gshadow",
];

/// `sudo -l`, `sudo -nl`, `sudo -k`, `doas -L`, `su --help`: listing rights, help, forgetting
/// the cached credentials; no shell. Each program's own options: `su -l` is a login shell.
fn asks_only(name: &str, args: &[String]) -> bool {
    args.iter().any(|a| {
        let a = a.as_str();
        matches!(a, "--help" | "--version")
            || match name {
                "sudo" => {
                    matches!(a, "--list" | "--validate" | "--reset-timestamp" | "--remove-timestamp")
                        || (a.starts_with('-') && !a.starts_with("--") && a[1..].chars().any(|c| "lkKvVh".contains(c)))
                }
                "su" => matches!(a, "-h" | "-V"),
                "doas" => a == "-L",
                _ => false,
            }
    })
}

pub fn check(cmd: &SimpleCommand, ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    let name = cmd.name();
    let p = Category::Privilege;
    // `sudo -s`, `sudo -i`, `pkexec bash` (kept whole by unwrap_command), `su -`, `su -s
    // /bin/sh`, `runuser -l root`: a root shell.
    let su_like = matches!(name, "su" | "runuser");
    let wrapper = crate::guard::carriers::is_root_wrapper(name);
    let shell_form = (su_like || wrapper)
        // `.. | xargs sudo --` runs `sudo -- ITEMS..`: a command, not a shell.
        && !cmd.args_from_stdin
        && !cmd.argv.iter().any(|a| a == "-c" || a == "--command")
        && !asks_only(name, &cmd.argv[1..]);
    let su_shell = shell_form && crate::guard::carriers::runs_as_root(&cmd.argv);
    // `sudo -u postgres -i`, `doas -u app sh`: a shell as another account; what it runs is
    // out of sight, with that account's rights.
    if wrapper && shell_form && !su_shell {
        out.push(warn(p, ROOT_SHELL, cmd, "opens a shell as another user"));
        return;
    }
    // `su - deploy`: a login shell as another user; what it runs is out of sight too.
    if name == "su"
        && !su_shell
        && !cmd
            .argv
            .iter()
            .any(|a| a == "-c" || a == "--command" || a == "-h" || a == "--help")
        && cmd.argv.iter().skip(1).any(|a| !a.starts_with('-'))
    {
        out.push(warn(p, ROOT_SHELL, cmd, "opens a shell as another user"));
        return;
    }
    if su_shell {
        // Everything typed into it afterwards is out of the guard's sight.
        out.push(block(p, ROOT_SHELL, Risk::High, cmd, "opens a root shell"));
        return;
    }
    // `echo 'export PATH=/tmp/evil:$PATH' >> ~/.bashrc`: every later shell runs whatever is
    // dropped into a world-writable directory instead of the real program.
    let into_startup = cmd.redirects.iter().any(|r| startup_file(r))
        || (name == "tee" && cmd.argv.iter().skip(1).any(|a| startup_file(a)));
    let text = || cmd.argv[1.min(cmd.argv.len())..].join(" ") + "\n" + cmd.stdin_text.as_deref().unwrap_or("");
    if into_startup && hijacking_text(&text()) {
        out.push(block(
            p,
            STARTUP_HIJACK,
            Risk::High,
            cmd,
            "writes into a shell startup file a PATH that starts with a world-writable or relative directory (or redefines sudo): every later shell can be hijacked",
        ));
        return;
    }
    // `ssh host 'sudo systemctl restart app'`: root commands on another machine.
    if name == "ssh" && cmd.argv.iter().skip(2).any(|a| a == "sudo" || a.starts_with("sudo ")) {
        out.push(warn(p, ROOT_SHELL, cmd, "runs commands as root on another machine"));
    }
    // `chmod -R 000 ~`, `chattr -R +i /`: every file of a tree made unusable.
    let recursive = cmd.argv.iter().any(|a| a == "-R" || a == "--recursive");
    let locks =
        match name {
            "chmod" => cmd.argv.iter().skip(1).any(|m| {
                m.chars().all(|c| c == '0') && m.len() >= 3 || matches!(m.as_str(), "a-rwx" | "ugo-rwx" | "-rwx")
            }),
            "chattr" => cmd.argv.iter().any(|a| a.starts_with('+') && a.contains('i')),
            _ => false,
        };
    if locks {
        let outside = cmd
            .argv
            .iter()
            .skip(1)
            .filter(|a| !a.starts_with('-') && !a.starts_with('+'))
            .find(|a| classify_target(a, cmd.cwd.as_deref(), ctx.workspace).is_beyond_workspace());
        if let Some(t) = outside {
            if recursive {
                out.push(block(
                    p,
                    LOCKOUT,
                    Risk::High,
                    cmd,
                    format!("makes every file under `{t}` unusable"),
                ));
            } else {
                out.push(warn(p, LOCKOUT, cmd, format!("locks `{t}` against use or change")));
            }
            return;
        }
    }
    let touches_protected = |w: &str| {
        PROTECTED.contains(&w) || w.starts_with("/etc/sudoers.d") || w.starts_with("/usr/local/etc/sudoers.d")
    };
    if cmd.redirects.iter().any(|r| touches_protected(r))
        || (matches!(name, "tee" | "cp" | "mv" | "install" | "ln" | "sed" | "dd")
            && cmd
                .argv
                .iter()
                .skip(1)
                .any(|a| touches_protected(a.trim_start_matches("of="))))
        || (name == "visudo" && !args_check_only(cmd))
    {
        out.push(block(
            p,
            SUDOERS,
            Risk::Critical,
            cmd,
            "changes sudoers, users or passwords of the system",
        ));
        return;
    }
    let writer = matches!(name, "tee" | "cp" | "mv" | "install" | "ln" | "sed" | "dd" | "perl");
    if cmd.redirects.iter().any(|r| ssh_access_file(r))
        || (writer && cmd.argv.iter().skip(1).any(|a| ssh_access_file(a)))
    {
        out.push(block(
            p,
            SSH_ACCESS,
            Risk::Critical,
            cmd,
            "changes who can log in over SSH (authorized_keys or sshd_config)",
        ));
        return;
    }
    // `install -m 4755 /bin/bash /tmp/x`: a setuid copy.
    if name == "install" {
        let mode = cmd.argv.iter().enumerate().skip(1).find_map(|(i, a)| {
            if a == "-m" || a == "--mode" {
                cmd.argv.get(i + 1).map(String::as_str)
            } else {
                a.strip_prefix("--mode=")
                    .or_else(|| a.strip_prefix("-m").filter(|m| !m.is_empty()))
            }
        });
        if mode.is_some_and(setuid_mode) {
            out.push(block(
                p,
                SETUID,
                Risk::Critical,
                cmd,
                "installs a file with the setuid/setgid bit: it runs with its owner's rights",
            ));
            return;
        }
    }
    let args: Vec<&str> = cmd.argv.iter().skip(1).map(String::as_str).collect();
    let recursive = args
        .iter()
        .any(|a| *a == "-R" || *a == "--recursive" || (a.starts_with('-') && !a.starts_with("--") && a.contains('R')));
    let operands: Vec<&str> = args.iter().copied().filter(|a| !a.starts_with('-')).collect();
    match name {
        "chmod" => {
            let Some((mode, targets)) = operands.split_first() else {
                return;
            };
            if setuid_mode(mode) {
                out.push(block(
                    p,
                    SETUID,
                    Risk::Critical,
                    cmd,
                    "sets the setuid/setgid bit: the file runs with its owner's rights",
                ));
                return;
            }
            if world_writable(mode) {
                for t in targets {
                    if classify_target(t, cmd.cwd.as_deref(), ctx.workspace).is_work_area() {
                        out.push(warn(p, CHMOD_WORLD, cmd, format!("makes `{t}` writable by every user")));
                    } else {
                        out.push(block(
                            p,
                            CHMOD_WORLD,
                            Risk::Critical,
                            cmd,
                            format!("makes `{t}` writable by every user"),
                        ));
                        return;
                    }
                }
            }
        }
        "chown" | "chgrp" if recursive => {
            for t in operands.iter().skip(1) {
                if classify_target(t, cmd.cwd.as_deref(), ctx.workspace).is_machine_or_home() {
                    out.push(block(
                        p,
                        CHOWN_SYSTEM,
                        Risk::Critical,
                        cmd,
                        format!("changes the owner of `{t}` recursively"),
                    ));
                    return;
                }
            }
        }
        // `setcap -r FILE` removes capabilities, `setcap -v CAPS FILE` only compares; setcap
        // takes `{-r FILE | CAPS FILE}` pairs, so any capability set not under `-v` grants.
        "setcap" if setcap_grants(&args) => out.push(block(
            p,
            SETUID,
            Risk::High,
            cmd,
            "grants file capabilities (privileges) to a program",
        )),
        _ if root_group_joined(cmd).is_some() => {
            let group = root_group_joined(cmd).unwrap_or_default();
            out.push(block(
                p,
                USER_GROUPS,
                Risk::Critical,
                cmd,
                format!("adds a user to `{group}`, a group whose members are root in all but name"),
            ));
        }
        _ if uid_zero(cmd) => out.push(block(
            p,
            USER_GROUPS,
            Risk::Critical,
            cmd,
            "gives an account uid 0: a second root",
        )),
        // `sudo passwd`, `sudo passwd root`: root's own password replaced.
        "passwd"
            if cmd.as_root
                && operands.iter().all(|o| *o == "root")
                && !args
                    .iter()
                    .any(|a| matches!(*a, "-S" | "--status" | "-l" | "--lock" | "-h" | "--help")) =>
        {
            out.push(block(p, USER_GROUPS, Risk::Critical, cmd, "replaces root's password"))
        }
        "passwd" | "chpasswd" | "useradd" | "userdel" | "usermod" | "gpasswd" | "groupadd" | "groupdel"
        | "groupmod" | "adduser" | "addgroup" | "deluser" | "delgroup" | "smbpasswd" | "chage" | "vipw" | "vigr"
        | "sulogin" | "pdbedit" | "chsh" | "chfn" | "sysadminctl" | "groupmems" | "newusers" => {
            out.push(warn(p, USER_GROUPS, cmd, "changes the system's users or passwords"))
        }
        // FreeBSD's `pw`, macOS's directory tools: the verbs that change an account.
        "pw" | "dscl" | "dseditgroup"
            if args.iter().any(|a| {
                matches!(
                    *a,
                    "useradd"
                        | "usermod"
                        | "userdel"
                        | "groupadd"
                        | "groupmod"
                        | "groupdel"
                        | "lock"
                        | "unlock"
                        | "-create"
                        | "-append"
                        | "-merge"
                        | "-delete"
                        | "-passwd"
                        | "-change"
                        | "edit"
                        | "create"
                        | "delete"
                )
            }) =>
        {
            out.push(warn(p, USER_GROUPS, cmd, "changes the system's users or passwords"))
        }
        _ => {}
    }
}

/// Groups whose members are root in all but name: the administrators (`sudo`, `wheel`,
/// `admin`), the container and VM managers (`docker`, `lxd`, `incus-admin`, `libvirt`: a
/// container or VM mounts the host's disk), the raw disks (`disk`), the password hashes
/// (`shadow`), root's own group (`root`, gid `0`), and the logs (`adm`).
const ROOT_GROUPS: &[&str] = &[
    "root",
    "0",
    "sudo",
    "wheel",
    "admin",
    "docker",
    "lxd",
    "lxc",
    "incus-admin",
    "libvirt",
    "libvirtd",
    "disk",
    "shadow",
    "kmem",
    "adm",
];

/// The root-equivalent group `cmd` adds a user to, if any: `usermod -aG lxd dev`, `gpasswd -a
/// dev docker`, `adduser dev sudo`, `pw usermod dev -G wheel`, `dscl . -append /Groups/admin
/// GroupMembership dev`, `dseditgroup -o edit -a dev -t user admin`.
fn root_group_joined(cmd: &SimpleCommand) -> Option<&str> {
    let name = cmd.name();
    let args = cmd.argv.get(1..).unwrap_or_default();
    let root_group = |w: &str| {
        w.split(',')
            .find(|g| ROOT_GROUPS.contains(g) || g.contains("sudo") || g.contains("wheel"))
            .is_some()
    };
    match name {
        "usermod" | "useradd" | "gpasswd" | "adduser" | "addgroup" | "pw" | "dseditgroup" => args
            .iter()
            .find(|a| !a.starts_with('-') && root_group(a))
            .map(String::as_str),
        // `groupmems -g wheel -a bob`: a member added to the group `-g` names.
        "groupmems" if args.iter().any(|a| a == "-a" || a == "--add") => args
            .windows(2)
            .find(|w| matches!(w[0].as_str(), "-g" | "--group") && root_group(&w[1]))
            .map(|w| w[1].as_str()),
        "dscl" => {
            let members = args
                .iter()
                .any(|a| a.eq_ignore_ascii_case("GroupMembership") || a.eq_ignore_ascii_case("GroupMembers"));
            let adds = args
                .iter()
                .any(|a| matches!(a.as_str(), "-append" | "-create" | "-merge"));
            let group = args.iter().find_map(|a| {
                a.strip_prefix("/Groups/")
                    .filter(|g| ROOT_GROUPS.contains(g) || *g == "wheel" || *g == "admin")
            });
            group.filter(|_| members && adds)
        }
        _ => None,
    }
}

/// `dscl . -create /Users/svc UniqueID 0`: an account given root's user id.
fn uid_zero(cmd: &SimpleCommand) -> bool {
    cmd.name() == "dscl"
        && cmd.argv.windows(2).any(|w| {
            (w[0].eq_ignore_ascii_case("UniqueID") || w[0].eq_ignore_ascii_case("PrimaryGroupID")) && w[1] == "0"
        })
}

/// `visudo -c`, `visudo --check -f FILE`: checks the syntax and changes nothing.
pub(crate) fn args_check_only(cmd: &SimpleCommand) -> bool {
    cmd.argv[1..].iter().any(|a| {
        a == "--check"
            || (a.starts_with('-')
                && !a.starts_with("--")
                && a[1..].chars().all(|c| c.is_ascii_alphabetic())
                && a.contains('c'))
    })
}

/// Whether `setcap ARGS` sets capabilities: a capability text (`cap_x+ep`, `=ep`) among its
/// pairs, unless `-v` (verify only) is given as an option of its own (not as `-n`'s value).
fn setcap_grants(args: &[&str]) -> bool {
    let mut verify = false;
    let mut grants = false;
    let mut i = 0;
    while i < args.len() {
        match args[i] {
            "-n" => i += 1,
            "-v" => verify = true,
            "-r" => i += 1,
            a if !a.starts_with('-') && (a.contains("cap_") || a.contains('=') || a.contains('+')) => {
                grants = true;
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    grants && !verify
}
