//! `medin guard`: the guard as a command-line tool and a Claude Code PreToolUse hook.
//!
//! - `medin guard [--json] COMMAND...` judges one command line (the words are joined with
//!   spaces) and prints the verdict (text, or JSON with `--json`).
//! - `medin guard --jsonl` reads one command per line on stdin and prints one JSON verdict per
//!   line: `{"command","recommendation","risk","violations":[{"category","rule","severity",
//!   "matched","description"}],"alternative"}`.
//! - `medin guard --hook claude` reads a PreToolUse hook event (`{"tool_name":"Bash",
//!   "tool_input":{"command":..},"cwd":..}`) and prints `{"hookSpecificOutput":{"hookEventName":
//!   "PreToolUse","permissionDecision":"allow|deny|ask","permissionDecisionReason":".."}}`.
//!   Block → deny, warn → ask (deny when `CI=true`: nobody is there to answer), allow → allow.
//!
//! Exit codes: single command: 0 allow, 1 warn, 2 block; `--jsonl`: 0 (each verdict is in its
//! line); `--hook`: 0 with the decision JSON, 2 when the event cannot be read (Claude Code
//! blocks the call on exit 2, so unreadable input fails closed); 64 for usage errors.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::{check_action, check_command, GuardContext, Recommendation, Verdict};

/// Usage error (bad flags or arguments).
pub const EXIT_USAGE: u8 = 64;

/// What `medin guard` was asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardArgs {
    pub json: bool,
    pub jsonl: bool,
    /// `Some("claude")` for `--hook claude`.
    pub hook: Option<String>,
    /// The workspace commands are judged against (default: the current directory).
    pub workspace: Option<PathBuf>,
    pub command: Vec<String>,
}

/// The one-line JSON form of a verdict on `command`.
pub fn verdict_json(command: &str, v: &Verdict) -> Value {
    json!({
        "command": command,
        "recommendation": v.recommendation,
        "risk": v.risk,
        "violations": v.violations.iter().map(|x| json!({
            "category": x.category.as_str(),
            "rule": x.rule,
            "severity": x.severity,
            "matched": x.matched,
            "description": x.description,
        })).collect::<Vec<_>>(),
        "alternative": v.alternative,
    })
}

fn ci() -> bool {
    super::policy::Ask::from_env() == super::policy::Ask::Deny
}

/// The Claude Code hook answer for one PreToolUse event (`None` when it cannot be read).
pub fn hook_claude(event: &Value, default_ws: &Path) -> Option<Value> {
    let tool = event.get("tool_name")?.as_str()?;
    let input = event.get("tool_input").cloned().unwrap_or(Value::Null);
    let ws = event
        .get("cwd")
        .and_then(Value::as_str)
        .map(PathBuf::from)
        .unwrap_or_else(|| default_ws.to_path_buf());
    let ctx = GuardContext { workspace: &ws };
    let s = |k: &str| input.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let verdicts: Vec<Verdict> = match tool {
        "Bash" => vec![check_action("bash", &json!({ "command": s("command") }), &ctx)],
        "Write" => vec![check_action("write_file", &json!({ "path": s("file_path"), "content": s("content") }), &ctx)],
        "Edit" => vec![check_action(
            "edit_file",
            &json!({ "path": s("file_path"), "old_string": s("old_string"), "new_string": s("new_string") }),
            &ctx,
        )],
        "MultiEdit" => input
            .get("edits")
            .and_then(Value::as_array)
            .map(|edits| {
                edits
                    .iter()
                    .map(|e| {
                        let t = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("");
                        check_action(
                            "edit_file",
                            &json!({ "path": s("file_path"), "old_string": t("old_string"), "new_string": t("new_string") }),
                            &ctx,
                        )
                    })
                    .collect()
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    let violations: Vec<_> = verdicts.iter().flat_map(|v| v.violations.clone()).collect();
    let alternative = verdicts.iter().find_map(|v| v.alternative.clone());
    let v = Verdict::from_violations(violations, alternative);
    let (decision, reason) = match v.recommendation {
        Recommendation::Allow => ("allow", "medin guard: no rule fired".to_string()),
        rec => {
            let mut reason = v
                .violations
                .iter()
                .filter(|x| x.recommendation == rec)
                .map(|x| format!("{}: {} (matched `{}`)", x.rule, x.description, x.matched))
                .collect::<Vec<_>>()
                .join("; ");
            if let Some(alt) = &v.alternative {
                reason.push_str("; safer: ");
                reason.push_str(alt);
            }
            let d = if rec == Recommendation::Block || ci() {
                "deny"
            } else {
                "ask"
            };
            (d, format!("medin guard: {reason}"))
        }
    };
    Some(json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    }))
}

/// Runs `medin guard`; returns the exit code.
pub fn run(args: &GuardArgs, stdin: &mut dyn BufRead, stdout: &mut dyn Write, stderr: &mut dyn Write) -> u8 {
    let ws = args
        .workspace
        .clone()
        .unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")));
    let ctx = GuardContext { workspace: &ws };
    if let Some(kind) = &args.hook {
        if kind != "claude" {
            let _ = writeln!(
                stderr,
                "medin guard: unknown hook kind `{kind}`; the supported kind is `claude`"
            );
            return EXIT_USAGE;
        }
        let mut text = String::new();
        if let Err(e) = stdin.read_to_string(&mut text) {
            let _ = writeln!(stderr, "medin guard: cannot read the hook event from stdin: {e}");
            return 2;
        }
        let answer = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|ev| hook_claude(&ev, &ws));
        return match answer {
            Some(a) => {
                let _ = writeln!(stdout, "{a}");
                0
            }
            None => {
                let _ = writeln!(
                    stderr,
                    "medin guard: the hook event is not PreToolUse JSON with tool_name and tool_input; refusing the call"
                );
                2
            }
        };
    }
    if args.jsonl {
        for line in stdin.lines() {
            let Ok(line) = line else { break };
            if line.trim().is_empty() {
                continue;
            }
            let v = check_command(&line, &ctx);
            let _ = writeln!(stdout, "{}", verdict_json(&line, &v));
        }
        return 0;
    }
    if args.command.is_empty() {
        let _ = writeln!(
            stderr,
            "medin guard: give a command to judge, or --jsonl / --hook claude to read stdin"
        );
        return EXIT_USAGE;
    }
    let command = args.command.join(" ");
    let v = check_command(&command, &ctx);
    if args.json {
        let _ = writeln!(stdout, "{}", verdict_json(&command, &v));
    } else {
        let rec = match v.recommendation {
            Recommendation::Allow => "allow",
            Recommendation::Warn => "warn",
            Recommendation::Block => "block",
        };
        let _ = writeln!(stdout, "{rec}: {command}");
        for x in &v.violations {
            let _ = writeln!(
                stdout,
                "  {:?} {} [{}]: {} (matched `{}`)",
                x.recommendation,
                x.rule,
                format!("{:?}", x.severity).to_lowercase(),
                x.description,
                x.matched
            );
        }
        if let Some(alt) = &v.alternative {
            let _ = writeln!(stdout, "  safer: {alt}");
        }
    }
    match v.recommendation {
        Recommendation::Allow => 0,
        Recommendation::Warn => 1,
        Recommendation::Block => 2,
    }
}
