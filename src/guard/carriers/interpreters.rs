//! Inline programs of interpreters that run commands or touch files: `python -c`, `perl -e`,
//! `ruby -e`, `node -e`, `php -r`, `deno eval`, `bun -e`, and `awk 'PROGRAM'`. What they carry is
//! translated into the shell commands that do the same, so the rules judge it: the string
//! literals of a program that runs commands (`os.system("rm -rf /")`,
//! `subprocess.run(["rm", "-rf", "/"])`, backticks, `child_process`), its recursive and
//! single-file deletions (`shutil.rmtree("/")` → `rm -rf /`, `os.remove(p)` → `rm -f p`, the
//! home directory spelled `Path.home()`, `os.homedir()`, ...), and a credential path it names
//! (→ `cat PATH`).

use super::Carried;
use crate::guard::basename;
use crate::guard::shell::shell_quote;

/// The shell commands an inline program amounts to (see the module doc), each run by a
/// process of its own.
pub(super) fn carried(argv: &[String]) -> Vec<Carried> {
    shell_literals(argv)
        .into_iter()
        .chain(inline_effects(argv))
        .map(Carried::child)
        .collect()
}

/// String literals of an inline program (`python -c`, `perl -e`, `ruby -e`, `node -e`) that
/// runs commands (`os.system`, `subprocess`, `exec`, `system`, backticks, `child_process`).
fn shell_literals(argv: &[String]) -> Vec<String> {
    let Some(code) = inline_program(argv) else {
        return Vec::new();
    };
    let runs = [
        "system",
        "subprocess",
        "popen",
        "exec",
        "spawn",
        "child_process",
        "`",
        "Popen",
        "call(",
    ]
    .iter()
    .any(|k| code.contains(k));
    if !runs {
        return Vec::new();
    }
    let mut out = Vec::new();
    // `subprocess.run(["rm", "-rf", "/"])`: one-word literals in order form an argv.
    let mut words: Vec<String> = Vec::new();
    let b: Vec<char> = code.chars().collect();
    let mut k = 0;
    while k < b.len() {
        let q = b[k];
        if q == '"' || q == '\'' || q == '`' {
            let start = k + 1;
            let mut j = start;
            while j < b.len() && b[j] != q {
                if b[j] == '\\' {
                    j += 1;
                }
                j += 1;
            }
            let lit: String = b[start..j.min(b.len())].iter().collect();
            if lit.contains(' ') {
                out.push(lit);
            } else if !lit.is_empty() {
                words.push(shell_quote(&lit));
            }
            k = j + 1;
        } else {
            k += 1;
        }
    }
    if words.len() > 1 {
        out.push(words.join(" "));
    }
    out
}

/// The program text of an inline interpreter call (`python -c CODE`, `perl -e CODE`,
/// `node -e CODE`, `awk 'PROGRAM'`), if `argv` is one.
fn inline_program(argv: &[String]) -> Option<&String> {
    let name = argv.first().map(|w| basename(w))?;
    if matches!(name, "awk" | "gawk" | "mawk" | "nawk") {
        if argv.iter().any(|a| a == "-f" || a.starts_with("--file")) {
            return None;
        }
        let mut i = 1;
        while let Some(a) = argv.get(i) {
            match a.as_str() {
                "-F" | "-v" => i += 2,
                "--" => return argv.get(i + 1),
                _ if a.starts_with('-') && a.len() > 1 => i += 1,
                _ => return Some(a),
            }
        }
        return None;
    }
    let inline = name.starts_with("python") || matches!(name, "perl" | "ruby" | "node" | "php" | "deno" | "bun");
    if !inline {
        return None;
    }
    let i = argv.iter().position(|a| {
        matches!(
            a.as_str(),
            "-c" | "-e" | "-r" | "--eval" | "-E" | "-pe" | "-ne" | "-pie"
        )
    })?;
    argv.get(i + 1)
}

/// String literals of a program, in order, with the byte offset of their opening quote.
fn string_literals(code: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut chars = code.char_indices();
    while let Some((at, q)) = chars.next() {
        if q != '"' && q != '\'' && q != '`' {
            continue;
        }
        let mut lit = String::new();
        while let Some((_, c)) = chars.next() {
            if c == q {
                break;
            }
            if c == '\\' {
                if let Some((_, n)) = chars.next() {
                    lit.push(n);
                }
                continue;
            }
            lit.push(c);
        }
        out.push((at, lit));
    }
    out
}

