//! The process agent: any program, in any language, speaking JSON lines on stdin/stdout
//! (DESIGN §4; `examples/README.md` shows the protocol by example).
//!
//! The program is started with `sh -c COMMAND` in the directory of the file that declared it,
//! with stdin, stdout and stderr piped, **inside the sandbox at the task's isolation**
//! (`sandbox::spawn_agent`): under `strict` it reads only the system directories, the
//! workspace and its own directory (the directory of each file its command names, e.g. the
//! script of `python3 ../agents/a.py`, else the declaring folder; plus `read:`), writes only
//! the workspace and its scratch directory (`HOME`, `TMPDIR`), and keeps the network to reach
//! its model (`agent_isolation: strict+network` when the task's commands have none). Its
//! environment is scrubbed except `MEDIN_TASK_ID`, `MEDIN_WORKSPACE`, every `*_API_KEY` and
//! `*_BASE_URL` of medin's ([`PASSED_ENV_SUFFIXES`]), the names of `env:` and the host
//! variables the task passes (`pass_env:`, as its commands get them). A task with a
//! fixed root (`environment.root: /app`) shows a strict agent the workspace at `/app`, like its
//! commands: the task message's `workspace` and `MEDIN_WORKSPACE` say `/app`; the agent still
//! starts in its own directory (its command names its script relative to it). An agent
//! confined more weakly than `strict` sees the host's filesystem: `MEDIN_WORKSPACE` is then
//! the host path, while the task message keeps `/app`, the path its tool calls and commands
//! use. With
//! `agent_isolation: none` (for developing an agent) it starts as before confinement: medin's
//! whole environment, its own session and process group, no walls. medin writes:
//!
//! - `{"type":"task","task_id":..,"prompt":..,"tools":[..],"limits":{..},"workspace":..}` once;
//! - `{"type":"tool_result","id":..,"receipt":{..}}` after every call (`"id": null` for the
//!   answer to a malformed line);
//! - `{"type":"feedback",...}` between rounds of multi-round kinds.
//!
//! and reads `tool_call`, `final` and `usage` lines. Blank lines are ignored; any other line is
//! [`AgentEvent::Malformed`]. Exiting before the final report is [`AgentFailure::Exited`] with
//! the tail of stderr — also when a process it left keeps its stdout open (a silent agent is
//! checked for having exited every [`EXIT_POLL`]); no line within the reply timeout is [`AgentFailure::TimedOut`]. The
//! harness never blocks on the agent: stdout and stderr are read by threads, stdin is written
//! by a thread (an agent that stops reading cannot stall medin), and a closed stdin is not an
//! error. [`Agent::finish`] (or drop) ends the agent's whole process tree — daemons that left
//! its session and cleared their environment included — SIGTERM, a 2 s grace, SIGKILL; the
//! tree also ends if medin dies (under a guardian, or as a PID namespace under `strict`).
//!
//! **What the agent can make medin hold** is bounded, whatever it prints: a line is read up to
//! [`MAX_LINE_BYTES`] (the rest is counted, dropped, and the line reported malformed), blank
//! lines are dropped as they are read, at most [`LINE_QUEUE`] lines wait for the runner (then the
//! reader stops reading and the agent's own writes block), stderr keeps a tail of
//! [`STDERR_TAIL_BYTES`], and at most [`WRITE_QUEUE`] messages wait for an agent that does not
//! read its stdin (one more is [`AgentFailure::NotReading`]). Numbers are checked: a token count must be a whole number from 0 to
//! [`MAX_REPORTED_TOKENS`], a tool name at most [`MAX_TOOL_NAME`] bytes and a call id at most
//! [`MAX_CALL_ID`] bytes, else the line is malformed.
//!
//! The agent is the party under test, not an action: its program is confined by the sandbox
//! but not passed through the guard; its actions go through guard → sandbox like any other.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::sandbox::{self, Isolation, PipedChild, SandboxConfig};
use crate::spec::{AgentGiven, AgentRef, DurationSpec, FinalReport, FinalResult};
use crate::tools::{ActionInput, Receipt};

use super::kind::{AgentConfinement, AgentContext, AgentKind};
use super::registry::{self, AgentRefError};
use super::{Action, Agent, AgentEvent, AgentFailure, TaskBrief, Usage};

