//! A CLI agent's attempt: start the real CLI confined in the attempt's sandbox, then turn what
//! happens — its hook calls, its output lines, its connection attempts, its exit — into the
//! episode's [`AgentEvent`]s, one at a time.
//!
//! - **Hook calls** become [`AgentEvent::Delegated`]: the runner judges the call
//!   (guard → policy → limits → receipt) and hands the receipt back with the next `next`;
//!   the hook is answered then — allow, or deny with the receipt's reason, which the CLI
//!   gives its model as the tool's result. A post-tool hook call becomes
//!   [`AgentEvent::DelegatedDone`] (what the call changed is counted).
//! - **Output lines** are read by the adapter: transcript notes, usage and cost
//!   ([`AgentEvent::ModelCall`]), the final answer, a provider failure (the harness's
//!   failure: infrastructure, never the agent's).
//! - **Unguarded calls**: a call the CLI reports run, of a tool that changes something, with no
//!   hook call for it — its hooks were evaded (a settings file rewritten, a relay broken) —
//!   is [`AgentEvent::Unguarded`], which stops the attempt.
//! - **Connections** (`sandbox::egress`) become [`AgentEvent::Connection`] receipts.
//!
//! The CLI's home is a fresh directory per attempt (the agent's scratch `HOME`), seeded from a
//! read-only folder with the CLI's settings and the hook relays; the API key reaches it only
//! as a variable (masked wherever medin writes). `finish` ends the CLI's whole tree.

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::adapter::{medin_action, Adapter, Hooks, LaunchInput, Seen};
use super::hook::{relay_script, HookAnswer, HookEvent, HookServer};
use crate::agent::exec::shell_quote;
use crate::agent::{Action, Agent, AgentEvent, AgentFailure, Connection, FinalReport};
use crate::sandbox::{self, PipedChild, SandboxConfig};
use crate::spec::FinalResult;
use crate::tools::{Receipt, ReceiptStatus};

/// Longest output line read from a CLI; the rest of a longer line is dropped.
const MAX_LINE: u64 = 4 * 1024 * 1024;
/// How long a CLI that closed its output gets to exit.
const EXIT_WAIT: Duration = Duration::from_secs(5);
/// Time between SIGTERM and SIGKILL when the CLI is ended.
const KILL_GRACE: Duration = Duration::from_secs(2);

/// What reaches the agent's loop.
pub(super) enum Input {
    Hook(super::hook::HookCall),
    Mcp(super::mcp::McpCall),
    Line(String),
    Eof,
    Connection(Connection),
}

/// How a CLI is started for one attempt (prepared by [`super::CliKind`]).
pub(super) struct Start<'a> {
    pub adapter: &'static dyn Adapter,
    pub program: &'a Path,
    pub label: String,
    pub prompt: &'a str,
    pub model: Option<&'a str>,
    pub base_url: &'a str,
    pub extra_args: &'a [String],
    /// The agent's sandbox (level, workspace, read paths, variables).
    pub cfg: SandboxConfig,
    /// Where the hook listener is bound (inside the attempt's network namespace, or on the host).
    pub hook_listener: Option<std::net::TcpListener>,
    /// Where medin's MCP server listens (`tools: medin`), and the tools it offers (the brief's).
    pub mcp_listener: Option<std::net::TcpListener>,
    pub tools: &'a [Value],
    /// The channel whose receiver the agent reads; its other ends feed the hook server and
    /// the egress proxy.
    pub inputs: (Sender<Input>, Receiver<Input>),
    /// Kept alive while the CLI runs (the egress proxy), dropped when it ends.
    pub keep: Vec<Box<dyn std::any::Any + Send>>,
}

