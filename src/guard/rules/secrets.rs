//! Secrets: credentials written into a command line (where logs, shell history and process
//! lists keep them) and reads of credential files.
//!
//! Known token formats (AWS `AKIA…`, GitHub `ghp_`/`github_pat_`, GitLab `glpat-`, Slack
//! `xox?-`, Stripe `sk_live_`, OpenAI/Anthropic `sk-…`, Google `AIza…`, npm, Hugging Face,
//! DigitalOcean, PyPI, Databricks, Shopify, SendGrid, private key headers, JWTs) with an
//! entropy floor so placeholders pass (and jwt.io's sample token); URL userinfo
//! (`https://u:pw@host`); `-p'pw'` / `--password=pw`; `*PASSWORD=`/`*TOKEN=`/`*SECRET=`
//! literals (a password-named one of 10+ letters and digits, `PGPASSWORD=Pr0dPassw0rd`, too);
//! `Authorization:` and key/token-named headers (`X-Api-Key:`, `PRIVATE-TOKEN:`; not
//! entropy-free words like `test-token`) and `curl -u user:pw`; secret-named long options with
//! a key-like value (`--auth V`, `--access-token V`, `twine -p`). A stock login on localhost (`postgres:postgres@localhost`) is not a secret.
//! `$VAR` references are not secrets, and neither are 40-hex git SHAs (only named formats and secret-named values are
//! checked). Slack/Discord webhook URLs are tokens; any `--*password=`, `docker login -p`,
//! `--from-literal=password=..` and `config set <secret-name> VALUE` carry a password (a base64 key with `/` too). A
//! private-key header searched for by grep/rg is a pattern, not a key.
//! Last, a word shaped like generated characters (`random`: mixed case and digits thrown
//! together) is a password or key whatever option or program it is handed to.
//!
//! `fed_password`: a literal fed on stdin to a program that reads a password or token there
//! (`echo 'hunter2x' | docker login --password-stdin`, `echo PW | argon2 SALT`, `printf
//! 'u:PW' | chpasswd`) is written into the command line as much as `-p PW` is: the shell
//! history keeps the `echo`. A variable, a placeholder word (`password`) or a word without
//! digits is not a password.
//!
//! Credential files are the key files and credential stores under home (also their
//! directories: `tar czf k.tgz ~/.ssh`, `grep -r '' ~/.aws/`), browsers' password and cookie
//! stores (Chrome `Login Data`, Firefox `logins.json`/`key4.db`), the login keychain, the
//! system's shadow files, and the host's own credentials (cluster admin configurations and join
//! tokens, TLS private keys, keytabs, VPN and Wi-Fi secrets; public host keys are no secret);
//! the tool that owns one may be pointed at it (`kubectl --kubeconfig ~/.kube/config`,
//! `scp -i ~/.ssh/key`, `export KUBECONFIG=..`) without reading it out, but not handed one as
//! its configuration (`ssh -F ~/.ssh/id_rsa`, which prints the lines back) or told to send it
//! whole (`ssh-copy-id -f -i ~/.aws/credentials`).
//!
//! `printed` (warn): a secret printed into the agent's transcript, where logs keep it: the
//! whole environment (`env`, `printenv`, `set`, `export -p`, unless filtered by a grep for a
//! harmless name), a secret-named variable (`printenv OPENAI_API_KEY`, `echo $AWS_SECRET_..`),
//! a dotenv file with values (`grep API_KEY .dev.vars`, `cat .env.production`) or a
//! process environment (`/proc/self/environ`). Counting (`grep -c`), listing (`grep -l`) and
//! output sent on to a file or another program are not printing.

mod random;
mod tokens;

use super::violation;
use crate::guard::ascii::CaseBuf;
use crate::guard::needles::Needles;
use crate::guard::regexes::{group, Pattern};
use crate::guard::shell::is_literal;
use crate::guard::targets::home_relative;
use crate::guard::verdict::{Category, Recommendation, Risk, Violation};
use crate::guard::SimpleCommand;

pub const TOKEN: &str = "secrets.token";
pub const URL_CREDENTIALS: &str = "secrets.url_credentials";
pub const PASSWORD_ARGUMENT: &str = "secrets.password_argument";
pub const SECRET_ASSIGNMENT: &str = "secrets.secret_assignment";
pub const AUTHORIZATION_HEADER: &str = "secrets.authorization_header";
pub const CREDENTIAL_FILE: &str = "secrets.credential_file";
pub const PRINTED: &str = "secrets.printed";
pub const RANDOM_LITERAL: &str = "secrets.random_literal";

/// A variable name that holds a secret (`OPENAI_API_KEY`, `GH_TOKEN`, `DB_PASSWORD`).
fn secret_var_name(n: &str) -> bool {
    let u = n.to_ascii_uppercase();
    [
        "SECRET",
        "TOKEN",
        "PASSWORD",
        "PASSWD",
        "API_KEY",
        "APIKEY",
        "PRIVATE_KEY",
        "ACCESS_KEY",
        "CREDENTIAL",
    ]
    .iter()
    .any(|k| u.contains(k))
        && !u.ends_with("_FILE")
        && !u.ends_with("_PATH")
}

/// A file whose name says it holds credentials: `credentials.json`, `client_secret_X.json`,
/// `service-account.json`, `secrets.yaml`, a private key (`*.pem`, `*.key`, `id_rsa`).
pub(crate) fn credential_named(base: &str) -> bool {
    let lower = base.to_ascii_lowercase();
    let (stem, ext) = lower.rsplit_once('.').unwrap_or((lower.as_str(), ""));
    let data = matches!(ext, "json" | "yaml" | "yml" | "toml" | "txt" | "ini" | "");
    let named = [
        "credential",
        "client_secret",
        "client-secret",
        "service-account",
        "service_account",
    ]
    .iter()
    .any(|w| stem.contains(w))
        || matches!(stem, "secrets" | "secret" | "token" | "tokens");
    (named && data)
        || matches!(ext, "pem" | "key" | "p12" | "pfx")
        || matches!(lower.as_str(), "id_rsa" | "id_ed25519" | "id_ecdsa" | "id_dsa")
}

/// Filters a secret passes through on its way to the screen (or a file): piped into any other
/// program, the secret is consumed, not shown.
pub(crate) const TO_SCREEN: &[&str] = &[
    "head", "tail", "sort", "uniq", "cut", "tr", "cat", "column", "grep", "rg", "sed", "awk", "less", "more", "nl",
    "jq", "yq", "tee", "base64", "xxd",
];

/// `secrets.printed`: the command at `index` prints a secret into the transcript.
pub fn printed(pipeline: &crate::guard::Pipeline, index: usize, out: &mut Vec<Violation>) {
    let cmd = &pipeline[index];
    let args: Vec<&str> = cmd.argv.iter().skip(1).map(String::as_str).collect();
    let name = cmd.name();
    let dump = (matches!(name, "env" | "printenv" | "set") && args.iter().all(|a| matches!(*a, "-0" | "--null")))
        || (matches!(name, "export" | "declare") && matches!(args.as_slice(), ["-p"] | ["-x"] | ["-px"]));
    let downstream = &pipeline[index + 1..];
    // The whole environment kept in a file outside the project (`env > /tmp/env.txt`, `env |
    // sort > ~/env`) is stored where anyone who reads the file has every secret in it; a file
    // named relative to the project (`env > env.txt`) stays the agent's own.
    let to_file = |c: &SimpleCommand| {
        c.redirects
            .iter()
            .any(|r| r != "/dev/null" && (r.starts_with(['/', '~']) || r.starts_with("$HOME")))
    };
    let stored = dump
        && !cmd.captured
        && (to_file(cmd) || downstream.iter().all(|c| TO_SCREEN.contains(&c.name())) && downstream.iter().any(to_file));
    if !stored {
        if cmd.captured || (!cmd.redirects.is_empty() && pipeline.len() == index + 1) {
            return;
        }
        // What follows must only pass the text on to the screen (`| head`, `| sort`, `| grep X`).
        if downstream
            .iter()
            .any(|c| !TO_SCREEN.contains(&c.name()) || !c.redirects.is_empty())
        {
            return;
        }
    }
    let filters: Vec<&SimpleCommand> = downstream
        .iter()
        .filter(|c| matches!(c.name(), "grep" | "rg"))
        .collect();
    let what = if dump {
        // `env | grep -i proxy` shows harmless names; `set | grep -i token` shows secrets.
        let harmless = !filters.is_empty()
            && filters.iter().all(|f| {
                f.argv.iter().skip(1).filter(|a| !a.starts_with('-')).all(|p| {
                    !secret_var_name(p)
                        && !p.to_ascii_uppercase().contains("KEY")
                        && !p.to_ascii_uppercase().contains("AUTH")
                })
            });
        let what = if stored { "stores" } else { "prints" };
        (!harmless).then(|| format!("{what} the whole environment, secrets included"))
    } else if name == "printenv" {
        args.iter()
            .find(|a| secret_var_name(a))
            .map(|a| format!("prints the secret variable {a}"))
    } else if matches!(name, "echo" | "printf") {
        args.iter()
            .flat_map(|a| a.split('$').skip(1))
            .map(|r| {
                r.trim_start_matches('{')
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect::<String>()
            })
            .find(|v| secret_var_name(v))
            .map(|v| format!("prints the secret variable {v}"))
    } else {
        let reader = matches!(
            name,
            "cat"
                | "head"
                | "tail"
                | "less"
                | "more"
                | "grep"
                | "rg"
                | "egrep"
                | "sed"
                | "awk"
                | "bat"
                | "strings"
                | "xxd"
                | "od"
                | "sort"
                | "nl"
                | "xargs"
                | "tr"
                | "jq"
                | "yq"
        );
        // `sed -i`: the file is edited in place, nothing printed.
        let in_place = name == "sed" && args.iter().any(|a| a.starts_with("-i") || a.starts_with("--in-place"));
        let quiet = in_place
            || matches!(name, "grep" | "rg" | "egrep")
                && args.iter().any(|a| {
                    a.starts_with('-')
                        && !a.starts_with("--")
                        && (a.contains('c') || a.contains('l') || a.contains('q') || a.contains('L'))
                        || matches!(
                            *a,
                            "--count" | "--files-with-matches" | "--quiet" | "--files-without-match"
                        )
                });
        // grep/sed/awk take a pattern or program first (unless given with -e/-f).
        let pattern_first = matches!(name, "grep" | "rg" | "egrep" | "sed" | "awk")
            && !args.iter().any(|a| matches!(*a, "-e" | "-f" | "--regexp" | "--file"));
        let file = args
            .iter()
            .copied()
            .filter(|a| !a.starts_with('-'))
            .skip(usize::from(pattern_first))
            .chain(cmd.inputs.iter().map(String::as_str))
            .find(|a| {
                let base = a.rsplit('/').next().unwrap_or(a);
                super::exfiltration::dotenv(base)
                    || credential_named(base)
                    || (a.starts_with("/proc/") && a.ends_with("/environ"))
            });
        file.filter(|_| reader && !quiet)
            .map(|f| format!("prints `{f}`, which holds secrets"))
    };
    if let Some(what) = what {
        out.push(violation(
            Category::Secrets,
            PRINTED,
            Recommendation::Warn,
            Risk::Medium,
            &cmd.display(),
            if stored {
                format!("{what} in a file, where whoever reads it finds them")
            } else {
                format!("{what} into the transcript, where logs keep it")
            },
        ));
    }
}

