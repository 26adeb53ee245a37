//! Process: killing every process (`kill -9 -1`, `kill 1`, `killall5`), fork bombs, and
//! shutting the machine down (`shutdown`, `reboot`, `halt`, `init 0`, `systemctl poweroff`,
//! writes to `/proc/sysrq-trigger`). Stopping the services that keep the machine reachable
//! (ssh, networking) and turning swap off are warned. A fork bomb is also an inline program forking in an endless
//! loop (`python -c 'while True: os.fork()'`). `crypto_miner`: a cryptocurrency miner (a known
//! miner's name, or any program pointed at a mining pool's `stratum+tcp://` address) spends
//! the machine's processors on someone else's account.

use super::{block, violation, warn};
use crate::guard::regexes::{group, Pattern};
use crate::guard::verdict::{Category, Recommendation, Risk, Violation};
use crate::guard::SimpleCommand;

pub const KILL_ALL: &str = "process.kill_all";
pub const FORK_BOMB: &str = "process.fork_bomb";
pub const SHUTDOWN: &str = "process.shutdown";
pub const CRYPTO_MINER: &str = "process.crypto_miner";

/// Cryptocurrency miners, by their program names.
const MINERS: &[&str] = &[
    "xmrig",
    "xmr-stak",
    "xmr-stak-rx",
    "minerd",
    "cpuminer",
    "cpuminer-multi",
    "cgminer",
    "bfgminer",
    "ethminer",
    "nbminer",
    "t-rex",
    "lolminer",
    "teamredminer",
    "gminer",
    "phoenixminer",
    "nanominer",
    "srbminer-multi",
    "xmrminer",
];

pub fn alternative(rule: &str) -> &'static str {
    match rule {
        KILL_ALL => "kill the one process you started, by its pid (kill 12345)",
        CRYPTO_MINER => "leave the machine's processors to the task; mine nothing",
        _ => "leave the machine running; stop only the processes you started",
    }
}

