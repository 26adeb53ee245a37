//! A trial's effective settings, resolved once before anything runs: which agent acts, how
//! commands are confined, the limits and their defaults, what an unapproved guard warning
//! means (the ask mode), the task's deadline and how a transiently failed agent is retried.
//!
//! Every later step reads the plan instead of looking at the spec, the suite, the environment
//! or a default of its own, so one trial cannot run under two readings of its settings. The
//! plan is serializable and recorded in the attempt's `metrics.json` (`"plan"`), so a run
//! folder says what the trial actually ran under.
//!
//! Defaults live here and nowhere else — task timeout 60 s, command timeout 30 s, 50 turns, 10
//! identical calls in a row —
//! except what a task kind owns: its retry default ([`crate::spec::TaskKind::retry_default`]:
//! none, but 3 attempts for `kind: prp`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::guard::policy::Ask;
use crate::sandbox::Isolation;
use crate::spec::{BackoffSpec, EnvName, RetrySpec, TaskSpec};

/// Defaults that apply when a task's `limits` say nothing.
pub const DEFAULT_TASK_TIMEOUT: Duration = Duration::from_secs(60);
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(30);
pub const DEFAULT_MAX_TURNS: u32 = 50;
/// Identical calls in a row before a looping agent is stopped.
pub const DEFAULT_MAX_REPEATS: u32 = 10;

/// Backoff between transient-failure retries of an agent, unless the task says otherwise.
pub const RETRY_BACKOFF: Backoff = Backoff {
    base: Duration::from_secs(1),
    factor: 2.0,
    cap: Duration::from_secs(30),
    jitter: 0.1,
};

/// What the suite (`medin.yaml`) sets for the tasks that do not say: their isolation, whether
/// their commands have the network, and the host variables every task is passed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SuiteDefaults {
    /// `isolation:`; `None`: the strongest this machine supports.
    pub isolation: Option<Isolation>,
    /// `network:`; `None`: no network.
    pub network: Option<bool>,
    /// `pass_env:`, given to every task on top of its own.
    pub pass_env: Vec<EnvName>,
}

/// Everything a trial runs under, decided once.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrialPlan {
    /// The agent's display name (`oracle`, `process:CMD`, ...).
    pub agent: String,
    /// How the task's commands are confined: the task's level, else the suite's, else the
    /// strongest this machine supports.
    pub isolation: Isolation,
    /// What an unapproved guard warning means for the agent's actions.
    #[serde(serialize_with = "ask_name")]
    pub ask: Ask,
    /// The task's wall-clock limit: the deadline is this long after setup.
    #[serde(with = "millis", rename = "timeout_ms")]
    pub timeout: Duration,
    /// One command's wall-clock limit (never past the deadline).
    #[serde(with = "millis", rename = "command_timeout_ms")]
    pub command_timeout: Duration,
    pub max_turns: u32,
    /// Identical calls in a row allowed (an agent repeating itself is stopped after them).
    pub max_repeats: u32,
    pub max_files: Option<u32>,
    pub max_changes: Option<u32>,
    /// Every change to the tests is prohibited (a TDD loop is judged by its tests).
    pub prohibits_test_tampering: bool,
    /// How an agent that failed transiently is retried.
    pub retry: RetryPolicy,
    /// How a model agent reaches its API: live, recorded to a cassette, or replayed from one
    /// (always `live` for agents that speak no model API).
    pub model_traffic: ModelTraffic,
    /// Whether the task's commands may use the network: its `policy.network`, else the
    /// suite's `network`, else no.
    pub network: bool,
    /// Hosts a CLI agent's process may reach besides its model (`policy.egress`).
    pub egress: Vec<String>,
    /// The host variables the task's commands and agent are passed: the suite's `pass_env`,
    /// then the task's (names only: the values are read when the attempt starts, and never
    /// recorded).
    pub pass_env: Vec<String>,
}

