"""The bypass corpus (`bypass.tsv`): commands that other command guards for AI coding agents block
or allow in their own test suites, or were shown to miss in public bypass reports, each labelled
by its effect (PROVENANCE.md's rules), never by the other guard's verdict.

Sources read from fetched git directories (at HEAD):
- kenryu42/claude-code-safety-net: `tests/core/**/*.test.ts`, the literal first argument of
  `assertBlocked`, `assertAllowed`, `runGuard` and `analyzeCommand`, and arrays of commands a
  test runs through them;
- continuedev/continue: `packages/terminal-security/test/terminalCommandSecurity.test.ts`, the
  command argument of every `evaluateTerminalCommandSecurity` call;
- garagon/nanostack: `ci/e2e-guard-regression.sh`, every `run_case` line;
- gptme/gptme: `tests/test_tools_shell_validation.py`, every command passed to `is_allowlisted`
  and `is_denylisted`.

Sources stored here as extracted rows (`bypass_raw.tsv`), because they are not git repositories
(issue threads and pull requests) or their snapshots exceed what can be fetched (openai/codex,
NousResearch/hermes-agent): each row names its URL or path@commit.

Each source's own verdict is normalized to VERDICTS and kept beside the row only to be counted.
The label of every distinct command is one reviewed decision in `bypass_labels.tsv`; a command
without a decision, or a decision no source needs, stops the build."""

import ast
import os
import re
import shlex

import jsstrings as js
from common import WS, Drop, escape, unescape

HERE = os.path.dirname(os.path.abspath(__file__))
RAW_FILE = os.path.join(HERE, "bypass_raw.tsv")
LABELS_FILE = os.path.join(HERE, "bypass_labels.tsv")

SAFETY_NET = "kenryu42/claude-code-safety-net"
CONTINUE = "continuedev/continue"
NANOSTACK = "garagon/nanostack"
GPTME = "gptme/gptme"

# The fetched repositories: how to check each one's licence (file, a phrase it must hold, name).
LICENCES = {
    SAFETY_NET: ("LICENSE", "MIT License", "MIT"),
    CONTINUE: ("LICENSE", "Apache License", "Apache-2.0"),
    NANOSTACK: ("LICENSE", "Apache License", "Apache-2.0"),
    GPTME: ("LICENSE", "Permission is hereby granted, free of charge", "MIT"),
}

# The source's own verdicts, normalized: `block` (its guard refuses the command), `ask` (it asks
# the user first), `allow` (it runs unasked), `not-block` (the test shows only that it is not
# refused). A verdict given under an opt-in mode of the guard carries the mode in brackets.
VERDICTS = ("block", "ask", "allow", "not-block")

# Why a command was left out, by the reason word of its `drop` decision in bypass_labels.tsv.
DROP_REASONS = {
    "windows": "Windows cmd or PowerShell, or a Windows path: not a POSIX shell command",
    "not-shell": "SQL text typed as a command: not a shell command",
    "unknown-content": "runs a script, package or text the source names as malicious without showing it: its effect cannot be read",
    "unknown-program": "an unknown wrapper program (`tool`) receives the command: its effect cannot be read",
    "env-dependent": "the target depends on a variable or environment the text does not set",
    "fixture-value": "a test's filler value (`ok`, `x`) fed through xargs or parallel lands where no operand belongs",
    "fs-dependent": "the effect depends on whether the file system is case-sensitive",
    "incomplete": "an option without its required value",
    "uncertain": "the effect depends on details of a tool (globbing, empty argument lists, option parsing) the text leaves open",
}

BUILT_AT_RUN_TIME = "built at run time by the test"


def _clean(item):
    """An item name fit for the `source` field: one line, no tab."""
    return re.sub(r"\s+", " ", item).strip()


def _numbered(prefix, found):
    """Names each found command after its test: `prefix#test`, or `prefix#test /k` for the k-th
    of several in one test. found: (test name, Drop or None, verdict, command), in file order.
    Yields (Drop or None, source, verdict, command)."""
    per_test = {}
    for entry in found:
        per_test.setdefault(entry[0], []).append(entry)
    for name, entries in per_test.items():
        for k, (_, drop, verdict, cmd) in enumerate(entries, 1):
            item = name if len(entries) == 1 else f"{name} /{k}"
            yield drop, f"{prefix}#{_clean(item)}", verdict, cmd


