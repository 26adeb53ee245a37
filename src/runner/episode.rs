//! One agent episode: what every task kind does with its agent, written once.
//!
//! An episode starts the agent on a prompt (the brief, logged to the transcript), plays rounds
//! — the agent acts, each call through the pipeline, until it reports, breaks, or the harness
//! stops it — sends feedback between rounds, retries a transiently failed agent with backoff
//! (restarting it on the round's prompt and feedback when it is gone), never lets anything wait
//! past the task's deadline, and emits a round event for every round it plays. The kinds
//! (`task`, `tdd`, `prp`) decide only what the rounds are about and when to stop; none of them
//! starts an agent, talks to it or retries it itself.
//!
//! What the agent can make an episode hold is bounded here too: a restart keeps the attempt's
//! turns, limits and deadline (they live in the pipeline), and `usage` messages, which cost no
//! turn, are capped between two turns.
//!
//! What counts as transient is decided here: an agent that crashed, hung or could not start, or
//! one that ended its round with a transient error code (TIMEOUT, RATE_LIMIT, NETWORK_ERROR,
//! DEPENDENCY_FAIL). An agent that ended without a report broke the protocol: never retried.
//! How often is the plan's ([`crate::plan::RetryPolicy`]).

use std::time::Duration;

use crate::agent::{self, Action, Agent, AgentEvent, AgentFailure};
use crate::error::RunError;
use crate::guard::limits::CallKey;
use crate::pipeline::{self, Origin};
use crate::plan::RetryPolicy;
use crate::report::events::RoundEndReason;
use crate::spec::{FinalReport, FinalResult, Outcome};
use crate::tools::{ActionInput, ErrorCode, Receipt};

use super::Attempt;

/// How a round ended.
#[derive(Debug)]
pub(super) enum RoundEnd {
    /// The agent reported (a final report, or a reply parsed into one).
    Reported(FinalReport),
    /// The agent broke: crashed, hung, could not start, ended without a report (retries, if
    /// any, spent).
    AgentFailed(AgentFailure),
    /// The harness stopped the task (limit, invariant, task timeout).
    Stopped(Outcome, String),
}

impl RoundEnd {
    /// How the round ended, as a round event says it.
    fn reason(&self) -> RoundEndReason {
        match self {
            RoundEnd::Reported(f) => RoundEndReason::Reported(f.result),
            RoundEnd::AgentFailed(failure) => RoundEndReason::AgentFailed(failure.to_string()),
            RoundEnd::Stopped(outcome, reason) => RoundEndReason::Stopped {
                outcome: *outcome,
                reason: reason.clone(),
            },
        }
    }
}

/// What an episode spent besides the rounds: retries and the delays it slept.
#[derive(Debug, Default)]
pub(super) struct EpisodeStats {
    /// Rounds played again after a transient failure.
    pub retries: u32,
    /// `(what, milliseconds)` of every pause (`medin.retry`, `medin.backoff`), in order.
    pub delays: Vec<(String, u64)>,
}

/// A started agent and the state of its rounds.
pub(super) struct Episode {
    agent: Box<dyn Agent>,
    retry: RetryPolicy,
    /// The current round's prompt and feedback: what a restarted agent is given.
    prompt: String,
    feedback: Option<serde_json::Value>,
    /// Rounds started so far (a retried round keeps its number).
    round: u32,
    stats: EpisodeStats,
    finished: bool,
}

impl Episode {
    /// Starts the attempt's agent on `prompt`.
    pub fn start(att: &mut Attempt<'_>, prompt: String) -> Result<Self, RunError> {
        let agent = start_agent(att, &prompt, None)?;
        Ok(Episode {
            agent,
            retry: att.plan.retry,
            prompt,
            feedback: None,
            round: 0,
            stats: EpisodeStats::default(),
            finished: false,
        })
    }

    /// Sends feedback before the next round: `prompt` is what that round asks for (a restarted
    /// agent gets it as its task, with the feedback).
    pub fn feedback(
        &mut self,
        att: &mut Attempt<'_>,
        prompt: String,
        feedback: serde_json::Value,
    ) -> Result<(), RunError> {
        att.log_transcript(
            "to_agent",
            serde_json::json!({ "type": "feedback", "feedback": feedback }),
        )?;
        self.agent.feedback(&feedback);
        self.prompt = prompt;
        self.feedback = Some(feedback);
        Ok(())
    }

