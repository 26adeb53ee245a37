//! The oracle agent: plays the task's scripted `solution`, step by step.
//!
//! `Step::Tool` and `Step::Call` become a call with JSON input, `Step::Raw` a call whose input is the raw text
//! (to test how malformed input is handled), `Step::Final` the final report, `Step::Reply` a free-text reply. Multi-round kinds: a round
//! ends at its `final` or `reply` step, and the next round goes on from the step after it. Call ids are
//! `call-1`, `call-2`, … in order. A solution that runs out without a `final` step ends with
//! [`AgentFailure::NoFinal`]. The oracle ignores receipts: it is a script, not a planner.

use std::sync::Arc;

use crate::sandbox::SandboxConfig;
use crate::spec::{AgentGiven, AgentRef, Step};
use crate::tools::{ActionInput, Receipt};

use super::kind::{AgentConfinement, AgentContext, AgentKind};
use super::registry::AgentRefError;
use super::{Action, Agent, AgentEvent, AgentFailure};

/// The `oracle` entry of the registry: it takes no argument.
pub(crate) fn configure(written: &AgentRef) -> Result<Arc<dyn AgentKind>, AgentRefError> {
    match &written.given {
        AgentGiven::Nothing => Ok(Arc::new(OracleKind)),
        AgentGiven::Options(options) if options.is_empty() => Ok(Arc::new(OracleKind)),
        AgentGiven::Arg(_) | AgentGiven::Options(_) => Err(AgentRefError::invalid(
            written,
            "takes no argument: it plays the task's `solution`; write `oracle`".into(),
        )),
    }
}

/// The oracle kind: medin's own agent, playing the task's solution.
#[derive(Debug)]
pub(crate) struct OracleKind;

impl AgentKind for OracleKind {
    fn label(&self) -> String {
        "oracle".into()
    }

    fn confinement(&self, _sandbox: &SandboxConfig) -> AgentConfinement {
        AgentConfinement::Builtin
    }

    fn start(&self, context: &AgentContext<'_>, _sandbox: &SandboxConfig) -> Result<Box<dyn Agent>, AgentFailure> {
        Ok(Box::new(OracleAgent::new(context.solution().to_vec())))
    }
}

/// Plays a solution.
#[derive(Debug, Clone)]
pub struct OracleAgent {
    steps: Vec<Step>,
    next_step: usize,
    calls: usize,
}

impl OracleAgent {
    pub fn new(steps: Vec<Step>) -> Self {
        OracleAgent {
            steps,
            next_step: 0,
            calls: 0,
        }
    }
}

impl Agent for OracleAgent {
    fn name(&self) -> String {
        "oracle".into()
    }

    fn next(&mut self, _last: Option<(&Action, &Receipt)>, _deadline: std::time::Instant) -> AgentEvent {
        let Some(step) = self.steps.get(self.next_step) else {
            return AgentEvent::Failed(AgentFailure::NoFinal);
        };
        self.next_step += 1;
        let mut call = |tool: &str, input: ActionInput| {
            self.calls += 1;
            AgentEvent::Call(Action {
                id: format!("call-{}", self.calls),
                tool: tool.to_string(),
                input,
            })
        };
        match step {
            Step::Tool { tool, input } | Step::Call { tool, input } => call(tool, ActionInput::Json(input.clone())),
            Step::Raw { tool, raw } => call(tool, ActionInput::Raw(raw.clone())),
            Step::Final(report) => AgentEvent::Final(report.clone()),
            Step::Reply(text) => AgentEvent::Reply(text.clone()),
        }
    }

    fn finish(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn far() -> std::time::Instant {
        std::time::Instant::now() + std::time::Duration::from_secs(3600)
    }
    use crate::spec::{FinalReport, FinalResult};
    use serde_json::json;

    #[test]
    fn plays_steps_in_order_then_final() {
        let mut a = OracleAgent::new(vec![
            Step::Tool {
                tool: "bash".into(),
                input: json!({"command": "ls"}),
            },
            Step::Raw {
                tool: "write_file".into(),
                raw: "{not json".into(),
            },
            Step::Final(FinalReport {
                code: None,
                result: FinalResult::Success,
                message: "done".into(),
            }),
        ]);
        assert_eq!(
            a.next(None, far()),
            AgentEvent::Call(Action {
                id: "call-1".into(),
                tool: "bash".into(),
                input: ActionInput::Json(json!({"command": "ls"}))
            })
        );
        let r = Receipt::success(json!(null));
        let prev = Action {
            id: "call-1".into(),
            tool: "bash".into(),
            input: ActionInput::Json(json!({})),
        };
        assert_eq!(
            a.next(Some((&prev, &r)), far()),
            AgentEvent::Call(Action {
                id: "call-2".into(),
                tool: "write_file".into(),
                input: ActionInput::Raw("{not json".into())
            })
        );
        assert!(matches!(
            a.next(None, far()),
            AgentEvent::Final(FinalReport {
                code: None,
                result: FinalResult::Success,
                ..
            })
        ));
        assert_eq!(a.next(None, far()), AgentEvent::Failed(AgentFailure::NoFinal));
    }

    #[test]
    fn missing_final_is_a_failure() {
        let mut a = OracleAgent::new(vec![Step::Tool {
            tool: "bash".into(),
            input: json!({"command": "ls"}),
        }]);
        assert!(matches!(a.next(None, far()), AgentEvent::Call(_)));
        assert_eq!(a.next(None, far()), AgentEvent::Failed(AgentFailure::NoFinal));
        assert_eq!(
            OracleAgent::new(vec![]).next(None, far()),
            AgentEvent::Failed(AgentFailure::NoFinal)
        );
    }
}