def _innermost(spans, pos):
    """The innermost (start, end, name) of `spans` holding `pos`, or None."""
    inner = [s for s in spans if s[0] <= pos < s[1]]
    return min(inner, key=lambda s: s[1] - s[0]) if inner else None


def _test_spans(toks):
    """(start, end, name) of every `test(...)` and `it(...)` call with a literal name."""
    spans = []
    for _, i, _, close, args in js.calls(toks, {"test", "it"}):
        if args and js.literal(args[0]):
            spans.append((toks[i].pos, toks[close].end, js.literal(args[0])[0]))
    return spans


# ---------------------------------------------------------------------------------------------
# claude-code-safety-net

# Test fixtures, as concrete paths: the linked worktree the guard runs in is the workspace; the
# main worktree and the fixture root are another checkout of the same project beside it.
_SN_ROOT = "/home/dev/src"
_SN_MAIN = _SN_ROOT + "/app"
SN_VALUES = {
    "toShellPath(fixture.mainWorktree)": _SN_MAIN,
    "mainWorktree": _SN_MAIN,
    "toShellPath(join(fixture.mainWorktree, '.git'))": _SN_MAIN + "/.git",
    "mainGitDir": _SN_MAIN + "/.git",
    "toShellPath(join(fixture.mainWorktree, '.git', 'index'))": _SN_MAIN + "/.git/index",
    "toShellPath(fixture.linkedWorktree)": WS,
    "toShellPath(join(fixture.rootDir, 'missing'))": _SN_ROOT + "/missing",
    "toShellPath(recurseHome)": _SN_ROOT + "/recurse-home",
    "toShellPath(recurseConfig)": _SN_ROOT + "/recurse.conf",
    # rules-rm.test.ts and edge-cases.test.ts run in a temporary directory: the workspace.
    "toShellPath(tmpDir)": WS,
    "toShellPath(inside)": WS + "/dist",
    # edge-cases.test.ts runs these two in a `project` directory beside `other`: outside the workspace.
    "toShellPath(otherDir)": "/work/medin-ws/other",
}
# The helpers a test asserts a verdict with; None: the assertion that follows the call tells.
_SN_CALLS = {"assertBlocked": "block", "assertAllowed": "allow", "runGuard": None, "analyzeCommand": None}
# The guard's opt-in modes, by the environment variable a test sets.
_SN_MODES = {
    "SAFETY_NET_STRICT": "strict",
    "SAFETY_NET_PARANOID": "paranoid",
    "SAFETY_NET_PARANOID_RM": "paranoid",
    "SAFETY_NET_PARANOID_INTERPRETERS": "paranoid",
    "SAFETY_NET_WORKTREE": "worktree",
}


def _verdict_after(text):
    """The verdict the first assertion in `text` (what follows a call, to the end of its test)
    states, or None when no assertion comes before the next test."""
    m = re.search(
        r"(not\.toBeNull\(\)|toBeNull\(\)|toBe\(\s*null\s*,?\s*\)|toContain\(|toMatch\(|\.includes\(reason\)|"
        r"assertBlocked\(|assertAllowed\(|\btest\(|\bit\()",
        text,
    )
    if not m or m.group(1).startswith(("test(", "it(")):
        return None
    hit = m.group(1)
    return "allow" if hit == "toBeNull()" or hit.startswith("toBe(") or hit == "assertAllowed(" else "block"


