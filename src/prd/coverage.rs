//! Requirement coverage: for each requirement of the PRD, the trials that name it and whether
//! they passed. A requirement is **proven** when at least one trial naming it passed (every
//! attempt of a repeated task counts on its own). A `critical` requirement that is not proven
//! fails the gate of a whole run ([`Coverage::unproven_critical`]); the other priorities are
//! reported and fail nothing.

use serde::{Deserialize, Serialize};

use super::parse::{Prd, Priority};

/// One trial's part in proving requirements: what it named and whether it passed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TrialProof {
    pub trial: String,
    pub attempt: u32,
    pub passed: bool,
}

/// One requirement's coverage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RequirementCoverage {
    pub id: String,
    pub title: String,
    pub priority: Priority,
    /// Trials that name it, in name order.
    pub trials: Vec<TrialProof>,
    /// At least one of them passed.
    pub proven: bool,
}

/// Every requirement's coverage, in the PRD's order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Coverage {
    pub prd_version: String,
    pub requirements: Vec<RequirementCoverage>,
}

impl Coverage {
    /// Critical requirements no passing trial proves.
    pub fn unproven_critical(&self) -> Vec<&RequirementCoverage> {
        self.requirements
            .iter()
            .filter(|r| r.priority == Priority::Critical && !r.proven)
            .collect()
    }

    /// Proven requirements over all of them, 0.0-1.0 (1.0 for a PRD without requirements).
    pub fn rate(&self) -> f64 {
        if self.requirements.is_empty() {
            return 1.0;
        }
        self.requirements.iter().filter(|r| r.proven).count() as f64 / self.requirements.len() as f64
    }
}

/// The coverage of `prd` by `trials`: `(trial, attempt, passed, requirements it names)`.
pub fn coverage<'a>(prd: &Prd, trials: impl IntoIterator<Item = (&'a str, u32, bool, &'a [String])>) -> Coverage {
    let mut requirements: Vec<RequirementCoverage> = prd
        .requirements
        .iter()
        .map(|r| RequirementCoverage {
            id: r.id.clone(),
            title: r.title.clone(),
            priority: r.priority,
            trials: Vec::new(),
            proven: false,
        })
        .collect();
    for (trial, attempt, passed, named) in trials {
        for id in named {
            if let Some(rc) = requirements.iter_mut().find(|rc| &rc.id == id) {
                rc.trials.push(TrialProof {
                    trial: trial.to_string(),
                    attempt,
                    passed,
                });
                rc.proven |= passed;
            }
        }
    }
    for rc in &mut requirements {
        rc.trials
            .sort_by(|a, b| (&a.trial, a.attempt).cmp(&(&b.trial, b.attempt)));
    }
    Coverage {
        prd_version: prd.version.clone(),
        requirements,
    }
}
