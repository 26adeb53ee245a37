//! The `transaction` tool's input, read into a typed [`Plan`]: its steps (each an ordinary tool
//! call, validated against that tool's schema; never a `transaction`: no nesting) and its
//! verification (each a `verify` tool input, or a validator written as `expect.validate`
//! takes it, turned into the `verify` input that checks the same thing).
//!
//! This module only reads and checks the plan. Running it — dry run, approval, checkpoint,
//! steps, verification, rollback — is the pipeline's ([`crate::pipeline`]'s `transaction`
//! module), because every step is a pass of its own through guard, policy, limits and receipt.

use serde_json::{json, Value};

use super::{ActionInput, ToolContext, WouldAffect};
use crate::spec::{Validator, ValidatorSpec};

/// The tool's name.
pub(crate) const NAME: &str = "transaction";
/// Steps one transaction may hold.
pub(crate) const MAX_STEPS: usize = 32;
/// Checks one transaction may hold.
pub(crate) const MAX_CHECKS: usize = 16;

/// A validated transaction.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub description: String,
    pub steps: Vec<PlannedCall>,
    /// `verify` tool inputs, in order.
    pub checks: Vec<PlannedCall>,
    pub rollback_on_failure: bool,
    pub dry_run: bool,
}

/// One call of the plan: a tool and its input as the tool will read it.
#[derive(Debug, Clone)]
pub(crate) struct PlannedCall {
    pub tool: String,
    pub input: Value,
    /// How it is shown: `write_file a.txt`, `file_contains a.txt /x/`.
    pub label: String,
}