pub fn alternative(rule: &str) -> &'static str {
    match rule {
        CREDENTIAL_FILE => "ask the user for the one value you need; do not read credential files",
        PRINTED => {
            "check that a secret is set without printing it, e.g. test -n \"$OPENAI_API_KEY\" or grep -c KEY .env"
        }
        _ => {
            "pass the secret through an environment variable (\"$API_TOKEN\") or a file the tool reads, never literally"
        }
    }
}

/// `scheme://user:password@`.
pub(crate) static URL_USERINFO: Pattern = Pattern::new(r"(?-u:\b)[a-zA-Z][a-zA-Z0-9+.\-]*://([^/\s:@]*):([^/\s@]+)@");

/// Shannon entropy in bits per character.
pub fn entropy(s: &str) -> f64 {
    let mut counts = [0u32; 256];
    let mut n = 0u32;
    for b in s.bytes() {
        counts[b as usize] += 1;
        n += 1;
    }
    if n == 0 {
        return 0.0;
    }
    let n = f64::from(n);
    counts
        .iter()
        .filter(|c| **c > 0)
        .map(|c| {
            let p = f64::from(*c) / n;
            -p * p.log2()
        })
        .sum()
}

/// Placeholder values in docs and examples.
fn placeholder(s: &str) -> bool {
    static MARKERS: Needles = Needles::ignoring_case(&[
        "example",
        "xxxx",
        "your",
        "placeholder",
        "redacted",
        "dummy",
        "changeme",
        "<",
        "***",
        "...",
        "fake",
        // jwt.io's sample token (its signature), pasted into countless tests and docs.
        "sflkxwrjsmekkf2qt4fwpmejf36pok6yjv_adqssw5c",
    ]);
    MARKERS.found_in(s)
}

/// A value that is only words standing for a secret (`password`, `secret_value`, `mytoken`,
/// `password_label`): documentation and tests write these where the real value would go. A
/// word with digits (`secret123`) is a weak password, not a placeholder.
fn placeholder_word(v: &str) -> bool {
    let mut buf = CaseBuf::new();
    let lowered = buf.lower(v);
    let l: &str = &lowered;
    let l = l.strip_prefix("my").unwrap_or(l);
    let words = l.split(['_', '-', '.']).filter(|w| !w.is_empty());
    let mut any = false;
    for w in words {
        any = true;
        if !matches!(
            w,
            "password"
                | "passwd"
                | "pass"
                | "pw"
                | "pwd"
                | "secret"
                | "token"
                | "key"
                | "apikey"
                | "api"
                | "access"
                | "auth"
                | "value"
                | "string"
                | "encoded"
                | "test"
                | "demo"
                | "sample"
                | "foo"
                | "bar"
                | "baz"
                | "admin"
                | "user"
                | "username"
                | "label"
                | "name"
                | "here"
                | "new"
                | "old"
        ) {
            return false;
        }
    }
    any
}

/// A token-shaped secret in `text`, if any (with enough entropy to be real).
pub fn find_token(text: &str) -> Option<&str> {
    for t in tokens::find_iter(text) {
        if t.starts_with("-----BEGIN") {
            return Some(t);
        }
        if !placeholder(t) && entropy(t) >= 3.0 {
            return Some(t);
        }
    }
    None
}

const SECRET_NAMES: &[&str] = &[
    "PASSPHRASE",
    "PASSWORD",
    "PASSWD",
    "PASS",
    "PWD",
    "TOKEN",
    "SECRET",
    "API_KEY",
    "APIKEY",
    "ACCESS_KEY",
    "PRIVATE_KEY",
    "CREDENTIALS",
    "AUTH",
];

fn secret_name(name: &str) -> bool {
    let mut buf = CaseBuf::new();
    let up = buf.upper(name);
    // `s` followed by `_` or `.`, without building either needle.
    let inside = |s: &str| {
        up.as_bytes()
            .windows(s.len() + 1)
            .any(|w| w[..s.len()] == *s.as_bytes() && matches!(w[s.len()], b'_' | b'.'))
    };
    up != "PWD" && up != "OLDPWD" && SECRET_NAMES.iter().any(|s| up.ends_with(s) || inside(s))
}

/// `postgres://postgres:postgres@localhost/app_test`: the stock login of a database on this
/// machine (the password is the user name or a default word), not a secret.
fn local_dev_login(user: &str, pw: &str, host: &str) -> bool {
    let local = ["localhost", "127.0.0.1", "[::1]", "0.0.0.0"].iter().any(|h| {
        host.starts_with(h)
            && host[h.len()..]
                .chars()
                .next()
                .is_none_or(|c| matches!(c, ':' | '/' | '?'))
    });
    let default = pw == user
        || [
            "postgres", "password", "secret", "root", "admin", "dev", "test", "pass", "mysql", "guest",
        ]
        .contains(&pw);
    local && default
}

/// Values that look like a real secret: literal, not a placeholder, not trivial.
fn literal_value(v: &str) -> bool {
    let v = v.trim_matches(|c| c == '"' || c == '\'');
    !v.is_empty()
        && is_literal(v)
        && !placeholder(v)
        && !placeholder_word(v)
        && !v.starts_with('@')
        && !v.starts_with('/')
        && v != "-"
}

fn push(out: &mut Vec<Violation>, rule: &str, rec: Recommendation, matched: &str, what: &str) {
    // Never echo the secret itself: show its first characters.
    let shown: String = matched.chars().take(8).collect();
    out.push(violation(
        Category::Secrets,
        rule,
        rec,
        Risk::High,
        &format!("{shown}…"),
        what,
    ));
}

/// Programs that read a password or token on stdin: always (no option listed), or with one
/// of the options listed. Any option named `*password-stdin` or `*token-stdin` reads one too
/// (`docker login --password-stdin`, `crane auth login --password-stdin`).
/// A one-letter option also counts inside a bundle (`mkpasswd -sm sha-512`, `htpasswd -iB`).
const STDIN_PASSWORD_READERS: &[(&str, &[&str])] = &[
    ("argon2", &[]),
    ("chpasswd", &[]),
    ("chgpasswd", &[]),
    ("mkpasswd", &["--stdin", "-s"]),
    ("passwd", &["--stdin"]),
    ("openssl", &["-stdin", "--stdin"]),
    ("htpasswd", &["-i"]),
    ("smbpasswd", &["-s"]),
    ("gh", &["--with-token"]),
    ("glab", &["--stdin"]),
    ("kinit", &[]),
    ("cryptsetup", &[]),
    // `sshpass -d 0`: the password from a descriptor; `wpa_passphrase SSID` reads it when not
    // given; `ldapsearch -y /dev/stdin`: the password file; `vault login -`: the token.
    ("sshpass", &["-d", "-f"]),
    ("wpa_passphrase", &[]),
    ("ldapsearch", &["-y"]),
    ("ldapmodify", &["-y"]),
    ("ldapadd", &["-y"]),
    ("ldapdelete", &["-y"]),
    ("ldapwhoami", &["-y"]),
    ("ldappasswd", &["-y", "-T"]),
    ("vault", &["login"]),
    ("nmcli", &["--ask", "-a"]),
    ("keepassxc-cli", &[]),
    ("veracrypt", &["--stdin"]),
];

/// Words that name a secret value in an option or a subcommand.
const SECRET_WORDS: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "pass-file",
    "token",
    "secret",
    "credential",
];

/// A secret's value read from stdin by the program's own words: an option or setting named for
/// a secret given `-` or `/dev/stdin` (`-p -`, `--access-token -`, `password=-`,
/// `--from-file=p=/dev/stdin` after `create secret`), or a secret subcommand reading `-`
/// (`docker secret create NAME -`).
fn secret_value_from_stdin(argv: &[String]) -> bool {
    let stdin = |v: &str| {
        matches!(
            v,
            "-" | "/dev/stdin" | "/dev/fd/0" | "stdin" | "fd:0" | "file:/dev/stdin"
        )
    };
    let secret = |w: &str| {
        let w = w.to_ascii_lowercase();
        SECRET_WORDS.iter().any(|s| w.contains(s))
    };
    let secret_subcommand = argv.iter().skip(1).take(3).any(|w| secret(w) && !w.starts_with('-'));
    argv.iter().enumerate().skip(1).any(|(k, a)| {
        let option = &argv[k - 1];
        // `-pass stdin`, `-passin fd:0` (openssl), `--passphrase-fd 0` (gpg).
        let after_option = option.starts_with('-')
            && (secret(option) || matches!(option.as_str(), "-p" | "-pass" | "-passin" | "-passout"));
        let descriptor_zero = a == "0" && option.starts_with('-') && option.ends_with("-fd") && secret(option);
        let glued = a
            .rsplit_once('=')
            .is_some_and(|(key, v)| stdin(v) && (secret(key) || secret_subcommand));
        (stdin(a) && (after_option || secret_subcommand)) || glued || descriptor_zero
    })
}