def _safety_net_found(path, src):
    """(position, test span, literal or None, verdict) of every command a test file asserts."""
    toks = js.tokens(src)
    tests = _test_spans(toks)
    found = []
    for name, i, _, close, args in js.calls(toks, set(_SN_CALLS)):
        test = _innermost(tests, toks[i].pos)
        if test is None:
            continue  # a helper's own body, not a test
        verdict = _SN_CALLS[name] or _verdict_after(src[toks[close].end: test[1]])
        lit = js.literal(args[0]) if args else None
        if lit is None and args and len(args[0]) == 1 and args[0][0].kind == "id":
            var = args[0][0].value
            if re.search(r"(for \(const " + var + r" of|\(\{ *" + var + r"\b)", src[test[0]: toks[i].pos]):
                continue  # the loop variable of an array of commands, read below
        found.append((toks[i].pos, test, lit, verdict))

    # Arrays of commands a test runs through the helpers: `const commands = [...]`, of strings or
    # of `{ command: ..., reason: ... }` objects.
    for i, t in enumerate(toks):
        if not (t.kind == "punct" and t.value == "[" and i >= 2 and toks[i - 1].value == "=" and toks[i - 2].kind == "id"):
            continue
        var = toks[i - 2].value
        close = js.matching(toks, i)
        test = _innermost(tests, t.pos)
        after = src[toks[close].end: test[1] if test else len(src)]
        if not re.search(r"(for \(const \w+ of " + re.escape(var) + r"\)|" + re.escape(var) + r"\.(flatMap|forEach|map)\()", after):
            continue
        verdict = _verdict_after(after)
        if verdict is None:
            continue
        for item in js.split_args(toks, i, close):
            lit = js.literal(item)
            if item and item[0].kind == "punct" and item[0].value == "{":
                props = js.split_args(toks, toks.index(item[0]), toks.index(item[-1]))
                lit = next((js.literal(p[2:]) for p in props if len(p) >= 3 and p[0].value == "command" and p[1].value == ":"), None)
            found.append((item[0].pos if item else t.pos, test, lit, verdict))
    return toks, found


def _safety_net_file(path, src, short):
    toks, found = _safety_net_found(path, src)
    modes = []  # (start, end, mode) of every withEnv(...) setting a mode
    for _, i, _, close, args in js.calls(toks, {"withEnv"}):
        for t in args[0] if args else []:
            if t.kind == "id" and t.value in _SN_MODES:
                modes.append((toks[i].pos, toks[close].end, _SN_MODES[t.value]))
    file_mode = {"custom rules"} if "rules-custom" in path else set()
    entries = []
    for pos, test, lit, verdict in sorted(found, key=lambda f: f[0]):
        mode = sorted({m for s, e, m in modes if s <= pos < e} | file_mode)
        verdict = (verdict or "not-block") + (" [" + ", ".join(mode) + "]" if mode else "")
        name = test[2] if test else "(outside a test)"
        if lit is None:
            entries.append((name, Drop(BUILT_AT_RUN_TIME), verdict, ""))
            continue
        try:
            entries.append((name, None, verdict, js.fill(lit[0], lit[1], SN_VALUES)))
        except KeyError as e:
            entries.append((name, Drop(f"{BUILT_AT_RUN_TIME} (`{e.args[0]}`)"), verdict, ""))
    yield from _numbered(f"{SAFETY_NET}/{path}@{short}", entries)


def safety_net_rows(git):
    for path in git.ls("tests/core/"):
        if path.endswith(".test.ts"):
            yield from _safety_net_file(path, git.read(path), git.short)


# ---------------------------------------------------------------------------------------------
# continue

CONTINUE_FILE = "packages/terminal-security/test/terminalCommandSecurity.test.ts"
_POLICIES = ("allowedWithoutPermission", "allowedWithPermission", "disabled")


def continue_rows(git):
    """`evaluateTerminalCommandSecurity(policy, command)` returns the stricter of the policy and
    the command's risk: `disabled` is block; `allowedWithPermission` asked for
    `allowedWithoutPermission` is ask; the same policy back is allow, or, for
    `allowedWithPermission`, only not-block."""
    src = git.read(CONTINUE_FILE)
    toks = js.tokens(src)
    tests = _test_spans(toks)
    entries = []
    for _, i, _, close, args in js.calls(toks, {"evaluateTerminalCommandSecurity"}):
        test = _innermost(tests, toks[i].pos) or (toks[i].pos, len(src), "(outside a test)")
        policy = js.literal(args[0]) if args else None
        lit = js.literal(args[1]) if len(args) > 1 else None
        m = re.search(r"toBe\(\s*\"(\w+)\"", src[toks[close].end: test[1]])
        result = m.group(1) if m else None
        if policy is None or lit is None or lit[1] or result not in _POLICIES or policy[0] not in _POLICIES:
            entries.append((test[2], Drop("not a literal command with a stated result"), "", ""))
            continue
        if result == "disabled":
            verdict = "block"
        elif policy[0] == "allowedWithoutPermission":
            verdict = "ask" if result == "allowedWithPermission" else "allow"
        else:
            verdict = "not-block"
        entries.append((test[2], None, verdict, lit[0]))
    yield from _numbered(f"{CONTINUE}/{CONTINUE_FILE}@{git.short}", entries)