impl TrialPlan {
    /// Resolves the plan of `task` for `agent` (its display name), with the suite's defaults
    /// and the run's ask mode.
    pub fn resolve(task: &TaskSpec, agent: String, suite: &SuiteDefaults, ask: Ask) -> Self {
        let l = &task.limits;
        let (kind_retry, default_attempts) = task.kind.retry_default();
        let retry_spec = task.retry.as_ref().or(kind_retry);
        TrialPlan {
            agent,
            isolation: task
                .isolation
                .or(suite.isolation)
                .unwrap_or_else(crate::sandbox::default_isolation),
            ask,
            timeout: l.timeout.map(|d| d.0).unwrap_or(DEFAULT_TASK_TIMEOUT),
            command_timeout: l.command_timeout.map(|d| d.0).unwrap_or(DEFAULT_COMMAND_TIMEOUT),
            max_turns: l.max_turns.unwrap_or(DEFAULT_MAX_TURNS),
            max_repeats: l.max_repeats.unwrap_or(DEFAULT_MAX_REPEATS),
            max_files: l.max_files,
            max_changes: l.max_changes,
            prohibits_test_tampering: task.kind.prohibits_test_tampering(),
            retry: RetryPolicy::from_spec(retry_spec, default_attempts),
            model_traffic: ModelTraffic::Live,
            network: task.policy.network.or(suite.network).unwrap_or(false),
            egress: task.policy.egress.clone(),
            pass_env: crate::spec::pass_env::merged(&suite.pass_env, &task.pass_env)
                .iter()
                .map(|n| n.to_string())
                .collect(),
        }
    }
}

/// How a whole run's model agents reach their APIs, as asked on the command line
/// (`medin run --record`, `--replay DIR`) or by `MEDIN_RECORD=1` / `MEDIN_REPLAY=DIR`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum TrafficMode {
    /// Every exchange goes to the model's endpoint.
    #[default]
    Live,
    /// Every exchange goes to the endpoint and is kept in the attempt's cassette.
    Record,
    /// Every exchange is served from the cassette of the same task and attempt in this run
    /// folder; nothing goes to the network.
    Replay { from: PathBuf },
}

impl TrafficMode {
    /// The mode `MEDIN_RECORD` (any value but empty and `0`) or `MEDIN_REPLAY=DIR` ask for;
    /// `Err` when both are set.
    pub fn from_env() -> Result<Self, String> {
        let record = std::env::var("MEDIN_RECORD").is_ok_and(|v| !v.trim().is_empty() && v.trim() != "0");
        let replay = std::env::var_os("MEDIN_REPLAY").filter(|v| !v.is_empty());
        match (record, replay) {
            (true, Some(_)) => Err("MEDIN_RECORD and MEDIN_REPLAY are both set; a run either records its model exchanges or replays them: unset one".into()),
            (true, None) => Ok(TrafficMode::Record),
            (false, Some(dir)) => Ok(TrafficMode::Replay { from: PathBuf::from(dir) }),
            (false, None) => Ok(TrafficMode::Live),
        }
    }
}

/// How one trial's model agent reaches its API.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum ModelTraffic {
    Live,
    /// Recorded to this cassette (the attempt's `cassette.jsonl`).
    Record {
        cassette: PathBuf,
    },
    /// Served from this cassette, with no network.
    Replay {
        cassette: PathBuf,
    },
}

impl ModelTraffic {
    /// The one rule: a task's own `cassette:` is always replayed (the task is a recording);
    /// otherwise the run's mode, recording into the attempt's folder `attempt_dir` or replaying
    /// the same task and attempt (`trial_path`: `<category>/<task>/attempt-N`) of another run
    /// folder.
    pub fn resolve(task_cassette: Option<PathBuf>, mode: &TrafficMode, attempt_dir: &Path, trial_path: &Path) -> Self {
        const FILE: &str = crate::agent::model::cassette::CASSETTE_FILE;
        match (task_cassette, mode) {
            (Some(cassette), _) => ModelTraffic::Replay { cassette },
            (None, TrafficMode::Live) => ModelTraffic::Live,
            (None, TrafficMode::Record) => ModelTraffic::Record {
                cassette: attempt_dir.join(FILE),
            },
            (None, TrafficMode::Replay { from }) => ModelTraffic::Replay {
                cassette: from.join(trial_path).join(FILE),
            },
        }
    }
}

/// Retries of an agent that failed transiently.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (1 = no retry).
    pub attempts: u32,
    pub backoff: Backoff,
}

