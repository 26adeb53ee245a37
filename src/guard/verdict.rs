//! The guard's answer: a recommendation, the overall risk, each violation with its rule and the
//! text it matched, and a safer alternative.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Recommendation {
    Allow,
    Warn,
    Block,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    Low,
    Medium,
    High,
    Critical,
}

/// Rule categories, one rules file each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    Deletion,
    Git,
    Database,
    Secrets,
    Network,
    Disk,
    Privilege,
    Process,
    RemoteExecution,
    Exfiltration,
    TestTampering,
    /// Commands planted for later: VCS hooks, cron, services, startup files.
    Persistence,
    /// The command could not be understood (fails closed).
    Parse,
}

impl Category {
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Deletion => "deletion",
            Category::Git => "git",
            Category::Database => "database",
            Category::Secrets => "secrets",
            Category::Network => "network",
            Category::Disk => "disk",
            Category::Privilege => "privilege",
            Category::Process => "process",
            Category::RemoteExecution => "remote_execution",
            Category::Exfiltration => "exfiltration",
            Category::TestTampering => "test_tampering",
            Category::Persistence => "persistence",
            Category::Parse => "parse",
        }
    }
}

/// One rule that fired.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    pub category: Category,
    /// Stable rule id, `<category>.<name>`, e.g. `deletion.recursive_force`.
    pub rule: String,
    pub severity: Risk,
    /// The text that made the rule fire.
    pub matched: String,
    pub description: String,
    /// What the rule recommends: warn or block.
    pub recommendation: Recommendation,
}

/// The guard's verdict on one action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    pub recommendation: Recommendation,
    pub risk: Risk,
    pub violations: Vec<Violation>,
    /// A safer way to reach the same goal, when one is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alternative: Option<String>,
}

impl Verdict {
    pub fn allow() -> Self {
        Verdict {
            recommendation: Recommendation::Allow,
            risk: Risk::Low,
            violations: Vec::new(),
            alternative: None,
        }
    }

    /// Folds violations into a verdict: the strongest recommendation and risk win.
    pub fn from_violations(violations: Vec<Violation>, alternative: Option<String>) -> Self {
        let recommendation = violations
            .iter()
            .map(|v| v.recommendation)
            .max()
            .unwrap_or(Recommendation::Allow);
        let risk = violations.iter().map(|v| v.severity).max().unwrap_or(Risk::Low);
        Verdict {
            recommendation,
            risk,
            violations,
            alternative,
        }
    }
}
