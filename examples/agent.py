#!/usr/bin/env python3
"""A medin process agent: a template to copy when wiring your own model in.

medin starts this program once per task attempt and talks to it in JSON lines
(one JSON object per line) on stdin/stdout; see examples/README.md.

    medin -> agent   {"type": "task", "task_id", "prompt", "tools", "limits", "workspace"}
    agent -> medin   {"type": "tool_call", "id", "tool", "input"}
    medin -> agent   {"type": "tool_result", "id", "receipt"}
    agent -> medin   {"type": "usage", "input_tokens", "output_tokens"}      (optional)
    agent -> medin   {"type": "final", "result": "success|error|issue", "message"}
    medin -> agent   {"type": "feedback", ...}     (multi-round tasks: next round starts)

Only the standard library is used. stdout is the protocol channel: print
diagnostics to stderr (medin keeps the tail of stderr when an agent crashes).

To plug in a model, replace the body of `decide()`. Everything else (the
protocol loop, usage reporting, error handling) can stay as it is.
"""

import json
import re
import sys

# --------------------------------------------------------------------------- protocol


def send(message):
    """Writes one protocol message (one line of JSON) to medin."""
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def receive():
    """Reads the next message from medin; None when medin closed stdin."""
    while True:
        line = sys.stdin.readline()
        if not line:
            return None
        if line.strip():
            return json.loads(line)


def log(text):
    print(text, file=sys.stderr, flush=True)


def estimate_tokens(text):
    # A stand-in for real token counts: about four characters per token. A model
    # API returns the true numbers; report those instead.
    return max(1, len(text) // 4)


# --------------------------------------------------------------------------- the decision

# history: one entry per finished tool call, oldest first:
#   {"tool": "write_file", "input": {...}, "receipt": {...}}
# An action is either a tool call  {"tool": NAME, "input": {...}}
# or the end of the round          {"final": "success" | "error" | "issue", "message": TEXT}


def decide(prompt, history, tools):
    """THE PLACE TO PLUG IN A MODEL.

    Given the task prompt, what happened so far and the names of the tools this
    task allows, return the next action. A model-backed version sends the prompt,
    the tool schemas (from the task message) and the history to the model and
    turns its answer into an action.

    The built-in policy below is deterministic: it follows a few simple
    imperative prompts so the template can solve real tasks out of the box.
    """
    failed = last_failure(history)
    if failed:
        return failed
    for plan in (plan_create_file, plan_run_command, plan_read_and_summarise):
        action = plan(prompt, history, tools)
        if action is not None:
            return action
    return {
        "final": "issue",
        "message": "I do not understand the request. Should I create a file (which name and "
        "content), run a command (which one) or read and summarise a file (which one)?",
    }


def last_failure(history):
    """Ends the round when the last call failed, explaining why."""
    if not history:
        return None
    last = history[-1]
    receipt = last.get("receipt") or {}
    if receipt.get("status") != "error":
        return None
    errors = receipt.get("errors") or [{}]
    code = errors[0].get("code", "ERROR")
    message = errors[0].get("message", "no message")
    if last["tool"] == "bash" and code == "TOOL_EXECUTION_FAILED":
        return None  # a failing command is reported by the command plan itself
    if code == "PERMISSION_DENIED":
        return {
            "final": "issue",
            "message": f"`{last['tool']}` was refused ({message}). How should I proceed?",
        }
    return {"final": "error", "message": f"`{last['tool']}` failed with {code}: {message}"}


def unquote(text):
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`":
        return text[1:-1]
    return text


def needs(tool, tools):
    if tool in tools:
        return None
    return {"final": "issue", "message": f"this task does not allow `{tool}`, which I need; may I use it?"}


CREATE = re.compile(
    r"\bcreate\s+(?:a\s+file\s+(?:named\s+|called\s+)?)?(?P<file>[`\"']?[\w./-]+[`\"']?)\s+"
    r"(?:containing|with)\s+(?P<line>the\s+line\s+)?"
    r"(?:(?P<quoted>\"[^\"]*\"|'[^']*'|`[^`]*`)|(?P<text>[^\n]+?)\s*\.?\s*$)",
    re.IGNORECASE | re.MULTILINE,
)


WRITE_TO = re.compile(
    r"\bwrite\s+(?P<quoted>\"[^\"]*\"|'[^']*'|`[^`]*`)\s+(?:to|into)\s+(?P<file>[`\"']?[\w./-]*\w[`\"']?)",
    re.IGNORECASE,
)