/// `fed_password`: a literal password fed on stdin to a program that reads one there (see the
/// module doc). Blocked like `-p PW`.
pub fn fed_password(pipeline: &crate::guard::Pipeline, index: usize, out: &mut Vec<Violation>) {
    let cmd = &pipeline[index];
    // Nothing is fed to the first stage of a pipeline without a here-string or file: the
    // option scans below are for commands something is fed to.
    if index == 0 && cmd.stdin_text.is_none() {
        return;
    }
    let name = cmd.name();
    let by_option = |a: &String| {
        let a = a.to_ascii_lowercase();
        let a = a.split_once('=').map_or(a.as_str(), |(o, _)| o);
        a.starts_with('-') && (a.ends_with("password-stdin") || a.ends_with("token-stdin"))
    };
    let given = |option: &str| {
        cmd.argv.iter().skip(1).any(|a| {
            a == option
                || (option.len() == 2
                    && !option.starts_with("--")
                    && a.starts_with('-')
                    && !a.starts_with("--")
                    && a[1..].chars().all(|c| c.is_ascii_alphanumeric())
                    && a[1..].contains(&option[1..]))
        })
    };
    let reads = cmd.wrapper_reads_password
        || cmd.argv.iter().any(by_option)
        || secret_value_from_stdin(&cmd.argv)
        || STDIN_PASSWORD_READERS.iter().any(|(reader, options)| {
            *reader == name
                && (options.is_empty() || options.iter().any(|o| given(o)))
                // `openssl passwd -stdin`: only the password subcommand reads a password.
                && (name != "openssl" || cmd.argv.get(1).is_some_and(|s| s == "passwd"))
        });
    if !reads {
        return;
    }
    let fed = match &cmd.stdin_text {
        Some(text) => Some(text.clone()),
        None => index
            .checked_sub(1)
            .and_then(|k| crate::guard::carriers::output_of(pipeline, k)),
    };
    let Some(fed) = fed else {
        return;
    };
    // `chpasswd` reads `USER:PASSWORD` lines.
    let passwords = fed.lines().map(|l| match name {
        "chpasswd" | "chgpasswd" => l.split_once(':').map_or(l, |(_, p)| p),
        _ => l,
    });
    let password = |p: &str| {
        let p = p.trim().trim_matches(['"', '\'']);
        literal_value(p)
            && p.len() >= 6
            && !p.contains(char::is_whitespace)
            && (p.bytes().any(|b| b.is_ascii_digit()) && p.bytes().any(|b| b.is_ascii_alphabetic())
                || credential_shaped(p)
                || strong(p))
    };
    if let Some(p) = passwords.map(str::trim).find(|p| password(p)) {
        push(
            out,
            PASSWORD_ARGUMENT,
            Recommendation::Block,
            p,
            &if cmd.wrapper_reads_password {
                format!("a literal password is fed to sudo -S (before {name}) on stdin: the shell history keeps it")
            } else {
                format!("a literal password is fed to {name} on stdin: the shell history keeps it")
            },
        );
    }
}

/// Search tools: their patterns name what to look for.
const SEARCHERS: &[&str] = &[
    "grep", "egrep", "fgrep", "rg", "ag", "ack", "git", "zgrep", "sift", "ugrep",
];

/// Every text of a command a secret may be written in: its words, its assignments, the text
/// it is fed on stdin.
fn texts_of(cmd: &SimpleCommand) -> impl Iterator<Item = &str> {
    cmd.argv
        .iter()
        .chain(cmd.assignments.iter())
        .map(String::as_str)
        .chain(cmd.stdin_text.as_deref())
}

/// Query parameters that carry a key whatever their name says (`?appid=`, `&sig=`).
const QUERY_KEYS: &[&str] = &[
    "key",
    "appid",
    "app_id",
    "appkey",
    "app_key",
    "apikey",
    "api_key",
    "sig",
    "signature",
    "access_token",
    "token",
    "client_secret",
];

/// A secret-named key given a literal, secret-shaped value anywhere inside `text`: an option's
/// property (`-PsonatypePassword=V`, `-Dapi.token=V`), a line of a config file being written
/// (`token = "V"`, `:rubygems_api_key: V`), a JSON field (`"password": "V"`), a URL's query
/// (`?appid=V`, `&api_key=V`). The value, if found.
fn keyed_secret(text: &str) -> Option<&str> {
    if text.len() < 16 || !text.contains(['=', ':']) {
        return None;
    }
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if !matches!(b, b'=' | b':') || text[i + 1..].starts_with("//") {
            continue;
        }
        // The key: the name just before the separator, past spaces and a closing quote.
        let mut end = i;
        while end > 0 && bytes[end - 1] == b' ' {
            end -= 1;
        }
        if end > 0 && matches!(bytes[end - 1], b'"' | b'\'') {
            end -= 1;
        }
        let mut start = end;
        while start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || matches!(bytes[start - 1], b'_' | b'-' | b'.'))
        {
            start -= 1;
        }
        let key = text[start..end].trim_start_matches('-');
        if key.len() < 3 {
            continue;
        }
        let query = start > 0 && matches!(bytes[start - 1], b'?' | b'&');
        let named = secret_name(key) || (query && QUERY_KEYS.iter().any(|k| key.eq_ignore_ascii_case(k)));
        if !named {
            continue;
        }
        let rest = text[i + 1..].trim_start_matches(' ');
        let rest = rest.strip_prefix(['"', '\'']).unwrap_or(rest);
        let len = rest
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '&' | ',' | ';' | '}' | ')' | ']'))
            .unwrap_or(rest.len());
        let value = &rest[..len];
        if strong_or_key(value) || password_shaped(value) {
            return Some(value);
        }
    }
    None
}

pub fn check(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    if cmd.literal_dollar_words.is_empty() {
        return check_words(cmd, out);
    }
    // A `$` the walker knows is literal (`sshpass -p 'Hq4$wz9Lr2'`) stands in as a character no
    // expansion uses while the words are judged, and is put back in what is reported.
    const LITERAL_DOLLAR: char = '\u{1}';
    let mut masked = cmd.clone();
    for w in masked.argv.iter_mut().chain(masked.assignments.iter_mut()) {
        if cmd.literal_dollar_words.contains(w) {
            *w = w.replace('$', &LITERAL_DOLLAR.to_string());
        }
    }
    let start = out.len();
    check_words(&masked, out);
    for v in &mut out[start..] {
        v.matched = v.matched.replace(LITERAL_DOLLAR, "$");
        v.description = v.description.replace(LITERAL_DOLLAR, "$");
    }
}

fn check_words(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    let name = cmd.name();
    let searching = SEARCHERS.contains(&name) && (name != "git" || cmd.argv.get(1).is_some_and(|a| a == "grep"));
    for text in texts_of(cmd) {
        if let Some(t) = find_token(text).filter(|t| !(searching && t.starts_with("-----BEGIN"))) {
            push(
                out,
                TOKEN,
                Recommendation::Block,
                t,
                "a credential in a known token format is written into the command",
            );
            return;
        }
        // Every match holds `://` and `@`: without them the regex is not even compiled.
        let userinfo = (text.contains("://") && text.contains('@'))
            .then(|| URL_USERINFO.captures(text))
            .flatten();
        if let Some(g) = userinfo {
            let user = group(text, &g, 1).unwrap_or("");
            let pw = group(text, &g, 2).unwrap_or("");
            let end = g.first().and_then(Option::as_ref).map_or(0, |m| m.end);
            let host = text.get(end..).unwrap_or("");
            if literal_value(pw) && !local_dev_login(user, pw, host) {
                push(
                    out,
                    URL_CREDENTIALS,
                    Recommendation::Block,
                    text,
                    "a URL carries a literal password (user:password@host)",
                );
                return;
            }
        }
        if let Some(rest) = credential_header(text) {
            let value = rest.split_whitespace().last().unwrap_or("");
            // `Bearer test-token`: a made-up word, not a credential.
            if literal_value(value) && value.len() >= 8 && entropy(value) >= 3.0 {
                push(
                    out,
                    AUTHORIZATION_HEADER,
                    Recommendation::Block,
                    text,
                    "an Authorization (or API key) header with a literal credential",
                );
                return;
            }
        }
    }
    if password_arguments(cmd, name, out) {
        return;
    }
    if let Some(value) = texts_of(cmd).find_map(keyed_secret) {
        push(
            out,
            SECRET_ASSIGNMENT,
            Recommendation::Block,
            value,
            "a secret-named key is given a literal value (an option, a config line, a JSON field or a URL query)",
        );
        return;
    }
    // NAME=value literals: assignments (`X=v cmd`, `env X=v`, `export X=v`), `-e NAME=v`.
    let declares = matches!(
        name,
        "export" | "declare" | "typeset" | "local" | "readonly" | "set" | "setenv"
    );
    let env_flag = |i: usize| {
        i > 0
            && matches!(
                cmd.argv[i - 1].as_str(),
                "-e" | "--env" | "--build-arg" | "--set" | "--set-string" | "-var"
            )
    };
    let candidates = cmd.assignments.iter().chain(
        cmd.argv
            .iter()
            .enumerate()
            .filter(|(i, a)| (declares && *i > 0) || env_flag(*i) || (*i == 0 && a.contains('=')))
            .map(|(_, a)| a),
    );
    // `NAME=value` elsewhere in the argv (`heroku config:set K=V`, `--from-literal=password=V`):
    // a strong literal value under a secret name.
    for a in cmd.argv.iter().skip(1) {
        let a = if a.starts_with("--") {
            a.split_once('=').map_or("", |(_, v)| v)
        } else {
            a.as_str()
        };
        if let Some((n, v)) = a.split_once('=') {
            let is_name = !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
            if is_name && secret_name(n) && strong(v) {
                push(
                    out,
                    SECRET_ASSIGNMENT,
                    Recommendation::Block,
                    a,
                    &format!("`{n}` is given a literal secret value"),
                );
                return;
            }
        }
    }
    for a in candidates {
        if let Some((n, v)) = a.split_once('=') {
            let is_name = !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if is_name && secret_name(n) && literal_value(v) {
                // `PGPASSWORD=Pr0dPassw0rd psql ...`: a password-named value of letters and
                // digits reads as a real password even when its entropy is modest.
                let up = n.to_ascii_uppercase();
                let password_like = (up.ends_with("PASSWORD") || up.ends_with("PWD") || up.ends_with("PASS"))
                    && v.len() >= 10
                    && v.chars().any(|c| c.is_ascii_digit())
                    && v.chars().any(|c| c.is_ascii_alphabetic());
                let strong = (v.len() >= 12 && entropy(v) >= 3.0) || password_like;
                let rec = if strong {
                    Recommendation::Block
                } else {
                    Recommendation::Warn
                };
                push(
                    out,
                    SECRET_ASSIGNMENT,
                    rec,
                    a,
                    &format!("`{n}` is given a literal secret value"),
                );
                return;
            }
        }
    }
    // Last: a word shaped like generated characters, whatever option or program it is given
    // to (a search pattern names what to look for).
    let random = (!searching)
        .then(|| {
            let stdin_words = cmd.stdin_text.as_deref().into_iter().flat_map(str::split_whitespace);
            let after = |i: usize| cmd.argv.get(i - 1).map(String::as_str);
            cmd.argv
                .iter()
                .enumerate()
                .skip(1)
                .find_map(|(i, w)| random::random_word(w, after(i)))
                .or_else(|| {
                    cmd.assignments
                        .iter()
                        .map(String::as_str)
                        .chain(stdin_words)
                        .find_map(|w| random::random_word(w, None))
                })
        })
        .flatten();
    if let Some(word) = random {
        push(
            out,
            RANDOM_LITERAL,
            Recommendation::Block,
            word,
            "a word of random letters and digits (a password or key) is written into the command",
        );
        return;
    }
    credential_files(cmd, name, out);
}

