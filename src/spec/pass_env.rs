//! `pass_env:` — the names of host variables a task (or, in `medin.yaml`, every task) passes to
//! its commands and its agent's process, such as the API key a CLI agent needs to reach its
//! model. Their values are read when the trial starts and masked in everything medin writes
//! ([`crate::secrets`]); here only the names are checked.
//!
//! An [`EnvName`] is a variable name (`[A-Za-z_][A-Za-z0-9_]*`) that does not decide how the
//! harness's own commands run: not one the sandbox sets itself (`PATH`, `HOME`, `TMPDIR`,
//! `LANG` …), not medin's (`MEDIN_*`), and not one that makes a program load or run other code
//! (`LD_PRELOAD` and every `LD_*` / `DYLD_*`, `BASH_ENV`, `PYTHONPATH` and every `PYTHON*`,
//! `NODE_OPTIONS`, `GIT_*` …): judged runs — validators, test runs, the verifier — take the same
//! environment as the agent's commands, and must not be steered by the host's.

use std::borrow::Cow;
use std::fmt;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Longest name taken.
const MAX_NAME: usize = 128;

/// Names the sandbox sets or that make programs load or run other code.
const RESERVED: &[(&str, &str)] = &[
    ("PATH", "the sandbox sets it (toolchains and packages come first on it)"),
    ("HOME", "the sandbox sets it to the workspace"),
    ("PWD", "the shell sets it"),
    ("OLDPWD", "the shell sets it"),
    ("TMPDIR", "the sandbox gives each command a private temporary folder"),
    ("TMP", "the sandbox gives each command a private temporary folder"),
    ("TEMP", "the sandbox gives each command a private temporary folder"),
    ("SHELL", "the sandbox runs commands with /bin/sh"),
    ("USER", "it names the host's user"),
    ("LOGNAME", "it names the host's user"),
    ("LANG", "the sandbox sets the locale"),
    ("LANGUAGE", "the sandbox sets the locale"),
    ("TERM", "the sandbox sets it"),
    ("IFS", "it changes how every shell splits words"),
    ("ENV", "every POSIX shell runs the file it names"),
    ("BASH_ENV", "every bash runs the file it names"),
    ("CDPATH", "it changes where `cd` goes"),
    ("PS4", "it runs code in a traced shell"),
    ("SHELLOPTS", "it changes every bash"),
    ("BASHOPTS", "it changes every bash"),
    ("GLOBIGNORE", "it changes how every bash expands globs"),
    ("PROMPT_COMMAND", "it runs code in a shell"),
    ("PERL5LIB", "it makes perl load other code"),
    ("PERL5OPT", "it makes perl load other code"),
    ("PERLLIB", "it makes perl load other code"),
    ("RUBYOPT", "it makes ruby load other code"),
    ("RUBYLIB", "it makes ruby load other code"),
    ("VIRTUAL_ENV", "medin provisions the task's Python environment"),
    ("CARGO_HOME", "it changes which cargo and crates the task's builds use"),
    ("CARGO_TARGET_DIR", "it moves the task's builds out of the workspace"),
    ("RUSTC_WRAPPER", "it runs another program for every compile"),
    ("RUSTFLAGS", "it changes how the task's code is compiled"),
    ("JAVA_TOOL_OPTIONS", "it makes every JVM load other code"),
    ("_JAVA_OPTIONS", "it makes every JVM load other code"),
];

/// Prefixes no passed name may have, with why.
const RESERVED_PREFIXES: &[(&str, &str)] = &[
    ("MEDIN_", "medin's own variables are medin's"),
    ("LD_", "the dynamic loader reads it (LD_PRELOAD, LD_LIBRARY_PATH, …)"),
    ("DYLD_", "the dynamic loader reads it"),
    ("BASH_FUNC_", "it defines shell functions"),
    ("GIT_", "it changes which repository and configuration git uses"),
    ("LC_", "the sandbox sets the locale"),
    (
        "PYTHON",
        "it changes what Python loads (judged runs set PYTHONPATH themselves)",
    ),
    (
        "PYTEST_",
        "it changes what pytest loads (judged runs set it themselves)",
    ),
    (
        "NODE_",
        "it changes what Node.js loads (medin sets NODE_PATH for provisioned packages)",
    ),
    ("NPM_CONFIG_", "it changes what npm runs and installs"),
    ("RUSTUP_", "the task's `toolchains:` decide it"),
];