/// The options of `agent: {process: {..}}`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProcessOptions {
    /// Shell command line that starts the agent. It runs with the directory of the file that
    /// declared it as working directory.
    pub command: String,
    /// How long the agent may take to answer one message (default 30s).
    #[serde(default)]
    pub reply_timeout: Option<DurationSpec>,
    /// Names of environment variables passed to the agent on top of the ones it always gets
    /// (`*_API_KEY`, `*_BASE_URL`, `MEDIN_TASK_ID`, `MEDIN_WORKSPACE`); e.g. `[HTTPS_PROXY,
    /// SSL_CERT_FILE]`. Under `agent_isolation: none` the agent gets medin's whole environment.
    #[serde(default)]
    pub env: Vec<String>,
    /// More paths the agent may read (strict isolation), relative to the declaring file:
    /// besides the workspace, the system directories and the directory of its script.
    #[serde(default)]
    pub read: Vec<PathBuf>,
    /// How the agent process itself is confined; default: the task's isolation. `none` is for
    /// developing an agent (it then runs with medin's environment, unwalled) and every receipt
    /// says so.
    #[serde(default)]
    pub agent_isolation: Option<Isolation>,
}

/// The `process` entry of the registry: `process:CMD`, `{process: CMD}` or
/// `{process: {command: CMD, reply_timeout: 10s, env: [NAMES], agent_isolation: none}}`.
pub(crate) fn configure(written: &AgentRef) -> Result<Arc<dyn AgentKind>, AgentRefError> {
    let options = match &written.given {
        AgentGiven::Nothing => ProcessOptions::command(String::new()),
        AgentGiven::Arg(command) => ProcessOptions::command(command.clone()),
        AgentGiven::Options(options) => registry::options(written, options)?,
    };
    if options.command.trim().is_empty() {
        return Err(AgentRefError::invalid(
            written,
            "has no command; write e.g. `process:python3 agent.py` or `{process: {command: python3 agent.py}}`".into(),
        ));
    }
    if let Some(bad) = options.env.iter().find(|n| !is_env_name(n)) {
        return Err(AgentRefError::invalid(
            written,
            format!("names `{bad}` in `env`, which is not a variable name; give names such as HTTPS_PROXY"),
        ));
    }
    Ok(Arc::new(ProcessKind {
        command: options.command.trim().to_string(),
        reply_timeout: options.reply_timeout.map(|d| d.0).unwrap_or(DEFAULT_REPLY_TIMEOUT),
        env: options.env,
        read: options.read,
        isolation: options.agent_isolation,
    }))
}

impl ProcessOptions {
    fn command(command: String) -> Self {
        ProcessOptions {
            command,
            reply_timeout: None,
            env: Vec::new(),
            read: Vec::new(),
            agent_isolation: None,
        }
    }
}

fn is_env_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Suffixes of the variables every confined process agent receives from medin's environment:
/// what a real agent needs to reach its model (`OPENAI_API_KEY`, `ANTHROPIC_BASE_URL`, ...).
pub const PASSED_ENV_SUFFIXES: [&str; 2] = ["_API_KEY", "_BASE_URL"];

/// The process kind: a program of its own speaking JSON lines, started inside the sandbox at
/// the task's isolation (or its own `agent_isolation`).
#[derive(Debug)]
struct ProcessKind {
    command: String,
    reply_timeout: Duration,
    env: Vec<String>,
    read: Vec<PathBuf>,
    isolation: Option<Isolation>,
}

impl ProcessKind {
    fn level(&self, sandbox: &SandboxConfig) -> Isolation {
        self.isolation.unwrap_or(sandbox.isolation)
    }

