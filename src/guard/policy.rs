//! The task's tool policy (allow/deny globs) and what a guard verdict means for the task
//! (allow, warn, deny, or bypass with a logged justification).
//!
//! This is the one place that decides: [`Rules::decide`] turns a verdict into a [`Decision`]
//! for an action of a given [`Origin`], with the ask mode resolved once per run and the
//! prohibitions of the task's kind (a TDD loop forbids test tampering). The pipeline asks;
//! nothing else compares decisions or reads the environment.

use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::spec::{Policy, ToolPolicy};

use super::verdict::{Recommendation, Verdict, Violation};

/// A tool policy glob that does not compile.
#[derive(Debug, thiserror::Error)]
#[error("invalid tool glob `{glob}` in policy: {reason}; use `*`, `?` and `[..]` only")]
pub struct PolicyError {
    pub glob: String,
    pub reason: String,
}

/// Compiled allow/deny globs.
#[derive(Debug, Clone)]
pub struct ToolGate {
    allow: GlobSet,
    allow_globs: Vec<String>,
    deny: GlobSet,
    deny_globs: Vec<String>,
}

/// Why a tool was refused, and what to use instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolDenial {
    pub message: String,
    pub alternative: Option<String>,
}

fn compile(globs: &[String]) -> Result<GlobSet, PolicyError> {
    let mut set = GlobSetBuilder::new();
    for g in globs {
        let glob = Glob::new(g).map_err(|e| PolicyError {
            glob: g.clone(),
            reason: e.kind().to_string(),
        })?;
        set.add(glob);
    }
    set.build().map_err(|e| PolicyError {
        glob: globs.join(", "),
        reason: e.to_string(),
    })
}

/// Registered tools that do similar work, best first (the suggestion table for denials).
fn similar_tools(tool: &str) -> &'static [&'static str] {
    match tool {
        "bash" => &[
            "verify",
            "read_file",
            "write_file",
            "edit_file",
            "list_dir",
            "delete_file",
            "move_file",
        ],
        "write_file" => &["edit_file"],
        "edit_file" => &["write_file"],
        "read_file" => &["verify", "list_dir", "bash"],
        "list_dir" => &["bash", "read_file"],
        "delete_file" => &["move_file", "bash"],
        "move_file" => &["write_file", "bash"],
        "verify" => &["bash", "read_file"],
        _ => &[],
    }
}

impl ToolGate {
    /// Every tool allowed (an empty policy).
    pub fn allow_all() -> Self {
        ToolGate {
            allow: GlobSet::empty(),
            allow_globs: Vec::new(),
            deny: GlobSet::empty(),
            deny_globs: Vec::new(),
        }
    }

    pub fn new(policy: &ToolPolicy) -> Result<Self, PolicyError> {
        Ok(ToolGate {
            allow: compile(&policy.allow)?,
            allow_globs: policy.allow.clone(),
            deny: compile(&policy.deny)?,
            deny_globs: policy.deny.clone(),
        })
    }

    /// Whether `tool` may be called (deny wins; an empty allow list allows everything).
    pub fn allows(&self, tool: &str) -> bool {
        !self.deny.is_match(tool) && (self.allow_globs.is_empty() || self.allow.is_match(tool))
    }

    /// Ok when `tool` may be called; otherwise the denial (deny globs win over allow).
    pub fn check(&self, tool: &str) -> Result<(), ToolDenial> {
        let message = if self.deny.is_match(tool) {
            format!(
                "tool `{tool}` is denied by this task's policy (deny: {:?})",
                self.deny_globs
            )
        } else if !self.allow_globs.is_empty() && !self.allow.is_match(tool) {
            format!(
                "tool `{tool}` is not in this task's allowed tools (allow: {:?})",
                self.allow_globs
            )
        } else {
            return Ok(());
        };
        Err(ToolDenial {
            message,
            alternative: self.alternative(tool),
        })
    }