/// A running CLI agent.
pub struct CliAgent {
    label: String,
    adapter: &'static dyn Adapter,
    workspace: PathBuf,
    child: Option<PipedChild>,
    inputs: Receiver<Input>,
    _hooks: Option<HookServer>,
    _mcp: Option<super::mcp::McpServer>,
    /// MCP calls waiting for their receipt, by action id.
    pending_mcp: HashMap<String, tokio::sync::oneshot::Sender<super::mcp::McpAnswer>>,
    _seed: tempfile::TempDir,
    keep: Vec<Box<dyn std::any::Any + Send>>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    /// Events read ahead, handed out one per `next`.
    queue: VecDeque<AgentEvent>,
    /// Hook calls waiting for the runner's judgement, by action id.
    pending: HashMap<String, SyncSender<HookAnswer>>,
    /// Calls allowed, by id, in order, for post-tool calls without an id (per hook key).
    allowed: HashMap<String, VecDeque<String>>,
    /// What medin was asked against what the CLI reports it ran.
    check: CrossCheck,
    calls: u64,
    done: Option<(bool, String)>,
    provider_failed: Option<String>,
    ended: bool,
}

impl std::fmt::Debug for CliAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CliAgent")
            .field("label", &self.label)
            .finish_non_exhaustive()
    }
}