    /// The agent's own sandbox: the attempt's workspace, limits and level, the network on (it
    /// must reach its model), its own directory readable, the variables it needs.
    fn agent_sandbox(&self, context: &AgentContext<'_>, sandbox: &SandboxConfig) -> SandboxConfig {
        let base_dir = context.base_dir();
        let brief = context.brief();
        let mut cfg = sandbox.clone();
        cfg.isolation = self.level(sandbox);
        cfg.network = true;
        cfg.cgroup = Some(false);
        cfg.write_paths.clear();
        // The task's fixed paths (`environment.root: /app`) exist only in a strict view: an
        // agent process confined more weakly (`agent_isolation: process`) runs on the host's
        // filesystem and finds the workspace at its host path, which `MEDIN_WORKSPACE` names;
        // its tool calls may still name `/app/x`, as the task message says.
        if cfg.isolation != Isolation::Strict {
            cfg.root = None;
            cfg.mounts.clear();
        }
        // The host variables the task passes (`pass_env:`), like its commands.
        let passed: Vec<(String, String)> = sandbox
            .env
            .iter()
            .filter(|(k, _)| sandbox.passed_env.contains(k))
            .cloned()
            .collect();
        cfg.env = vec![
            ("MEDIN_TASK_ID".into(), brief.task_id.clone()),
            ("MEDIN_WORKSPACE".into(), cfg.workspace_seen().display().to_string()),
        ];
        if cfg.isolation != Isolation::None {
            let passed = |name: &str| {
                PASSED_ENV_SUFFIXES.iter().any(|s| name.ends_with(s)) || self.env.iter().any(|n| n == name)
            };
            let mut vars: Vec<(String, String)> = std::env::vars().filter(|(k, _)| passed(k)).collect();
            vars.sort();
            // The keys it is handed are masked wherever medin writes, as `pass_env:` values are.
            for (name, value) in vars.iter().filter(|(k, _)| k.ends_with("_API_KEY")) {
                crate::secrets::register(name, value);
            }
            // The task's ids last: no variable of medin's environment replaces them.
            vars.append(&mut cfg.env);
            cfg.env = vars;
        }
        // After medin's own variables: a passed name is never one of medin's (`MEDIN_*`).
        cfg.env.extend(passed);
        // What lies in the workspace is readable already (and cannot be mounted there).
        let workspace = sandbox
            .workspace
            .canonicalize()
            .unwrap_or_else(|_| sandbox.workspace.clone());
        let own = agent_dirs(&self.command, base_dir)
            .into_iter()
            .chain(self.read.iter().map(|p| base_dir.join(p)))
            .filter(|p| !p.canonicalize().unwrap_or_else(|_| p.clone()).starts_with(&workspace));
        cfg.read_paths.extend(own);
        cfg
    }
}

impl AgentKind for ProcessKind {
    fn label(&self) -> String {
        format!("process:{}", self.command)
    }

    fn confinement(&self, sandbox: &SandboxConfig) -> AgentConfinement {
        match self.level(sandbox) {
            // Its process has the network its commands do not have.
            Isolation::Strict if !sandbox.network => AgentConfinement::Networked(Isolation::Strict),
            level => AgentConfinement::Sandboxed(level),
        }
    }

    fn start(&self, context: &AgentContext<'_>, sandbox: &SandboxConfig) -> Result<Box<dyn Agent>, AgentFailure> {
        let cfg = self.agent_sandbox(context, sandbox);
        let agent = ProcessAgent::spawn_in(
            &cfg,
            &self.command,
            context.base_dir(),
            context.brief(),
            self.reply_timeout,
        )?;
        Ok(Box::new(agent))
    }
}