/// The value of a long option whose name says it is a secret (`--password=`,
/// `--http-password=`, `--proxy-passwd=`, `--api-token=`).
fn long_secret_option(a: &str) -> Option<&str> {
    let (opt, v) = a.strip_prefix("--")?.split_once('=')?;
    let mut buf = CaseBuf::new();
    let opt = buf.lower(opt);
    ["password", "passwd", "token", "secret", "api-key", "apikey"]
        .iter()
        .any(|s| opt.ends_with(s))
        .then_some(v)
}

/// Commands that store a named setting given as `set NAME VALUE`.
fn setter(cmd: &SimpleCommand) -> bool {
    // Package managers set a key with `config KEY VALUE` (poetry, composer, bundle, pip, uv).
    let config_setter = matches!(
        cmd.name(),
        "poetry"
            | "composer"
            | "bundle"
            | "pip"
            | "pip3"
            | "uv"
            | "pdm"
            | "hatch"
            | "conda"
            | "gem"
            | "dotnet"
            | "nuget"
    );
    cmd.argv.iter().skip(1).any(|a| {
        matches!(a.as_str(), "set" | "config:set" | "put" | "set-credentials") || (config_setter && a == "config")
    })
}

/// The value part of a header that carries a credential: `Authorization:`, or a header named as
/// a key or token (`X-Api-Key:`, `X-Auth-Token:`, `PRIVATE-TOKEN:`, `apikey:`).
fn credential_header(text: &str) -> Option<&str> {
    let (name, value) = text.trim_start().split_once(':')?;
    let mut buf = CaseBuf::new();
    let n = buf.lower(name.trim());
    let header_name = !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    let credential = n == "authorization"
        || n == "proxy-authorization"
        || n == "cookie"
        || [
            "api-key",
            "apikey",
            "api_key",
            "token",
            "secret",
            "access-key",
            "auth-key",
        ]
        .iter()
        .any(|k| n.ends_with(k));
    (header_name && credential).then_some(value)
}

/// A long option taking a separate value, named as a secret: `--auth`, `--auth-token`,
/// `--access-token`, `--client-secret`, `--api-token`, `--apikey` (not `--no-password`,
/// `--token-file`, `--secret-name`).
fn secret_option(a: &str) -> bool {
    let Some(o) = a.strip_prefix("--") else { return false };
    let mut buf = CaseBuf::new();
    let o = buf.lower(o);
    // Request identifiers named "token": `--idempotency-token`, `--client-token`,
    // `--next-token`, `--page-token`, `--continuation-token`, `--starting-token`.
    let request_id = [
        "idempotency",
        "client-token",
        "next-token",
        "page-token",
        "continuation",
        "starting-token",
        "pagination",
    ]
    .iter()
    .any(|k| o.starts_with(k));
    !o.contains('=')
        && !o.starts_with("no-")
        && !request_id
        && (o == "auth"
            || ["token", "secret", "apikey", "api-key", "password", "passwd"]
                .iter()
                .any(|k| o.ends_with(k)))
}

/// [`strong`], or a key that holds `/` (base64: AWS secret keys) without reading as a path.
fn strong_or_key(v: &str) -> bool {
    strong(v)
        || (literal_value(v)
            && v.len() >= 20
            && entropy(v) >= 3.5
            && !v.starts_with('.')
            && !v.contains(['=', ',', ':'])
            && v.split('/').all(|p| !p.is_empty() && !p.contains('.')))
}

/// A value that looks like a real secret, not a word or a path.
fn strong(v: &str) -> bool {
    literal_value(v) && v.len() >= 12 && entropy(v) >= 3.0 && !v.contains('/') && !v.starts_with('-') && mixed(v)
}

/// Random strings mix kinds of characters (two of upper case, lower case, digits); names of
/// things (`password_label`, `my-api-key`, `PROD_DB`) are one kind with separators.
fn mixed(v: &str) -> bool {
    let upper = v.bytes().any(|b| b.is_ascii_uppercase());
    let lower = v.bytes().any(|b| b.is_ascii_lowercase());
    let digit = v.bytes().any(|b| b.is_ascii_digit());
    u8::from(upper) + u8::from(lower) + u8::from(digit) >= 2
}

/// Login options: programs and the options whose value is a password or a token (glued or
/// separate: `-aPASS`, `-a PASS`, `--password=PASS`). The value may carry the user in front
/// (`user:pass`, `user%pass`, `user,pass`) or a scheme (`pass:secret`). A new client is an
/// entry here.
const LOGIN_OPTIONS: &[(&[&str], &[&str])] = &[
    (
        &["redis-cli", "keydb-cli", "valkey-cli"],
        &["-a", "--pass", "--user-pass"],
    ),
    (&["az"], &["-p", "--password"]),
    (
        &[
            "mongo",
            "mongosh",
            "mongodump",
            "mongorestore",
            "mongoexport",
            "mongoimport",
            "mongostat",
            "mongotop",
        ],
        &["-p", "--password"],
    ),
    (&["sqlcmd", "bcp", "isql", "osql"], &["-P"]),
    (
        &[
            "ldapsearch",
            "ldapadd",
            "ldapmodify",
            "ldapdelete",
            "ldappasswd",
            "ldapwhoami",
        ],
        &["-w"],
    ),
    (&["zip", "unzip"], &["-P"]),
    (&["7z", "7za", "7zr", "rar", "unrar"], &["-p"]),
    (&["rdesktop"], &["-p"]),
    (&["xfreerdp", "wlfreerdp"], &["/p"]),
    (
        &["smbclient", "rpcclient", "smbmap", "crackmapexec", "netexec", "nxc"],
        &["-U", "-p"],
    ),
    (&["lftp"], &["-u"]),
    (&["openssl"], &["-passin", "-passout", "-pass", "-k"]),
    (&["doctl"], &["-t", "--access-token"]),
    (&["influx"], &["-t", "--token", "-p", "--password"]),
    (&["vault"], &["-token"]),
    (&["psql", "pg_dump"], &["--password"]),
    (&["sshpass"], &["-p"]),
    (&["htpasswd"], &["-b"]),
];

/// The secret in a login option's value: after a user part (`user:pass`, `user%pass`,
/// `user,pass`) or a scheme (`pass:secret`, `env:` and `file:` are references, not secrets).
fn login_secret(value: &str) -> Option<&str> {
    if let Some((scheme, rest)) = value.split_once(':') {
        return match scheme {
            "env" | "file" | "fd" | "stdin" => None,
            _ => Some(rest),
        };
    }
    Some(value.rsplit_once(['%', ',']).map(|(_, p)| p).unwrap_or(value))
}

/// Not a file name: a login option's value that names a file is where the secret is kept.
fn secret_shaped_or_short(v: &str) -> bool {
    !v.rsplit_once('.')
        .is_some_and(|(_, ext)| ext.len() <= 4 && ext.chars().all(|c| c.is_ascii_alphabetic()))
}

/// Subcommands that log in or sign up: their `-p` is a password, whatever the program
/// (`ibmcloud login -p`, `pio account register -p`).
const LOGIN_VERBS: &[&str] = &[
    "login",
    "register",
    "signup",
    "sign-up",
    "signin",
    "sign-in",
    "auth",
    "authenticate",
];

/// `--pin 241869`, `pkcs11-tool -p 980008`: the PIN of a token or smart card, digits only, as
/// good as the password it stands for.
fn pin_option<'a>(name: &str, args: &'a [String]) -> Option<(&'a str, &'a str)> {
    args.windows(2).find_map(|w| {
        let pin_option = matches!(
            w[0].as_str(),
            "--pin" | "--so-pin" | "--new-pin" | "--user-pin" | "--puk" | "--so-puk"
        ) || (name == "pkcs11-tool" && w[0] == "-p");
        let digits = w[1].len() >= 4 && w[1].chars().all(|c| c.is_ascii_digit());
        (pin_option && digits).then(|| (w[0].as_str(), w[1].as_str()))
    })
}