impl CliAgent {
    pub(super) fn start(start: Start<'_>) -> Result<CliAgent, AgentFailure> {
        let Start {
            adapter,
            program,
            label,
            prompt,
            model,
            base_url,
            extra_args,
            mut cfg,
            hook_listener,
            mcp_listener,
            tools,
            inputs: (tx, rx),
            keep,
        } = start;
        let spawn_err = |reason: String| AgentFailure::Spawn {
            command: label.clone(),
            reason,
        };
        // The seed: the CLI's settings and the hook relays, read-only for the agent.
        let seed = tempfile::Builder::new()
            .prefix("medin-cli-")
            .tempdir_in(seed_base().map_err(|e| spawn_err(format!("cannot create its settings folder: {e}")))?)
            .map_err(|e| spawn_err(format!("cannot create its settings folder: {e}")))?;
        let seed_dir = seed.path().canonicalize().unwrap_or_else(|_| seed.path().to_path_buf());
        let hooks = match (adapter.hooks(), hook_listener) {
            (Hooks::None, _) | (_, None) => None,
            (_, Some(listener)) => {
                let (htx, hrx) = mpsc::channel();
                let server =
                    HookServer::start(listener, htx).map_err(|e| spawn_err(format!("cannot serve its hooks: {e}")))?;
                forward("medin-cli-hooks", hrx, tx.clone(), Input::Hook).map_err(|e| spawn_err(e.to_string()))?;
                Some(server)
            }
        };
        let (pre, post) = match &hooks {
            Some(server) => {
                let pre = seed_dir.join("pre-tool.sh");
                let post = seed_dir.join("post-tool.sh");
                let write = |p: &Path, text: String| {
                    std::fs::write(p, text).map_err(|e| spawn_err(format!("cannot write its hook relay: {e}")))
                };
                write(&pre, relay_script(server.port(), HookEvent::Pre))?;
                let post = (adapter.hooks() == Hooks::PreAndPost)
                    .then(|| write(&post, relay_script(server.port(), HookEvent::Post)).map(|()| post))
                    .transpose()?;
                (Some(pre), post)
            }
            None => (None, None),
        };
        // `tools: medin`: medin's MCP server, reached through a relay in the seed.
        let (mcp, mcp_relay) = match mcp_listener {
            Some(listener) => {
                let (mtx, mrx) = mpsc::channel();
                let server = super::mcp::McpServer::start(listener, tools, mtx)
                    .map_err(|e| spawn_err(format!("cannot serve medin's tools over MCP: {e}")))?;
                let relay = seed_dir.join("mcp.sh");
                std::fs::write(&relay, super::mcp::relay_script(server.port()))
                    .map_err(|e| spawn_err(format!("cannot write its MCP relay: {e}")))?;
                forward("medin-cli-mcp", mrx, tx.clone(), Input::Mcp).map_err(|e| spawn_err(e.to_string()))?;
                (Some(server), Some(relay))
            }
            None => (None, None),
        };
        let tool_names: Vec<String> = tools
            .iter()
            .filter_map(|t| t.get("name").and_then(Value::as_str).map(str::to_string))
            .collect();
        let workspace_seen = cfg.workspace_seen().to_path_buf();
        let launch = adapter.launch(&LaunchInput {
            prompt,
            model,
            base_url,
            workspace: &workspace_seen,
            seed: &seed_dir,
            pre_hook: pre.as_deref(),
            post_hook: post.as_deref(),
            extra_args,
            mcp: mcp_relay.as_deref().map(|relay| super::adapter::McpLaunch {
                relay,
                tools: &tool_names,
            }),
        });
        for (rel, text) in &launch.seed_files {
            let path = seed_dir.join(rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| spawn_err(format!("cannot write its settings: {e}")))?;
            }
            std::fs::write(&path, text).map_err(|e| spawn_err(format!("cannot write its settings: {e}")))?;
        }
        let home = seed_dir.join("home");
        for (rel, text) in &launch.home_files {
            let path = home.join(rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| spawn_err(format!("cannot write its settings: {e}")))?;
            }
            std::fs::write(&path, text).map_err(|e| spawn_err(format!("cannot write its settings: {e}")))?;
        }
        std::fs::create_dir_all(&home).map_err(|e| spawn_err(e.to_string()))?;
        cfg.env.extend(launch.env);
        cfg.read_paths.push(seed_dir.clone());
        // The command line: the fresh home seeded, the variables that name places in it,
        // then the CLI itself in the workspace.
        let mut line = format!("cp -R {}/. \"$HOME\"/ && ", shell_quote(&home.display().to_string()));
        for (var, rel) in &launch.home_vars {
            line.push_str(&format!("export {var}=\"$HOME\"/{}; ", shell_quote(rel)));
        }
        line.push_str(&format!(
            "cd {} && exec {}",
            shell_quote(&workspace_seen.display().to_string()),
            shell_quote(&program.display().to_string())
        ));
        for arg in &launch.args {
            line.push(' ');
            line.push_str(&shell_quote(arg));
        }
        line.push_str(" </dev/null");
        let mut child = sandbox::spawn_agent(&cfg, &line, &seed_dir).map_err(|e| spawn_err(e.to_string()))?;
        let (Some(stdout), Some(stderr)) = (child.take_stdout(), child.take_stderr()) else {
            return Err(spawn_err("its output could not be piped".into()));
        };
        drop(child.take_stdin());
        {
            let tx = tx.clone();
            std::thread::Builder::new()
                .name("medin-cli-out".into())
                .spawn(move || read_lines(stdout, &tx))
                .map_err(|e| spawn_err(e.to_string()))?;
        }
        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        {
            let tail = Arc::clone(&stderr_tail);
            std::thread::Builder::new()
                .name("medin-cli-err".into())
                .spawn(move || crate::agent::process::read_stderr(stderr, tail, Arc::new(AtomicBool::new(false))))
                .map_err(|e| spawn_err(e.to_string()))?;
        }
        drop(tx);
        Ok(CliAgent {
            label,
            adapter,
            workspace: workspace_seen,
            child: Some(child),
            inputs: rx,
            _hooks: hooks,
            _mcp: mcp,
            pending_mcp: HashMap::new(),
            _seed: seed,
            keep,
            stderr_tail,
            queue: VecDeque::new(),
            pending: HashMap::new(),
            allowed: HashMap::new(),
            check: CrossCheck::default(),
            calls: 0,
            done: None,
            provider_failed: None,
            ended: false,
        })
    }

    fn stderr_tail(&self) -> String {
        let tail = self.stderr_tail.lock().unwrap_or_else(|p| p.into_inner());
        tail.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    /// Answers the hook call the runner just judged, or the MCP call medin just ran.
    fn answer(&mut self, action: &Action, receipt: &Receipt) {
        if let Some(answer) = self.pending_mcp.remove(&action.id) {
            let _ = answer.send(super::mcp::McpAnswer {
                error: receipt.status == ReceiptStatus::Error,
                text: serde_json::to_string(receipt).unwrap_or_else(|_| "{}".into()),
            });
            return;
        }
        let Some(answer) = self.pending.remove(&action.id) else {
            return;
        };
        let allow = receipt.status != ReceiptStatus::Error;
        let reason = if allow {
            "allowed by medin".to_string()
        } else {
            let mut r = receipt
                .errors
                .first()
                .map(|e| format!("medin refused this call: {}", e.message))
                .unwrap_or_else(|| "medin refused this call".into());
            if let Some(next) = receipt.next_actions.first() {
                r.push_str(&format!(" ({next})"));
            }
            r
        };
        let _ = answer.try_send(self.adapter.hook_answer(allow, &reason));
    }

    fn hook(&mut self, call: super::hook::HookCall) -> Option<AgentEvent> {
        match call.event {
            HookEvent::Pre => {
                // A call of medin's own tools (`tools: medin`) is judged when medin runs it.
                let tool = call
                    .payload
                    .get("tool_name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if self._mcp.is_some() && tool.starts_with(&format!("mcp__{}__", super::mcp::SERVER_NAME)) {
                    let _ = call
                        .answer
                        .try_send(self.adapter.hook_answer(true, "medin runs its own tools"));
                    return None;
                }
                let hooked = self.adapter.hook_call(&call.payload, &self.workspace);
                self.calls += 1;
                let id = hooked.id.clone().unwrap_or_else(|| format!("cli-{}", self.calls));
                self.check.hooked(&hooked.key);
                self.allowed.entry(hooked.key).or_default().push_back(id.clone());
                self.pending.insert(id.clone(), call.answer);
                let mut action = hooked.action;
                action.id = id;
                Some(AgentEvent::Delegated(action))
            }
            HookEvent::Post => {
                // The call ran: go on, and count what it changed.
                let _ = call.answer.try_send(HookAnswer {
                    exit: 0,
                    stdout: String::new(),
                });
                let hooked = self.adapter.hook_call(&call.payload, &self.workspace);
                let id = hooked
                    .id
                    .or_else(|| self.allowed.get_mut(&hooked.key).and_then(VecDeque::pop_front))?;
                let result = call
                    .payload
                    .get("tool_response")
                    .or_else(|| call.payload.get("tool_result"))
                    .cloned()
                    .unwrap_or(Value::Null);
                Some(AgentEvent::DelegatedDone { id, result })
            }
        }
    }

    fn read(&mut self, line: &str) {
        for seen in self.adapter.read_line(line) {
            match seen {
                Seen::Note(note) => self.queue.push_back(AgentEvent::Note(note)),
                Seen::ModelCall(call) => self.queue.push_back(AgentEvent::ModelCall(call)),
                Seen::ToolUse {
                    key,
                    hook_key,
                    tool,
                    input,
                } => self.check.asked(key, hook_key, tool, input),
                Seen::ToolRan { key } => {
                    if self.adapter.hooks() != Hooks::None {
                        if let Some(action) = self.check.ran(&key, &self.workspace) {
                            self.queue.push_back(AgentEvent::Unguarded(action));
                        }
                    }
                }
                Seen::Done { ok, text } => self.done = Some((ok, text)),
                Seen::ProviderFailed(detail) => self.provider_failed = Some(detail),
            }
        }
    }

    /// The CLI closed its output: how it ended.
    fn end(&mut self) -> AgentEvent {
        self.ended = true;
        let status = self
            .child
            .as_mut()
            .and_then(|c| c.wait_timeout(EXIT_WAIT).ok().flatten());
        if let Some(detail) = self.provider_failed.take() {
            return AgentEvent::HarnessFailed(format!(
                "{} could not reach its model: {detail}; the model endpoint (or the scripted server) failed, not the agent",
                self.label
            ));
        }
        match self.done.take() {
            Some((ok, text)) => AgentEvent::Final(FinalReport {
                code: None,
                result: if ok { FinalResult::Success } else { FinalResult::Error },
                message: if text.trim().is_empty() {
                    format!("{} finished", self.label)
                } else {
                    text
                },
            }),
            None if status.is_some_and(|s| s.success()) && self.adapter.hooks() == Hooks::None => {
                // aider: no machine output; its exit is its report.
                AgentEvent::Final(FinalReport {
                    code: None,
                    result: FinalResult::Success,
                    message: format!("{} finished", self.label),
                })
            }
            None => AgentEvent::Failed(AgentFailure::Exited {
                status: status.map_or_else(|| "still running".into(), |s| s.to_string()),
                stderr_tail: self.stderr_tail(),
            }),
        }
    }
}

