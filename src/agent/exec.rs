//! The exec agent: a black box (a CLI agent, a script) run once per round as one `bash` call
//! in the workspace; only the end state is judged.
//!
//! Its first event is `Call(Action { id: "exec-1", tool: "bash", input: {command, timeout_ms} })`
//! so the command takes the normal path (guard → sandbox → validate → log) like any other
//! action. The prompt reaches the command as `$MEDIN_PROMPT` (and the task id as
//! `$MEDIN_TASK_ID`): the runner owns the sandbox environment, so the agent prefixes the
//! command line with `export MEDIN_PROMPT='<prompt, shell-quoted>' MEDIN_TASK_ID='<id>'; `.
//! This works for compound commands (`cd sub && ./agent`) too. `timeout_ms` is the task's
//! `limits.timeout` when the brief carries one (the black box gets the whole task's time).
//!
//! The next event, given the bash receipt, is the final report: `success` when the receipt
//! succeeded (exit 0), `error` otherwise, with the last non-empty line of stdout (or stderr) as
//! the message.

use std::sync::Arc;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::sandbox::SandboxConfig;
use crate::spec::{AgentGiven, AgentRef, FinalReport, FinalResult};
use crate::tools::{ActionInput, Receipt, ReceiptStatus};

use super::kind::{AgentConfinement, AgentContext, AgentKind};
use super::registry::{self, AgentRefError};
use super::{Action, Agent, AgentEvent, AgentFailure, TaskBrief};

/// The options of `agent: {exec: {..}}`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExecOptions {
    /// Shell command line run in the workspace; `$MEDIN_PROMPT` holds the prompt.
    pub command: String,
}

/// The `exec` entry of the registry: `exec:CMD`, `{exec: CMD}` or `{exec: {command: CMD}}`.
pub(crate) fn configure(written: &AgentRef) -> Result<Arc<dyn AgentKind>, AgentRefError> {
    let command = match &written.given {
        AgentGiven::Nothing => String::new(),
        AgentGiven::Arg(command) => command.clone(),
        AgentGiven::Options(options) => registry::options::<ExecOptions>(written, options)?.command,
    };
    if command.trim().is_empty() {
        return Err(AgentRefError::invalid(
            written,
            "has no command; write e.g. `exec:./run-agent.sh` or `{exec: {command: ./run-agent.sh}}`".into(),
        ));
    }
    Ok(Arc::new(ExecKind {
        command: command.trim().to_string(),
    }))
}

/// The exec kind: a black-box command, run as an action inside the sandbox.
#[derive(Debug)]
struct ExecKind {
    command: String,
}

impl AgentKind for ExecKind {
    fn label(&self) -> String {
        format!("exec:{}", self.command)
    }

    fn confinement(&self, sandbox: &SandboxConfig) -> AgentConfinement {
        AgentConfinement::Sandboxed(sandbox.isolation)
    }

    fn start(&self, context: &AgentContext<'_>, _sandbox: &SandboxConfig) -> Result<Box<dyn Agent>, AgentFailure> {
        Ok(Box::new(ExecAgent::new(&self.command, context.brief())))
    }
}

/// Runs one black-box command per round.
#[derive(Debug, Clone)]
pub struct ExecAgent {
    command: String,
    script: String,
    timeout_ms: Option<u64>,
    runs: usize,
    waiting: bool,
}

/// Quotes `text` for a POSIX shell (single quotes; `'` becomes `'\''`).
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The task timeout from a brief's `limits`: `timeout` as `"30s"` / seconds, or `timeout_ms`.
pub fn task_timeout(limits: &Value) -> Option<Duration> {
    if let Some(ms) = limits.get("timeout_ms").and_then(Value::as_u64) {
        return Some(Duration::from_millis(ms));
    }
    match limits.get("timeout")? {
        Value::String(s) => humantime::parse_duration(s.trim()).ok(),
        Value::Number(n) => n.as_f64().filter(|s| *s > 0.0).map(Duration::from_secs_f64),
        _ => None,
    }
}

impl ExecAgent {
    pub fn new(command: &str, brief: &TaskBrief) -> Self {
        let script = format!(
            "export MEDIN_PROMPT={} MEDIN_TASK_ID={}; {command}",
            shell_quote(&brief.prompt),
            shell_quote(&brief.task_id)
        );
        let timeout_ms = task_timeout(&brief.limits).map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1));
        ExecAgent {
            command: command.to_string(),
            script,
            timeout_ms,
            runs: 0,
            waiting: false,
        }
    }
}

/// The text of `data[key]`: a plain string, or a captured-output object with `text`.
fn stream(data: &Value, key: &str) -> String {
    match data.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.get("text").and_then(Value::as_str).unwrap_or("").to_string(),
        None => String::new(),
    }
}