    /// Plays one round, again after a transient failure (with backoff, within the deadline)
    /// while the plan's attempts last.
    pub fn round(&mut self, att: &mut Attempt<'_>) -> Result<RoundEnd, RunError> {
        self.round += 1;
        let mut attempt = 1;
        loop {
            let end = play(att, self.agent.as_mut())?;
            att.events.round_ended(self.round, end.reason());
            let Some(why) = transient(&end) else {
                return Ok(end);
            };
            if attempt >= self.retry.attempts {
                return Ok(end);
            }
            let delay = self.retry.backoff.delay(attempt, fastrand::f64());
            let context = serde_json::json!({ "attempt": attempt + 1, "of": self.retry.attempts, "after": why });
            if !self.pause(att, "medin.retry", delay, context)? {
                return Ok(end);
            }
            self.stats.retries += 1;
            attempt += 1;
            if matches!(end, RoundEnd::AgentFailed(_)) {
                // The agent is gone: a new one starts on the round's prompt and feedback.
                self.agent.finish();
                self.agent = start_agent(att, &self.prompt, Some(attempt))?;
                if let Some(f) = &self.feedback {
                    att.log_transcript("to_agent", serde_json::json!({ "type": "feedback", "feedback": f }))?;
                    self.agent.feedback(f);
                }
            } else {
                // The agent is alive and reported a transient error: ask it again.
                let again = serde_json::json!({ "kind": "retry", "attempt": attempt, "of": self.retry.attempts, "reason": why, "prompt": self.prompt });
                att.log_transcript("to_agent", serde_json::json!({ "type": "feedback", "feedback": again }))?;
                self.agent.feedback(&again);
            }
        }
    }

    /// Sleeps `delay`, cut short by the task's deadline, with a receipt (`what` names it:
    /// `medin.retry`, `medin.backoff`). Returns false when the deadline came first.
    pub fn pause(
        &mut self,
        att: &mut Attempt<'_>,
        what: &str,
        delay: Duration,
        context: serde_json::Value,
    ) -> Result<bool, RunError> {
        let left = att.pipe.deadline().remaining();
        let fits = delay < left;
        let slept = delay.min(left);
        std::thread::sleep(slept);
        let ms = u64::try_from(slept.as_millis()).unwrap_or(u64::MAX);
        self.stats.delays.push((what.to_string(), ms));
        let mut data =
            serde_json::json!({ "delay_ms": ms, "planned_ms": u64::try_from(delay.as_millis()).unwrap_or(u64::MAX) });
        if let (Some(d), serde_json::Value::Object(c)) = (data.as_object_mut(), context) {
            d.extend(c);
        }
        att.pipe.note(
            &super::harness_action(what, serde_json::Value::Null),
            Receipt::success(data),
        )?;
        Ok(fits)
    }

    /// Ends the agent (its process tree is killed) and returns what the episode spent.
    pub fn finish(mut self) -> EpisodeStats {
        self.end_agent();
        std::mem::take(&mut self.stats)
    }

    fn end_agent(&mut self) {
        if !self.finished {
            self.finished = true;
            self.agent.finish();
        }
    }
}

impl Drop for Episode {
    /// An episode left early (a harness error) still ends its agent: nothing outlives the
    /// attempt.
    fn drop(&mut self) {
        self.end_agent();
    }
}

/// Starts an agent on `prompt` with the attempt's brief (carrying `retry`, the attempt's
/// number, when it is a restart), logged to the transcript first exactly as it is sent.
fn start_agent(att: &mut Attempt<'_>, prompt: &str, retry: Option<u32>) -> Result<Box<dyn Agent>, RunError> {
    let mut brief = att.brief(prompt.to_string());
    brief.retry = retry;
    att.log_transcript("to_agent", serde_json::json!({ "type": "task", "brief": brief }))?;
    let deadline = att.pipe.deadline().at();
    Ok(agent::start(
        att.source,
        &brief,
        &att.task.solution,
        att.pipe.sandbox(),
        deadline,
        &att.model,
    ))
}