/// A literal secret in one of the program's login options ([`LOGIN_OPTIONS`]), in the
/// password option of a login subcommand ([`LOGIN_VERBS`]), or a PIN ([`pin_option`]).
fn login_option<'a>(name: &str, args: &'a [String]) -> Option<(&'a str, &'a str)> {
    if let Some(found) = pin_option(name, args) {
        return Some(found);
    }
    // `az -p` is a project everywhere but in `az login`.
    if name == "az" && !args.iter().any(|a| a == "login") {
        return None;
    }
    const LOGIN_VERB_OPTIONS: &[&str] = &["-p", "--password", "--pass", "--passwd"];
    let logging_in = || {
        args.iter()
            .filter(|a| !a.starts_with('-'))
            .take(3)
            .any(|a| LOGIN_VERBS.contains(&a.as_str()))
    };
    let opts: &[&str] = match LOGIN_OPTIONS.iter().find(|(names, _)| names.contains(&name)) {
        Some((_, opts)) => opts,
        None if logging_in() => LOGIN_VERB_OPTIONS,
        None => return None,
    };
    // 7-Zip's and RAR's `-p` takes its password glued (`-pSECRET`); alone, it asks for one.
    let glued_only = matches!(name, "7z" | "7za" | "7zr" | "7zz" | "rar" | "unrar");
    for (i, a) in args.iter().enumerate() {
        for o in opts.iter() {
            let value = if a == o {
                // The next word is another option, not the value (`7z a -p -mhe=on`).
                args.get(i + 1)
                    .map(String::as_str)
                    .filter(|v| !glued_only && !v.starts_with('-'))
            } else if let Some(v) = a.strip_prefix(o).and_then(|r| r.strip_prefix(['=', ':'])) {
                Some(v)
            } else if o.len() == 2 && o.starts_with('-') && a.starts_with(o) && a.len() > 2 && !a.starts_with("--") {
                Some(&a[2..])
            } else {
                None
            };
            if let Some(secret) = value.and_then(login_secret) {
                // Passwords mix letters with digits or symbols; a project or host name does not.
                let mixed =
                    secret.chars().any(|c| c.is_ascii_alphabetic()) && secret.chars().any(|c| !c.is_ascii_alphabetic());
                if literal_value(secret)
                    && secret.len() >= 6
                    && mixed
                    && !secret.contains('/')
                    && secret_shaped_or_short(secret)
                {
                    return Some((a.as_str(), secret));
                }
            }
        }
    }
    None
}

/// A base32 seed of one-time codes: 16+ characters of `A-Z2-7` with letters and digits.
fn base32_seed(a: &str) -> bool {
    let a = a.trim_end_matches('=');
    a.len() >= 16
        && a.bytes().all(|b| b.is_ascii_uppercase() || (b'2'..=b'7').contains(&b))
        && a.bytes().any(|b| b.is_ascii_digit())
        && a.bytes().any(|b| b.is_ascii_uppercase())
}

/// A value shaped like a password: at least 8 characters with upper case, lower case and
/// digits, no whitespace, not a placeholder (image tags, versions and names lack one of them).
fn password_shaped(v: &str) -> bool {
    literal_value(v)
        && v.chars().count() >= 8
        && !v.contains(char::is_whitespace)
        && v.chars().any(|c| c.is_ascii_uppercase())
        && v.chars().any(|c| c.is_ascii_lowercase())
        && v.chars().any(|c| c.is_ascii_digit())
}

/// A value shaped like a password or a key: [`password_shaped`], or a long random string
/// (hex or base64 keys, 20+ characters of high entropy).
fn secret_shaped(v: &str) -> bool {
    let file_like = v.rsplit_once('.').is_some_and(|(_, ext)| {
        matches!(
            ext.to_ascii_lowercase().as_str(),
            "pem"
                | "key"
                | "crt"
                | "cer"
                | "json"
                | "txt"
                | "yaml"
                | "yml"
                | "p12"
                | "pfx"
                | "gpg"
                | "asc"
                | "env"
                | "cfg"
                | "conf"
                | "ini"
                | "pub"
        )
    });
    let uuid = v.len() == 36 && v.split('-').map(str::len).eq([8, 4, 4, 4, 12]);
    // A base64 key holds slashes (`--account-key S27F..+bXp/vA==`, an AWS secret key): padded,
    // or long and random; an object key or a path (`2024/01/15/AppLogs+Backup`) is neither.
    let base64_key = v.len() >= 24
        && !v.contains("//")
        && (v.ends_with('=') || (v.len() >= 32 && entropy(v) >= 4.5))
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='));
    !file_like
        && !uuid
        && (!v.contains('/') || base64_key)
        && (password_shaped(v)
            || (literal_value(v) && v.len() >= 20 && entropy(v) >= 3.5 && !v.contains(char::is_whitespace)))
}

/// An option named as a secret in any spelling (`-password V`, `--account-key V`,
/// `-computer-pass V`, `-key=V`, `--credential user:V`, `-bearer V`) whose value is shaped like
/// one. Names of files, ids, servers and commands that hold a secret (`--key-file`,
/// `--password-command`) are not secrets.
fn named_secret_option(args: &[String]) -> Option<&str> {
    const SECRET_WORDS: &[&str] = &[
        "password",
        "passwd",
        "pass",
        "passphrase",
        "token",
        "secret",
        "apikey",
        "api-key",
        "api_key",
        "key",
        "auth",
        "credential",
        "credentials",
        "bearer",
    ];
    const NOT_A_SECRET: &[&str] = &[
        "file",
        "path",
        "id",
        "name",
        "type",
        "size",
        "length",
        "server",
        "ring",
        "env",
        "command",
        "cmd",
        "stdin",
        "prompt",
        "dir",
        "url",
        "uri",
        "alg",
        "algorithm",
        "format",
        "method",
        "mode",
        "keys",
        "provider",
        "helper",
    ];
    for (i, a) in args.iter().enumerate() {
        let Some(opt) = a.strip_prefix('-') else { continue };
        let opt = opt.trim_start_matches('-');
        let (name, value) = match opt.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (opt, args.get(i + 1).map(String::as_str)),
        };
        let mut buf = CaseBuf::new();
        let name = buf.lower(name);
        if name.len() < 3 || name.starts_with("no-") {
            continue;
        }
        let last = name.rsplit(['-', '_', '.']).next().unwrap_or("");
        // `--mnemonic "abandon ability .."`, `--seed-phrase ..`: a wallet's recovery words are
        // its key; `--ntlm HASH`, `-hashes LM:NT`: a password hash logs in as the password does.
        let value_now = match opt.split_once('=') {
            Some((_, v)) => Some(v),
            None => args.get(i + 1).map(String::as_str),
        };
        if ["mnemonic", "seed-phrase", "seedphrase", "recovery-phrase"]
            .iter()
            .any(|w| name.ends_with(w))
            && value_now.is_some_and(recovery_words)
        {
            return Some(a.as_str());
        }
        if matches!(
            &*name,
            "hashes" | "ntlm" | "nthash" | "nt-hash" | "lmhash" | "ntlm-hash"
        ) && value_now.is_some_and(password_hash)
        {
            return Some(a.as_str());
        }
        let secret_named = SECRET_WORDS.iter().any(|w| name.ends_with(w)) && !NOT_A_SECRET.contains(&last);
        let Some(v) = value.filter(|_| secret_named) else {
            continue;
        };
        // The whole value, or the secret after a user (`user:secret`, `user%secret`) or a
        // scheme (`pass:secret`): a `%` or `:` inside a password is part of it.
        let after_user = v
            .rsplit_once([':', '%'])
            .filter(|(user, _)| {
                user.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-' | '\\'))
            })
            .map(|(_, p)| p);
        if secret_shaped(v) || after_user.is_some_and(secret_shaped) {
            return Some(a.as_str());
        }
    }
    None
}

/// Twelve to twenty-four lowercase words: a wallet's recovery phrase (BIP-39).
fn recovery_words(v: &str) -> bool {
    let words: Vec<&str> = v.split_whitespace().collect();
    // Most of its words differ: `test test .. junk` is the public phrase of local test chains.
    let distinct: std::collections::HashSet<&&str> = words.iter().collect();
    (12..=24).contains(&words.len())
        && words.len().is_multiple_of(3)
        && distinct.len() * 3 >= words.len() * 2
        && words
            .iter()
            .all(|w| (3..=8).contains(&w.len()) && w.bytes().all(|b| b.is_ascii_lowercase()))
}

/// An NT (or `LM:NT`) password hash: 32 hex digits, after an optional LM hash and a colon.
fn password_hash(v: &str) -> bool {
    let hex32 = |h: &str| h.len() == 32 && h.bytes().all(|b| b.is_ascii_hexdigit());
    match v.split_once(':') {
        Some((lm, nt)) => (lm.is_empty() || hex32(lm)) && hex32(nt),
        None => hex32(v),
    }
}

/// `domain/user:secret`, `user:secret@host`: a login written into an argument, the secret
/// shaped like a password.
fn inline_login(args: &[String]) -> Option<&str> {
    let user_like = |u: &str| {
        !u.is_empty()
            && u.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | '\\' | '@'))
    };
    args.iter().map(String::as_str).find(|a| {
        if a.starts_with('-') || a.contains("://") {
            return false;
        }
        // `domain/user:secret[@host]` (the secret may hold an `@` itself), `domain\\user%secret`.
        let colon = a.split_once(':').is_some_and(|(user, rest)| {
            let before_host = rest.rsplit_once('@').map(|(p, _)| p).unwrap_or(rest);
            user_like(user)
                && [rest, before_host]
                    .iter()
                    .any(|secret| password_shaped(secret) && !secret.contains(['/', ',', ':']))
        });
        let percent = a.split_once('%').is_some_and(|(user, secret)| {
            user_like(user) && password_shaped(secret) && !secret.contains(['/', ',', ':'])
        });
        colon || percent
    })
}

/// A word shaped like a credential wherever it stands: mixed-case letters, digits and a
/// password symbol (`@#%+!$^&*=?~`), 10+ characters, no whitespace, no path or address shape;
/// or 32+ mixed-case alphanumerics of high entropy (a random token). Branch names, versions,
/// hashes (one case) and file names do not have that shape.
fn credential_shaped(w: &str) -> bool {
    let w = w.trim_matches(|c| c == '"' || c == '\'');
    // The cheap shape tests first: most words fail them, and `literal_value` reads more.
    if w.contains(char::is_whitespace) || w.contains(['/', '.', ',']) || w.starts_with('-') || !literal_value(w) {
        return false;
    }
    if w.contains(':') && w.len() != 65 {
        return false;
    }
    let upper = w.chars().any(|c| c.is_ascii_uppercase());
    let lower = w.chars().any(|c| c.is_ascii_lowercase());
    let digit = w.chars().any(|c| c.is_ascii_digit());
    let symbol = w
        .chars()
        .any(|c| matches!(c, '@' | '#' | '%' | '+' | '!' | '$' | '^' | '&' | '*' | '=' | '?' | '~'));
    let user_at_host = w.split_once('@').is_some_and(|(u, h)| {
        !u.is_empty()
            && u.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '-'))
            && !h.contains(['@', '#', '%', '+', '!'])
    });
    let assignment = crate::guard::is_assignment(w);
    let password = upper && lower && digit && symbol && w.len() >= 10 && !user_at_host && !assignment;
    // `LMHASH:NTHASH`: a Windows password hash pair, as good as the password.
    let hash_pair = w.len() == 65
        && w.split_once(':').is_some_and(|(a, b)| {
            a.len() == 32 && b.len() == 32 && (a.to_owned() + b).chars().all(|c| c.is_ascii_hexdigit())
        });
    // A lone `eyJ...` is base64 JSON (a JWT's header or payload), not the signed token.
    let token = upper
        && lower
        && digit
        && !w.starts_with("eyJ")
        && w.len() >= 32
        && w.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
        && entropy(w) >= 4.0;
    password || token || hash_pair
}