impl RetryPolicy {
    pub fn from_spec(spec: Option<&RetrySpec>, default_attempts: u32) -> Self {
        RetryPolicy {
            attempts: spec.and_then(|s| s.attempts).unwrap_or(default_attempts).max(1),
            backoff: Backoff::from_spec(spec.map(|s| &s.backoff), RETRY_BACKOFF),
        }
    }
}

/// Exponential backoff with positive jitter.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Backoff {
    #[serde(with = "millis", rename = "base_ms")]
    pub base: Duration,
    pub factor: f64,
    #[serde(with = "millis", rename = "cap_ms")]
    pub cap: Duration,
    /// Fraction of the delay added at random (0.1 = up to +10%).
    pub jitter: f64,
}

impl Backoff {
    /// The backoff a spec asks for, `default` for what it leaves out; values that make no
    /// sense (a factor below 1, a negative jitter, NaN) fall back to the default, and huge ones
    /// are clamped.
    pub fn from_spec(spec: Option<&BackoffSpec>, default: Backoff) -> Backoff {
        let Some(s) = spec else { return default };
        Backoff {
            base: s.base.map(|d| d.0).unwrap_or(default.base),
            factor: s
                .factor
                .filter(|f| f.is_finite() && *f >= 1.0)
                .unwrap_or(default.factor)
                .min(100.0),
            cap: s.cap.map(|d| d.0).unwrap_or(default.cap),
            jitter: s
                .jitter
                .filter(|j| j.is_finite() && *j >= 0.0)
                .unwrap_or(default.jitter)
                .min(1.0),
        }
    }

    /// The delay before attempt `n` (1-based): `min(cap, base * factor^(n-1))`, plus jitter.
    pub fn delay(&self, n: u32, random: f64) -> Duration {
        let exp = self.factor.powi(n.saturating_sub(1).min(64) as i32);
        let raw = (self.base.as_secs_f64() * exp).min(self.cap.as_secs_f64());
        let with_jitter = raw * (1.0 + self.jitter.clamp(0.0, 1.0) * random.clamp(0.0, 1.0));
        Duration::try_from_secs_f64(with_jitter.max(0.0)).unwrap_or(self.cap)
    }
}

fn ask_name<S: serde::Serializer>(ask: &Ask, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(match ask {
        Ask::Warn => "warn",
        Ask::Deny => "deny",
    })
}

/// A duration as whole milliseconds.
mod millis {
    use std::time::Duration;

    pub fn serialize<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(yaml: &str) -> TaskSpec {
        crate::spec::parse_task(yaml, std::path::Path::new("golden/t.yaml")).expect("a valid spec")
    }

    fn isolated(isolation: Option<Isolation>) -> SuiteDefaults {
        SuiteDefaults {
            isolation,
            ..SuiteDefaults::default()
        }
    }

    #[test]
    fn the_tasks_network_wins_over_the_suites_and_pass_env_adds_to_the_suites() {
        let name = |n: &str| EnvName::parse(n).unwrap();
        let suite = SuiteDefaults {
            isolation: Some(Isolation::None),
            network: Some(true),
            pass_env: vec![name("SUITE_KEY"), name("SHARED_KEY")],
        };
        let silent = TrialPlan::resolve(&task("description: d\n"), "o".into(), &suite, Ask::Warn);
        assert!(silent.network, "the suite's default");
        assert_eq!(silent.pass_env, vec!["SUITE_KEY", "SHARED_KEY"]);
        let own = task("description: d\npolicy: { network: false }\npass_env: [SHARED_KEY, TASK_KEY]\n");
        let plan = TrialPlan::resolve(&own, "o".into(), &suite, Ask::Warn);
        assert!(!plan.network, "the task's policy wins");
        assert_eq!(plan.pass_env, vec!["SUITE_KEY", "SHARED_KEY", "TASK_KEY"]);
        let alone = TrialPlan::resolve(
            &task("description: d\n"),
            "o".into(),
            &SuiteDefaults::default(),
            Ask::Warn,
        );
        assert!(
            !alone.network && alone.pass_env.is_empty(),
            "no network, nothing passed"
        );
        let json = serde_json::to_value(&plan).unwrap();
        assert_eq!(
            json["pass_env"],
            serde_json::json!(["SUITE_KEY", "SHARED_KEY", "TASK_KEY"])
        );
        assert_eq!(json["network"], false);
    }