/// The directories of the files `command` names (its script: `python3 agent.py`, `./agent`),
/// resolved from `base_dir`; `base_dir` itself when it names none (a program on `PATH`).
fn agent_dirs(command: &str, base_dir: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for word in command.split_whitespace() {
        let word = word.trim_matches(|c| c == '"' || c == '\'');
        if word.is_empty() || word.starts_with('-') {
            continue;
        }
        let path = base_dir.join(word);
        if !path.is_file() {
            continue;
        }
        if let Some(dir) = path.canonicalize().ok().and_then(|p| p.parent().map(Path::to_path_buf)) {
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    if dirs.is_empty() {
        dirs.push(base_dir.to_path_buf());
    }
    dirs
}

/// How long an agent may take to send its next line, unless the spec says otherwise.
pub const DEFAULT_REPLY_TIMEOUT: Duration = Duration::from_secs(30);
/// Time between SIGTERM and SIGKILL when the agent is finished.
pub const KILL_GRACE: Duration = Duration::from_secs(2);
/// Lines of stderr kept for the failure message.
pub const STDERR_TAIL_LINES: usize = 20;
/// Bytes of stderr kept for the failure message (the last ones).
pub const STDERR_TAIL_BYTES: usize = 4096;
/// Longest line read from an agent (4 MiB); the rest of a longer line is counted and dropped,
/// and the line is reported as malformed.
pub const MAX_LINE_BYTES: u64 = 4 * 1024 * 1024;
/// Lines read ahead of the runner; beyond them the reader waits (and so does the agent).
pub const LINE_QUEUE: usize = 2;
/// Messages held for an agent that is not reading its stdin (beyond what its pipe holds).
pub const WRITE_QUEUE: usize = 8;
/// Largest token count one `usage` message may report.
pub const MAX_REPORTED_TOKENS: u64 = 1_000_000_000_000;
/// Longest tool name in a `tool_call`, in bytes.
pub const MAX_TOOL_NAME: usize = 128;
/// Longest call id in a `tool_call`, in bytes.
pub const MAX_CALL_ID: usize = 256;
/// How often a silent agent is checked for having exited (and how long its last lines are
/// waited for once it has).
pub const EXIT_POLL: Duration = Duration::from_millis(250);
/// Longest malformed line quoted back (characters).
pub const MALFORMED_LINE_MAX: usize = 500;

enum Out {
    /// A line without its newline; `cut` bytes past [`MAX_LINE_BYTES`] were dropped.
    Line {
        text: String,
        cut: u64,
    },
    Eof,
}

/// A running process agent.
pub struct ProcessAgent {
    command: String,
    child: PipedChild,
    pgid: i32,
    lines: Receiver<Out>,
    writer: Option<SyncSender<String>>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    stderr_done: Arc<AtomicBool>,
    reply_timeout: Duration,
    failed: Option<AgentFailure>,
    finished: bool,
}

impl std::fmt::Debug for ProcessAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessAgent")
            .field("command", &self.command)
            .field("pgid", &self.pgid)
            .finish_non_exhaustive()
    }
}

impl ProcessAgent {
    /// Starts `command` in `base_dir`, unconfined (`agent_isolation: none`: medin's whole
    /// environment, its own session and process group, its tree ended with it), and sends it
    /// the task line.
    pub fn spawn(
        command: &str,
        base_dir: &Path,
        brief: &TaskBrief,
        reply_timeout: Duration,
    ) -> Result<Self, AgentFailure> {
        let mut cfg = SandboxConfig::new(base_dir);
        cfg.isolation = Isolation::None;
        cfg.env.push(("MEDIN_TASK_ID".into(), brief.task_id.clone()));
        cfg.env
            .push(("MEDIN_WORKSPACE".into(), brief.workspace.display().to_string()));
        Self::spawn_in(&cfg, command, base_dir, brief, reply_timeout)
    }

    /// Starts `command` in `base_dir` confined by `cfg` (`sandbox::spawn_agent`: its level, its
    /// workspace, read paths, environment and limits), and sends it the task line.
    pub fn spawn_in(
        cfg: &SandboxConfig,
        command: &str,
        base_dir: &Path,
        brief: &TaskBrief,
        reply_timeout: Duration,
    ) -> Result<Self, AgentFailure> {
        let spawn_err = |reason: String| AgentFailure::Spawn {
            command: command.to_string(),
            reason,
        };
        let mut child = sandbox::spawn_agent(cfg, command, base_dir).map_err(|e| spawn_err(e.to_string()))?;
        let pgid = i32::try_from(child.pid()).map_err(|_| spawn_err("process id out of range".into()))?;
        let (Some(stdin), Some(stdout), Some(stderr)) = (child.take_stdin(), child.take_stdout(), child.take_stderr())
        else {
            return Err(spawn_err("its stdin/stdout/stderr could not be piped".into()));
        };

        let (line_tx, lines) = mpsc::sync_channel(LINE_QUEUE);
        thread::spawn(move || read_lines(stdout, line_tx));
        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        let stderr_done = Arc::new(AtomicBool::new(false));
        {
            let (tail, done) = (Arc::clone(&stderr_tail), Arc::clone(&stderr_done));
            thread::spawn(move || read_stderr(stderr, tail, done));
        }
        let (writer, write_rx) = mpsc::sync_channel::<String>(WRITE_QUEUE);
        thread::spawn(move || write_lines(stdin, write_rx));

        let mut agent = ProcessAgent {
            command: command.to_string(),
            child,
            pgid,
            lines,
            writer: Some(writer),
            stderr_tail,
            stderr_done,
            reply_timeout,
            failed: None,
            finished: false,
        };
        let mut task = serde_json::to_value(brief).unwrap_or_else(|_| json!({}));
        if let Value::Object(map) = &mut task {
            map.insert("type".into(), json!("task"));
        }
        agent.send(&task);
        Ok(agent)
    }