def plan_create_file(prompt, history, tools):
    m = CREATE.search(prompt) or WRITE_TO.search(prompt)
    if not m:
        return None
    path = unquote(m.group("file"))
    groups = m.groupdict()
    text = unquote(groups.get("quoted") or groups.get("text") or "")
    content = text if text.endswith("\n") else text + "\n"
    if not history:
        return needs("write_file", tools) or {"tool": "write_file", "input": {"path": path, "content": content}}
    if len(history) == 1:
        if "read_file" not in tools:
            return {"final": "success", "message": f"created {path}"}
        return {"tool": "read_file", "input": {"path": path}}
    data = (history[-1].get("receipt") or {}).get("data")
    seen = data.get("content") if isinstance(data, dict) else None
    if not isinstance(seen, str):
        seen = json.dumps(data)
    if text in seen:
        return {"final": "success", "message": f"created {path} and read it back"}
    return {"final": "error", "message": f"{path} was written but reading it back did not show the text"}


RUN = re.compile(r"\brun\s+`(?P<cmd>[^`]+)`", re.IGNORECASE)


def output_of(data, stream):
    value = (data or {}).get(stream, "")
    if isinstance(value, dict):
        value = value.get("text", "")
    return value if isinstance(value, str) else ""


def plan_run_command(prompt, history, tools):
    m = RUN.search(prompt)
    if not m:
        return None
    if not history:
        return needs("bash", tools) or {"tool": "bash", "input": {"command": m.group("cmd")}}
    receipt = history[-1].get("receipt") or {}
    data = receipt.get("data") or {}
    stdout = output_of(data, "stdout")
    first = next((line for line in stdout.splitlines() if line.strip()), "")
    code = data.get("exit_code", 0 if receipt.get("status") == "success" else 1)
    if receipt.get("status") == "success" and code == 0:
        return {"final": "success", "message": first or "the command succeeded with no output"}
    stderr = output_of(data, "stderr").strip().splitlines()
    return {"final": "error", "message": f"exit {code}: {stderr[-1] if stderr else first}"}


READ = re.compile(r"\bread\s+(?P<file>[`\"']?[\w./-]+[`\"']?)\s+and\s+summari[sz]e", re.IGNORECASE)


def plan_read_and_summarise(prompt, history, tools):
    m = READ.search(prompt)
    if not m:
        return None
    path = unquote(m.group("file"))
    if not history:
        return needs("read_file", tools) or {"tool": "read_file", "input": {"path": path}}
    data = (history[-1].get("receipt") or {}).get("data")
    content = data.get("content", "") if isinstance(data, dict) else str(data or "")
    lines = content.splitlines()
    first = lines[0].strip() if lines else ""
    return {"final": "success", "message": f"{path}: {len(lines)} lines; first line: {first}"}


# --------------------------------------------------------------------------- the loop


def run_round(prompt, tools, history, round_no):
    calls = 0
    while True:
        action = decide(prompt, history, tools)
        send({
            "type": "usage",
            "input_tokens": estimate_tokens(prompt + json.dumps(history)),
            "output_tokens": estimate_tokens(json.dumps(action)),
        })
        if "final" in action:
            send({"type": "final", "result": action["final"], "message": action.get("message", "")})
            return True
        calls += 1
        call_id = f"r{round_no}-call-{calls}"
        send({"type": "tool_call", "id": call_id, "tool": action["tool"], "input": action["input"]})
        reply = receive()
        while reply is not None and reply.get("type") != "tool_result":
            reply = receive()  # ignore anything else while waiting for our result
        if reply is None:
            return False  # medin is gone
        if reply.get("id") not in (call_id, None):
            log(f"tool_result for unexpected id {reply.get('id')!r}")
        history.append({"tool": action["tool"], "input": action["input"], "receipt": reply.get("receipt") or {}})


def main():
    task = receive()
    if task is None or task.get("type") != "task":
        log(f"expected a task message first, got {task!r}")
        return 2
    prompt = task.get("prompt", "")
    tools = [t.get("name") for t in task.get("tools", []) if isinstance(t, dict)]
    log(f"task {task.get('task_id')}: {prompt!r}")
    round_no = 1
    history = []
    while run_round(prompt, tools, history, round_no):
        message = receive()
        if message is None or message.get("type") != "feedback":
            return 0
        # A new round: keep what was learned, start the plan afresh.
        round_no += 1
        history = []
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (BrokenPipeError, KeyboardInterrupt):
        sys.exit(1)
