//! The suite: `medin.yaml` (folders, default agent, repeats, thresholds) and discovery of the
//! task files in its folders: `*.yaml` files and task directories (`<folder>/<task>/task.yaml`,
//! see [`super::taskdir`]). Trial names are `<category>::<path-without-extension>`, a task
//! directory's being its own path (`golden::gt-040-verify`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::agent_ref::AgentRef;
use super::load::{self, Doc, SpecError};
use crate::agent::{AgentRegistry, AgentSpec};

/// `medin.yaml`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SuiteConfig {
    /// Folders holding task files; the folder name is the category (default: golden,
    /// adversarial, regression).
    #[serde(default = "default_suites")]
    pub suites: Vec<String>,
    /// Agent for tasks that do not pin one (default `oracle`); `MEDIN_AGENT` overrides it.
    #[serde(default)]
    pub agent: Option<AgentRef>,
    /// Named agents, written by their name wherever an agent is named (`--agent fast`,
    /// `agent: fast`): model agents (`fast: {provider: openai, model: gpt-4.1-mini}`) and CLI
    /// agents (`reviewer: {cli: claude-code, model: claude-sonnet-4-5, tools: medin}`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub agents: BTreeMap<String, crate::agent::NamedAgent>,
    /// Attempts per task (epochs), default 1.
    #[serde(default)]
    pub repeat: Option<u32>,
    /// Where run folders and ACTIVITY_LOG.md go, relative to medin.yaml (default target/medin).
    #[serde(default)]
    pub output: Option<String>,
    /// `overall` and per-category thresholds.
    #[serde(default)]
    pub thresholds: BTreeMap<String, ThresholdSet>,
    /// Isolation level for tasks that do not set one: `none`, `process` or `strict` (default:
    /// the strongest this machine supports).
    #[serde(default)]
    pub isolation: Option<crate::sandbox::Isolation>,
    /// Whether commands may use the network in tasks whose `policy.network` is unset (default
    /// false): `network: true` lets a suite of CLI agents reach their models.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<bool>,
    /// Names of host variables every task's commands and agent process get (a task's own
    /// `pass_env` adds to them), e.g. `[ANTHROPIC_API_KEY]`. Their values are masked in
    /// everything medin writes; a name that is not set fails each trial as an infrastructure
    /// error naming it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass_env: Vec<super::EnvName>,
    /// `ACTIVITY_LOG.md`'s own settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activity_log: Option<ActivityLogSettings>,
    /// The suite's product requirements document, relative to medin.yaml (`prd: PRD.md`): the
    /// source of truth tasks prove requirements of (`requirements: [REQ-1]`). A missing or
    /// invalid PRD halts the run before any task starts; see the README, "PRD.md as the
    /// source of truth".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prd: Option<String>,
}

/// `activity_log:` in `medin.yaml`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ActivityLogSettings {
    /// The size past which the log moves to an archive beside it and starts anew (default
    /// `10MiB`); `medin status` reads across the archives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_size: Option<super::ByteSize>,
}

fn default_suites() -> Vec<String> {
    vec!["golden".into(), "adversarial".into(), "regression".into()]
}

impl Default for SuiteConfig {
    fn default() -> Self {
        SuiteConfig {
            suites: default_suites(),
            agent: None,
            agents: BTreeMap::new(),
            repeat: None,
            output: None,
            thresholds: BTreeMap::new(),
            isolation: None,
            network: None,
            pass_env: Vec::new(),
            activity_log: None,
            prd: None,
        }
    }
}