    /// The process group id (equal to the agent's pid).
    pub fn pgid(&self) -> i32 {
        self.pgid
    }

    /// Queues one JSON line for the agent's stdin. A closed stdin is not an error here: the
    /// next read reports how the agent ended. A full queue is: the agent is not reading.
    fn send(&mut self, msg: &Value) {
        if let Some(w) = &self.writer {
            match w.try_send(format!("{msg}\n")) {
                Ok(()) => {}
                Err(TrySendError::Disconnected(_)) => self.writer = None,
                Err(TrySendError::Full(_)) => {
                    self.writer = None;
                    self.failed
                        .get_or_insert(AgentFailure::NotReading { unread: WRITE_QUEUE });
                }
            }
        }
    }

    fn exited(&mut self) -> AgentFailure {
        // stdout closes slightly before the process is gone; give it a moment.
        let deadline = Instant::now() + Duration::from_secs(1);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(st)) => break describe_status(st),
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(10)),
                Ok(None) => break "closed its stdout but is still running".to_string(),
                Err(e) => break format!("status unknown: {e}"),
            }
        };
        let deadline = Instant::now() + Duration::from_millis(500);
        while !self.stderr_done.load(Ordering::Acquire) && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(10));
        }
        let tail = match self.stderr_tail.lock() {
            Ok(t) => t.iter().cloned().collect::<Vec<_>>().join("\n"),
            Err(p) => p.into_inner().iter().cloned().collect::<Vec<_>>().join("\n"),
        };
        AgentFailure::Exited {
            status,
            stderr_tail: if tail.is_empty() { "(empty)".into() } else { tail },
        }
    }

    fn fail(&mut self, failure: AgentFailure) -> AgentEvent {
        self.failed = Some(failure.clone());
        AgentEvent::Failed(failure)
    }

    fn kill_group(&mut self) {
        self.writer = None;
        let _ = self.child.kill_tree(KILL_GRACE);
    }
}

/// Whether any live (non-zombie) process is in group `pgid`.
pub fn group_alive(pgid: i32) -> bool {
    sandbox::group_alive(pgid)
}

fn describe_status(st: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (st.code(), st.signal()) {
        (Some(c), _) => format!("exit code {c}"),
        (None, Some(s)) => format!("killed by signal {s}"),
        _ => st.to_string(),
    }
}