fn last_line(text: &str) -> Option<String> {
    text.lines().map(str::trim).rfind(|l| !l.is_empty()).map(str::to_string)
}

impl Agent for ExecAgent {
    fn name(&self) -> String {
        format!("exec:{}", self.command)
    }

    fn next(&mut self, last: Option<(&Action, &Receipt)>, _deadline: Instant) -> AgentEvent {
        if self.waiting {
            if let Some((_, receipt)) = last {
                self.waiting = false;
                // A CLI coder that prints its result as `{"result", "message"}` JSON (raw or
                // fenced) is heard as a reply; otherwise the exit status is the report.
                let stdout = stream(&receipt.data, "stdout");
                if receipt.status == ReceiptStatus::Success && super::parse_reply(&stdout).is_ok() {
                    return AgentEvent::Reply(stdout);
                }
                let ok = receipt.status == ReceiptStatus::Success;
                let message = last_line(&stream(&receipt.data, "stdout"))
                    .or_else(|| last_line(&stream(&receipt.data, "stderr")))
                    .or_else(|| receipt.errors.first().map(|e| e.message.clone()))
                    .unwrap_or_else(|| format!("`{}` finished ({:?})", self.command, receipt.status).to_lowercase());
                return AgentEvent::Final(FinalReport {
                    code: None,
                    result: if ok { FinalResult::Success } else { FinalResult::Error },
                    message,
                });
            }
        }
        self.runs += 1;
        self.waiting = true;
        let mut input = json!({ "command": self.script });
        if let Some(ms) = self.timeout_ms {
            input["timeout_ms"] = json!(ms);
        }
        AgentEvent::Call(Action {
            id: format!("exec-{}", self.runs),
            tool: "bash".into(),
            input: ActionInput::Json(input),
        })
    }

    fn finish(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn far() -> std::time::Instant {
        std::time::Instant::now() + std::time::Duration::from_secs(3600)
    }
    use std::path::PathBuf;

    fn brief(prompt: &str, limits: Value) -> TaskBrief {
        TaskBrief {
            task_id: "t-1".into(),
            prompt: prompt.into(),
            tools: vec![],
            limits,
            workspace: PathBuf::from("/ws"),
            retry: None,
            requirements: Vec::new(),
        }
    }

    #[test]
    fn first_call_runs_the_command_with_the_prompt_exported() {
        let mut a = ExecAgent::new("./agent.sh", &brief("it's \"quoted\" $HOME", json!({"timeout": "30s"})));
        let AgentEvent::Call(action) = a.next(None, far()) else {
            panic!("expected a call")
        };
        assert_eq!(action.id, "exec-1");
        assert_eq!(action.tool, "bash");
        let ActionInput::Json(input) = &action.input else {
            panic!()
        };
        assert_eq!(input["timeout_ms"], json!(30000));
        let cmd = input["command"].as_str().unwrap();
        // The real shell sees the prompt verbatim.
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(cmd.replace("./agent.sh", "printf %s \"$MEDIN_PROMPT\""))
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "it's \"quoted\" $HOME");
    }

    #[test]
    fn receipt_becomes_the_final_report() {
        let mut a = ExecAgent::new("x", &brief("p", json!({})));
        let AgentEvent::Call(action) = a.next(None, far()) else {
            panic!()
        };
        let ActionInput::Json(input) = &action.input else {
            panic!()
        };
        assert!(input.get("timeout_ms").is_none());
        let r = Receipt::success(json!({"exit_code": 0, "stdout": "working\nall done\n\n", "stderr": ""}));
        assert_eq!(
            a.next(Some((&action, &r)), far()),
            AgentEvent::Final(FinalReport {
                code: None,
                result: FinalResult::Success,
                message: "all done".into()
            })
        );
        let AgentEvent::Call(again) = a.next(None, far()) else {
            panic!()
        };
        assert_eq!(again.id, "exec-2");
        let mut r = Receipt::error(crate::tools::ErrorCode::ToolExecutionFailed, "exit 2");
        r.data = json!({"stdout": {"text": ""}, "stderr": {"text": "boom\n"}});
        assert_eq!(
            a.next(Some((&again, &r)), far()),
            AgentEvent::Final(FinalReport {
                code: None,
                result: FinalResult::Error,
                message: "boom".into()
            })
        );
    }

    #[test]
    fn a_printed_json_result_is_a_reply() {
        let mut a = ExecAgent::new("x", &brief("p", json!({})));
        let AgentEvent::Call(action) = a.next(None, far()) else {
            panic!()
        };
        let out = "thinking...\n```json\n{\"result\": \"issue\", \"message\": \"which db?\"}\n```\n";
        let r = Receipt::success(json!({"exit_code": 0, "stdout": out, "stderr": ""}));
        assert_eq!(a.next(Some((&action, &r)), far()), AgentEvent::Reply(out.into()));
    }
}