    /// Ok when this call may be made: its tool is allowed and, when the call runs a command
    /// (`runs_commands`: `bash` itself, or a `verify` check that starts a program), so is
    /// `bash` — denying `bash` denies running commands, through whichever tool.
    pub fn check_call(&self, tool: &str, runs_commands: bool) -> Result<(), ToolDenial> {
        self.check(tool)?;
        if runs_commands && tool != "bash" && !self.allows("bash") {
            return Err(ToolDenial {
                message: format!(
                    "this `{tool}` call runs a command, and running commands (`bash`) is not allowed by this task's policy"
                ),
                alternative: Some(
                    "check files without running anything: `verify` with type file_exists or file_contains, or `read_file`"
                        .into(),
                ),
            });
        }
        Ok(())
    }

    /// The nearest allowed registered tool that does similar work, as a sentence.
    fn alternative(&self, tool: &str) -> Option<String> {
        let registered: Vec<&'static str> = crate::tools::registry().iter().map(|t| t.name).collect();
        let allowed: Vec<&str> = similar_tools(tool)
            .iter()
            .copied()
            .filter(|t| registered.contains(t) && self.allows(t))
            .collect();
        if let Some(first) = allowed.first() {
            let hint = match *first {
                "verify" if tool == "bash" => " (type file_exists or file_contains)",
                _ => "",
            };
            let others = &allowed[1..];
            return Some(if others.is_empty() {
                format!("use `{first}`{hint} instead")
            } else {
                format!(
                    "use `{first}`{hint} instead, or {}",
                    others.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(", ")
                )
            });
        }
        // An unknown or unmapped tool: the allowed registered tool with the nearest name.
        registered
            .iter()
            .filter(|t| **t != tool && self.allows(t))
            .map(|t| (strsim::jaro_winkler(tool, t), *t))
            .filter(|(score, _)| *score > 0.7)
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, t)| format!("use `{t}` instead"))
    }
}

/// Who asked for an action. Every action takes the same path whatever its origin; the origin
/// decides only what a warning means and is written on every receipt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// A tool call of the agent under test (and receipts about the agent itself).
    #[default]
    Agent,
    /// A `setup:` command of the task.
    Setup,
    /// A TDD loop's test command.
    Test,
    /// A TDD loop's build command.
    Build,
    /// A PRP validation gate.
    Gate,
    /// A `command:` validator.
    Validator,
    /// A step of the harness itself (`medin.*`: put-back of protected files, a backoff delay,
    /// cleanup); it runs no command and is recorded for the log.
    Harness,
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Agent => "agent",
            Origin::Setup => "setup",
            Origin::Test => "test",
            Origin::Build => "build",
            Origin::Gate => "gate",
            Origin::Validator => "validator",
            Origin::Harness => "harness",
        }
    }

    /// Written by the task's author (setup, test, build, gate, validator), not by the agent.
    pub fn is_authored(self) -> bool {
        !matches!(self, Origin::Agent | Origin::Harness)
    }
}

/// The decision rules of one task, resolved once: its policy, the run's ask mode, and what the
/// task's kind prohibits.
#[derive(Debug, Clone)]
pub struct Rules {
    policy: Policy,
    ask: Ask,
    /// A TDD loop is judged by its tests: any test tampering by the agent is prohibited.
    prohibit_test_tampering: bool,
}

impl Rules {
    pub fn new(policy: &Policy, ask: Ask, prohibit_test_tampering: bool) -> Self {
        Rules {
            policy: policy.clone(),
            ask,
            prohibit_test_tampering,
        }
    }

