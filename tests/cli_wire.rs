//! The real Codex CLI, Gemini CLI and aider, run directly (no medin) in a bare environment
//! against the scripted server of `support::cli_server`: each must write a file, read it back
//! and answer, over its own wire format; Codex's and Gemini's command hooks must be able to
//! deny a command and have the denial reach the model.
//!
//! The CLIs come from medin's own cache (`medin agents install`, `support::cli_agent`): a CLI
//! that cannot be installed here skips its test, unless `MEDIN_REQUIRE_CLI_AGENTS=1`.
mod support;

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::cli_server::{CliServer, Step, ToolResult};

/// Every CLI run is killed (its whole process group) after this.
const RUN_LIMIT: Duration = Duration::from_secs(240);

const HELLO_PROMPT: &str = "write hello.txt containing hello; cat hello.txt; say done";
const HOOK_PROMPT: &str = "hook probe: write x.txt then y.txt; say done";

fn hello_script() -> (&'static str, Vec<Step>) {
    (
        "write hello.txt containing hello",
        vec![
            Step::WriteFile("hello.txt".into(), "hello\n".into()),
            Step::Shell("cat hello.txt".into()),
            Step::Say("done".into()),
        ],
    )
}

fn hook_script() -> (&'static str, Vec<Step>) {
    (
        "hook probe",
        vec![
            Step::Shell("echo forbidden > x.txt".into()),
            Step::Shell("echo ok > y.txt".into()),
            Step::Say("done".into()),
        ],
    )
}

/// A finished CLI run.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

impl Run {
    fn text(&self) -> String {
        format!(
            "exit {:?} after {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.elapsed, self.stdout, self.stderr
        )
    }

    /// The stdout lines that are JSON objects.
    fn json_lines(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(Value::is_object)
            .collect()
    }
}

/// Runs `program args` in `cwd` with only `PATH`, `HOME` and `env`, stdin empty, in a process
/// group of its own that is killed after [`RUN_LIMIT`].
fn run(program: &Path, args: &[&str], env: &[(&str, String)], cwd: &Path, home: &Path) -> Run {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", home)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let start = Instant::now();
    let mut child = cmd.spawn().expect("the CLI starts");
    let pid = child.id() as i32;
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            String::from_utf8_lossy(&buf).to_string()
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if start.elapsed() > RUN_LIMIT {
            // SAFETY: signals the process group this test made; no memory is touched.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let elapsed = start.elapsed();
    // Whatever the CLI left running in its group goes too (the pipes close with it).
    // SAFETY: as above.
    unsafe { libc::kill(-pid, libc::SIGKILL) };
    Run {
        code: status.and_then(|s| s.code()),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
        elapsed,
    }
}

/// A command hook (bash) that appends its stdin, one line, to `log`, and prints `deny` when
/// the input mentions `forbidden`, else `allow` (which may be empty).
fn hook_script_file(dir: &Path, log: &Path, deny: &str, allow: &str) -> PathBuf {
    let path = dir.join("hook.sh");
    let script = format!(
        "#!/bin/bash\ninput=$(cat)\nprintf '%s\\n' \"$input\" | tr -d '\\n' >> '{log}'\necho >> '{log}'\n\
         if printf '%s' \"$input\" | grep -q forbidden; then\n  printf '%s\\n' '{deny}'\nelse\n  printf '%s' '{allow}'\nfi\nexit 0\n",
        log = log.display()
    );
    support::write(&path, &script);
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    path
}

/// The hook's stdin, one JSON value per call.
fn hook_inputs(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("hook stdin is not JSON ({e}): {l}")))
        .collect()
}

