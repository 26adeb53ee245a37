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
//! An awk program is read the older way: its string literals, when it calls `system`.

use super::Carried;
use crate::guard::shell::shell_quote;
use crate::guard::{basename, SimpleCommand};

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
    awk_literals(&cmd.argv).into_iter().map(Carried::child).collect()
}

/// A credential file an inline program names but the reading did not see used (`lua -e 'local
/// f=io.open("/root/.aws/credentials","rb") ..'` reads it whatever it does next): read.
fn named_credentials(cmd: &SimpleCommand, commands: &mut Vec<String>) {
    let Some((_, code, _)) = super::code::inline_program(cmd) else {
        return;
    };
    for lit in quoted_literals(&code) {
        let path = lit.trim();
        let named = crate::guard::rules::secrets::is_credential_path(path)
            && !path.contains(char::is_whitespace)
            && !commands.iter().any(|c| c.contains(path));
        if named {
            commands.push(format!("cat {} > /dev/null", shell_quote(path)));
        }
    }
}

/// String literals of an awk program that calls `system` (`awk 'BEGIN {system("rm -rf /")}'`):
/// a literal with a space is a command, one-word literals in order an argv.
fn awk_literals(argv: &[String]) -> Vec<String> {
    let Some(code) = awk_program(argv) else {
        return Vec::new();
    };
    if !code.contains("system") && !code.contains('|') {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut words: Vec<String> = Vec::new();
    for lit in quoted_literals(code) {
        if lit.contains(' ') {
            out.push(lit);
        } else if !lit.is_empty() {
            words.push(shell_quote(&lit));
        }
    }
    if words.len() > 1 {
        out.push(words.join(" "));
    }
    out
}

/// The program text of `awk 'PROGRAM'`, if `argv` is one (not `-f FILE`).
fn awk_program(argv: &[String]) -> Option<&String> {
    let name = argv.first().map(|w| basename(w))?;
    if !matches!(name, "awk" | "gawk" | "mawk" | "nawk") {
        return None;
    }
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
    None
}

/// The quoted literals of a program, in order (a backslash escapes the next character).
fn quoted_literals(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = code.chars();
    while let Some(q) = chars.next() {
        if q != '"' && q != '\'' {
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