/// Literal passwords in options; true when one fired.
fn password_arguments(cmd: &SimpleCommand, name: &str, out: &mut Vec<Violation>) -> bool {
    let args = &cmd.argv[1.min(cmd.argv.len())..];
    if let Some(word) = args.iter().find(|a| credential_shaped(a)) {
        push(
            out,
            PASSWORD_ARGUMENT,
            Recommendation::Block,
            word,
            "a literal password or token is written into the command line",
        );
        return true;
    }
    if let Some(option) = named_secret_option(args).or_else(|| inline_login(args)) {
        push(
            out,
            PASSWORD_ARGUMENT,
            Recommendation::Block,
            option,
            "a literal password, token or key is written into the command line",
        );
        return true;
    }
    // `-u USER -p PW`, `--username U --password PW`: beside a user, `-p` is its password
    // (mysql's `-p` takes no separate value: it prompts, and the next word is a database).
    let mysqlish = name.starts_with("mysql") || name.starts_with("mariadb");
    let user_given = args
        .windows(2)
        .any(|w| matches!(w[0].as_str(), "-u" | "--user" | "--username" | "-U") && !w[1].starts_with('-'));
    if let Some(w) = args
        .windows(2)
        .find(|w| user_given && !mysqlish && w[0] == "-p" && (password_shaped(&w[1]) || strong(&w[1])))
    {
        push(
            out,
            PASSWORD_ARGUMENT,
            Recommendation::Block,
            &w[0],
            "a literal password is passed beside the user name",
        );
        return true;
    }
    // `oathtool --totp --base32 SEED`: the seed of one-time codes is the lasting secret.
    let otp = args
        .iter()
        .any(|a| matches!(a.as_str(), "--totp" | "--hotp" | "--base32") || a.starts_with("--totp="));
    if let Some(seed) = args.iter().find(|a| otp && base32_seed(a)) {
        push(
            out,
            PASSWORD_ARGUMENT,
            Recommendation::Block,
            seed,
            "the secret seed of one-time codes is written into the command",
        );
        return true;
    }
    // `htpasswd -b FILE USER PW`, `htpasswd -nbB USER PW`: with `-b` the last word is the password.
    let batch = name == "htpasswd"
        && args
            .iter()
            .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('b'));
    if let Some(pw) = args
        .iter()
        .rfind(|a| !a.starts_with('-'))
        .filter(|p| batch && literal_value(p) && p.len() >= 6)
    {
        push(
            out,
            PASSWORD_ARGUMENT,
            Recommendation::Block,
            pw,
            "a literal password is given to htpasswd -b",
        );
        return true;
    }
    if let Some((option, _)) = login_option(name, args) {
        push(
            out,
            PASSWORD_ARGUMENT,
            Recommendation::Block,
            option,
            "a literal password or token is passed in a login option",
        );
        return true;
    }
    // `poetry config http-basic.corp USER PASS`, `composer config http-basic.host USER PASS`:
    // the password is the second value.
    if args.iter().any(|a| a == "config") {
        if let Some(i) = args
            .iter()
            .position(|a| a.to_ascii_lowercase().starts_with("http-basic."))
        {
            if let Some(pw) = args.get(i + 2).filter(|p| literal_value(p) && p.len() >= 6) {
                push(
                    out,
                    PASSWORD_ARGUMENT,
                    Recommendation::Block,
                    pw,
                    "a package manager is configured with a literal password",
                );
                return true;
            }
        }
    }
    // Read once, not per word: a hostile argv of thousands of words made this loop quadratic.
    let sets_a_value = setter(cmd);
    let logs_in = cmd.argv.iter().any(|w| w == "login");
    for (i, a) in args.iter().enumerate() {
        let next = args.get(i + 1).map(String::as_str).unwrap_or("");
        let mysqlish = matches!(
            name,
            "mysql" | "mysqldump" | "mariadb" | "mysqladmin" | "mariadb-dump" | "mysqlimport"
        );
        let pw = if mysqlish && a.starts_with("-p") && a.len() > 2 {
            Some(&a[2..])
        } else if name == "sshpass" && a == "-p" {
            Some(next)
        } else if matches!(name, "curl") && (a == "-u" || a == "--user") {
            next.split_once(':').map(|(_, p)| p)
        } else if let Some(v) = long_secret_option(a) {
            Some(v)
        } else if secret_option(a) && !next.contains(['=', ',']) && strong_or_key(next) {
            // `--auth V`, `--access-token V`, `--client-secret V`: named as a secret, valued
            // like one.
            Some(next)
        } else if ((a == "--password" || a == "--token" || a == "--api-key")
            && !next.starts_with('-')
            && !next.contains('/')
            // mysql's `--password` takes no separate value: it prompts.
            && !mysqlish)
            // `twine upload -u __token__ -p pypi-...`.
            || (name == "twine" && a == "-p")
            // `docker login -p PW`.
            || (matches!(
                name,
                "docker" | "podman" | "helm" | "buildah" | "skopeo" | "nerdctl" | "oras"
            ) && logs_in
                && a == "-p")
            // `aws configure set aws_secret_access_key VALUE`, `npm config set _authToken V`.
            // (AWS secret keys hold `/`: a value with one is still a key unless it reads as a
            // path.)
            || (sets_a_value && secret_name(a.trim_start_matches('-')) && strong_or_key(next))
        {
            Some(next)
        } else {
            None
        };
        if let Some(pw) = pw {
            if literal_value(pw) {
                push(
                    out,
                    PASSWORD_ARGUMENT,
                    Recommendation::Block,
                    a,
                    "a literal password is passed on the command line",
                );
                return true;
            }
        }
        if let Some(rest) = (a == "-H" || a == "--header")
            .then(|| credential_header(next))
            .flatten()
        {
            let value = rest.split_whitespace().last().unwrap_or("");
            if literal_value(value) && value.len() >= 8 && entropy(value) >= 3.0 {
                push(
                    out,
                    AUTHORIZATION_HEADER,
                    Recommendation::Block,
                    next,
                    "an Authorization (or API key) header with a literal credential",
                );
                return true;
            }
        }
    }
    false
}

/// A credential file: below the home directory (`~/.ssh/id_*`, `~/.aws/credentials`, ...),
/// or the system's (`/etc/shadow`, host keys, mounted orchestrator secrets). Public keys are
/// not credentials.
pub(crate) fn is_credential_path(a: &str) -> bool {
    // `~/.ssh/./id_rsa`, `~/.ssh//id_rsa`: the same file, spelled the long way round.
    let normal = crate::guard::normalized(std::path::Path::new(a));
    let a = normal.to_str().unwrap_or(a);
    // Only a path-shaped word is a glob (`/etc/shad?w`, `~/.a?s/*`): code and patterns with
    // `*` or `[` in them (`s/(.*?)/x/`, `[f for f in ..]`) are not, and compiling them is dear.
    let path_shaped = (a.starts_with('/') || a.starts_with('~') || a.starts_with("$HOME") || a.starts_with("${HOME}"))
        && a.len() <= 128
        && !a.contains(|c: char| {
            c.is_whitespace() || matches!(c, '(' | ')' | '{' | '}' | '\'' | '"' | '\\' | '|' | ';')
        });
    names_credential(a) || (path_shaped && a.contains(['*', '?', '[']) && glob_names_credential(a))
}

/// Whether the literal path `a` names a credential file ([`is_credential_path`]).
fn names_credential(a: &str) -> bool {
    match home_relative(a) {
        Some(rest) => {
            (CREDENTIAL_PATHS.iter().any(|p| rest.starts_with(p))
                || TOKEN_STORES.iter().any(|p| names_entry(rest, p))
                || CREDENTIAL_DIRS.contains(&rest.trim_end_matches('/')))
                && !rest.ends_with(".pub")
                && !template(rest)
        }
        None => {
            matches!(a, "/etc/shadow" | "/etc/gshadow" | "/etc/sudoers" | "/etc/master.passwd" | "/etc/security/opasswd")
                || (a.starts_with("/etc/ssh/ssh_host_") && !a.ends_with(".pub"))
                || (SYSTEM_CREDENTIALS.iter().any(|p| a.starts_with(p)) && !template(a))
                || SYSTEM_TOKEN_STORES.iter().any(|p| names_entry(a, p))
                // Container and pod secrets mounted by the orchestrator.
                || a.starts_with("/run/secrets/")
                || a.starts_with("/var/run/secrets/")
                // root's own credentials.
                || a.strip_prefix("/root/").is_some_and(|rest| {
                    (CREDENTIAL_PATHS.iter().any(|p| rest.starts_with(p)) && !template(rest))
                        || TOKEN_STORES.iter().any(|p| names_entry(rest, p))
                })
        }
    }
}

/// Whether `path` is the credential list entry `entry` or inside it: an entry ending in `/`
/// is a folder, one ending in `_` or `-` a family of names (`.ssh/id_`), any other a file,
/// which a backup or a format suffix keeps (`.netrc.bak`, `.cargo/credentials.toml`) and
/// another name does not (`.psql_history_notes.md`, `.config/hub-settings.json`).
fn names_entry(path: &str, entry: &str) -> bool {
    match path.strip_prefix(entry) {
        Some(rest) => {
            (entry.ends_with(['/', '_', '-']) || rest.is_empty() || rest.starts_with(['.', '/'])) && !template(path)
        }
        None => false,
    }
}

/// `~/.boto.example`, `.pgpass.sample`, `.my.cnf.template`: a template to copy from, holding
/// no secret.
fn template(path: &str) -> bool {
    [".example", ".sample", ".template", ".tmpl", ".dist"]
        .iter()
        .any(|t| path.ends_with(t))
}