/// What the server saw, for assertion messages.
fn seen(server: &CliServer) -> String {
    server
        .requests()
        .iter()
        .map(|s| {
            format!(
                "{} {}",
                s.path,
                s.body.to_string().chars().take(400).collect::<String>()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn report(cli: &str, run: &Run, server: &CliServer) {
    println!(
        "{cli}: exit {:?} in {:.1}s, {} requests, tool results {:?}",
        run.code,
        run.elapsed.as_secs_f64(),
        server.requests().len(),
        server.tool_results()
    );
}

// ---------------------------------------------------------------- Codex

struct Codex {
    bin: PathBuf,
    home: tempfile::TempDir,
    work: tempfile::TempDir,
}

impl Codex {
    fn new(server: &CliServer, extra_config: &str) -> Option<Self> {
        let bin = support::cli_agent("codex")?;
        let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let config = format!(
            "model = \"mock-model\"\nmodel_provider = \"mock\"\n\n[analytics]\nenabled = false\n\n\
             [model_providers.mock]\nname = \"mock\"\nbase_url = \"{}/v1\"\nenv_key = \"MOCK_API_KEY\"\nwire_api = \"responses\"\n\n{extra_config}",
            server.url
        );
        support::write(&home.path().join(".codex/config.toml"), &config);
        Some(Codex { bin, home, work })
    }

    fn run(&self, prompt: &str, extra: &[&str]) -> Run {
        let mut args = vec![
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
            "--disable",
            "plugins",
        ];
        args.extend_from_slice(extra);
        args.push(prompt);
        let env = [
            ("CODEX_HOME", self.home.path().join(".codex").display().to_string()),
            ("MOCK_API_KEY", "dummy".to_string()),
        ];
        run(&self.bin, &args, &env, self.work.path(), self.home.path())
    }
}

/// The `command_execution` items codex reported done.
fn codex_commands(run: &Run) -> Vec<Value> {
    run.json_lines()
        .into_iter()
        .filter(|e| e["type"] == "item.completed" && e["item"]["type"] == "command_execution")
        .map(|e| e["item"].clone())
        .collect()
}

#[test]
fn codex_writes_reads_back_and_answers() {
    let server = CliServer::start(vec![hello_script()]);
    let Some(codex) = Codex::new(&server, "") else { return };
    let run = codex.run(HELLO_PROMPT, &[]);
    report("codex", &run, &server);
    let ctx = || format!("{}\n--- server\n{}", run.text(), seen(&server));
    assert_eq!(run.code, Some(0), "{}", ctx());
    assert_eq!(
        std::fs::read_to_string(codex.work.path().join("hello.txt"))
            .ok()
            .as_deref(),
        Some("hello\n"),
        "{}",
        ctx()
    );
    // The tool the server calls is the one codex offers.
    let first = &server.requests()[0].body;
    let names: Vec<&str> = first["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str())
        .collect();
    println!("codex tools: {names:?}");
    assert!(
        first["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "exec_command" && t["parameters"]["properties"]["cmd"].is_object()),
        "codex offers no exec_command {{cmd}}: {}",
        first["tools"]
    );
    let commands = codex_commands(&run);
    println!("codex command_execution items: {commands:?}");
    let cat = commands
        .iter()
        .find(|c| c["command"].as_str().unwrap_or_default().contains("cat hello.txt"))
        .unwrap_or_else(|| panic!("no cat command in --json\n{}", ctx()));
    // Codex wraps the model's command in a login shell.
    assert_eq!(cat["command"], "/bin/bash -lc 'cat hello.txt'", "{}", ctx());
    assert_eq!(cat["exit_code"], 0, "{}", ctx());
    assert!(
        cat["aggregated_output"].as_str().unwrap_or_default().contains("hello"),
        "{}",
        ctx()
    );
    let final_text: Vec<Value> = run
        .json_lines()
        .into_iter()
        .filter(|e| e["type"] == "item.completed" && e["item"]["type"] == "agent_message")
        .collect();
    assert!(final_text.iter().any(|e| e["item"]["text"] == "done"), "{}", ctx());
    let turn = run.json_lines().into_iter().find(|e| e["type"] == "turn.completed");
    assert!(
        turn.as_ref()
            .is_some_and(|t| t["usage"]["output_tokens"].as_u64().unwrap_or(0) > 0),
        "no usage: {}",
        ctx()
    );
    let results = server.tool_results();
    assert_eq!(results.len(), 2, "{results:?}\n{}", ctx());
    assert!(!results[1].error && results[1].text.contains("hello"), "{results:?}");
}

#[test]
fn codex_pretooluse_hook_denial_reaches_the_model() {
    let server = CliServer::start(vec![hook_script()]);
    let hooks = tempfile::tempdir().unwrap();
    let log = hooks.path().join("stdin.jsonl");
    let deny = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no forbidden words"}}"#;
    let hook = hook_script_file(hooks.path(), &log, deny, "");
    let config = format!(
        "[[hooks.PreToolUse]]\nmatcher = \"*\"\n\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"{}\"\n",
        hook.display()
    );
    let Some(codex) = Codex::new(&server, &config) else {
        return;
    };
    let run = codex.run(HOOK_PROMPT, &["--dangerously-bypass-hook-trust"]);
    report("codex hook", &run, &server);
    let ctx = || format!("{}\n--- server\n{}", run.text(), seen(&server));
    assert_eq!(run.code, Some(0), "{}", ctx());
    assert!(
        !codex.work.path().join("x.txt").exists(),
        "the denied command ran\n{}",
        ctx()
    );
    assert_eq!(
        std::fs::read_to_string(codex.work.path().join("y.txt")).ok().as_deref(),
        Some("ok\n"),
        "{}",
        ctx()
    );
    let inputs = hook_inputs(&log);
    println!("codex hook stdin: {inputs:#?}");
    assert_eq!(inputs.len(), 2, "{inputs:?}");
    assert_eq!(inputs[0]["tool_name"], "Bash");
    assert_eq!(inputs[0]["hook_event_name"], "PreToolUse");
    assert!(inputs[0]["tool_input"]["command"]
        .as_str()
        .unwrap_or_default()
        .contains("echo forbidden"));
    let results = server.tool_results();
    assert_eq!(
        results.first(),
        Some(&ToolResult {
            text: "Command blocked by PreToolUse hook: no forbidden words. Command: echo forbidden > x.txt".into(),
            error: true
        }),
        "{results:?}\n{}",
        ctx()
    );
    // The denied call is not among the completed commands.
    assert!(codex_commands(&run)
        .iter()
        .all(|c| !c["command"].as_str().unwrap_or_default().contains("forbidden")));
}

// ---------------------------------------------------------------- Gemini

struct Gemini {
    bin: PathBuf,
    home: tempfile::TempDir,
    work: tempfile::TempDir,
    url: String,
}

impl Gemini {
    fn new(server: &CliServer, hooks: Option<Value>) -> Option<Self> {
        let bin = support::cli_agent("gemini-cli")?;
        let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let mut settings = serde_json::json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": false},
            "telemetry": {"enabled": false},
            "general": {"disableAutoUpdate": true},
        });
        if let Some(hooks) = hooks {
            settings["hooks"] = hooks;
        }
        support::write(&home.path().join(".gemini/settings.json"), &settings.to_string());
        Some(Gemini {
            bin,
            home,
            work,
            url: server.url.clone(),
        })
    }

    /// Without `model`, Gemini CLI first asks a router side call which model to use.
    fn run(&self, prompt: &str, model: Option<&str>) -> Run {
        let mut args = vec!["-p", prompt, "--output-format", "stream-json", "--yolo", "--skip-trust"];
        if let Some(model) = model {
            args.extend(["-m", model]);
        }
        let env = [
            ("GOOGLE_GEMINI_BASE_URL", self.url.clone()),
            ("GEMINI_API_KEY", "dummy".to_string()),
        ];
        run(&self.bin, &args, &env, self.work.path(), self.home.path())
    }
}

fn lines_of(run: &Run, kind: &str) -> Vec<Value> {
    run.json_lines().into_iter().filter(|e| e["type"] == kind).collect()
}

#[test]
fn gemini_writes_reads_back_and_answers() {
    let server = CliServer::start(vec![hello_script()]);
    let Some(gemini) = Gemini::new(&server, None) else {
        return;
    };
    let run = gemini.run(HELLO_PROMPT, Some("gemini-2.5-flash"));
    report("gemini", &run, &server);
    let ctx = || format!("{}\n--- server\n{}", run.text(), seen(&server));
    assert_eq!(run.code, Some(0), "{}", ctx());
    assert_eq!(
        std::fs::read_to_string(gemini.work.path().join("hello.txt"))
            .ok()
            .as_deref(),
        Some("hello\n"),
        "{}",
        ctx()
    );
    let offered: Vec<String> = server
        .requests()
        .iter()
        .flat_map(|r| r.body["tools"].as_array().cloned().unwrap_or_default())
        .flat_map(|t| t["functionDeclarations"].as_array().cloned().unwrap_or_default())
        .map(|d| d["name"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(
        offered.iter().any(|n| n == "run_shell_command") && offered.iter().any(|n| n == "write_file"),
        "{offered:?}"
    );
    let uses = lines_of(&run, "tool_use");
    let results = lines_of(&run, "tool_result");
    println!(
        "gemini tool_use: {uses:?}\ngemini tool_result: {results:?}\ngemini result: {:?}",
        lines_of(&run, "result")
    );
    assert!(
        uses.iter()
            .any(|u| u["tool_name"] == "run_shell_command" && u["parameters"]["command"] == "cat hello.txt"),
        "{}",
        ctx()
    );
    assert!(results.iter().all(|r| r["status"] == "success"), "{}", ctx());
    let result = lines_of(&run, "result");
    assert!(result.last().is_some_and(|r| r["status"] == "success"), "{}", ctx());
    let seen_results = server.tool_results();
    assert_eq!(seen_results.len(), 2, "{seen_results:?}\n{}", ctx());
    assert!(
        !seen_results[1].error && seen_results[1].text.contains("hello"),
        "{seen_results:?}"
    );
}

#[test]
fn gemini_beforetool_hook_denial_reaches_the_model() {
    let server = CliServer::start(vec![hook_script()]);
    let hooks = tempfile::tempdir().unwrap();
    let log = hooks.path().join("stdin.jsonl");
    let hook = hook_script_file(
        hooks.path(),
        &log,
        r#"{"decision":"deny","reason":"no forbidden words"}"#,
        r#"{"decision":"allow"}"#,
    );
    let settings = serde_json::json!({"BeforeTool": [{"matcher": "*", "hooks": [{"type": "command", "command": hook.display().to_string()}]}]});
    let Some(gemini) = Gemini::new(&server, Some(settings)) else {
        return;
    };
    // No model: the router's side call is answered too.
    let run = gemini.run(HOOK_PROMPT, None);
    report("gemini hook", &run, &server);
    let ctx = || format!("{}\n--- server\n{}", run.text(), seen(&server));
    assert_eq!(run.code, Some(0), "{}", ctx());
    assert!(
        !gemini.work.path().join("x.txt").exists(),
        "the denied command ran\n{}",
        ctx()
    );
    assert_eq!(
        std::fs::read_to_string(gemini.work.path().join("y.txt"))
            .ok()
            .as_deref(),
        Some("ok\n"),
        "{}",
        ctx()
    );
    let side: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.path.contains(":generateContent"))
        .collect();
    println!(
        "gemini side calls: {:?}",
        side.iter()
            .map(|r| (&r.path, &r.body["generationConfig"]["responseJsonSchema"]))
            .collect::<Vec<_>>()
    );
    assert!(
        side.iter()
            .any(|r| r.body["generationConfig"]["responseJsonSchema"].is_object()),
        "no router side call\n{}",
        ctx()
    );
    let inputs = hook_inputs(&log);
    println!("gemini hook stdin: {inputs:#?}");
    assert_eq!(inputs.len(), 2, "{inputs:?}");
    assert_eq!(inputs[0]["tool_name"], "run_shell_command");
    assert_eq!(inputs[0]["tool_input"]["command"], "echo forbidden > x.txt");
    let results = server.tool_results();
    let first = results.first().unwrap_or_else(|| panic!("no tool result\n{}", ctx()));
    assert!(first.error && first.text.contains("no forbidden words"), "{results:?}");
    let denied = lines_of(&run, "tool_result");
    println!("gemini denied tool_result: {:?}", denied.first());
    assert_eq!(
        denied.first().map(|r| r["error"]["type"].clone()),
        Some("policy_violation".into()),
        "{}",
        ctx()
    );
    assert_eq!(
        denied.first().map(|r| r["status"].clone()),
        Some("error".into()),
        "{}",
        ctx()
    );
}

// ---------------------------------------------------------------- aider

#[test]
fn aider_writes_the_whole_file_and_answers() {
    let server = CliServer::start(vec![hello_script()]);
    let Some(aider) = support::cli_agent("aider") else {
        return;
    };
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let api = format!("{}/v1", server.url);
    let args = [
        "--model",
        "openai/mock-model",
        "--openai-api-base",
        &api,
        "--openai-api-key",
        "dummy",
        "--no-git",
        "--no-check-update",
        "--no-analytics",
        "--no-show-model-warnings",
        "--yes-always",
        "--edit-format",
        "whole",
        "--message",
        HELLO_PROMPT,
        "hello.txt",
    ];
    let run = run(
        &aider,
        &args,
        &[("LITELLM_LOCAL_MODEL_COST_MAP", "True".into())],
        work.path(),
        home.path(),
    );
    report("aider", &run, &server);
    let ctx = || format!("{}\n--- server\n{}", run.text(), seen(&server));
    assert_eq!(run.code, Some(0), "{}", ctx());
    assert_eq!(
        std::fs::read_to_string(work.path().join("hello.txt")).ok().as_deref(),
        Some("hello\n"),
        "{}",
        ctx()
    );
    assert!(run.stdout.contains("Applied edit to hello.txt"), "{}", ctx());
    // The command step is prose (aider renders it as Markdown), not a second edit of the file.
    assert!(run.stdout.contains("I would now run cat hello.txt"), "{}", ctx());
    assert!(!run.stdout.contains("+cat hello.txt"), "{}", ctx());
    assert!(run.stdout.contains("done"), "{}", ctx());
    // Aider runs no suggested command under --yes-always, so no tool output comes back.
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "{}", ctx());
    assert!(requests[0].path.ends_with("/chat/completions"));
    assert!(server.tool_results().is_empty());
}

// ---------------------------------------------------------------- the server itself

/// POSTs `body` to `url`: (status, body text).
fn post(url: &str, body: &str) -> (u16, String) {
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let mut response = agent
        .post(url)
        .header("content-type", "application/json")
        .send(body)
        .expect("the server answers");
    let status = response.status().as_u16();
    (status, response.body_mut().read_to_string().unwrap_or_default())
}

/// The JSON `data:` payloads of an event stream.
fn events(stream: &str) -> Vec<Value> {
    stream
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str(d).ok())
        .collect()
}

#[test]
fn the_server_answers_side_calls_and_bounds_requests_and_bodies() {
    let server = CliServer::with_limits(vec![hello_script()], 4, 2000);
    // Codex without tools: the stock text, streamed, with usage.
    let (status, text) = post(
        &format!("{}/v1/responses", server.url),
        r#"{"input": "make a title", "stream": true}"#,
    );
    assert_eq!(status, 200);
    let evs = events(&text);
    let kinds: Vec<&str> = evs.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(kinds.first(), Some(&"response.created"));
    assert_eq!(kinds.last(), Some(&"response.completed"));
    assert!(kinds.contains(&"response.output_text.delta"));
    let done = evs.iter().find(|e| e["type"] == "response.output_item.done").unwrap();
    assert_eq!(done["item"]["content"][0]["text"], support::cli_server::STOCK_TEXT);
    assert_eq!(evs.last().unwrap()["response"]["usage"]["output_tokens"], 20);
    // A Gemini side call asking for JSON gets its schema filled.
    let router = r#"{"contents": [{"role": "user", "parts": [{"text": "route"}]}], "generationConfig": {"responseJsonSchema":
        {"type": "object", "properties": {"reasoning": {"type": "string"}, "model_choice": {"type": "string", "enum": ["flash", "pro"]}}}}}"#;
    let (status, text) = post(
        &format!("{}/v1beta/models/gemini-2.5-flash-lite:generateContent", server.url),
        router,
    );
    assert_eq!(status, 200);
    let answer: Value = serde_json::from_str(&text).unwrap();
    let filled: Value =
        serde_json::from_str(answer["candidates"][0]["content"]["parts"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        filled,
        serde_json::json!({"reasoning": "scripted", "model_choice": "flash"})
    );
    // A body over the cap: 413.
    let big = format!(r#"{{"input": "{}"}}"#, "x".repeat(3000));
    assert_eq!(post(&format!("{}/v1/responses", server.url), &big).0, 413);
    // The fourth request is the last answered: a Chat Completions request with no script,
    // not streamed, gets the stock text as JSON.
    let (status, text) = post(&format!("{}/v1/chat/completions", server.url), "{}");
    assert_eq!(status, 200);
    let answer: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        answer["choices"][0]["message"]["content"],
        support::cli_server::STOCK_TEXT
    );
    assert_eq!(answer["usage"]["completion_tokens"], 20);
    assert_eq!(post(&format!("{}/v1/chat/completions", server.url), "{}").0, 500);
    assert_eq!(server.requests().len(), 5);
}

#[test]
fn the_server_records_each_tool_output_once_in_order() {
    let server = CliServer::start(vec![hello_script()]);
    let url = format!("{}/v1/responses", server.url);
    let user = serde_json::json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": HELLO_PROMPT}]});
    let tools = serde_json::json!([{"type": "function", "name": "exec_command"}]);
    let output =
        |id: &str, text: &str| serde_json::json!({"type": "function_call_output", "call_id": id, "output": text});
    let mut input = vec![user];
    let mut commands = Vec::new();
    for (id, out) in [
        ("call_0", "wrote"),
        ("call_1", "Command blocked by PreToolUse hook: no"),
    ] {
        let (_, text) = post(&url, &serde_json::json!({"input": input, "tools": tools}).to_string());
        let done = events(&text)
            .into_iter()
            .find(|e| e["type"] == "response.output_item.done")
            .unwrap();
        assert_eq!(done["item"]["call_id"], id);
        commands.push(done["item"]["arguments"].as_str().unwrap().to_string());
        input.push(done["item"].clone());
        input.push(output(id, out));
    }
    let (_, text) = post(&url, &serde_json::json!({"input": input, "tools": tools}).to_string());
    let done = events(&text)
        .into_iter()
        .find(|e| e["type"] == "response.output_item.done")
        .unwrap();
    assert_eq!(done["item"]["content"][0]["text"], "done");
    assert_eq!(
        commands,
        [
            r#"{"cmd":"printf '%s' 'hello\n' > 'hello.txt'"}"#,
            r#"{"cmd":"cat hello.txt"}"#
        ]
    );
    assert_eq!(
        server.tool_results(),
        [
            ToolResult {
                text: "wrote".into(),
                error: false
            },
            ToolResult {
                text: "Command blocked by PreToolUse hook: no".into(),
                error: true
            }
        ]
    );
}