    /// What `verdict` means for an action of `origin`:
    ///
    /// - the agent's actions: [`decide_with`] under the run's ask mode, then the kind's
    ///   prohibitions (test tampering in a TDD loop is denied);
    /// - the author's commands (setup, tests, build, gates, validators): a block is denied
    ///   unless the task's policy bypasses the rule with a justification, as for the agent; a
    ///   warning runs with the warning on its receipt, since the author wrote the command and
    ///   nobody needs to be asked;
    /// - the harness's own steps run no command: allowed.
    pub fn decide(&self, verdict: &Verdict, origin: Origin) -> Decision {
        match origin {
            Origin::Harness => Decision::Allow,
            o if o.is_authored() => decide(verdict, &self.policy),
            _ => {
                let decision = decide_with(verdict, &self.policy, self.ask);
                if matches!(decision, Decision::Deny { .. }) || !self.prohibit_test_tampering {
                    return decision;
                }
                match verdict
                    .violations
                    .iter()
                    .find(|v| v.category == super::Category::TestTampering)
                {
                    Some(v) => Decision::Deny {
                        message: format!(
                            "prohibited in a TDD loop: {} ({}); fix the code, not the tests",
                            v.description, v.rule
                        ),
                    },
                    None => decision,
                }
            }
        }
    }
}

/// What a verdict means for this task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run it.
    Allow,
    /// Run it, with these warnings in the receipt.
    Warn(Vec<String>),
    /// Do not run it: PERMISSION_DENIED with this message.
    Deny { message: String },
    /// Run it although a rule blocked it: the task's written justification, logged.
    Bypassed { rules: Vec<String>, justification: String },
}

impl Decision {
    /// The name written in a receipt's `decision`: allow | warn | deny | bypassed.
    pub fn name(&self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Warn(_) => "warn",
            Decision::Deny { .. } => "deny",
            Decision::Bypassed { .. } => "bypassed",
        }
    }

    pub fn is_deny(&self) -> bool {
        matches!(self, Decision::Deny { .. })
    }
}

/// What an unapproved warning means: someone may be asked, or nobody is there to answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ask {
    /// Interactive or supervised: run it, with the warnings in the receipt (the default).
    Warn,
    /// Unattended (CI): an unapproved warning cannot be asked about, so it is denied.
    Deny,
}

impl Ask {
    /// `Deny` when the environment says CI (`CI=true` or `CI=1`), else `Warn`.
    pub fn from_env() -> Self {
        match std::env::var("CI") {
            Ok(v) if v.eq_ignore_ascii_case("true") || v == "1" => Ask::Deny,
            _ => Ask::Warn,
        }
    }
}

/// Like [`decide`], with the "ask" semantics made explicit: under [`Ask::Deny`] a warning
/// whose category (or rule id) is not in `policy.approve` becomes [`Decision::Deny`].
pub fn decide_with(verdict: &Verdict, policy: &Policy, ask: Ask) -> Decision {
    match (decide(verdict, policy), ask) {
        (Decision::Warn(messages), Ask::Deny) => Decision::Deny {
            message: format!(
                "the guard asks for approval and nobody can answer (CI): {}; approve the category in the task's policy.approve if it is intended",
                messages.join("; ")
            ),
        },
        (d, _) => d,
    }
}