    #[test]
    fn defaults_apply_where_the_task_is_silent_and_the_task_wins_over_the_suite() {
        let plan = TrialPlan::resolve(
            &task("description: d\nisolation: none\n"),
            "oracle".into(),
            &isolated(Some(Isolation::Process)),
            Ask::Deny,
        );
        assert_eq!(plan.isolation, Isolation::None);
        assert_eq!(plan.timeout, DEFAULT_TASK_TIMEOUT);
        assert_eq!(plan.command_timeout, DEFAULT_COMMAND_TIMEOUT);
        assert_eq!(plan.max_turns, DEFAULT_MAX_TURNS);
        assert_eq!(plan.retry.attempts, 1);
        assert!(!plan.prohibits_test_tampering);
        let suite = TrialPlan::resolve(
            &task("description: d\n"),
            "oracle".into(),
            &isolated(Some(Isolation::Process)),
            Ask::Warn,
        );
        assert_eq!(suite.isolation, Isolation::Process);
    }

    #[test]
    fn retry_is_the_tasks_then_the_prp_blocks_then_the_kinds_default() {
        let prp = "description: d\nkind: prp\nprp: { objective: o, gates: [{ level: 1, description: g, command: 'true' }] }\n";
        assert_eq!(
            TrialPlan::resolve(&task(prp), "o".into(), &SuiteDefaults::default(), Ask::Warn)
                .retry
                .attempts,
            3
        );
        let prp_block = "description: d\nkind: prp\nprp: { objective: o, retry: { attempts: 5 }, gates: [{ level: 1, description: g, command: 'true' }] }\n";
        assert_eq!(
            TrialPlan::resolve(&task(prp_block), "o".into(), &SuiteDefaults::default(), Ask::Warn)
                .retry
                .attempts,
            5
        );
        let top = "description: d\nretry: { attempts: 2, base: 10ms }\n";
        let plan = TrialPlan::resolve(&task(top), "o".into(), &SuiteDefaults::default(), Ask::Warn);
        assert_eq!(plan.retry.attempts, 2);
        assert_eq!(plan.retry.backoff.base, Duration::from_millis(10));
    }

    #[test]
    fn the_plan_serializes_with_units_in_its_names() {
        let plan = TrialPlan::resolve(
            &task("description: d\nlimits: { timeout: 2s, max_turns: 3 }\n"),
            "oracle".into(),
            &isolated(Some(Isolation::None)),
            Ask::Deny,
        );
        let json = serde_json::to_value(&plan).expect("serializable");
        assert_eq!(json["timeout_ms"], 2000);
        assert_eq!(json["max_turns"], 3);
        assert_eq!(json["ask"], "deny");
        assert_eq!(json["isolation"], "none");
        assert_eq!(json["retry"]["backoff"]["base_ms"], 1000);
    }

    #[test]
    fn backoff_grows_by_the_factor_up_to_the_cap_with_positive_jitter() {
        let b = RETRY_BACKOFF;
        assert_eq!(b.delay(1, 0.0), Duration::from_secs(1));
        assert_eq!(b.delay(3, 0.0), Duration::from_secs(4));
        assert_eq!(b.delay(30, 0.0), Duration::from_secs(30));
        assert!(b.delay(2, 1.0) > b.delay(2, 0.0));
    }

    #[test]
    fn absurd_backoff_values_are_clamped_not_panicked_on() {
        let spec = BackoffSpec {
            base: None,
            factor: Some(1e300),
            cap: None,
            jitter: Some(1e30),
        };
        let b = Backoff::from_spec(Some(&spec), RETRY_BACKOFF);
        assert!(b.jitter <= 1.0 && b.factor <= 100.0);
        assert!(b.delay(u32::MAX, 1.0) <= Duration::from_secs(60));
        let huge = Backoff {
            base: Duration::MAX,
            factor: 2.0,
            cap: Duration::MAX,
            jitter: 1.0,
        };
        let _ = huge.delay(3, 1.0);
    }
}
