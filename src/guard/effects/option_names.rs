//! What an option's name says its value is for: the one place that decides whether
//! `--manual-auth-hook`, `-Xlua_script:`, `-engine` or `--on-finish` hands a program something
//! to run or to load.
//!
//! Programs the effect table does not know still name their options in plain words, and those
//! words are what the guard can read of them: a value given to `--post-hook` or `--exec` is run,
//! a value given to `-engine`, `--plugin` or `-agentpath:` is loaded into the program. Three
//! rules ask: a whole command line handed to an unknown program
//! ([`super::judge`]'s `handed_command_lines`), temp code handed to a root program
//! (`run_from_temp`), and a library from the workspace or a temp directory loaded into one
//! (`library_loads`).
//!
//! How a name is read: lower-cased, cut into its words at anything not a letter or a digit
//! (`--manual-auth-hook` → manual, auth, hook; `-Xlua_script` → xlua, script). A word of four
//! letters or more also matches inside a longer word (`agentpath`, `preload`, `execute`,
//! `initfile`); a shorter one only on its own (`--on-exit`, `--lib-path`, `--run-cmd`; their
//! longer forms are listed, `--library`, `--runner`), so `--prefix`, `--done`, `--liberal` and
//! `--runtime` name nothing.

/// What a value is handed to the program for, as its option's name says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// A program, a script or a command line to run (`--exec`, `--hook`, `--init-command`).
    Run,
    /// Code to load into the program itself (`-engine`, `--plugin`, `extension=`).
    Load,
    /// A command line to run later, on some event (`--on-finish`, `--exec-after`,
    /// `--before`): [`Purpose::Run`]'s words and the words that say when.
    RunOnEvent,
}

/// Words naming an option whose value is run.
const RUN_WORDS: &[&str] = &[
    "run", "runner", "exec", "cmd", "cmdline", "command", "hook", "callback", "action", "trigger", "eval", "script",
    "shell", "init", "program",
];

/// Words naming an option whose value is loaded into the program.
const LOAD_WORDS: &[&str] = &[
    "engine",
    "module",
    "plugin",
    "load",
    "lib",
    "libdir",
    "library",
    "libraries",
    "extension",
    "agent",
    "provider",
];

/// Words that say when a handed command line runs (`--on-exit`, `--after`, `--post`).
const EVENT_WORDS: &[&str] = &["on", "after", "before", "pre", "post", "do", "then", "finally"];

/// Whether `option` (`--post-hook`, `-engine`, `-Xlua_script:F`, `extension=x.so`; anything
/// from the first `=` or `:` on is its value) names `purpose`.
pub(crate) fn names(option: &str, purpose: Purpose) -> bool {
    let name = option.split(['=', ':']).next().unwrap_or(option);
    let words: &[&[&str]] = match purpose {
        Purpose::Run => &[RUN_WORDS],
        Purpose::Load => &[LOAD_WORDS],
        Purpose::RunOnEvent => &[RUN_WORDS, EVENT_WORDS],
    };
    name.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|part| !part.is_empty())
        .any(|part| {
            // Most names are lower case already: only the others are copied.
            let part: std::borrow::Cow<'_, str> = if part.bytes().any(|b| b.is_ascii_uppercase()) {
                part.to_ascii_lowercase().into()
            } else {
                part.into()
            };
            words
                .iter()
                .flat_map(|list| list.iter())
                .any(|w| part == *w || (w.len() >= 4 && part.contains(w)))
        })
}

/// Whether `option` names a value to run or to load ([`Purpose::Run`] or [`Purpose::Load`]).
pub(crate) fn names_run_or_load(option: &str) -> bool {
    names(option, Purpose::Run) || names(option, Purpose::Load)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_words_match_inside_a_word_and_short_ones_only_alone() {
        for (option, purpose) in [
            ("--manual-auth-hook", Purpose::Run),
            ("-Xlua_script", Purpose::Run),
            ("--execute", Purpose::Run),
            ("--init-command", Purpose::Run),
            ("--run-cmd", Purpose::Run),
            ("-engine", Purpose::Load),
            ("-agentpath:/tmp/x.so", Purpose::Load),
            ("--preload", Purpose::Load),
            ("--lib-path", Purpose::Load),
            ("--library", Purpose::Load),
            ("extension=/tmp/x.so", Purpose::Load),
            ("--on-finish", Purpose::RunOnEvent),
            ("--exec-after", Purpose::RunOnEvent),
            ("--POST", Purpose::RunOnEvent),
        ] {
            assert!(names(option, purpose), "{option} names {purpose:?}");
        }
        for (option, purpose) in [
            ("--prefix", Purpose::RunOnEvent),
            ("--done", Purpose::RunOnEvent),
            ("--liberal", Purpose::Load),
            ("--runtime", Purpose::Run),
            ("--output", Purpose::Run),
            ("--on-finish", Purpose::Run),
            ("--name=hook", Purpose::Run),
        ] {
            assert!(!names(option, purpose), "{option} names no {purpose:?}");
        }
    }
}