/// The check that no call ran around medin: every hook call is counted by its key; a call the
/// CLI reports run, of a tool that changes something (`bash`, `write_file`, `edit_file` once
/// mapped), must have a hook call left to account for it. A read that skipped the hook
/// changed nothing medin judges; a refused call never reports a result that ran.
#[derive(Debug, Default)]
struct CrossCheck {
    /// Hook calls made and not yet matched, per hook key.
    hooked: HashMap<String, u32>,
    /// Tool calls the model asked for, by output key: (hook key, tool, input).
    asked: HashMap<String, (String, String, Value)>,
}

impl CrossCheck {
    fn hooked(&mut self, key: &str) {
        *self.hooked.entry(key.to_string()).or_default() += 1;
    }

    fn asked(&mut self, key: String, hook_key: String, tool: String, input: Value) {
        self.asked.insert(key, (hook_key, tool, input));
    }

    /// The call `key` ran: the action that was never judged, if it was not.
    fn ran(&mut self, key: &str, workspace: &Path) -> Option<Action> {
        let (hook_key, tool, input) = self.asked.get(key).cloned()?;
        let action = medin_action(key, &tool, &input, workspace);
        if !matches!(action.tool.as_str(), "bash" | "write_file" | "edit_file") {
            return None;
        }
        match self.hooked.get_mut(&hook_key) {
            Some(n) if *n > 0 => {
                *n -= 1;
                None
            }
            _ => Some(action),
        }
    }
}