# ---------------------------------------------------------------------------------------------
# nanostack

NANOSTACK_FILE = "ci/e2e-guard-regression.sh"


def nanostack_rows(git):
    """`run_case EXIT 'command'`: exit 1 is block, 0 allow; items are `cell_name/k`."""
    cell, k = None, 0
    for line in git.read(NANOSTACK_FILE).split("\n"):
        m = re.match(r"^(cell_\w+)\(\)", line)
        if m:
            cell, k = m.group(1), 0
            continue
        s = line.strip()
        if not s.startswith("run_case "):
            continue
        k += 1
        # A case written `"$(printf '...')"` is the printf's text (its only escape here is \n);
        # the others are one shell word.
        pm = re.fullmatch(r"run_case ([01]) \"\$\(printf '([^']*)'\)\"", s)
        if pm:
            code, cmd = pm.group(1), pm.group(2).replace("\\n", "\n")
        else:
            words = shlex.split(s)
            if len(words) != 3 or ("$(" in s and "printf" in s):
                raise SystemExit(f"{NANOSTACK_FILE}: cannot read {s!r}")
            code, cmd = words[1], words[2]
        if code not in ("0", "1"):
            raise SystemExit(f"{NANOSTACK_FILE}: exit code {code!r} in {s!r}")
        yield None, f"{NANOSTACK}/{NANOSTACK_FILE}@{git.short}#{cell}/{k}", "block" if code == "1" else "allow", cmd


# ---------------------------------------------------------------------------------------------
# gptme

GPTME_FILE = "tests/test_tools_shell_validation.py"
# Everyday read-only commands the test keeps auto-approved (`REALISTIC_USAGE`): left out, the
# tldr corpus measures everyday commands.
GPTME_SKIPPED_LISTS = {"REALISTIC_USAGE"}