/// Reads a transaction's validated input (the tool schema already checked its shape) into a
/// plan; the error names the step or check at fault and what to write instead.
pub(crate) fn parse(input: &Value) -> Result<Plan, String> {
    let description = input
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let list = |key: &str| input.get(key).and_then(Value::as_array).cloned().unwrap_or_default();
    let (steps, checks) = (list("steps"), list("verify"));
    if steps.is_empty() || steps.len() > MAX_STEPS {
        return Err(format!("a transaction has 1 to {MAX_STEPS} steps, got {}", steps.len()));
    }
    if checks.is_empty() || checks.len() > MAX_CHECKS {
        return Err(format!(
            "a transaction has 1 to {MAX_CHECKS} checks in `verify` (it commits only on a check that ran and passed), got {}",
            checks.len()
        ));
    }
    let steps = steps
        .iter()
        .enumerate()
        .map(|(i, s)| step(s).map_err(|e| format!("step {}: {e}", i + 1)))
        .collect::<Result<Vec<_>, _>>()?;
    let checks = checks
        .iter()
        .enumerate()
        .map(|(i, c)| check(c).map_err(|e| format!("check {} of `verify`: {e}", i + 1)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Plan {
        description,
        steps,
        checks,
        rollback_on_failure: input
            .get("rollback_on_failure")
            .and_then(Value::as_bool)
            .unwrap_or(true),
        dry_run: input.get("dry_run").and_then(Value::as_bool).unwrap_or(false),
    })
}

fn step(s: &Value) -> Result<PlannedCall, String> {
    let tool = s.get("tool").and_then(Value::as_str).unwrap_or_default();
    if tool == NAME {
        return Err(
            "a transaction cannot be a step of another transaction (no nesting); put its steps in this one".into(),
        );
    }
    let input = s.get("input").cloned().unwrap_or_else(|| json!({}));
    let input = super::validated_input(tool, &ActionInput::Json(input))?;
    Ok(PlannedCall {
        label: label(tool, &input),
        tool: tool.to_string(),
        input,
    })
}

/// A check: a `verify` input as it is (`{"type": ..}`), or a validator made one.
fn check(c: &Value) -> Result<PlannedCall, String> {
    let input = if c.get("type").is_some() {
        c.clone()
    } else {
        let v: Validator = serde_json::from_value(c.clone()).map_err(|e| {
            format!("{e}; write a `verify` tool input ({{\"type\": \"file_exists\", \"target\": \"a.txt\"}}) or a validator ({{\"file_exists\": \"a.txt\"}}, {{\"file_contains\": {{\"path\": .., \"pattern\": ..}}}}, {{\"command\": \"..\"}})")
        })?;
        match v.check {
            ValidatorSpec::FileExists(path) => json!({ "type": "file_exists", "target": path }),
            ValidatorSpec::FileContains(f) => json!({ "type": "file_contains", "target": f.path, "expected": f.pattern }),
            ValidatorSpec::Command(cmd) if cmd.exit_code == 0 && cmd.stdout.is_none() => {
                let mut input = json!({ "type": "command_succeeds", "target": cmd.run });
                if let Some(t) = cmd.timeout {
                    input["timeout_ms"] = json!(u64::try_from(t.0.as_millis()).unwrap_or(u64::MAX).max(1));
                }
                input
            }
            ValidatorSpec::Command(_) => {
                return Err("a command check in a transaction passes on exit 0 only; put the condition in the command itself (`! cmd`, `cmd | grep -q x`)".into())
            }
            other => {
                return Err(format!(
                    "`{}` checks are not available in a transaction: use file_exists, file_contains or command",
                    crate::validate::spec_label(&other)
                ))
            }
        }
    };
    let input = super::validated_input("verify", &ActionInput::Json(input))?;
    Ok(PlannedCall {
        label: label("verify", &input),
        tool: "verify".into(),
        input,
    })
}

/// How a call is shown in the plan: the tool and what it names.
fn label(tool: &str, input: &Value) -> String {
    let text = |k: &str| input.get(k).and_then(Value::as_str).unwrap_or_default();
    let shown = match tool {
        "bash" => crate::validate::short_command(text("command")),
        "move_file" => format!("{} → {}", text("from"), text("to")),
        "verify" => match text("type") {
            "file_contains" => format!("file_contains {} /{}/", text("target"), text("expected")),
            "command_succeeds" => format!("command_succeeds {}", crate::validate::short_command(text("target"))),
            t => format!("{t} {}", text("target")),
        },
        _ => text("path").to_string(),
    };
    format!("{tool} {shown}").trim_end().to_string()
}

/// What the plan's steps would touch, one after another (each as its own dry run; a step
/// that depends on an earlier one is shown as it reads now).
pub(crate) fn would_affect(ctx: &ToolContext, input: &Value) -> Vec<WouldAffect> {
    let Ok(plan) = parse(input) else {
        return Vec::new();
    };
    plan.steps
        .iter()
        .flat_map(|s| super::would_affect(ctx, &s.tool, &ActionInput::Json(s.input.clone())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(steps: Value, verify: Value) -> Result<Plan, String> {
        parse(&json!({ "description": "t", "steps": steps, "verify": verify }))
    }

    #[test]
    fn validators_become_verify_inputs() {
        let p = plan(
            json!([{ "tool": "write_file", "input": { "path": "a", "content": "x" } }]),
            json!([
                { "file_exists": "a" },
                { "file_contains": { "path": "a", "pattern": "x" } },
                { "command": { "run": "true", "timeout": "5s" } },
                { "type": "file_exists", "target": "a" }
            ]),
        )
        .unwrap();
        assert!(p.rollback_on_failure);
        let types: Vec<&str> = p.checks.iter().map(|c| c.input["type"].as_str().unwrap()).collect();
        assert_eq!(
            types,
            ["file_exists", "file_contains", "command_succeeds", "file_exists"]
        );
        assert_eq!(p.checks[2].input["timeout_ms"], 5000);
        assert_eq!(p.checks[1].label, "verify file_contains a /x/");
    }

    #[test]
    fn nesting_unknown_tools_bad_inputs_and_empty_lists_are_refused_by_position() {
        let check = json!([{ "file_exists": "a" }]);
        let nested = plan(json!([{ "tool": "transaction", "input": {} }]), check.clone()).unwrap_err();
        assert!(
            nested.starts_with("step 1:") && nested.contains("no nesting"),
            "{nested}"
        );
        let unknown = plan(json!([{ "tool": "rm", "input": {} }]), check.clone()).unwrap_err();
        assert!(unknown.contains("no tool named `rm`"), "{unknown}");
        let bad = plan(
            json!([{ "tool": "write_file", "input": { "path": "a" } }]),
            check.clone(),
        )
        .unwrap_err();
        assert!(bad.contains("missing required key `content`"), "{bad}");
        let none = plan(
            json!([{ "tool": "write_file", "input": { "path": "a", "content": "" } }]),
            json!([]),
        )
        .unwrap_err();
        assert!(none.contains("1 to 16 checks"), "{none}");
        let http = plan(
            json!([{ "tool": "list_dir", "input": {} }]),
            json!([{ "http": { "url": "http://x" } }]),
        )
        .unwrap_err();
        assert!(http.contains("not available in a transaction"), "{http}");
    }
}