impl Agent for CliAgent {
    fn name(&self) -> String {
        self.label.clone()
    }

    fn next(&mut self, last: Option<(&Action, &Receipt)>, deadline: Instant) -> AgentEvent {
        if let Some((action, receipt)) = last {
            self.answer(action, receipt);
        }
        loop {
            if let Some(event) = self.queue.pop_front() {
                return event;
            }
            if self.ended {
                return AgentEvent::Failed(AgentFailure::NoFinal);
            }
            let wait = deadline.saturating_duration_since(Instant::now());
            match self.inputs.recv_timeout(wait) {
                Ok(Input::Hook(call)) => {
                    if let Some(event) = self.hook(call) {
                        return event;
                    }
                }
                Ok(Input::Mcp(call)) => {
                    self.calls += 1;
                    let id = format!("mcp-{}", self.calls);
                    self.pending_mcp.insert(id.clone(), call.answer);
                    return AgentEvent::Call(Action {
                        id,
                        tool: call.tool,
                        input: crate::tools::ActionInput::Json(call.input),
                    });
                }
                Ok(Input::Line(line)) => self.read(&line),
                Ok(Input::Connection(c)) => return AgentEvent::Connection(c),
                Ok(Input::Eof) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                    // Calls still reported after the output closed are checked too.
                    let end = self.end();
                    self.queue.push_back(end);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    return AgentEvent::Failed(AgentFailure::TimedOut { after: wait });
                }
            }
        }
    }

    fn finish(&mut self) {
        // Every call still waiting is refused (the senders dropped), then the tree ends.
        self.pending.clear();
        self.pending_mcp.clear();
        if let Some(mut child) = self.child.take() {
            let _ = child.kill_tree(KILL_GRACE);
        }
        self.keep.clear();
    }
}

/// Hands everything `from` receives to the agent's loop, as `wrap` makes it, until either
/// side is gone.
fn forward<T: Send + 'static>(
    name: &str,
    from: Receiver<T>,
    to: Sender<Input>,
    wrap: fn(T) -> Input,
) -> std::io::Result<()> {
    std::thread::Builder::new().name(name.into()).spawn(move || {
        while let Ok(item) = from.recv() {
            if to.send(wrap(item)).is_err() {
                break;
            }
        }
    })?;
    Ok(())
}