/// Reads stdout into lines of at most [`MAX_LINE_BYTES`], dropping blank lines, and hands them
/// to the runner through a queue of [`LINE_QUEUE`]: memory stays bounded whatever the agent
/// prints, and an agent that floods faster than medin reads is slowed by its own full pipe.
fn read_lines(stdout: impl Read, tx: SyncSender<Out>) {
    let mut reader = BufReader::with_capacity(64 * 1024, stdout);
    let cap = usize::try_from(MAX_LINE_BYTES).unwrap_or(usize::MAX);
    let mut line: Vec<u8> = Vec::new();
    let mut cut = 0u64;
    // Hands a finished line over; false when the runner is gone.
    let emit = |line: &mut Vec<u8>, cut: &mut u64| -> bool {
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        let blank = *cut == 0 && line.iter().all(u8::is_ascii_whitespace);
        let taken = std::mem::take(line);
        let dropped = std::mem::take(cut);
        if blank {
            return true;
        }
        let text = String::from_utf8(taken).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        tx.send(Out::Line { text, cut: dropped }).is_ok()
    };
    loop {
        let chunk = match reader.fill_buf() {
            Ok([]) => break,
            Ok(chunk) => chunk,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let (segment, ends) = match chunk.iter().position(|b| *b == b'\n') {
            Some(i) => (&chunk[..i], i + 1),
            None => (chunk, chunk.len()),
        };
        let room = cap.saturating_sub(line.len()).min(segment.len());
        line.extend_from_slice(&segment[..room]);
        cut += (segment.len() - room) as u64;
        let newline = ends > segment.len();
        reader.consume(ends);
        if newline && !emit(&mut line, &mut cut) {
            return;
        }
    }
    if (!line.is_empty() || cut > 0) && !emit(&mut line, &mut cut) {
        return;
    }
    let _ = tx.send(Out::Eof);
}

pub(crate) fn read_stderr(stderr: impl Read, tail: Arc<Mutex<VecDeque<String>>>, done: Arc<AtomicBool>) {
    let mut reader = BufReader::new(stderr);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        // Long lines arrive in 64 KiB pieces: only the tail matters.
        match (&mut reader).take(64 * 1024).read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let line = String::from_utf8_lossy(&buf).trim_end_matches(['\n', '\r']).to_string();
                let mut t = match tail.lock() {
                    Ok(t) => t,
                    Err(p) => p.into_inner(),
                };
                t.push_back(line_tail(line, STDERR_TAIL_BYTES));
                let mut bytes: usize = t.iter().map(String::len).sum();
                while t.len() > STDERR_TAIL_LINES || (bytes > STDERR_TAIL_BYTES && t.len() > 1) {
                    bytes -= t.pop_front().map(|l| l.len()).unwrap_or(0);
                }
            }
        }
    }
    done.store(true, Ordering::Release);
}

/// The last `max` bytes of `line` (at a character boundary), marked with `…` when cut.
fn line_tail(line: String, max: usize) -> String {
    if line.len() <= max {
        return line;
    }
    let mut start = line.len() - max;
    while !line.is_char_boundary(start) {
        start += 1;
    }
    format!("…{}", &line[start..])
}

fn write_lines(mut stdin: impl Write, rx: Receiver<String>) {
    for line in rx {
        if stdin.write_all(line.as_bytes()).and_then(|_| stdin.flush()).is_err() {
            // EPIPE: the agent closed stdin or exited; the reader reports how it ended.
            return;
        }
    }
}

fn cut(line: &str) -> String {
    if line.chars().count() <= MALFORMED_LINE_MAX {
        line.to_string()
    } else {
        let mut s: String = line.chars().take(MALFORMED_LINE_MAX).collect();
        s.push('…');
        s
    }
}

/// Parses one line the agent wrote. `Ok(None)` for a blank line.
pub fn parse_line(line: &str) -> Option<AgentEvent> {
    if line.trim().is_empty() {
        return None;
    }
    let malformed = |reason: String| {
        Some(AgentEvent::Malformed {
            line: cut(line),
            reason,
        })
    };
    let v: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => return malformed(format!("not JSON ({e}); every line must be one JSON message")),
    };
    let Some(obj) = v.as_object() else {
        return malformed("not a JSON object; send {\"type\": ..} messages".into());
    };
    let Some(kind) = obj.get("type").and_then(Value::as_str) else {
        return malformed("missing string field `type` (tool_call, final or usage)".into());
    };
    match kind {
        "tool_call" => {
            let id = match obj.get("id") {
                Some(Value::String(s)) if !s.is_empty() => s.clone(),
                Some(Value::Number(n)) => n.to_string(),
                _ => return malformed("tool_call needs a non-empty `id`".into()),
            };
            if id.len() > MAX_CALL_ID {
                return malformed(format!("tool_call `id` is {} bytes; at most {MAX_CALL_ID}", id.len()));
            }
            let Some(tool) = obj.get("tool").and_then(Value::as_str).filter(|t| !t.is_empty()) else {
                return malformed("tool_call needs a string `tool`".into());
            };
            if tool.len() > MAX_TOOL_NAME {
                return malformed(format!(
                    "tool_call `tool` is {} bytes; tool names are at most {MAX_TOOL_NAME}",
                    tool.len()
                ));
            }
            let input = match obj.get("input") {
                None => ActionInput::Json(json!({})),
                Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
                    Ok(v @ Value::Object(_)) => ActionInput::Json(v),
                    _ => ActionInput::Raw(s.clone()),
                },
                Some(other) => ActionInput::Json(other.clone()),
            };
            Some(AgentEvent::Call(Action {
                id,
                tool: tool.to_string(),
                input,
            }))
        }
        "final" => {
            let result = match obj.get("result").and_then(Value::as_str) {
                Some("success") => FinalResult::Success,
                Some("error") => FinalResult::Error,
                Some("issue") => FinalResult::Issue,
                _ => return malformed("final needs `result`: \"success\", \"error\" or \"issue\"".into()),
            };
            let message = match obj.get("message") {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
            };
            let code = obj.get("code").and_then(|c| serde_json::from_value(c.clone()).ok());
            Some(AgentEvent::Final(FinalReport { code, result, message }))
        }
        "usage" => {
            // Whole numbers from 0 to a bound no real count reaches: a negative, fractional,
            // textual or absurd count is not a count.
            let count = |key: &str| {
                obj.get(key)
                    .and_then(Value::as_u64)
                    .filter(|n| *n <= MAX_REPORTED_TOKENS)
            };
            let (Some(input_tokens), Some(output_tokens)) = (count("input_tokens"), count("output_tokens")) else {
                return malformed(format!(
                    "usage needs `input_tokens` and `output_tokens` as whole numbers from 0 to {MAX_REPORTED_TOKENS}"
                ));
            };
            Some(AgentEvent::Usage(Usage {
                input_tokens,
                output_tokens,
            }))
        }
        "reply" => match obj.get("text").and_then(Value::as_str) {
            Some(text) => Some(AgentEvent::Reply(text.to_string())),
            None => malformed("reply needs `text`: the agent's reply as a string".into()),
        },
        other => malformed(format!(
            "unknown message type `{other}`; expected tool_call, final, reply or usage"
        )),
    }
}

