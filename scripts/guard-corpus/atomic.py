"""Atomic Red Team (`atomics/T*/T*.yaml`): every test whose supported_platforms include linux and
whose executor is sh or bash, its `#{arg}` placeholders filled from input_arguments defaults,
labelled by the per-test decisions in art_labels.tsv (keyed by auto_generated_guid)."""

import csv
import io
import os
import re

import miniyaml
from common import Drop

LABELS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "art_labels.tsv")
# Invoke-AtomicRedTeam replaces PathToAtomicsFolder with the expanded path of the atomics folder,
# by default $HOME/AtomicRedTeam/atomics on Linux; written here for a user named dev.
ATOMICS = "/home/dev/AtomicRedTeam/atomics"


def decisions():
    """guid → (label, reason) from art_labels.tsv."""
    out = {}
    with open(LABELS_FILE, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.startswith("#") or not line.strip():
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 4 or parts[1] not in ("block", "flag", "drop"):
                raise ValueError(f"{LABELS_FILE}:{n}: bad line {line!r}")
            if parts[0] in out:
                raise ValueError(f"{LABELS_FILE}:{n}: {parts[0]} twice")
            out[parts[0]] = (parts[1], parts[2])
    return out


def tactics(git):
    """guid → sorted tactics, from atomics/Indexes/Indexes-CSV/linux-index.csv."""
    text = git.read("atomics/Indexes/Indexes-CSV/linux-index.csv")
    out = {}
    for row in csv.DictReader(io.StringIO(text)):
        out.setdefault(row["Test GUID"], set()).add(row["Tactic"])
    return {k: sorted(v) for k, v in out.items()}


def render(test):
    """The test's command with its placeholders filled."""
    cmd = test["executor"]["command"]
    args = test.get("input_arguments") or {}

    def value(m):
        name = m.group(1)
        if name not in args or args[name] is None or args[name].get("default") is None:
            raise ValueError(f"{test['name']}: no default for #{{{name}}}")
        return str(args[name]["default"])

    for _ in range(3):  # a default may itself name another argument
        cmd = re.sub(r"#\{(\w+)\}", value, cmd)
    if "#{" in cmd:
        raise ValueError(f"{test['name']}: unfilled placeholder in {cmd!r}")
    cmd = cmd.replace("$PathToAtomicsFolder", ATOMICS).replace("PathToAtomicsFolder", ATOMICS)
    lines = [line.rstrip() for line in cmd.strip("\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def rows(git, stats):
    """Yields (label or Drop, source, command, tactics)."""
    labels = decisions()
    tac = tactics(git)
    seen = set()
    for path in git.ls("atomics/"):
        if not re.fullmatch(r"atomics/T[\d.]+/T[\d.]+\.yaml", path):
            continue
        doc = miniyaml.load(git.read(path))
        for test in doc.get("atomic_tests") or []:
            if "linux" not in (test.get("supported_platforms") or []):
                continue
            executor = test.get("executor") or {}
            if executor.get("name") not in ("sh", "bash"):
                stats["linux tests with another executor (manual, powershell)"] += 1
                continue
            guid = test["auto_generated_guid"]
            seen.add(guid)
            source = f"{path}@{git.short}#{test['name']}"
            if guid not in labels:
                raise ValueError(f"{source}: no decision in art_labels.tsv for {guid}")
            label, reason = labels[guid]
            if label == "drop":
                yield Drop(reason), source, "", tac.get(guid, [])
                continue
            yield label, source, render(test), tac.get(guid, [])
    stale = set(labels) - seen
    if stale:
        raise ValueError(f"art_labels.tsv decides tests that are not there: {sorted(stale)}")