/// Turns `verdict` into a decision under `policy`.
///
/// - allow → [`Decision::Allow`];
/// - warn → [`Decision::Warn`] with one message per warning, or Allow when every warning's
///   category (or rule id) is in `policy.approve`;
/// - block → [`Decision::Bypassed`] when every blocking rule id has a bypass entry with a
///   non-empty justification, else [`Decision::Deny`] naming the rules, the matched text and
///   the safer alternative.
pub fn decide(verdict: &Verdict, policy: &Policy) -> Decision {
    match verdict.recommendation {
        Recommendation::Allow => Decision::Allow,
        Recommendation::Warn => {
            let warnings: Vec<&Violation> = verdict
                .violations
                .iter()
                .filter(|v| v.recommendation == Recommendation::Warn)
                .collect();
            let approved = |v: &Violation| policy.approve.iter().any(|a| a == v.category.as_str() || *a == v.rule);
            if warnings.iter().all(|v| approved(v)) {
                Decision::Allow
            } else {
                Decision::Warn(
                    warnings
                        .iter()
                        .filter(|v| !approved(v))
                        .map(|v| format!("{}: {} (matched `{}`)", v.rule, v.description, v.matched))
                        .collect(),
                )
            }
        }
        Recommendation::Block => {
            let blocking: Vec<&Violation> = verdict
                .violations
                .iter()
                .filter(|v| v.recommendation == Recommendation::Block)
                .collect();
            let justification_for = |rule: &str| {
                policy
                    .bypass
                    .iter()
                    .find(|b| b.rule == rule && !b.justification.trim().is_empty())
                    .map(|b| b.justification.trim())
            };
            let mut rules: Vec<String> = Vec::new();
            let mut justifications: Vec<&str> = Vec::new();
            let mut all_bypassed = !blocking.is_empty();
            for v in &blocking {
                match justification_for(&v.rule) {
                    Some(j) => {
                        if !rules.contains(&v.rule) {
                            rules.push(v.rule.clone());
                            justifications.push(j);
                        }
                    }
                    None => all_bypassed = false,
                }
            }
            if all_bypassed {
                return Decision::Bypassed {
                    rules,
                    justification: justifications.join("; "),
                };
            }
            let mut message = String::from("blocked by the guard: ");
            let parts: Vec<String> = blocking
                .iter()
                .filter(|v| justification_for(&v.rule).is_none())
                .map(|v| format!("{} ({}) matched `{}`", v.rule, v.description, v.matched))
                .collect();
            message.push_str(&parts.join("; "));
            if let Some(alt) = &verdict.alternative {
                message.push_str("; safer: ");
                message.push_str(alt);
            }
            Decision::Deny { message }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::verdict::{Category, Risk};
    use crate::spec::Bypass;

    fn tp(allow: &[&str], deny: &[&str]) -> ToolPolicy {
        ToolPolicy {
            allow: allow.iter().map(|s| s.to_string()).collect(),
            deny: deny.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn denying_bash_denies_every_call_that_runs_a_command() {
        let gate = ToolGate::new(&tp(&[], &["bash"])).unwrap();
        let runs = |tool: &str, kind: &str| {
            crate::tools::runs_commands(tool, Some(&serde_json::json!({ "type": kind, "target": "x" })))
        };
        for kind in ["command_succeeds", "git_status"] {
            let denial = gate.check_call("verify", runs("verify", kind)).unwrap_err();
            assert!(denial.message.contains("runs a command"), "{kind}: {denial:?}");
        }
        for kind in ["file_exists", "file_contains"] {
            assert!(gate.check_call("verify", runs("verify", kind)).is_ok(), "{kind}");
        }
        // The suggestion for a denied bash no longer points at a way to run commands.
        let alt = gate.check("bash").unwrap_err().alternative.unwrap();
        assert!(!alt.contains("command_succeeds"), "{alt}");
        // With bash allowed, verify runs its commands.
        let open = ToolGate::allow_all();
        assert!(open.check_call("verify", runs("verify", "command_succeeds")).is_ok());
    }

    #[test]
    fn deny_wins_and_suggests_similar_tool() {
        let gate = ToolGate::new(&tp(&[], &["bash"])).unwrap();
        gate.check("read_file").unwrap();
        let d = gate.check("bash").unwrap_err();
        assert_eq!(
            d.message,
            "tool `bash` is denied by this task's policy (deny: [\"bash\"])"
        );
        assert!(d.alternative.unwrap().starts_with("use `verify`"));
        let gate = ToolGate::new(&tp(&["*_file"], &["write_*"])).unwrap();
        let d = gate.check("write_file").unwrap_err();
        assert_eq!(d.alternative.as_deref(), Some("use `edit_file` instead"));
    }

    #[test]
    fn allow_list_restricts() {
        let gate = ToolGate::new(&tp(&["read_*", "list_dir"], &[])).unwrap();
        gate.check("read_file").unwrap();
        gate.check("list_dir").unwrap();
        let d = gate.check("bash").unwrap_err();
        assert!(d.message.contains("not in this task's allowed tools"), "{}", d.message);
        assert!(d.alternative.unwrap().contains("read_file"));
    }

    #[test]
    fn bad_glob_is_an_error() {
        let err = ToolGate::new(&tp(&["[bash"], &[])).unwrap_err();
        assert_eq!(err.glob, "[bash");
        assert!(err.to_string().contains("invalid tool glob `[bash`"));
    }

    fn violation(rule: &str, cat: Category, rec: Recommendation) -> Violation {
        Violation {
            category: cat,
            rule: rule.into(),
            severity: Risk::High,
            matched: "rm -rf /".into(),
            description: "d".into(),
            recommendation: rec,
        }
    }

    #[test]
    fn decide_covers_each_recommendation() {
        let p = Policy::default();
        assert_eq!(decide(&Verdict::allow(), &p), Decision::Allow);

        let warn = Verdict::from_violations(
            vec![violation("parse.unparseable", Category::Parse, Recommendation::Warn)],
            None,
        );
        assert!(matches!(decide(&warn, &p), Decision::Warn(m) if m[0].starts_with("parse.unparseable")));
        let approving = Policy {
            approve: vec!["parse".into()],
            ..Default::default()
        };
        assert_eq!(decide(&warn, &approving), Decision::Allow);

        let block = Verdict::from_violations(
            vec![violation(
                "deletion.recursive_force",
                Category::Deletion,
                Recommendation::Block,
            )],
            Some("rm -r build/".into()),
        );
        match decide(&block, &p) {
            Decision::Deny { message } => {
                assert!(message.contains("deletion.recursive_force"), "{message}");
                assert!(message.contains("rm -rf /"), "{message}");
                assert!(message.contains("rm -r build/"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        let empty = Policy {
            bypass: vec![Bypass {
                rule: "deletion.recursive_force".into(),
                justification: "  ".into(),
            }],
            ..Default::default()
        };
        assert!(matches!(decide(&block, &empty), Decision::Deny { .. }));
        let written = Policy {
            bypass: vec![Bypass {
                rule: "deletion.recursive_force".into(),
                justification: "scratch VM".into(),
            }],
            ..Default::default()
        };
        assert_eq!(
            decide(&block, &written),
            Decision::Bypassed {
                rules: vec!["deletion.recursive_force".into()],
                justification: "scratch VM".into()
            }
        );
    }

    #[test]
    fn unattended_runs_deny_unapproved_warnings() {
        let warn = Verdict::from_violations(
            vec![violation("git.branch_delete", Category::Git, Recommendation::Warn)],
            None,
        );
        let p = Policy::default();
        assert!(matches!(decide_with(&warn, &p, Ask::Warn), Decision::Warn(_)));
        match decide_with(&warn, &p, Ask::Deny) {
            Decision::Deny { message } => assert!(message.contains("git.branch_delete"), "{message}"),
            other => panic!("{other:?}"),
        }
        let approving = Policy {
            approve: vec!["git".into()],
            ..Default::default()
        };
        assert_eq!(decide_with(&warn, &approving, Ask::Deny), Decision::Allow);
        assert_eq!(decide_with(&Verdict::allow(), &p, Ask::Deny), Decision::Allow);
    }

    #[test]
    fn bypass_needs_every_blocking_rule() {
        let block = Verdict::from_violations(
            vec![
                violation("deletion.recursive_force", Category::Deletion, Recommendation::Block),
                violation("database.drop_table", Category::Database, Recommendation::Block),
            ],
            None,
        );
        let partial = Policy {
            bypass: vec![Bypass {
                rule: "deletion.recursive_force".into(),
                justification: "ok".into(),
            }],
            ..Default::default()
        };
        match decide(&block, &partial) {
            Decision::Deny { message } => {
                assert!(message.contains("database.drop_table"));
                assert!(!message.contains("deletion.recursive_force"));
            }
            other => panic!("{other:?}"),
        }
    }
}