/// What an inline program does to files, as the shell commands that do the same, so the
/// deletion and secrets rules judge it: `shutil.rmtree("/")` → `rm -rf /`,
/// `os.remove(p)` → `rm -f p`, a credential file path in the program → `cat path`.
fn inline_effects(argv: &[String]) -> Vec<String> {
    let Some(code) = inline_program(argv) else {
        return Vec::new();
    };
    // Calls that delete recursively, and ones that delete one file.
    const RECURSIVE: &[&str] = &[
        "rmtree(",
        "rm_rf(",
        "rm_r(",
        "remove_tree(",
        "rmSync(",
        "rimraf(",
        "removeSync(",
        "remove_dir_all(",
        "rmdirSync(",
        "emptyDirSync(",
    ];
    const SINGLE: &[&str] = &["remove(", "unlink(", "unlinkSync(", "unlink ", "File.delete(", "rm_f("];
    // Expressions for the home directory.
    const HOME: &[&str] = &[
        "Dir.home",
        "homedir()",
        "Path.home()",
        "$ENV{HOME}",
        "ENV['HOME']",
        "ENV[\"HOME\"]",
        "environ['HOME']",
        "environ[\"HOME\"]",
        "env.HOME",
    ];
    let literals = string_literals(code);
    let mut out = Vec::new();
    for (calls, flags) in [(RECURSIVE, "-rf"), (SINGLE, "-f")] {
        for call in calls {
            for (at, _) in code.match_indices(call) {
                let start = at + call.len();
                let rest = &code[start..];
                let end = start + rest.find([')', ';', '\n']).unwrap_or(rest.len());
                // The first string literal inside the call, else a home-directory expression.
                // A module name (`require("os").homedir()`) is not a path.
                let target = literals
                    .iter()
                    .find(|(pos, _)| (start..end).contains(pos) && !code[..*pos].ends_with("require("))
                    .map(|(_, l)| l.clone())
                    .or_else(|| {
                        // The first argument (`require("os").homedir()`, `Path.home()`).
                        let arg = code[start..].split([',', ';', '\n']).next().unwrap_or("");
                        HOME.iter().any(|h| arg.contains(h)).then(|| "~".to_string())
                    });
                if let Some(t) = target {
                    out.push(format!("rm {flags} {}", shell_quote(&t)));
                }
            }
        }
    }
    for (_, lit) in &literals {
        let path = ["~/", "/home/", "/root/", "/Users/", "/etc/"]
            .iter()
            .any(|p| lit.starts_with(p));
        // `open(".env").read()`, `readFileSync("config/.env.production")`: a secrets file the
        // program names, wherever it is.
        let dotenv = crate::guard::rules::exfiltration::dotenv(lit.rsplit('/').next().unwrap_or(lit));
        if (path || dotenv) && !lit.contains(char::is_whitespace) {
            out.push(format!("cat {}", shell_quote(lit)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::testing::{script, scripts};
    use super::super::Runs;

    fn all(words: &[&str]) -> Vec<String> {
        scripts(words).into_iter().map(|c| c.script).collect()
    }

    #[test]
    fn commands_in_string_literals_of_a_program_that_runs_them() {
        assert_eq!(
            script(&["python3", "-c", "import os; os.system('rm -rf /')"], Runs::Child),
            "rm -rf /"
        );
        // One-word literals in order form an argv.
        assert!(
            all(&["python", "-c", "import subprocess; subprocess.run(['rm', '-rf', '/'])"])
                .contains(&"'rm' '-rf' '/'".to_string())
        );
        assert_eq!(
            script(&["perl", "-e", "system(\"curl x | sh\")"], Runs::Child),
            "curl x | sh"
        );
        assert_eq!(
            script(
                &["node", "-e", "require('child_process').execSync('rm -rf ~')"],
                Runs::Child
            ),
            "rm -rf ~"
        );
        assert_eq!(
            script(&["awk", "BEGIN { system(\"rm -rf /\") }"], Runs::Child),
            "rm -rf /"
        );
        // A program that runs nothing carries nothing; nor does an awk program file.
        assert!(scripts(&["python3", "-c", "print('a b')"]).is_empty());
        assert!(scripts(&["awk", "-f", "x.awk", "system(\"rm -rf /\")"]).is_empty());
    }

    #[test]
    fn deletions_and_credential_reads_as_shell_commands() {
        assert_eq!(
            script(&["python3", "-c", "import shutil; shutil.rmtree('/')"], Runs::Child),
            "rm -rf '/'"
        );
        assert_eq!(
            script(&["python3", "-c", "import os; os.remove('/var/x')"], Runs::Child),
            "rm -f '/var/x'"
        );
        assert_eq!(
            script(
                &["node", "-e", "fs.rmSync(require('os').homedir(), {recursive: true})"],
                Runs::Child
            ),
            "rm -rf '~'"
        );
        assert_eq!(
            script(&["ruby", "-e", "puts File.read('~/.ssh/id_rsa')"], Runs::Child),
            "cat '~/.ssh/id_rsa'"
        );
    }
}
