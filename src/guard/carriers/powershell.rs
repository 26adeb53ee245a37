//! PowerShell: `pwsh -Command "Remove-Item -Recurse -Force X"` (also the `rm`, `ri`, `del`,
//! `erase`, `rmdir`, `rd` aliases) is carried as the `rm -rf X` it amounts to, with
//! `$env:USERPROFILE` and `$HOME` as the home directory and a drive root (`C:\`) as `/`.
//! PowerShell's download cradles (`iwr URL | iex`) are the remote-execution rule's business.
//!
//! `pwsh -EncodedCommand B64` (any prefix of the name down to `-e`, or `-ec`; with `-`, `--`
//! or `/`) runs the script B64 encodes (base64 of UTF-16LE text): it is carried decoded, as
//! `pwsh -Command SCRIPT`, so every rule reads what runs. That the script was hidden at all is
//! the remote-execution rule's to judge ([`encoded_script`]).

use super::Carried;
use crate::guard::shell::shell_quote;

/// What a PowerShell command line carries: its encoded script decoded, or the recursive
/// deletions of its `-Command` script as shell commands.
pub(super) fn carried(argv: &[String]) -> Option<Carried> {
    if let Some(Some(script)) = encoded_script(argv) {
        return Some(Carried::child(format!("pwsh -Command {}", shell_quote(&script))));
    }
    powershell_removal(argv).map(Carried::child)
}

/// The script of `-EncodedCommand B64`: None without the option, `Some(None)` when its value
/// is not base64 of UTF-16LE text.
pub(crate) fn encoded_script(argv: &[String]) -> Option<Option<String>> {
    // PowerShell's own parameters end at `-File`/`-Command` or the first operand: what comes
    // after belongs to the script (`pwsh -File deploy.ps1 -e prod`).
    const VALUED: &[&str] = &[
        "executionpolicy",
        "ep",
        "ex",
        "windowstyle",
        "w",
        "version",
        "v",
        "inputformat",
        "if",
        "inp",
        "outputformat",
        "of",
        "o",
        "configurationname",
        "config",
        "workingdirectory",
        "wd",
        "psconsolefile",
        "settingsfile",
        "custompipename",
    ];
    let mut i = 1;
    let at = loop {
        let a = argv.get(i)?;
        let name = a.trim_start_matches(['-', '/']).to_ascii_lowercase();
        // `/path/x.ps1` is an operand, `/enc` a parameter spelled the Windows way.
        let operand = !a.starts_with(['-', '/']) || name.is_empty() || name.contains('/');
        if operand || matches!(name.as_str(), "file" | "f" | "command" | "c") {
            return None;
        }
        if name == "ec" || "encodedcommand".starts_with(&name) {
            break i;
        }
        i += if VALUED.contains(&name.as_str()) { 2 } else { 1 };
    };
    let decoded = argv
        .get(at + 1)
        .and_then(|v| super::text::base64_decode(v))
        .and_then(|bytes| {
            (bytes.len() % 2 == 0)
                .then(|| {
                    let units: Vec<u16> = bytes
                        .chunks_exact(2)
                        .map(|p| u16::from_le_bytes([p[0], p[1]]))
                        .collect();
                    String::from_utf16(&units).ok()
                })
                .flatten()
        });
    Some(decoded)
}

/// `pwsh -Command "Remove-Item -Recurse -Force X"` (also `rm`/`ri`/`del`/`rmdir`/`rd` aliases)
/// as the `rm -rf X` it amounts to; `$env:USERPROFILE` and `$HOME` are the home directory.
fn powershell_removal(argv: &[String]) -> Option<String> {
    let k = argv
        .iter()
        .position(|a| a.eq_ignore_ascii_case("-command") || a.eq_ignore_ascii_case("-c"))?;
    let script = argv[k + 1..].join(" ");
    let mut out = Vec::new();
    for stmt in script.split([';', '\n', '|']) {
        let words: Vec<&str> = stmt.split_whitespace().collect();
        let Some((first, rest)) = words.split_first() else {
            continue;
        };
        let removal =
            ["remove-item", "rm", "ri", "del", "rmdir", "rd", "erase"].contains(&first.to_ascii_lowercase().as_str());
        let recurse = rest.iter().any(|w| w.to_ascii_lowercase().starts_with("-r"));
        if !removal || !recurse {
            continue;
        }
        let mut i = 0;
        let mut targets = Vec::new();
        while i < rest.len() {
            let w = rest[i];
            let lw = w.to_ascii_lowercase();
            if lw == "-path" || lw == "-literalpath" {
                i += 1;
                if let Some(t) = rest.get(i) {
                    targets.push(*t);
                }
            } else if !w.starts_with('-') {
                targets.push(w);
            }
            i += 1;
        }
        for t in targets {
            let t = t.trim_matches(|c| c == '"' || c == '\'');
            let t = if t.eq_ignore_ascii_case("$env:USERPROFILE") || t.eq_ignore_ascii_case("$HOME") {
                "~".to_string()
            } else if t.len() <= 3 && t.as_bytes().get(1) == Some(&b':') {
                "/".to_string()
            } else {
                t.replace('\\', "/")
            };
            out.push(format!("rm -rf {}", shell_quote(&t)));
        }
    }
    (!out.is_empty()).then(|| out.join("; "))
}

#[cfg(test)]
mod tests {
    use super::super::testing::{script, scripts};
    use super::super::Runs;

    #[test]
    fn recursive_removal_becomes_rm_rf() {
        assert_eq!(
            script(&["pwsh", "-Command", "Remove-Item -Recurse -Force $HOME"], Runs::Child),
            "rm -rf '~'"
        );
        assert_eq!(
            script(
                &[
                    "powershell.exe",
                    "-c",
                    "ri -r -Path C:\\ ; rd -Recurse 'C:\\Users\\me\\src'"
                ],
                Runs::Child
            ),
            "rm -rf '/'; rm -rf 'C:/Users/me/src'"
        );
        assert_eq!(
            script(
                &["pwsh", "-Command", "del", "-Recurse", "$env:USERPROFILE"],
                Runs::Child
            ),
            "rm -rf '~'"
        );
    }

    #[test]
    fn an_encoded_script_is_carried_decoded() {
        // "Remove-Item -Recurse -Force $HOME" as UTF-16LE, base64.
        let encoded = "UgBlAG0AbwB2AGUALQBJAHQAZQBtACAALQBSAGUAYwB1AHIAcwBlACAALQBGAG8AcgBjAGUAIAAkAEgATwBNAEUA";
        assert_eq!(
            script(&["pwsh", "-enc", encoded], Runs::Child),
            "pwsh -Command 'Remove-Item -Recurse -Force $HOME'"
        );
        assert_eq!(
            script(
                &["powershell.exe", "-NoProfile", "/EncodedCommand", encoded],
                Runs::Child
            ),
            "pwsh -Command 'Remove-Item -Recurse -Force $HOME'"
        );
        // `-ExecutionPolicy` is not a prefix of `-EncodedCommand`; text that is not UTF-16 carries nothing.
        assert!(scripts(&["pwsh", "-ex", "Bypass", "-File", "x.ps1"]).is_empty());
        assert!(scripts(&["pwsh", "-e", "bHMK"]).is_empty());
    }

    #[test]
    fn other_scripts_carry_nothing() {
        assert!(scripts(&["pwsh", "-Command", "Remove-Item x.txt"]).is_empty());
        assert!(scripts(&["pwsh", "-Command", "Get-ChildItem -Recurse"]).is_empty());
        assert!(scripts(&["pwsh", "script.ps1"]).is_empty());
    }
}