/// Credential files a glob could name (`/etc/shad?w`, `/e??/shadow`, `~/.aws/cred*`): the
/// pattern matches one of the well-known ones and is specific enough to pick it out: its last
/// component holds three literal characters, so most of a folder (`/etc/*`, `/etc/s*`) is a
/// listing, judged elsewhere.
fn glob_names_credential(pattern: &str) -> bool {
    const WELL_KNOWN: &[&str] = &[
        "/etc/shadow",
        "/etc/gshadow",
        "/etc/sudoers",
        "/etc/master.passwd",
        "/etc/security/opasswd",
        "/etc/ssh/ssh_host_rsa_key",
        "/etc/ssh/ssh_host_ecdsa_key",
        "/etc/ssh/ssh_host_ed25519_key",
        "/etc/krb5.keytab",
    ];
    // Three literal characters at least, outside brackets: `/etc/sha*` picks the file out,
    // `/etc/s*` and `/etc/[a-z]*` are most of the folder.
    let last = pattern.rsplit('/').next().unwrap_or(pattern);
    let mut in_brackets = false;
    let literal = last
        .chars()
        .filter(|c| match c {
            '[' => {
                in_brackets = true;
                false
            }
            ']' => {
                in_brackets = false;
                false
            }
            '*' | '?' => false,
            _ => !in_brackets,
        })
        .count();
    if pattern.len() > 256 || literal < 3 {
        return false;
    }
    let matcher = |glob: &str| {
        globset::GlobBuilder::new(glob)
            .literal_separator(true)
            .build()
            .ok()
            .map(|g| g.compile_matcher())
    };
    match home_relative(pattern) {
        // `~/.a?s/credentials`, `/home/*/.ssh/id_*`: the home's credential files, `id_`
        // standing for the usual key names.
        Some(rest) => matcher(rest).is_some_and(|m| {
            CREDENTIAL_PATHS
                .iter()
                .chain(TOKEN_STORES)
                .any(|p| match p.strip_suffix("id_") {
                    Some(dir) => ["id_rsa", "id_ed25519", "id_ecdsa"]
                        .iter()
                        .any(|key| m.is_match(format!("{dir}{key}"))),
                    None => m.is_match(p.trim_end_matches('/')),
                })
        }),
        None => matcher(pattern).is_some_and(|m| WELL_KNOWN.iter().any(|f| m.is_match(f))),
    }
}

/// The host's credential files: cluster administrator configurations and join tokens, TLS
/// private keys, Kerberos keytabs, VPN and Wi-Fi secrets, database administrator passwords.
const SYSTEM_CREDENTIALS: &[&str] = &[
    "/etc/kubernetes/admin.conf",
    "/etc/kubernetes/super-admin.conf",
    "/etc/kubernetes/controller-manager.conf",
    "/etc/kubernetes/scheduler.conf",
    "/etc/kubernetes/kubelet.conf",
    "/etc/kubernetes/pki/",
    "/var/lib/kubelet/pki/",
    "/var/lib/rancher/k3s/server/token",
    "/var/lib/rancher/k3s/server/node-token",
    "/var/lib/rancher/k3s/server/cred/",
    "/var/lib/rancher/k3s/server/tls/",
    "/var/lib/rancher/rke2/server/token",
    "/var/lib/rancher/rke2/server/node-token",
    "/etc/rancher/k3s/k3s.yaml",
    "/etc/rancher/rke2/rke2.yaml",
    "/var/snap/microk8s/current/credentials/",
    "/etc/ssl/private/",
    "/etc/pki/tls/private/",
    "/etc/letsencrypt/live/",
    "/etc/letsencrypt/archive/",
    "/etc/krb5.keytab",
    "/etc/wireguard/",
    "/etc/NetworkManager/system-connections/",
    "/etc/openvpn/client/",
    "/etc/openvpn/server/",
    "/etc/mysql/debian.cnf",
    "/var/lib/jenkins/secrets/",
    "/var/lib/jenkins/credentials.xml",
    "/etc/ceph/ceph.client.admin.keyring",
    "/etc/docker/key.json",
    "/var/lib/docker/swarm/certificates/",
];

/// The host's credential files matched by their whole name (`/var/backups/shadow.bak`, not
/// `/var/backups/shadow-notes.txt`): Wi-Fi passwords, backups of the password files, GitLab's
/// secrets.
const SYSTEM_TOKEN_STORES: &[&str] = &[
    // Kerberos ticket caches: whoever holds one is the user to every kerberised service.
    "/tmp/krb5cc_",
    "/var/tmp/krb5cc_",
    "/etc/wpa_supplicant/wpa_supplicant.conf",
    "/etc/wpa_supplicant/wpa_supplicant-",
    "/var/backups/shadow",
    "/var/backups/gshadow",
    "/etc/gitlab/gitlab-secrets.json",
    "/etc/gitlab/initial_root_password",
];

/// Credential files under the home directory (or the system's), by path below home.
const CREDENTIAL_PATHS: &[&str] = &[
    ".ssh/id_",
    ".ssh/identity",
    ".aws/credentials",
    ".aws/config",
    ".netrc",
    ".git-credentials",
    ".docker/config.json",
    ".kube/config",
    ".pgpass",
    ".my.cnf",
    ".npmrc",
    ".pypirc",
    ".config/gh/hosts.yml",
    ".gnupg/",
    ".azure/",
    ".config/gcloud/",
    ".vault-token",
    ".password-store/",
    ".bash_history",
    ".zsh_history",
];

/// Credential files under the home directory matched by their whole name (`.boto`, not
/// `.botorc`): the database and interpreter histories that hold the passwords typed into them,
/// and tools' own token stores.
const TOKEN_STORES: &[&str] = &[
    ".psql_history",
    ".mysql_history",
    ".rediscli_history",
    ".local/share/fish/fish_history",
    ".terraform.d/credentials.tfrc.json",
    ".config/rclone/rclone.conf",
    ".s3cfg",
    ".boto",
    ".cargo/credentials",
    ".gem/credentials",
    ".config/hub",
    ".config/op/",
    ".config/composer/auth.json",
    ".composer/auth.json",
    ".local/share/keyrings/",
    ".cache/huggingface/token",
    ".huggingface/token",
    ".config/doctl/config.yaml",
    ".config/glab-cli/config.yml",
    // Build tools' publishing and repository passwords.
    ".m2/settings.xml",
    ".m2/settings-security.xml",
    ".gradle/gradle.properties",
    // Coding agents' and assistants' own sign-in tokens.
    ".codex/auth.json",
    ".claude/.credentials.json",
    ".gemini/oauth_creds.json",
    ".config/github-copilot/hosts.json",
    ".config/github-copilot/apps.json",
    // Hosting CLIs' access tokens.
    ".fly/config.yml",
    ".config/configstore/firebase-tools.json",
];

/// Commands that handle key files without revealing them.
const KEY_TOOLS: &[&str] = &[
    "cd",
    "pushd",
    "tree",
    "du",
    "ssh",
    "ssh-keygen",
    "ssh-add",
    "ssh-copy-id",
    "chmod",
    "chown",
    "ls",
    "test",
    "[",
    "stat",
    "git",
    "mkdir",
    "touch",
];

/// Directories of credential files: reading one whole (`tar`, `grep -r`, `cp -r`) reads them.
const CREDENTIAL_DIRS: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".kube",
    ".docker",
    ".config/gcloud",
    ".azure",
    ".password-store",
];