/// Declares the bounds of a threshold set once, for both levels: [`ThresholdSet`] (level
/// critical, with its `warning:` set inside), [`WarningThresholds`] (the same bounds at level
/// warning) and [`Bound`] (which bound, for the checker and for messages). A bound is never
/// added to one level and forgotten in the other.
macro_rules! threshold_bounds {
    ($( $(#[doc = $doc:literal])* $field:ident => $variant:ident, )*) => {
        /// Bounds on suite metrics for one category (or `overall`). Every bound written here
        /// is **critical**: a breach fails the run (exit 100). The same bounds written under
        /// `warning:` are printed and reported, and fail nothing:
        /// `overall: { min_success_rate: 0.9, warning: { min_success_rate: 0.98 } }`.
        #[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct ThresholdSet {
            $( $(#[doc = $doc])* #[serde(default, skip_serializing_if = "Option::is_none")] pub $field: Option<f64>, )*
            /// The same bounds at level `warning`: a breach is printed and reported (summary,
            /// results.json, CI summaries) and does not fail the run.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub warning: Option<WarningThresholds>,
        }

        /// Bounds at level `warning` (a threshold set's `warning:` map).
        #[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct WarningThresholds {
            $( $(#[doc = $doc])* #[serde(default, skip_serializing_if = "Option::is_none")] pub $field: Option<f64>, )*
        }

        /// One bound of a threshold set, named as `medin.yaml` writes it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Bound {
            $( $(#[doc = $doc])* $variant, )*
        }

        impl Bound {
            /// Every bound, in the order `medin.yaml`'s schema lists them.
            pub const ALL: &'static [Bound] = &[$(Bound::$variant),*];

            /// The key in `medin.yaml` (`min_success_rate`).
            pub fn key(self) -> &'static str {
                match self {
                    $(Bound::$variant => stringify!($field),)*
                }
            }
        }

        impl ThresholdSet {
            /// The critical value of `bound`, if set.
            pub fn critical(&self, bound: Bound) -> Option<f64> {
                match bound {
                    $(Bound::$variant => self.$field,)*
                }
            }

            /// The warning value of `bound`, if set.
            pub fn warning(&self, bound: Bound) -> Option<f64> {
                let w = self.warning.as_ref()?;
                match bound {
                    $(Bound::$variant => w.$field,)*
                }
            }
        }
    };
}

threshold_bounds! {
    /// Fraction of the judged trials that must pass, 0.0-1.0.
    min_success_rate => MinSuccessRate,
    /// Highest fraction of the agent's tool calls that may end in an error receipt, 0.0-1.0.
    max_tool_error_rate => MaxToolErrorRate,
    /// Highest average number of turns per judged trial.
    max_avg_turns => MaxAvgTurns,
    /// Most flaky tasks (mixed outcomes across their attempts beyond their `flake_tolerance`,
    /// with `repeat` above 1): a whole number (1 or more) is a count, a value below 1 a
    /// fraction of the scope's tasks.
    max_flaky => MaxFlaky,
    /// Most tokens (input + output, every judged trial's) per passed trial.
    max_tokens_per_success => MaxTokensPerSuccess,
    /// Most false-success claims: trials whose agent reported success and that failed.
    max_false_success => MaxFalseSuccess,
    /// Most verification failures: agent `verify` calls that failed, plus failed validations.
    max_verification_failures => MaxVerificationFailures,
    /// Most tool calls without a receipt. Unset at both levels in `overall`, it is 0 there, at
    /// level critical: a run whose log lost a receipt fails.
    max_missing_receipts => MaxMissingReceipts,
    /// Highest false-positive rate, 0.0-1.0: activity-log entries corrected with `medin log
    /// correct ID --false-positive` among those that said passed (the whole log and its
    /// archives; a category: its entries). Unset at both levels in `overall`, it is 0.001
    /// (0.1%) there, at level warning.
    max_false_positive_rate => MaxFalsePositiveRate,
}

/// How a threshold set gives the value of a bound at one level.
type BoundValue = fn(&ThresholdSet, Bound) -> Option<f64>;

impl Bound {
    /// A fraction from 0.0 to 1.0 (else: a non-negative number).
    pub fn is_rate(self) -> bool {
        matches!(
            self,
            Bound::MinSuccessRate | Bound::MaxToolErrorRate | Bound::MaxFalsePositiveRate
        )
    }
}

/// A loaded suite: its config and where it lives.
#[derive(Debug, Clone)]
pub struct Suite {
    /// Directory of `medin.yaml` (or the directory given when there is none).
    pub root: PathBuf,
    pub config: SuiteConfig,
    /// The agent `config.agent` names, resolved; `None` when it names none.
    pub agent: Option<AgentSpec>,
    /// The agents this suite's tasks and runs can name: the registry it was loaded with and
    /// the named model agents of `config.agents`.
    pub agents: AgentRegistry,
}

/// One task file found in a suite folder.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SpecFile {
    /// Folder name: golden, adversarial, regression, ...
    pub category: String,
    /// Path below the category folder, without extension, `/`-separated.
    pub name: String,
    pub path: PathBuf,
}

impl Suite {
    /// The PRD file `medin.yaml` names, if any.
    pub fn prd_path(&self) -> Option<PathBuf> {
        self.config.prd.as_ref().map(|p| self.root.join(p))
    }
}

impl SpecFile {
    /// `<category>::<name>`.
    pub fn trial_name(&self) -> String {
        format!("{}::{}", self.category, self.name)
    }
}

/// The suite file's name.
pub const SUITE_FILE: &str = "medin.yaml";

/// Loads `medin.yaml` from `dir` with the built-in agents (see `load_suite_with`).
pub fn load_suite(dir: &Path) -> Result<Suite, SpecError> {
    load_suite_with(dir, &AgentRegistry::builtin())
}

/// Loads `medin.yaml` from `dir` (defaults when it does not exist; an empty file means defaults
/// too). Unknown keys, wrong types, `repeat: 0`, rates outside 0.0-1.0, threshold categories
/// that are not suite folders and an `agent:` that `agents` does not know are located errors.
pub fn load_suite_with(dir: &Path, agents: &AgentRegistry) -> Result<Suite, SpecError> {
    let path = dir.join(SUITE_FILE);
    if !path.is_file() {
        return Ok(Suite {
            root: dir.to_path_buf(),
            config: SuiteConfig::default(),
            agent: None,
            agents: agents.clone(),
        });
    }
    let text = super::limits::read(&path)?;
    let config = parse_suite(&text, &path)?;
    let mut registry = agents.clone();
    for (name, settings) in &config.agents {
        registry.register_named(name, settings).map_err(|e| {
            SpecError::invalid(
                &path,
                locate_key(&text, name),
                format!("`agents.{name}`: {e}"),
                Some("name model agents apart from the built-in and registered agents".into()),
            )
        })?;
    }
    let agent = config
        .agent
        .as_ref()
        .map(|written| {
            registry
                .resolve(written)
                .map_err(|e| load::agent_error(&path, &text, &e))
        })
        .transpose()?;
    Ok(Suite {
        root: dir.to_path_buf(),
        config,
        agent,
        agents: registry,
    })
}

/// Parses `medin.yaml` text; `path` names the file in error messages.
pub fn parse_suite(text: &str, path: &Path) -> Result<SuiteConfig, SpecError> {
    if load::is_blank(text) {
        return Ok(SuiteConfig::default());
    }
    let config: SuiteConfig = load::from_yaml(text, path, Doc::Suite)?;
    let at = |key: &str| locate_key(text, key);
    if config.suites.is_empty() {
        return Err(SpecError::invalid(
            path,
            at("suites"),
            "`suites` is empty: the suite has no task folders".into(),
            Some("list the folders that hold task files, e.g. `suites: [golden, adversarial, regression]`".into()),
        ));
    }
    for s in &config.suites {
        let p = Path::new(s);
        if s.trim().is_empty()
            || p.is_absolute()
            || p.components().any(|c| matches!(c, std::path::Component::ParentDir))
        {
            return Err(SpecError::invalid(
                path,
                locate_value(text, s).unwrap_or_else(|| at("suites")),
                format!("suite folder `{s}` must be a path inside the suite root"),
                Some("write folders relative to medin.yaml, without `..`, e.g. `golden`".into()),
            ));
        }
    }
    if let Some(prd) = &config.prd {
        let p = Path::new(prd);
        if prd.trim().is_empty()
            || p.is_absolute()
            || p.components().any(|c| matches!(c, std::path::Component::ParentDir))
        {
            return Err(SpecError::invalid(
                path,
                value_pos(text, "prd"),
                format!("`prd: {prd}` must be a file inside the suite root"),
                Some("write it relative to medin.yaml, without `..`, e.g. `prd: PRD.md`".into()),
            ));
        }
    }
    if config.repeat == Some(0) {
        return Err(SpecError::invalid(
            path,
            value_pos(text, "repeat"),
            "`repeat` must be at least 1".into(),
            Some("leave it out to run every task once".into()),
        ));
    }
    let categories: Vec<String> = config.suites.iter().map(|s| category_of(s)).collect();
    let mut names: Vec<&str> = categories.iter().map(String::as_str).collect();
    names.push("overall");
    for (name, set) in &config.thresholds {
        if !names.contains(&name.as_str()) {
            let hint = match load::nearest(name, &names) {
                Some(n) => format!("did you mean `{n}`?"),
                None => format!("use `overall` or a suite folder: {}", names.join(", ")),
            };
            return Err(SpecError::invalid(
                path,
                locate_key(text, name),
                format!("threshold category `{name}` is not a suite folder"),
                Some(hint),
            ));
        }
        let levels: [(&str, BoundValue); 2] = [("", ThresholdSet::critical), ("warning.", ThresholdSet::warning)];
        for (level, value_of) in levels {
            for &bound in Bound::ALL {
                let Some(v) = value_of(set, bound) else { continue };
                let key = bound.key();
                let wrong = if bound.is_rate() {
                    (!(0.0..=1.0).contains(&v)).then(|| {
                        format!("`thresholds.{name}.{level}{key}` is {v}, but a rate is a fraction from 0.0 to 1.0")
                    })
                } else {
                    (!(v >= 0.0 && v.is_finite()))
                        .then(|| format!("`thresholds.{name}.{level}{key}` is {v}, but it must be a number 0 or above"))
                };
                if let Some(message) = wrong {
                    let help = if bound.is_rate() {
                        format!("write e.g. `{key}: 0.9` for 90%")
                    } else {
                        format!("write e.g. `{key}: 0`")
                    };
                    return Err(SpecError::invalid(path, value_pos(text, key), message, Some(help)));
                }
            }
        }
    }
    Ok(config)
}

/// Every task file below the suite's folders ([`yaml_files`]), sorted by trial name. Hidden
/// files and folders are skipped. A folder named in `medin.yaml` that does not exist is an error; the
/// default folders (no `medin.yaml`) are optional.
pub fn discover(suite: &Suite) -> Result<Vec<SpecFile>, SpecError> {
    let suite_file = suite.root.join(SUITE_FILE);
    let configured = suite_file.is_file();
    let mut out: Vec<SpecFile> = Vec::new();
    for folder in &suite.config.suites {
        let dir = suite.root.join(folder);
        if !dir.is_dir() {
            if !configured {
                continue;
            }
            let text = super::limits::read(&suite_file).unwrap_or_default();
            let pos = locate_value(&text, folder).unwrap_or_else(|| locate_key(&text, "suites"));
            return Err(SpecError::invalid(
                &suite_file,
                pos,
                format!("suite folder `{folder}` does not exist (looked for {})", dir.display()),
                Some("create the folder, or remove it from `suites:`".into()),
            ));
        }
        let category = category_of(folder);
        for path in yaml_files(&dir)? {
            let name = task_name(path.strip_prefix(&dir).unwrap_or(&path));
            out.push(SpecFile {
                category: category.clone(),
                name,
                path,
            });
        }
    }
    out.sort_by(|a, b| a.trial_name().cmp(&b.trial_name()).then_with(|| a.path.cmp(&b.path)));
    for pair in out.windows(2) {
        if pair[0].trial_name() == pair[1].trial_name() {
            return Err(SpecError::invalid(
                &pair[1].path,
                (1, 1),
                format!(
                    "trial `{}` is defined twice, also by {}",
                    pair[1].trial_name(),
                    pair[0].path.display()
                ),
                Some("trial names leave out the extension: rename or remove one of the two files".into()),
            ));
        }
    }
    Ok(out)
}

/// The category of a suite folder: its last path component (`tasks/golden` → `golden`).
pub fn category_of(folder: &str) -> String {
    Path::new(folder)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| folder.trim_matches('/').to_string())
}

/// The trial name of a task file at `rel` below its suite folder: the path without extension
/// (`sub/t1.yaml` → `sub/t1`), or a task directory's own path (`t1/task.yaml` → `t1`).
pub fn task_name(rel: &Path) -> String {
    let named = match super::taskdir::task_dir_of(rel) {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => rel.with_extension(""),
    };
    named
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// The task files below `dir`, sorted: every `*.yaml`/`*.yml` file (recursively, hidden entries
/// skipped), except inside a task directory, which stands for its `task.yaml` alone (its
/// `workspace/`, `tests/` and `solution/` are not searched). `dir` itself may be a task
/// directory.
pub fn yaml_files(dir: &Path) -> Result<Vec<PathBuf>, SpecError> {
    if super::taskdir::is_task_dir(dir) {
        return Ok(vec![dir.join(super::taskdir::TASK_FILE)]);
    }
    let mut files = Vec::new();
    let mut walker = walkdir::WalkDir::new(dir).sort_by_file_name().into_iter();
    while let Some(entry) = walker.next() {
        let entry = entry.map_err(|e| SpecError::Io {
            path: e.path().unwrap_or(dir).to_path_buf(),
            source: e
                .into_io_error()
                .unwrap_or_else(|| std::io::Error::other("file system loop (symbolic link to a parent folder)")),
        })?;
        let is_dir = entry.file_type().is_dir();
        if entry.depth() > 0 && entry.file_name().to_string_lossy().starts_with('.') {
            if is_dir {
                walker.skip_current_dir();
            }
            continue;
        }
        if is_dir && entry.depth() > 0 && super::taskdir::is_task_dir(entry.path()) {
            files.push(entry.path().join(super::taskdir::TASK_FILE));
            walker.skip_current_dir();
        } else if entry.file_type().is_file() && is_yaml(entry.path()) {
            files.push(entry.into_path());
        }
    }
    files.sort();
    Ok(files)
}

/// Whether `path` ends in `.yaml` or `.yml`.
pub fn is_yaml(path: &Path) -> bool {
    matches!(path.extension().and_then(|e| e.to_str()), Some("yaml" | "yml"))
}

/// Line and column of `key:` written as a key anywhere in `text` (1:1 if absent).
fn locate_key(text: &str, key: &str) -> (usize, usize) {
    text.lines()
        .enumerate()
        .find_map(|(i, l)| {
            let t = l
                .trim_start()
                .trim_start_matches("- ")
                .trim_start_matches('{')
                .trim_start();
            let t = t.trim_start_matches(['"', '\'']);
            let rest = t.strip_prefix(key)?;
            rest.trim_start_matches(['"', '\''])
                .trim_start()
                .starts_with(':')
                .then(|| (i + 1, l.len() - t.len() + 1))
        })
        .or_else(|| {
            // Flow style: `{ a: .., key: .. }`.
            text.lines().enumerate().find_map(|(i, l)| {
                let needle = format!("{key}:");
                l.find(&needle).map(|b| (i + 1, l[..b].chars().count() + 1))
            })
        })
        .unwrap_or((1, 1))
}

/// Position of the value after `key:`.
fn value_pos(text: &str, key: &str) -> (usize, usize) {
    let (line, col) = locate_key(text, key);
    let Some(l) = text.lines().nth(line.saturating_sub(1)) else {
        return (line, col);
    };
    let from: usize = l.char_indices().nth(col.saturating_sub(1)).map(|(b, _)| b).unwrap_or(0);
    match l[from..].find(':') {
        Some(c) => {
            let after = &l[from + c + 1..];
            let skip = after.len() - after.trim_start().len();
            (line, l[..from + c + 1 + skip].chars().count() + 1)
        }
        None => (line, col),
    }
}

/// The first place `value` is written as a whole word (list item or value).
fn locate_value(text: &str, value: &str) -> Option<(usize, usize)> {
    text.lines().enumerate().find_map(|(i, l)| {
        let mut from = 0;
        while let Some(b) = l[from..].find(value) {
            let s = from + b;
            let e = s + value.len();
            let before = l[..s].chars().last();
            let after = l[e..].chars().next();
            let edge = |c: Option<char>| match c {
                None => true,
                Some(c) => matches!(c, ' ' | ',' | '[' | ']' | '"' | '\'' | '-' | ':'),
            };
            if edge(before) && edge(after) && !l[e..].trim_start().starts_with(':') {
                return Some((i + 1, l[..s].chars().count() + 1));
            }
            from = e;
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_cli_agents_are_names_of_the_suite_with_their_options_checked() {
        let dir = tempfile::tempdir().unwrap();
        let yaml = "agent: reviewer\nagents:\n  reviewer: { cli: claude-code, model: claude-sonnet-4-5, tools: medin, egress: [pypi.org:443] }\n";
        std::fs::write(dir.path().join(SUITE_FILE), yaml).unwrap();
        let suite = load_suite(dir.path()).unwrap();
        assert_eq!(suite.agent.as_ref().map(AgentSpec::label).as_deref(), Some("reviewer"));
        assert!(suite
            .agents
            .parse("reviewer:x")
            .unwrap_err()
            .to_string()
            .contains("medin.yaml"));
        // Each mistake is a located error that says what is wrong.
        for (bad, says) in [
            ("{ cli: claude-code, modle: x }", "modle"),
            ("{ cli: cursor }", "cursor"),
            ("{ cli: aider, tools: medin }", "tools: medin"),
            ("{ cli: codex, egress: [pypi.org] }", "host:port"),
            ("{ modle: x }", "modle"),
        ] {
            std::fs::write(dir.path().join(SUITE_FILE), format!("agents:\n  r: {bad}\n")).unwrap();
            let e = load_suite(dir.path()).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("medin.yaml:"), "{bad}: {e}");
        }
    }

    #[test]
    fn named_model_agents_are_names_of_the_suite_and_cannot_take_a_registered_one() {
        let dir = tempfile::tempdir().unwrap();
        let yaml = "agent: fast\nagents:\n  fast: { provider: anthropic, model: claude-sonnet-4-5, max_tokens: 512 }\n";
        std::fs::write(dir.path().join(SUITE_FILE), yaml).unwrap();
        let suite = load_suite(dir.path()).unwrap();
        assert_eq!(suite.agent.as_ref().map(AgentSpec::label).as_deref(), Some("fast"));
        assert_eq!(suite.agents.parse("fast").unwrap().label(), "fast");
        assert_eq!(suite.agents.parse("openai:gpt-4.1").unwrap().label(), "openai:gpt-4.1");
        assert!(suite
            .agents
            .parse("fast:x")
            .unwrap_err()
            .to_string()
            .contains("medin.yaml"));

        std::fs::write(
            dir.path().join(SUITE_FILE),
            "agents:\n  oracle: { provider: openai, model: m }\n",
        )
        .unwrap();
        let e = load_suite(dir.path()).unwrap_err().to_string();
        assert!(e.contains("`agents.oracle`") && e.contains("already registered"), "{e}");
        std::fs::write(
            dir.path().join(SUITE_FILE),
            "agents:\n  fast: { provider: openai, modle: m }\n",
        )
        .unwrap();
        let e = load_suite(dir.path()).unwrap_err().to_string();
        assert!(e.contains("modle"), "{e}");
    }

    fn err(text: &str) -> (usize, usize, String, String) {
        match parse_suite(text, Path::new("medin.yaml")).unwrap_err() {
            SpecError::Invalid {
                line,
                column,
                message,
                help,
                ..
            } => (line, column, message, help.unwrap_or_default()),
            other => panic!("unexpected {other}"),
        }
    }

    #[test]
    fn parses_a_full_suite_file() {
        let c = parse_suite(
            "suites: [golden, regression]\nagent: {process: {command: ./agent}}\nrepeat: 3\nthresholds:\n  overall: {min_success_rate: 0.9}\n  golden:\n    max_avg_turns: 12\n",
            Path::new("medin.yaml"),
        )
        .unwrap();
        assert_eq!(c.suites, vec!["golden", "regression"]);
        assert_eq!(c.repeat, Some(3));
        assert_eq!(
            c.agent.map(|a| a.to_string()).as_deref(),
            Some("process{\"command\":\"./agent\"}")
        );
        assert_eq!(c.thresholds["overall"].min_success_rate, Some(0.9));
        assert_eq!(c.thresholds["golden"].max_avg_turns, Some(12.0));
    }

    #[test]
    fn thresholds_are_critical_and_their_warning_map_holds_the_same_bounds_at_level_warning() {
        let c = parse_suite(
            "thresholds:\n  overall:\n    max_false_success: 0\n    warning: { min_success_rate: 0.98, max_tokens_per_success: 3000 }\n  golden: { min_success_rate: 0.98 }\n",
            Path::new("medin.yaml"),
        )
        .unwrap();
        let overall = &c.thresholds["overall"];
        assert_eq!(overall.critical(Bound::MaxFalseSuccess), Some(0.0));
        assert_eq!(overall.critical(Bound::MinSuccessRate), None);
        assert_eq!(overall.warning(Bound::MinSuccessRate), Some(0.98));
        assert_eq!(overall.warning(Bound::MaxTokensPerSuccess), Some(3000.0));
        assert_eq!(c.thresholds["golden"].warning(Bound::MinSuccessRate), None);

        let (l, c, m, h) = err("thresholds:\n  overall:\n    warning:\n      min_sucess_rate: 0.5\n");
        assert_eq!((l, c), (4, 7));
        assert_eq!(m, "unknown key `min_sucess_rate` in `thresholds.overall.warning`");
        assert_eq!(h, "did you mean `min_success_rate`?");
        let (l, _, m, _) = err("thresholds:\n  overall:\n    warning:\n      warning: { max_flaky: 1 }\n");
        assert_eq!(l, 4);
        assert_eq!(
            m, "unknown key `warning` in `thresholds.overall.warning`",
            "one level of warning only"
        );
        let (l, c, m, _) = err("thresholds:\n  overall:\n    warning: { max_missing_receipts: -1 }\n");
        assert_eq!((l, c), (3, 38));
        assert!(
            m.contains("`thresholds.overall.warning.max_missing_receipts` is -1"),
            "{m}"
        );
        let (_, _, m, _) = err("thresholds:\n  overall: { warning: { max_tool_error_rate: 5 } }\n");
        assert!(m.contains("a rate is a fraction"), "{m}");
    }

    #[test]
    fn network_and_pass_env_are_defaults_for_every_task_and_names_are_checked_where_written() {
        let c = parse_suite(
            "suites: [golden]\nnetwork: true\npass_env: [ANTHROPIC_API_KEY]\n",
            Path::new("medin.yaml"),
        )
        .unwrap();
        assert_eq!(c.network, Some(true));
        assert_eq!(
            c.pass_env,
            vec![crate::spec::EnvName::parse("ANTHROPIC_API_KEY").unwrap()]
        );
        let (l, c, m, _) = err("suites: [golden]\npass_env:\n  - OK_KEY\n  - MEDIN_AGENT\n");
        assert_eq!((l, c), (4, 5));
        assert!(m.contains("`MEDIN_AGENT` cannot be passed"), "{m}");
        let (l, _, m, _) = err("network: yes please\n");
        assert_eq!(l, 1);
        assert!(m.contains("network"), "{m}");
    }

    #[test]
    fn empty_suite_file_means_defaults() {
        assert_eq!(
            parse_suite("# nothing yet\n", Path::new("medin.yaml")).unwrap(),
            SuiteConfig::default()
        );
    }

    #[test]
    fn unknown_suite_keys_suggest() {
        let (l, c, m, h) = err("suites: [golden]\nrepeats: 2\n");
        assert_eq!((l, c), (2, 1));
        assert_eq!(m, "unknown key `repeats` in medin.yaml");
        assert_eq!(h, "did you mean `repeat`?");
        let (l, c, m, h) = err("thresholds:\n  overall:\n    min_sucess_rate: 0.5\n");
        assert_eq!((l, c), (3, 5));
        assert_eq!(m, "unknown key `min_sucess_rate` in `thresholds.overall`");
        assert_eq!(h, "did you mean `min_success_rate`?");
    }

    #[test]
    fn an_unknown_agent_is_located_and_lists_the_registered_ones() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join(SUITE_FILE), "suites: [golden]\nagent: cursor-agent\n").unwrap();
        let e = load_suite(tmp.path()).unwrap_err().to_string();
        assert!(e.contains("medin.yaml:2:8: unknown agent `cursor-agent`; the registered agents are `oracle`, `process:CMD`, `exec:CMD`"), "{e}");
        std::fs::write(tmp.path().join(SUITE_FILE), "agent:\n  process:\n    comand: ./a\n").unwrap();
        let e = load_suite(tmp.path()).unwrap_err().to_string();
        assert!(
            e.contains("medin.yaml:3:5: unknown key `comand` in `agent.process`"),
            "{e}"
        );
        assert!(e.contains("did you mean `command`?"), "{e}");
        std::fs::write(tmp.path().join(SUITE_FILE), "agent: \"process:./a\"\n").unwrap();
        assert_eq!(load_suite(tmp.path()).unwrap().agent.unwrap().label(), "process:./a");
    }

    #[test]
    fn semantic_errors_are_located() {
        let (l, c, m, _) = err("suites: [golden]\nrepeat: 0\n");
        assert_eq!((l, c, m.as_str()), (2, 9, "`repeat` must be at least 1"));
        let (l, _, m, h) = err("suites: [golden]\nthresholds:\n  goldn: {min_success_rate: 0.5}\n");
        assert_eq!(l, 3);
        assert_eq!(m, "threshold category `goldn` is not a suite folder");
        assert_eq!(h, "did you mean `golden`?");
        let (l, c, m, _) = err("thresholds:\n  overall:\n    min_success_rate: 90\n");
        assert_eq!((l, c), (3, 23));
        assert!(m.contains("fraction from 0.0 to 1.0"), "{m}");
    }

    #[test]
    fn discovers_sorted_nested_and_skips_hidden() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::write(root.join(SUITE_FILE), "suites: [golden, tasks/regression]\n").unwrap();
        for f in [
            "golden/b.yaml",
            "golden/a.yml",
            "golden/sub/c.yaml",
            "golden/notes.md",
            "golden/.hidden.yaml",
            "golden/.git/x.yaml",
            "tasks/regression/r1.yaml",
        ] {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "description: x\n").unwrap();
        }
        let suite = load_suite(root).unwrap();
        let names: Vec<String> = discover(&suite).unwrap().iter().map(SpecFile::trial_name).collect();
        assert_eq!(names, vec!["golden::a", "golden::b", "golden::sub/c", "regression::r1"]);
    }

    #[test]
    fn missing_configured_folder_is_named() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join(SUITE_FILE), "suites:\n  - golden\n  - adversarial\n").unwrap();
        std::fs::create_dir(tmp.path().join("golden")).unwrap();
        let e = discover(&load_suite(tmp.path()).unwrap()).unwrap_err();
        assert_eq!(e.location(), Some((3, 5)));
        assert!(
            e.to_string().contains("suite folder `adversarial` does not exist"),
            "{e}"
        );
    }

    #[test]
    fn default_folders_are_optional() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("golden")).unwrap();
        std::fs::write(tmp.path().join("golden/t.yaml"), "description: x\n").unwrap();
        let suite = load_suite(tmp.path()).unwrap();
        assert_eq!(suite.config, SuiteConfig::default());
        let found = discover(&suite).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].trial_name(), "golden::t");
    }

    #[test]
    fn same_trial_twice_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("golden")).unwrap();
        std::fs::write(tmp.path().join("golden/t.yaml"), "description: x\n").unwrap();
        std::fs::write(tmp.path().join("golden/t.yml"), "description: x\n").unwrap();
        let e = discover(&load_suite(tmp.path()).unwrap()).unwrap_err();
        assert!(e.to_string().contains("trial `golden::t` is defined twice"), "{e}");
    }
}