pub fn check(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    let name = cmd.name();
    let c = Category::Process;
    let args: Vec<&str> = cmd.argv.iter().skip(1).map(String::as_str).collect();
    // `./xmrig -o pool:4444 -u WALLET`, `zorp -a rx -o stratum+tcp://pool:3333`; a pool's
    // address handed to a program the guard knows is a pattern or a rule (`grep`, `iptables`).
    let unknown = || crate::guard::effects::runs_unknown_program(cmd);
    let pool = args
        .iter()
        .any(|a| a.contains("://") && crate::guard::ascii::contains_lowercase(a, "stratum"));
    // `xmrig-6.21.0`, `xmrig.exe`: a miner's name with its version or a Windows suffix.
    let miner = MINERS.iter().any(|m| {
        name.get(..m.len()).is_some_and(|head| head.eq_ignore_ascii_case(m)) && {
            let rest = &name[m.len()..];
            let rest = rest.strip_suffix(".exe").unwrap_or(rest);
            rest.is_empty()
                || rest
                    .strip_prefix(['-', '_', 'v'])
                    .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()))
        }
    });
    if miner || (pool && unknown()) {
        out.push(block(
            c,
            CRYPTO_MINER,
            Risk::High,
            cmd,
            "runs a cryptocurrency miner: the machine's processors spent on someone else's account",
        ));
        return;
    }
    if cmd.redirects.iter().any(|r| r == "/proc/sysrq-trigger") {
        out.push(block(
            c,
            SHUTDOWN,
            Risk::Critical,
            cmd,
            "writes to /proc/sysrq-trigger (reboots, crashes or kills everything at once)",
        ));
        return;
    }
    match name {
        "kill" => {
            // Signal options, then pids; `-1` as a pid (after a signal or `--`) is every process.
            let mut i = 0;
            let mut signal_seen = false;
            while let Some(a) = args.get(i) {
                if *a == "--" {
                    i += 1;
                    break;
                }
                if *a == "-s" || *a == "-n" {
                    i += 2;
                    signal_seen = true;
                    continue;
                }
                if a.starts_with('-') && !signal_seen {
                    signal_seen = true;
                    i += 1;
                    continue;
                }
                break;
            }
            let pids = &args[i.min(args.len())..];
            let everything =
                pids.iter().any(|p| *p == "-1" || *p == "1" || *p == "0" || *p == "-0") || (args == ["-1"]);
            if everything {
                out.push(block(c, KILL_ALL, Risk::Critical, cmd, "kills every process (or init)"));
            }
        }
        "killall5" => out.push(block(c, KILL_ALL, Risk::Critical, cmd, "kills every process")),
        // `-c` cancels a scheduled shutdown; `-w`/`--wtmp-only` only writes the wtmp record.
        "shutdown" | "reboot" | "halt" | "poweroff"
            if !args
                .iter()
                .any(|a| matches!(*a, "-c" | "--help" | "-w" | "--wtmp-only" | "--show")) =>
        {
            out.push(block(
                c,
                SHUTDOWN,
                Risk::Critical,
                cmd,
                "shuts down or reboots the machine",
            ));
        }
        // `swapoff -a`, `swapoff /swapfile`: kernel memory state; with less swap, memory
        // pressure kills processes.
        "swapoff" if args.iter().any(|a| !matches!(*a, "-h" | "--help" | "-V" | "--version")) => {
            out.push(warn(
                c,
                SHUTDOWN,
                cmd,
                "turns off swap; under memory pressure the machine starts killing processes",
            ));
        }
        "init" | "telinit" if args.iter().any(|a| matches!(*a, "0" | "6" | "1" | "S" | "s")) => {
            out.push(block(
                c,
                SHUTDOWN,
                Risk::Critical,
                cmd,
                "changes the run level (halt or reboot)",
            ));
        }
        // `systemctl halt --when=cancel`: cancels a scheduled action.
        // `systemctl isolate rescue.target` (`isolate rescue`: it adds `.target`), `systemctl
        // start reboot.target`, `systemctl set-default poweroff.target` (at every boot),
        // `systemctl start systemd-reboot.service`: the same states reached through their units.
        "systemctl" | "loginctl"
            if !crate::guard::effects::shown_not_done(&cmd.argv)
                && args.iter().any(|a| {
                    let state = |w: &str| {
                        matches!(
                            w,
                            "poweroff" | "reboot" | "halt" | "kexec" | "suspend" | "hibernate" | "rescue" | "emergency"
                        )
                    };
                    let verb = |verbs: &[&str]| args.iter().any(|v| verbs.contains(v));
                    let stem = match a.strip_suffix(".target") {
                        Some(stem) => Some(stem),
                        None if verb(&["isolate"]) => Some(*a),
                        // `systemd-reboot.service`, `systemd-reboot`: the service behind the state.
                        None => a
                            .strip_suffix(".service")
                            .unwrap_or(a)
                            .strip_prefix("systemd-")
                            .filter(|s| state(s) || matches!(*s, "exit" | "soft-reboot")),
                    };
                    let unit = stem.is_some_and(|t| {
                        state(t)
                            || matches!(
                                t,
                                "runlevel0"
                                    | "runlevel1"
                                    | "runlevel6"
                                    | "shutdown"
                                    | "ctrl-alt-del"
                                    | "soft-reboot"
                                    | "exit"
                                    | "hybrid-sleep"
                                    | "suspend-then-hibernate"
                            )
                    }) && verb(&[
                        "isolate",
                        "start",
                        "restart",
                        "reload-or-restart",
                        "try-restart",
                        "force-reload",
                        "set-default",
                        "enable",
                    ]);
                    // `systemctl exit`: the system manager's exit is a power-off.
                    let exit = args.iter().find(|w| !w.starts_with('-')) == Some(&"exit") && !args.contains(&"--user");
                    state(a) || unit || exit
                }) =>
        {
            out.push(block(
                c,
                SHUTDOWN,
                Risk::Critical,
                cmd,
                "shuts down or reboots the machine",
            ));
        }
        // `service halt stop`, `/etc/init.d/reboot stop`, `/etc/init.d/rc 0`: SysV's scripts
        // that take the machine down whatever they are asked.
        "service" | "invoke-rc.d"
            if matches!(
                args.first().copied(),
                Some(
                    "halt"
                        | "reboot"
                        | "shutdown"
                        | "single"
                        | "sendsigs"
                        | "killall"
                        | "killprocs"
                        | "kexec"
                        | "umountfs"
                        | "umountroot"
                        | "rc.0"
                        | "rc.6"
                        | "rc.K"
                        | "rc.shutdown"
                )
            ) || (args.first() == Some(&"rc") && matches!(args.get(1).copied(), Some("0" | "1" | "6" | "S"))) =>
        {
            out.push(block(
                c,
                SHUTDOWN,
                Risk::Critical,
                cmd,
                "runs the init script that halts, reboots or drops the machine to single-user mode",
            ));
        }
        // `rc 6`, `openrc shutdown`: OpenRC's and SysV's run-level switch.
        "rc" | "openrc"
            if matches!(
                args.first().copied(),
                Some("0" | "1" | "6" | "S" | "reboot" | "shutdown" | "single" | "off")
            ) =>
        {
            out.push(block(
                c,
                SHUTDOWN,
                Risk::Critical,
                cmd,
                "changes the run level (halt, reboot or single-user mode)",
            ));
        }
        // `systemctl --user stop dbus`: the user's own service manager, not the machine's.
        "systemctl" | "service" | "rc-service" | "invoke-rc.d" | "sv"
            if !args.contains(&"--user")
                && args.iter().any(|a| {
                    matches!(
                        *a,
                        "stop"
                            | "kill"
                            | "disable"
                            | "mask"
                            | "down"
                            | "force-stop"
                            | "onestop"
                            | "faststop"
                            | "forcestop"
                    )
                })
                && args.iter().any(|a| {
                    let unit = a.trim_end_matches(".service").trim_end_matches(".socket");
                    MACHINE_SERVICES.contains(&unit) || unit.starts_with("systemd-")
                }) =>
        {
            out.push(warn(
                c,
                SHUTDOWN,
                cmd,
                "stops a service the machine itself relies on (remote access, networking, containers, scheduled jobs, its message bus)",
            ));
        }
        _ => {}
    }
}