/// `diff -r /tmp/empty /etc/`, `grep -r '' /root`, `tar cf - /root`, `cp -r /root /tmp/r`:
/// a command that prints every file under a folder holding the machine's or root's
/// credentials (`/etc`: shadow, sudoers, host keys; `/root`: root's keys and history), the
/// folder named whole, or copies it where anyone can read it (stdout, a temp directory).
/// Returns the folder. A search prints what matches, so only a pattern that matches every
/// line reads everything, and only when it prints lines (not `-l`, `-c`, `-q`); `diff -q`
/// prints names. A backup kept elsewhere (`sudo tar czf /backup/etc.tgz /etc`) is a backup,
/// and only root reads `/etc`'s secrets to copy them.
fn tree_read_whole(cmd: &SimpleCommand) -> Option<&str> {
    // Asked of every command: the programs it knows first, before any words are gathered.
    if !matches!(
        cmd.name(),
        "diff"
            | "colordiff"
            | "grep"
            | "egrep"
            | "fgrep"
            | "rg"
            | "ag"
            | "tar"
            | "gtar"
            | "bsdtar"
            | "zip"
            | "cp"
            | "rsync"
            | "scp"
            | "7z"
            | "7za"
            | "7zz"
            | "7zr"
            | "git"
    ) {
        return None;
    }
    let args = cmd.argv.get(1..).unwrap_or_default();
    let has_flag = |long: &[&str], letters: &str| {
        args.iter().any(|a| {
            long.contains(&a.as_str())
                || crate::guard::options::bundle(a, |_| false)
                    .is_some_and(|b| b.flags.contains(|c| letters.contains(c)))
        })
    };
    let operands: Vec<&str> = args
        .iter()
        .filter(|a| !a.starts_with('-'))
        .map(String::as_str)
        .collect();
    let match_all = |p: &str| {
        matches!(
            p,
            "" | "." | "^" | "$" | ".*" | "^.*$" | "^.*" | ".*$" | "a*" | ".?" | ".+"
        )
    };
    const NAMES_ONLY: &[&str] = &[
        "--files-with-matches",
        "--files-without-match",
        "--count",
        "--count-matches",
        "--quiet",
        "--silent",
        "--brief",
        "--files",
    ];
    let matching_lines = |folders| match operands.split_first() {
        Some((pattern, rest)) if match_all(pattern) && !has_flag(NAMES_ONLY, "lLcq") => rest,
        _ => folders,
    };
    // Where a copy lands: stdout, or a directory any user can read.
    let exposed = |dest: Option<&str>| {
        dest.is_none_or(|d| {
            d == "-"
                || d.starts_with("/dev/std")
                || crate::guard::targets::TEMP_DIRS.iter().any(|t| {
                    d.strip_prefix(t)
                        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
                })
        })
    };
    let archive = |letters: &str| {
        args.iter().enumerate().find_map(|(k, a)| {
            if let Some(v) = a.strip_prefix("--file=") {
                return Some(v);
            }
            let bundle = a == "--file"
                || (k == 0 && !a.starts_with('-') && a.contains(|c| letters.contains(c)))
                || crate::guard::options::bundle(a, |_| false).is_some_and(|b| b.flags.ends_with(letters));
            bundle.then(|| args.get(k + 1).map(String::as_str)).flatten()
        })
    };
    let (read, copies): (&[&str], bool) = match cmd.name() {
        "diff" | "colordiff" if has_flag(&["--recursive"], "r") && !has_flag(&["--brief"], "q") => (&operands, false),
        "grep" | "egrep" | "fgrep" if has_flag(&["--recursive", "--dereference-recursive"], "rR") => {
            (matching_lines(&[]), false)
        }
        "rg" | "ag" => (matching_lines(&[]), false),
        "tar" | "gtar" | "bsdtar"
            if (has_flag(&["--create"], "c")
                || args.first().is_some_and(|a| !a.starts_with('-') && a.contains('c')))
                && exposed(archive("f")) =>
        {
            (&operands, true)
        }
        "zip" if has_flag(&["--recurse-paths"], "r") => {
            let name = args
                .iter()
                .find(|a| *a == "-" || !a.starts_with('-'))
                .map(String::as_str);
            if exposed(name) {
                (&operands, true)
            } else {
                (&[], true)
            }
        }
        "cp" | "rsync" | "scp" if has_flag(&["--recursive", "--archive"], "rRa") => match operands.split_last() {
            Some((dest, sources)) if exposed(Some(dest)) => (sources, true),
            _ => (&[], true),
        },
        // `7z a ARCHIVE FOLDER..`.
        "7z" | "7za" | "7zz" | "7zr" => match operands.as_slice() {
            ["a", archive, folders @ ..] if exposed(Some(archive)) => (folders, true),
            _ => (&[], true),
        },
        // `git diff --no-index /tmp/empty /root`: a diff of two folders outside any repository.
        "git" if operands.first() == Some(&"diff") && args.iter().any(|a| a == "--no-index") => (&operands[1..], false),
        _ => (&[], false),
    };
    // `tar -C / -czf x.tgz root`: an operand names a folder under tar's working directory.
    let base = args
        .iter()
        .position(|a| a == "-C" || a == "--directory")
        .and_then(|k| args.get(k + 1))
        .map(String::as_str)
        .or_else(|| args.iter().find_map(|a| a.strip_prefix("--directory=")))
        .filter(|_| matches!(cmd.name(), "tar" | "gtar" | "bsdtar"));
    read.iter().copied().find(|w| {
        let joined;
        let w = match base {
            Some(dir) if !w.starts_with(['/', '~', '$']) => {
                joined = format!("{dir}/{w}");
                joined.as_str()
            }
            _ => w,
        };
        // `/etc/.`, `//etc`, `/usr/../etc`, `/etc/*`: the folder itself.
        let w = w.strip_suffix("/*").unwrap_or(w);
        let normal = crate::guard::normalized(std::path::Path::new(w));
        match normal.to_str().unwrap_or(w) {
            "/root" | "~root" => true,
            "/etc" | "/private/etc" => !copies || cmd.as_root,
            _ => false,
        }
    })
}

/// Options that point a tool at its own credential file (it uses the file, it does not print
/// it), and the tools that take them.
const OWNER_OPTIONS: &[&str] = &[
    "--kubeconfig",
    "-i",
    "--identity",
    "--identity-file",
    "--private-key",
    "--key-file",
];
const OWNERS: &[&str] = &[
    "kubectl",
    "helm",
    "k9s",
    "oc",
    "kubectx",
    "kubens",
    "minikube",
    "scp",
    "sftp",
    "rsync",
    "ansible",
    "ansible-playbook",
    "ssh-copy-id",
    "mosh",
    "autossh",
];

/// Maven pointed at its own settings (`mvn -s ~/.m2/settings.xml package`), the file this
/// change made a credential file: it reads the server passwords there to build and deploy
/// without printing them. The program, its options, and the names its file ends with; handed
/// another credential file there, or asked to print the settings (`help:effective-settings`),
/// it is judged as any reader is.
const OWN_SETTINGS: &[(&str, &[&str], &[&str])] = &[
    (
        "mvn",
        &["-s", "--settings", "-gs", "--global-settings"],
        &["settings.xml", "settings-security.xml"],
    ),
    (
        "mvnw",
        &["-s", "--settings", "-gs", "--global-settings"],
        &["settings.xml", "settings-security.xml"],
    ),
];

/// Whether `name` reads `value`, handed to it with `option`, as its own credentials (`words`:
/// the whole command).
fn reads_as_own(name: &str, words: &[&String], option: &str, value: &str) -> bool {
    let own_settings = || {
        OWN_SETTINGS.iter().any(|(program, options, files)| {
            *program == name && options.contains(&option) && files.iter().any(|f| value.ends_with(f))
        })
    };
    let prints_settings = || words.iter().any(|w| w.contains("effective-settings"));
    (OWNERS.contains(&name) && OWNER_OPTIONS.contains(&option)) || (own_settings() && !prints_settings())
}

fn credential_files(cmd: &SimpleCommand, name: &str, out: &mut Vec<Violation>) {
    let credential_read = |what: String| {
        violation(
            Category::Secrets,
            CREDENTIAL_FILE,
            Recommendation::Block,
            Risk::High,
            &cmd.display(),
            what,
        )
    };
    // `ssh -F ~/.ssh/id_rsa x`: a credential file handed to ssh as its configuration is
    // printed back line by line in its complaints.
    // `ssh-copy-id -f -i ~/.aws/credentials HOST`: forced, the file itself is sent, whatever
    // it holds (without `-f` only its `.pub` twin goes).
    let forced_copy = name == "ssh-copy-id" && cmd.argv.iter().any(|a| a == "-f");
    if (matches!(name, "ssh" | "scp" | "sftp") || forced_copy)
        && cmd.argv.windows(2).any(|w| {
            ((w[0] == "-F" && !forced_copy) || (w[0] == "-i" && forced_copy))
                && is_credential_path(&w[1])
                && !w[1].ends_with(".pub")
        })
    {
        out.push(credential_read(
            "hands a credential file to ssh as its configuration (it prints the lines back) or sends it whole"
                .to_string(),
        ));
        return;
    }
    // `ssh HOST 'cat > k' < ~/.ssh/id_rsa`: ssh uses the keys it is pointed at, but what it
    // reads on stdin is the remote command's input: the file goes to the other machine.
    if name == "ssh" {
        let dotenv = |f: &str| super::exfiltration::dotenv(f.rsplit('/').next().unwrap_or(f));
        if let Some(f) = cmd.inputs.iter().find(|f| is_credential_path(f) || dotenv(f)) {
            out.push(credential_read(format!(
                "sends `{f}`, a credential file, to the remote machine on ssh's stdin"
            )));
            return;
        }
    }
    if let Some(tree) = tree_read_whole(cmd) {
        out.push(credential_read(format!(
            "reads every file under `{tree}`, the credential files in it among them"
        )));
        return;
    }
    if KEY_TOOLS.contains(&name) || matches!(name, "export" | "declare" | "typeset" | "local" | "readonly" | "setenv") {
        return;
    }
    // macOS keychain reads that print the secret.
    if name == "security"
        && cmd
            .argv
            .iter()
            .any(|a| a == "dump-keychain" || (a.starts_with("find-") && a.ends_with("-password")))
        && (cmd.argv.iter().any(|a| a == "dump-keychain")
            || cmd
                .argv
                .iter()
                .any(|a| a.starts_with('-') && a.contains('w') && !a.starts_with("--")))
    {
        out.push(credential_read("prints a password from the keychain".to_string()));
        return;
    }
    let words: Vec<&String> = cmd.argv.iter().skip(1).chain(cmd.inputs.iter()).collect();
    // Browsers' saved passwords and cookies, and the login keychain.
    let browser_store = |w: &str| {
        let file = w.rsplit('/').next().unwrap_or(w);
        let store = matches!(
            file,
            "Login Data" | "Cookies" | "Web Data" | "logins.json" | "key4.db" | "cookies.sqlite"
        );
        let browser = || {
            [
                "Chrome",
                "chrome",
                "Chromium",
                "chromium",
                "BraveSoftware",
                "Edge",
                "edge",
                "firefox",
                "Firefox",
            ]
            .iter()
            .any(|b| w.contains(b))
        };
        // Firefox's and Chrome's password stores are known by their names alone, wherever
        // the profile folder is kept (`"$PROFILE/key4.db"`).
        let unique_store =
            matches!(file, "logins.json" | "key4.db" | "key3.db" | "Login Data") && w.starts_with(['/', '~', '$']);
        (store && browser()) || unique_store || w.contains("Keychains/login.keychain")
    };
    // macOS's password hashes (`dscl . -read /Users/admin dsAttrTypeNative:ShadowHashData`).
    if words.iter().any(|w| w.contains("ShadowHashData")) {
        out.push(credential_read("reads an account's password hash".to_string()));
        return;
    }
    if let Some(w) = words.iter().find(|w| browser_store(w)) {
        out.push(credential_read(format!(
            "reads `{w}`, a browser's saved passwords or cookies"
        )));
        return;
    }
    for (i, a) in words.iter().enumerate() {
        if i > 0 && reads_as_own(name, &words, words[i - 1], a) {
            continue;
        }
        if a.split_once('=').is_some_and(|(o, v)| reads_as_own(name, &words, o, v)) {
            continue;
        }
        let a = a.trim_start_matches('@');
        let a = a.rsplit_once('=').map(|(_, v)| v).unwrap_or(a).trim_start_matches('@');
        let sensitive = is_credential_path(a);
        if sensitive && !a.ends_with(".pub") {
            out.push(credential_read(format!("reads `{a}`, a credential file")));
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_need_a_format_and_entropy() {
        assert!(find_token("ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5").is_some());
        assert!(find_token("AKIAZ7Q2J4K6L8M0N2P4").is_some());
        assert!(find_token("AKIAIOSFODNN7EXAMPLE").is_none());
        assert!(find_token("0123456789abcdef0123456789abcdef01234567").is_none());
        assert!(find_token("sk-xxxxxxxxxxxxxxxxxxxxxxxx").is_none());
    }
}