/// A host variable's name that a task may pass (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EnvName(String);

impl EnvName {
    /// Checks `text` as a name to pass; the error says why it cannot be and what to do.
    pub fn parse(text: &str) -> Result<EnvName, String> {
        let valid_syntax = !text.is_empty()
            && text.len() <= MAX_NAME
            && text.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid_syntax {
            return Err(format!(
                "`{}` is not a variable name; write names of letters, digits and `_` (not starting with a digit), such as `OPENAI_API_KEY`",
                crate::inert::line(&crate::inert::clip(text, 80))
            ));
        }
        let upper = text.to_ascii_uppercase();
        let why = RESERVED
            .iter()
            .find(|(name, _)| *name == upper)
            .map(|(_, why)| *why)
            .or_else(|| {
                RESERVED_PREFIXES
                    .iter()
                    .find(|(prefix, _)| upper.starts_with(prefix))
                    .map(|(_, why)| *why)
            });
        match why {
            Some(why) => Err(format!(
                "`{text}` cannot be passed: {why}; `pass_env` is for the secrets and settings a task's agent needs, such as `OPENAI_API_KEY`"
            )),
            None => Ok(EnvName(text.to_string())),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for EnvName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for EnvName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for EnvName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        EnvName::parse(&text).map_err(serde::de::Error::custom)
    }
}

impl Serialize for EnvName {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl JsonSchema for EnvName {
    fn schema_name() -> Cow<'static, str> {
        "EnvName".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "description": "The name of a host variable, such as OPENAI_API_KEY (not PATH, HOME, TMPDIR, LANG, MEDIN_*, LD_*, PYTHON*, GIT_* or another variable that decides how commands run).",
            "pattern": "^[A-Za-z_][A-Za-z0-9_]*$",
            "maxLength": MAX_NAME
        })
    }
}

/// The names of `suite` then `task`, each once, in that order.
pub fn merged(suite: &[EnvName], task: &[EnvName]) -> Vec<EnvName> {
    let mut out: Vec<EnvName> = Vec::with_capacity(suite.len() + task.len());
    for name in suite.iter().chain(task) {
        if !out.contains(name) {
            out.push(name.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_pass_and_the_names_that_steer_commands_do_not() {
        for ok in ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "my_token", "_X", "HF_TOKEN2"] {
            assert_eq!(EnvName::parse(ok).unwrap().as_str(), ok);
        }
        for (bad, why) in [
            ("PATH", "the sandbox sets it"),
            ("path", "the sandbox sets it"),
            ("HOME", "workspace"),
            ("LD_PRELOAD", "dynamic loader"),
            ("LD_LIBRARY_PATH", "dynamic loader"),
            ("MEDIN_AGENT", "medin's own"),
            ("MEDIN_SANDBOX_RUN", "medin's own"),
            ("BASH_ENV", "runs the file"),
            ("PYTHONPATH", "Python"),
            ("GIT_DIR", "git"),
            ("NODE_OPTIONS", "Node.js"),
        ] {
            let e = EnvName::parse(bad).unwrap_err();
            assert!(
                e.contains(&format!("`{bad}` cannot be passed")) && e.contains(why),
                "{bad}: {e}"
            );
        }
        for bad in ["", "1ABC", "A-B", "A B", "$HOME", "A=B"] {
            let e = EnvName::parse(bad).unwrap_err();
            assert!(e.contains("is not a variable name"), "{bad}: {e}");
        }
        assert!(EnvName::parse(&"A".repeat(MAX_NAME + 1)).is_err());
    }

    #[test]
    fn the_suites_names_come_first_and_each_once() {
        let n = |s: &str| EnvName::parse(s).unwrap();
        assert_eq!(
            merged(&[n("A_KEY"), n("B_KEY")], &[n("B_KEY"), n("C_KEY")]),
            vec![n("A_KEY"), n("B_KEY"), n("C_KEY")]
        );
    }
}