/// Where the per-attempt settings folders go: a place no other user can write into, on any
/// level of its path (Gemini CLI refuses system settings below a world-writable folder such as
/// `/tmp`): `$XDG_RUNTIME_DIR/medin-cli` when that is private, else `~/.cache/medin/cli`,
/// made owner-only.
fn seed_base() -> std::io::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let private = |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.is_dir() && m.permissions().mode() & 0o022 == 0);
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|d| d.is_absolute() && private(d))
        .map(|d| d.join("medin-cli"))
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|h| h.is_absolute() && private(h))
                .map(|h| h.join(".cache/medin/cli"))
        })
        .unwrap_or_else(std::env::temp_dir);
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&base)?;
    Ok(base)
}

/// Reads the CLI's output line by line (each at most [`MAX_LINE`] bytes) into the loop.
fn read_lines(stdout: impl Read, tx: &Sender<Input>) {
    let mut reader = BufReader::with_capacity(64 * 1024, stdout);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match (&mut reader).take(MAX_LINE).read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                if buf.last() != Some(&b'\n') && buf.len() as u64 >= MAX_LINE {
                    skip_line(&mut reader);
                }
                let text = String::from_utf8_lossy(&buf).trim_end_matches(['\n', '\r']).to_string();
                if text.trim().is_empty() {
                    continue;
                }
                if tx.send(Input::Line(text)).is_err() {
                    return;
                }
            }
        }
    }
    let _ = tx.send(Input::Eof);
}

/// Drops the rest of an over-long line without holding it.
fn skip_line(reader: &mut impl BufRead) {
    loop {
        let (used, found) = match reader.fill_buf() {
            Ok([]) | Err(_) => return,
            Ok(chunk) => match chunk.iter().position(|b| *b == b'\n') {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            },
        };
        reader.consume(used);
        if found {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_call_that_ran_without_a_hook_call_is_unguarded_and_one_with_is_not() {
        let ws = Path::new("/ws");
        let mut check = CrossCheck::default();
        check.asked("t1".into(), "t1".into(), "Bash".into(), json!({"command": "ls"}));
        check.hooked("t1");
        assert_eq!(check.ran("t1", ws), None, "judged");
        assert!(check.ran("t1", ws).is_some(), "one hook call accounts for one run only");
        // A read that skipped the hook changed nothing medin judges.
        check.asked("t2".into(), "t2".into(), "Read".into(), json!({"file_path": "/ws/a"}));
        assert_eq!(check.ran("t2", ws), None);
        // A write that skipped it is caught, with what it wrote.
        check.asked(
            "t3".into(),
            "t3".into(),
            "Write".into(),
            json!({"file_path": "/ws/a", "content": "x"}),
        );
        let unguarded = check.ran("t3", ws).expect("unguarded");
        assert_eq!(unguarded.tool, "write_file");
        // Matched by name and counted (Gemini CLI): two runs need two hook calls.
        check.asked(
            "g1".into(),
            "run_shell_command".into(),
            "run_shell_command".into(),
            json!({"command": "a"}),
        );
        check.asked(
            "g2".into(),
            "run_shell_command".into(),
            "run_shell_command".into(),
            json!({"command": "b"}),
        );
        check.hooked("run_shell_command");
        assert_eq!(check.ran("g1", ws), None);
        assert!(check.ran("g2", ws).is_some());
        // A result for a call never asked for (a forged line) is not blamed on anyone.
        assert_eq!(check.ran("nope", ws), None);
    }

    #[test]
    fn over_long_lines_are_cut_and_the_next_line_is_read_whole() {
        let mut text = vec![b'x'; (MAX_LINE as usize) + 10];
        text.extend_from_slice(b"\nnext\n");
        let (tx, rx) = mpsc::channel();
        read_lines(std::io::Cursor::new(text), &tx);
        let lines: Vec<String> = rx
            .try_iter()
            .filter_map(|i| match i {
                Input::Line(l) => Some(l),
                _ => None,
            })
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].len(), MAX_LINE as usize);
        assert_eq!(lines[1], "next");
    }
}