impl Agent for ProcessAgent {
    fn name(&self) -> String {
        format!("process:{}", self.command)
    }

    fn next(&mut self, last: Option<(&Action, &Receipt)>, task_deadline: Instant) -> AgentEvent {
        if let Some(f) = &self.failed {
            return AgentEvent::Failed(f.clone());
        }
        if let Some((action, receipt)) = last {
            let id = if action.id.is_empty() {
                Value::Null
            } else {
                json!(action.id)
            };
            let receipt = serde_json::to_value(receipt).unwrap_or_else(
                |e| json!({"status": "error", "errors": [{"code": "PARSE_ERROR", "message": e.to_string()}]}),
            );
            self.send(&json!({ "type": "tool_result", "id": id, "receipt": receipt }));
            if let Some(f) = &self.failed {
                return AgentEvent::Failed(f.clone());
            }
        }
        let started = Instant::now();
        let deadline = (started + self.reply_timeout).min(task_deadline);
        // When the agent itself was seen gone while its stdout stayed open (a child it left
        // holds the pipe): the lines it wrote before it went still come in until then.
        let mut gone_by: Option<Instant> = None;
        loop {
            let now = Instant::now();
            let left = deadline.saturating_duration_since(now);
            let slice = match gone_by {
                Some(by) => by.saturating_duration_since(now).min(left),
                None => left.min(EXIT_POLL),
            };
            match self.lines.recv_timeout(slice) {
                Ok(Out::Line { text, cut: 0 }) => {
                    if let Some(event) = parse_line(&text) {
                        return event;
                    }
                }
                Ok(Out::Line { text, cut: dropped }) => {
                    return AgentEvent::Malformed {
                        reason: format!(
                            "a line of {} bytes, over the {} MiB limit for one message; the rest was dropped",
                            text.len() as u64 + dropped,
                            MAX_LINE_BYTES / (1024 * 1024)
                        ),
                        line: cut(&text),
                    };
                }
                Ok(Out::Eof) | Err(RecvTimeoutError::Disconnected) => {
                    let f = self.exited();
                    return self.fail(f);
                }
                Err(RecvTimeoutError::Timeout) if gone_by.is_some() && Instant::now() < deadline => {
                    let f = self.exited();
                    return self.fail(f);
                }
                Err(RecvTimeoutError::Timeout) if Instant::now() < deadline => {
                    // Still silent: a crashed agent is an exit, not a hang, even when what it
                    // left behind keeps its stdout open.
                    if matches!(self.child.try_wait(), Ok(Some(_))) {
                        gone_by = Some(Instant::now() + EXIT_POLL);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    let after = self.reply_timeout.min(started.elapsed());
                    return self.fail(AgentFailure::TimedOut { after });
                }
            }
        }
    }

    fn feedback(&mut self, feedback: &Value) {
        let msg = match feedback {
            Value::Object(map) => {
                let mut m = map.clone();
                m.insert("type".into(), json!("feedback"));
                Value::Object(m)
            }
            other => json!({ "type": "feedback", "feedback": other }),
        };
        self.send(&msg);
    }

    fn finish(&mut self) {
        if !self.finished {
            self.finished = true;
            self.kill_group();
        }
    }
}

impl Drop for ProcessAgent {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agents_own_directory_is_the_one_of_the_script_its_command_names() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("agents/lib")).unwrap();
        std::fs::create_dir_all(root.join("golden")).unwrap();
        std::fs::write(root.join("agents/a.py"), "").unwrap();
        std::fs::write(root.join("agents/lib/b.py"), "").unwrap();
        let golden = root.join("golden");
        assert_eq!(agent_dirs("python3 ../agents/a.py", &golden), vec![root.join("agents")]);
        assert_eq!(
            agent_dirs("python3 -u '../agents/a.py' --with ../agents/lib/b.py", &golden),
            vec![root.join("agents"), root.join("agents/lib")]
        );
        // A directory is not a script; a program on PATH names no file: the declaring folder.
        assert_eq!(agent_dirs("my-agent ../agents", &golden), vec![golden.clone()]);
        assert!(is_env_name("HTTPS_PROXY") && !is_env_name("1X") && !is_env_name("A-B") && !is_env_name(""));
    }

    #[test]
    fn lines_parse_into_events() {
        assert_eq!(parse_line("   "), None);
        assert!(matches!(
            parse_line(r#"{"type":"tool_call","id":"1","tool":"bash","input":{"command":"ls"}}"#),
            Some(AgentEvent::Call(Action { ref id, ref tool, input: ActionInput::Json(_) })) if id == "1" && tool == "bash"
        ));
        assert!(matches!(
            parse_line(r#"{"type":"tool_call","id":"1","tool":"bash","input":"{\"command\":\"ls\"}"}"#),
            Some(AgentEvent::Call(Action {
                input: ActionInput::Json(_),
                ..
            }))
        ));
        assert_eq!(
            parse_line(r#"{"type":"tool_call","id":"2","tool":"bash","input":"ls -la"}"#),
            Some(AgentEvent::Call(Action {
                id: "2".into(),
                tool: "bash".into(),
                input: ActionInput::Raw("ls -la".into())
            }))
        );
        assert_eq!(
            parse_line(r#"{"type":"tool_call","id":3,"tool":"list_dir"}"#),
            Some(AgentEvent::Call(Action {
                id: "3".into(),
                tool: "list_dir".into(),
                input: ActionInput::Json(json!({}))
            }))
        );
        assert_eq!(
            parse_line(r#"{"type":"final","result":"issue","message":"which file?"}"#),
            Some(AgentEvent::Final(FinalReport {
                code: None,
                result: FinalResult::Issue,
                message: "which file?".into()
            }))
        );
        assert_eq!(
            parse_line(r#"{"type":"usage","input_tokens":10,"output_tokens":2}"#),
            Some(AgentEvent::Usage(Usage {
                input_tokens: 10,
                output_tokens: 2
            }))
        );
        for bad in [
            "hello",
            "[1]",
            r#"{"id":"1"}"#,
            r#"{"type":"tool_call","tool":"bash"}"#,
            r#"{"type":"tool_call","id":"1"}"#,
            r#"{"type":"final","result":"done"}"#,
            r#"{"type":"usage","input_tokens":-1,"output_tokens":2}"#,
            r#"{"type":"thinking"}"#,
        ] {
            assert!(matches!(parse_line(bad), Some(AgentEvent::Malformed { .. })), "{bad}");
        }
        let long = "x".repeat(2000);
        let Some(AgentEvent::Malformed { line, .. }) = parse_line(&long) else {
            panic!()
        };
        assert_eq!(line.chars().count(), MALFORMED_LINE_MAX + 1);
    }
}