/// Most `usage` messages an agent may send between two turns (a real agent sends one per model
/// call); past it, each one is answered as a malformed line and counts as a turn.
const MAX_USAGE_PER_TURN: u32 = 64;

/// Why a round's end is worth another attempt, if it is.
fn transient(end: &RoundEnd) -> Option<String> {
    match end {
        RoundEnd::AgentFailed(
            failure @ (AgentFailure::Exited { .. } | AgentFailure::TimedOut { .. } | AgentFailure::Spawn { .. }),
        ) => Some(failure.to_string()),
        RoundEnd::Reported(r) if r.result == FinalResult::Error && r.code.is_some_and(is_transient_code) => Some(
            format!("{}: {}", r.code.map(|c| c.as_str()).unwrap_or_default(), r.message),
        ),
        _ => None,
    }
}

/// Error codes an agent may report that are worth retrying; VALIDATION_ERROR, INVALID_INPUT,
/// AUTH, NOT_FOUND, PARSE_ERROR and the rest are permanent.
fn is_transient_code(code: ErrorCode) -> bool {
    matches!(
        code,
        ErrorCode::Timeout | ErrorCode::RateLimit | ErrorCode::NetworkError | ErrorCode::DependencyFail
    )
}

/// One round: the agent acts (each call through the pipeline) until it reports, breaks, or
/// the harness stops it. The agent never waits past the task's deadline for its reply.
fn play(att: &mut Attempt<'_>, agent: &mut dyn Agent) -> Result<RoundEnd, RunError> {
    let clock = att.pipe.deadline();
    // Delegated calls allowed and not yet reported done, by call id.
    let mut delegated: std::collections::HashMap<String, (Action, pipeline::DelegatedWatch)> =
        std::collections::HashMap::new();
    let mut last: Option<(Action, Receipt)> = None;
    // `usage` messages since the agent's last turn: they cost no turn, so they are bounded here.
    let mut usage_lines = 0u32;
    let timed_out = || {
        RoundEnd::Stopped(
            Outcome::Timeout,
            format!("task timeout of {} reached", humantime::format_duration(clock.timeout)),
        )
    };
    loop {
        if clock.passed() {
            return Ok(timed_out());
        }
        if let Some((_, r)) = &mut last {
            r.agent_isolation = Some(att.agent_isolation.clone());
        }
        let mut event = agent.next(last.as_ref().map(|(a, r)| (a, r)), clock.at());
        last = None;
        if let AgentEvent::Usage(u) | AgentEvent::ModelCall(crate::agent::ModelCall { usage: u, .. }) = event {
            usage_lines += 1;
            if usage_lines > MAX_USAGE_PER_TURN {
                // A flood of usage lines would fill the transcript until the deadline without
                // costing a turn: past the bound each one is a malformed line, and a turn.
                event = AgentEvent::Malformed {
                    line: serde_json::json!({ "type": "usage", "input_tokens": u.input_tokens, "output_tokens": u.output_tokens })
                        .to_string(),
                    reason: format!("more than {MAX_USAGE_PER_TURN} usage messages without a tool call; report usage once per model call"),
                };
            }
        } else {
            usage_lines = 0;
        }
        match event {
            AgentEvent::Usage(u) => {
                // Counts an agent reports are its word: summed saturating, never wrapped.
                att.pipe.metrics(|m| {
                    m.usage.input_tokens = m.usage.input_tokens.saturating_add(u.input_tokens);
                    m.usage.output_tokens = m.usage.output_tokens.saturating_add(u.output_tokens);
                });
                att.log_transcript(
                    "from_agent",
                    serde_json::json!({ "type": "usage", "input_tokens": u.input_tokens, "output_tokens": u.output_tokens }),
                )?;
            }
            AgentEvent::ModelCall(call) => {
                att.pipe.metrics(|m| {
                    m.usage.input_tokens = m.usage.input_tokens.saturating_add(call.usage.input_tokens);
                    m.usage.output_tokens = m.usage.output_tokens.saturating_add(call.usage.output_tokens);
                    m.model.get_or_insert_with(Default::default).add(&call);
                });
                att.log_transcript(
                    "from_agent",
                    serde_json::json!({ "type": "model_call", "input_tokens": call.usage.input_tokens, "output_tokens": call.usage.output_tokens, "cached_input_tokens": call.cached_input_tokens, "retries": call.retries, "cost": call.cost }),
                )?;
            }
            AgentEvent::Final(f) => {
                att.log_transcript("from_agent", serde_json::json!({ "type": "final", "report": f }))?;
                return Ok(RoundEnd::Reported(f));
            }
            AgentEvent::Reply(text) => {
                att.log_transcript("from_agent", serde_json::json!({ "type": "reply", "text": text }))?;
                let report = match agent::parse_reply(&text) {
                    Ok(report) => report,
                    Err(report) => {
                        let receipt = Receipt::error(ErrorCode::ParseError, report.message.clone());
                        att.pipe.note_agent(&agent_action(), receipt, None)?;
                        report
                    }
                };
                return Ok(RoundEnd::Reported(report));
            }
            AgentEvent::Failed(failure) => {
                att.log_transcript(
                    "from_agent",
                    serde_json::json!({ "type": "failed", "error": failure.to_string() }),
                )?;
                // An agent that stopped answering at the task's deadline ran out of the task's
                // time: that is a timeout, not a broken agent.
                if matches!(failure, AgentFailure::TimedOut { .. }) && clock.remaining().is_zero() {
                    let receipt = Receipt::error(ErrorCode::Timeout, failure.to_string());
                    att.pipe.note_agent(&agent_action(), receipt, None)?;
                    return Ok(timed_out());
                }
                if matches!(failure, AgentFailure::ContextLengthExceeded { .. }) {
                    att.pipe.metrics(|m| m.context_length_exceeded = true);
                }
                // The agent's own failure gets a receipt too, so the log says what happened.
                let receipt = Receipt::error(failure_code(&failure), failure.to_string());
                att.pipe.note_agent(&agent_action(), receipt, None)?;
                return Ok(RoundEnd::AgentFailed(failure));
            }
            AgentEvent::HarnessFailed(detail) => {
                att.log_transcript(
                    "from_agent",
                    serde_json::json!({ "type": "harness_failed", "error": detail }),
                )?;
                return Err(RunError::harness("the model agent could not be served", detail));
            }
            AgentEvent::Malformed { line, reason } => {
                att.log_transcript(
                    "from_agent",
                    serde_json::json!({ "type": "malformed", "line": line, "reason": reason }),
                )?;
                att.pipe.metrics(|m| m.malformed += 1);
                let receipt = Receipt::error(
                    ErrorCode::MalformedOutput,
                    format!("agent output is not a protocol message ({reason}); send one JSON object per line: tool_call, final, reply or usage"),
                )
                .with_context(serde_json::json!({ "line": line }));
                let key = CallKey::new("", &line);
                let action = Action {
                    id: String::new(),
                    tool: String::new(),
                    input: ActionInput::Raw(line),
                };
                let stop = att.pipe.begin_turn(key).err();
                att.pipe
                    .note_agent(&action, receipt.clone(), stop.as_ref().map(|v| v.to_string()))?;
                if let Some(v) = stop {
                    return Ok(RoundEnd::Stopped(Outcome::Stopped, v.to_string()));
                }
                last = Some((action, receipt));
            }
            AgentEvent::Delegated(action) => {
                att.log_transcript(
                    "from_agent",
                    serde_json::json!({ "type": "tool_call", "id": action.id, "tool": action.tool, "input": pipeline::input_json(&action.input), "delegated": true }),
                )?;
                if let Some(stopped) = begin_call(att, &action)? {
                    return Ok(stopped);
                }
                let (passed, watch) = att.pipe.judge(Origin::Agent, &action, &agent.name())?;
                if let Some(stop) = passed.stop {
                    return Ok(RoundEnd::Stopped(stop.outcome, stop.reason));
                }
                if let Some(watch) = watch {
                    delegated.insert(action.id.clone(), (action.clone(), watch));
                }
                last = Some((action, passed.receipt));
            }
            AgentEvent::DelegatedDone { id, result } => {
                let Some((action, watch)) = delegated.remove(&id) else {
                    att.log_transcript(
                        "from_agent",
                        serde_json::json!({ "type": "tool_done", "id": id, "result": result, "known": false }),
                    )?;
                    continue;
                };
                let (changed, stop) = att.pipe.delegated_done(&action, watch)?;
                att.log_transcript(
                    "from_agent",
                    serde_json::json!({ "type": "tool_done", "id": id, "tool": action.tool, "result": result, "changed": changed }),
                )?;
                if let Some(stop) = stop {
                    return Ok(RoundEnd::Stopped(stop.outcome, stop.reason));
                }
            }
            AgentEvent::Unguarded(action) => {
                let reason = format!(
                    "the agent ran `{}` without asking medin (its pre-tool hook was bypassed); every action must pass the guard, so the task is stopped",
                    action.tool
                );
                att.log_transcript(
                    "from_agent",
                    serde_json::json!({ "type": "unguarded", "id": action.id, "tool": action.tool, "input": pipeline::input_json(&action.input) }),
                )?;
                att.pipe.note_agent(
                    &action,
                    Receipt::error(ErrorCode::InvariantBroken, reason.clone()),
                    None,
                )?;
                return Ok(RoundEnd::Stopped(
                    Outcome::Stopped,
                    format!("INVARIANT_BROKEN: {reason}"),
                ));
            }
            AgentEvent::Connection(c) => {
                let action = Action {
                    id: String::new(),
                    tool: "medin.egress".into(),
                    input: ActionInput::Json(serde_json::json!({ "host": c.host, "port": c.port, "via": c.via })),
                };
                let data = serde_json::to_value(&c).unwrap_or_default();
                let receipt = if c.allowed {
                    Receipt::success(data)
                } else {
                    Receipt::error(
                        ErrorCode::PermissionDenied,
                        format!(
                            "connection to {}:{} refused: not in the task's egress allowlist (`policy.egress`)",
                            c.host, c.port
                        ),
                    )
                    .with_context(data)
                };
                att.pipe.note_agent(&action, receipt, None)?;
            }
            AgentEvent::Note(note) => {
                att.log_transcript("from_agent", note)?;
            }
            AgentEvent::Call(action) => {
                att.log_transcript(
                    "from_agent",
                    serde_json::json!({ "type": "tool_call", "id": action.id, "tool": action.tool, "input": pipeline::input_json(&action.input) }),
                )?;
                if let Some(stopped) = begin_call(att, &action)? {
                    return Ok(stopped);
                }
                let passed = att.pipe.pass(Origin::Agent, &action)?;
                if let Some(stop) = passed.stop {
                    return Ok(RoundEnd::Stopped(stop.outcome, stop.reason));
                }
                last = Some((action, passed.receipt));
            }
        }
    }
}

