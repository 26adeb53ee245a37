//! Text one command hands to another through a pipe or a file: what `echo`/`printf` of literal
//! words print, what `cat`/`tee` pass on from a here-document, and the files written that way
//! earlier in the line ([`WrittenFiles`]), which a later command may run or read.

use std::collections::HashMap;

use crate::guard::shell::is_literal;
use crate::guard::SimpleCommand;

/// The text an `echo`/`printf` of literal words prints (None for other commands, or when a
/// word is not literal).
pub(crate) fn printed_text(cmd: &SimpleCommand) -> Option<String> {
    let args: Vec<&str> = cmd.argv.iter().skip(1).map(String::as_str).collect();
    let text = match cmd.name() {
        "echo" => args
            .iter()
            .skip_while(|a| matches!(**a, "-n" | "-e" | "-E" | "-ne" | "-en"))
            .copied()
            .collect::<Vec<_>>()
            .join(" "),
        "printf" => {
            // The format's `\n` escapes are newlines; `%s` takes the following words in turn.
            let (fmt, rest) = args.split_first()?;
            let mut s = fmt.replace("\\n", "\n").replace("%s", "");
            for r in rest {
                s.push('\n');
                s.push_str(r);
            }
            s
        }
        _ => return None,
    };
    (is_literal(&text) && !text.trim().is_empty()).then_some(text)
}

/// The text `cmd` writes into its output redirections, when it is known: a `cat`/`tee`
/// here-document, or what `echo`/`printf` print.
fn written_text(cmd: &SimpleCommand) -> Option<String> {
    match cmd.name() {
        "cat" | "tee" if cmd.stdin_text.is_some() => cmd.stdin_text.clone(),
        _ => printed_text(cmd),
    }
}

/// Files written earlier in the line (`echo .. > x.sh`, `cat > x.sql <<EOF`), by path as
/// written (`./x` and `x` are one file), with their text: running or reading one of them later
/// in the line runs or reads that text.
#[derive(Debug, Clone, Default)]
pub(crate) struct WrittenFiles {
    by_path: HashMap<String, String>,
}

impl WrittenFiles {
    fn key(path: &str) -> &str {
        path.trim_start_matches("./")
    }

    pub fn is_empty(&self) -> bool {
        self.by_path.is_empty()
    }

    /// The text written to `path`, if it was written earlier in the line.
    pub fn text(&self, path: &str) -> Option<&str> {
        self.by_path.get(Self::key(path)).map(String::as_str)
    }

    /// Remembers the text `cmd` writes to its redirect targets, when it is known: `>` replaces
    /// what was there, `>>` appends.
    pub fn record(&mut self, cmd: &SimpleCommand) {
        if cmd.redirects.is_empty() {
            return;
        }
        let Some(text) = written_text(cmd) else {
            return;
        };
        for r in &cmd.redirects {
            let entry = self.by_path.entry(Self::key(r).to_string()).or_default();
            if !cmd.appends.contains(r) {
                entry.clear();
            }
            entry.push_str(&text);
            entry.push('\n');
        }
    }

    /// The text of a file written earlier that `cmd` reads on stdin: `psql < x.sql`, or `cat
    /// x.sql` (which prints it into the next command of its pipeline).
    pub fn read_by(&self, cmd: &SimpleCommand) -> Option<String> {
        let file = cmd
            .inputs
            .first()
            .or_else(|| (cmd.argv.len() == 2 && cmd.name() == "cat").then(|| &cmd.argv[1]))?;
        self.text(file).map(String::from)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::command;
    use super::*;

    #[test]
    fn echo_and_printf_of_literal_words() {
        assert_eq!(
            printed_text(&command(&["echo", "-n", "rm", "-rf", "/"])).as_deref(),
            Some("rm -rf /")
        );
        assert_eq!(
            printed_text(&command(&["printf", "a\\n%s", "b", "c"])).as_deref(),
            Some("a\n\nb\nc")
        );
        assert_eq!(printed_text(&command(&["echo", "$HOME"])), None);
        assert_eq!(printed_text(&command(&["echo", "-n"])), None);
        assert_eq!(printed_text(&command(&["cat", "x"])), None);
    }

    #[test]
    fn written_files_are_replaced_appended_and_read() {
        let mut files = WrittenFiles::default();
        assert!(files.is_empty());
        let mut first = command(&["echo", "a"]);
        first.redirects = vec!["./x.sql".into()];
        files.record(&first);
        let mut more = command(&["printf", "b"]);
        more.redirects = vec!["x.sql".into()];
        more.appends = more.redirects.clone();
        files.record(&more);
        assert_eq!(files.text("x.sql"), Some("a\nb\n"));
        let mut heredoc = command(&["cat"]);
        heredoc.stdin_text = Some("DROP TABLE t;".into());
        heredoc.redirects = vec!["x.sql".into()];
        files.record(&heredoc);
        assert_eq!(files.text("./x.sql"), Some("DROP TABLE t;\n"));

        let mut psql = command(&["psql"]);
        psql.inputs = vec!["x.sql".into()];
        assert_eq!(files.read_by(&psql).as_deref(), Some("DROP TABLE t;\n"));
        assert_eq!(
            files.read_by(&command(&["cat", "./x.sql"])).as_deref(),
            Some("DROP TABLE t;\n")
        );
        assert_eq!(files.read_by(&command(&["cat", "y.sql"])), None);
        assert_eq!(files.read_by(&command(&["less", "x.sql"])), None);
    }
}