/// Services the machine itself relies on rather than an application's: remote access,
/// networking, the container runtime, the job schedulers and the message bus (a time service
/// is stopped and started again to set the clock by hand). Security and logging services are
/// `network.firewall`'s, and blocked.
const MACHINE_SERVICES: &[&str] = &[
    "ssh",
    "sshd",
    "networking",
    "NetworkManager",
    "docker",
    "containerd",
    "cron",
    "crond",
    "cronie",
    "anacron",
    "atd",
    "dbus",
    "dropbear",
];

/// A function that pipes itself into itself in the background.
pub(crate) static BOMB: Pattern =
    Pattern::new(r"([A-Za-z_:.][\w:.]*)\s*\(\)\s*\{[^}]*?([A-Za-z_:.][\w:.]*)\s*\|\s*([A-Za-z_:.][\w:.]*)\s*&");

/// `process.fork_bomb`: a function that pipes itself into itself in the background
/// (`:(){ :|:& };:` and renamed variants).
pub fn fork_bomb(text: &str, out: &mut Vec<Violation>) {
    if !text.contains("()") {
        return;
    }
    // `while True: os.fork()`, `while(1) fork;`: forking in an endless loop.
    let squeezed: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let endless = ["whileTrue:", "while1:", "while(1)", "while(true)", "for(;;)", "loop{"]
        .iter()
        .any(|l| squeezed.contains(l));
    if endless && squeezed.contains("fork()") {
        out.push(violation(
            Category::Process,
            FORK_BOMB,
            Recommendation::Block,
            Risk::Critical,
            text,
            "a fork bomb: a program that forks in an endless loop",
        ));
        return;
    }
    // Every match holds `{`, `|` and `&`: without them the regex is not even compiled.
    if !(text.contains('{') && text.contains('|') && text.contains('&')) {
        return;
    }
    for g in BOMB.captures_iter(text) {
        let f = group(text, &g, 1);
        if f.is_some() && f == group(text, &g, 2) && f == group(text, &g, 3) {
            out.push(violation(
                Category::Process,
                FORK_BOMB,
                Recommendation::Block,
                Risk::Critical,
                group(text, &g, 0).unwrap_or(text),
                "a fork bomb: a function that spawns itself until the machine stops",
            ));
            return;
        }
    }
}