def _py_strings(node, env):
    """The strings an expression can be: a literal, a local variable holding one, or an f-string
    whose names are all parametrized (one string per value). None when it is anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Name) and node.id in env:
        return env[node.id]
    if isinstance(node, ast.JoinedStr):
        outs = [""]
        for part in node.values:
            if isinstance(part, ast.Constant):
                outs = [o + part.value for o in outs]
            elif isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Name) and part.value.id in env:
                outs = [o + v for o in outs for v in env[part.value.id]]
            else:
                return None
        return outs
    return None


def _parametrized(fn):
    """name → values of the test's `@pytest.mark.parametrize("name", [literals])`, and whether it
    runs over a skipped list."""
    env, skipped = {}, False
    for dec in fn.decorator_list:
        if not (isinstance(dec, ast.Call) and getattr(dec.func, "attr", "") == "parametrize" and len(dec.args) > 1):
            continue
        name, values = dec.args[0], dec.args[1]
        if isinstance(values, ast.Name) and values.id in GPTME_SKIPPED_LISTS:
            skipped = True
        if isinstance(name, ast.Constant) and isinstance(values, ast.List):
            literals = [v.value for v in values.elts if isinstance(v, ast.Constant)]
            if len(literals) == len(values.elts):
                env[name.value] = literals
    return env, skipped


def _gptme_asserted(fn, env):
    """(strings or None, verdict) of every verdict a test function asserts, in order."""
    pending = {}  # variable → the commands of the is_denylisted call assigned to it
    found = []
    for stmt in fn.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
            if isinstance(target, ast.Name):
                strings = _py_strings(value, env)
                if strings is not None:
                    env[target.id] = strings
            if (isinstance(value, ast.Call) and getattr(value.func, "id", "") == "is_denylisted"
                    and isinstance(target, ast.Tuple) and isinstance(target.elts[0], ast.Name)):
                pending[target.elts[0].id] = _py_strings(value.args[0], env)
        elif isinstance(stmt, ast.Assert):
            test, negated = stmt.test, False
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                test, negated = test.operand, True
            if isinstance(test, ast.Call) and getattr(test.func, "id", "") == "is_allowlisted":
                found.append((_py_strings(test.args[0], env), "ask" if negated else "allow"))
            elif isinstance(test, ast.Name) and test.id in pending:
                found.append((pending.pop(test.id), "not-block" if negated else "block"))
    return found


def gptme_rows(git):
    """Every command the test file passes to `is_allowlisted` (asserted true: allow, false: ask)
    or `is_denylisted` (its `denied` asserted true: block, false: not-block), read with Python's
    own parser; items are `Class::test`."""
    tree = ast.parse(git.read(GPTME_FILE))
    entries = []
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef):
            continue
        for fn in cls.body:
            if not isinstance(fn, ast.FunctionDef) or not fn.name.startswith("test"):
                continue
            env, skipped = _parametrized(fn)
            if skipped:
                continue
            for strings, verdict in _gptme_asserted(fn, env):
                for cmd in strings or [None]:
                    drop = Drop(BUILT_AT_RUN_TIME) if cmd is None else None
                    entries.append((f"{cls.name}::{fn.name}", drop, verdict, cmd or ""))
    yield from _numbered(f"{GPTME}/{GPTME_FILE}@{git.short}", entries)


# ---------------------------------------------------------------------------------------------
# Stored rows and decisions


def stored_rows():
    """bypass_raw.tsv: `source<TAB>licence<TAB>verdict<TAB>command` (the command escaped as in the
    corpus), after `#` comments. Yields (None, source, verdict, command, licence)."""
    with open(RAW_FILE, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.startswith("#") or not line.strip():
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 4:
                raise SystemExit(f"{RAW_FILE}:{n}: {len(parts)} fields, want 4")
            source, licence, verdict, cmd = parts
            if verdict.split(" [")[0] not in VERDICTS:
                raise SystemExit(f"{RAW_FILE}:{n}: verdict {verdict!r} is not one of {VERDICTS}")
            yield None, source, verdict, unescape(cmd), licence


def decisions():
    """command → (label, reason) from bypass_labels.tsv: `label<TAB>reason<TAB>command`."""
    out = {}
    with open(LABELS_FILE, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.startswith("#") or not line.strip():
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3 or parts[0] not in ("block", "flag", "allow", "drop"):
                raise SystemExit(f"{LABELS_FILE}:{n}: want label<TAB>reason<TAB>command, got {line!r}")
            cmd = unescape(parts[2])
            if parts[0] == "drop" and parts[1] not in DROP_REASONS:
                raise SystemExit(f"{LABELS_FILE}:{n}: drop reason {parts[1]!r} is not one of {sorted(DROP_REASONS)}")
            if cmd in out:
                raise SystemExit(f"{LABELS_FILE}:{n}: a second decision for {parts[2]!r}")
            out[cmd] = (parts[0], parts[1])
    return out


def candidates(gits):
    """Every row of every source, in source order: (Drop or None, source, verdict, command,
    licence). gits: repository name → common.GitDir."""
    readers = ((SAFETY_NET, safety_net_rows), (CONTINUE, continue_rows), (NANOSTACK, nanostack_rows), (GPTME, gptme_rows))
    for repo, rows in readers:
        for drop, source, verdict, cmd in rows(gits[repo]):
            yield drop, source, verdict, cmd, LICENCES[repo][2]
    yield from stored_rows()


def write_candidates(gits, path):
    """For reviewers: every candidate row with its source's verdict."""
    with open(path, "w", encoding="utf-8") as f:
        for drop, source, verdict, cmd, _ in candidates(gits):
            f.write(f"{'DROP ' + drop.reason if drop else ''}\t{verdict}\t{source}\t{escape(cmd)}\n")