/// A tool call starts a turn: counted against `max_turns` and `max_repeats`; a call past them
/// gets its receipt and stops the round.
fn begin_call(att: &mut Attempt<'_>, action: &Action) -> Result<Option<RoundEnd>, RunError> {
    let key = CallKey::new(&action.tool, &pipeline::input_json(&action.input).to_string());
    match att.pipe.begin_turn(key) {
        Ok(()) => Ok(None),
        Err(v) => {
            let receipt = Receipt::error(ErrorCode::PermissionDenied, format!("{v}; the task is stopped"));
            att.pipe.note_agent(action, receipt, Some(v.to_string()))?;
            Ok(Some(RoundEnd::Stopped(Outcome::Stopped, v.to_string())))
        }
    }
}

/// The receipt code of an agent's own failure.
fn failure_code(failure: &AgentFailure) -> ErrorCode {
    match failure {
        AgentFailure::TimedOut { .. } => ErrorCode::Timeout,
        AgentFailure::Spawn { .. } => ErrorCode::DependencyFail,
        AgentFailure::ContextLengthExceeded { .. } => ErrorCode::InvalidInput,
        AgentFailure::Exited { .. } | AgentFailure::NoFinal | AgentFailure::NotReading { .. } => {
            ErrorCode::MalformedOutput
        }
    }
}

/// The placeholder action of a receipt about the agent itself (not a tool call).
fn agent_action() -> Action {
    Action {
        id: String::new(),
        tool: String::new(),
        input: ActionInput::Json(serde_json::Value::Null),
    }
}
