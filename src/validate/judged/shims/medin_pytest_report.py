"""medin's pytest reporter for judged runs (loaded through PYTEST_PLUGINS; see sitecustomize.py).

Records every test's outcome by node id, and collection errors, and writes them to
MEDIN_REPORT_DIR when pytest's command-line main returns — after a session, and after
`--version`, `--help` or `--collect-only` alike. A process that ends before that (the code under
test exited it) writes nothing, which the harness holds against it.
"""

import json
import os

_DIR = os.environ.get("MEDIN_REPORT_DIR")
_MAX_MESSAGE = 4000
_ORDER = {"passed": 0, "xfail": 1, "skipped": 1, "failed": 2, "error": 3}
_tests = {}
# Read by the sitecustomize shim at exit: a session that started must write its own result.
_session_started = False
_written = False


def _add(test_id, outcome, message="", kind="test"):
    old = _tests.get(test_id)
    if old is None or _ORDER[outcome] > _ORDER[old[0]]:
        _tests[test_id] = (outcome, (message or "")[-_MAX_MESSAGE:], kind)


def _text(report):
    try:
        return str(report.longreprtext)
    except Exception:  # noqa: BLE001
        return str(getattr(report, "longrepr", ""))


def pytest_runtest_logreport(report):
    xfail = hasattr(report, "wasxfail")
    if report.when == "call":
        if report.passed:
            _add(report.nodeid, "failed" if xfail else "passed", "unexpectedly passed (xpass)" if xfail else "")
        elif report.skipped:
            _add(report.nodeid, "xfail" if xfail else "skipped", _text(report))
        else:
            _add(report.nodeid, "failed", _text(report))
    elif report.skipped:
        _add(report.nodeid, "xfail" if xfail else "skipped", _text(report))
    elif report.failed:
        _add(report.nodeid, "error", "%s failed: %s" % (report.when, _text(report)))


def pytest_collectreport(report):
    if report.failed:
        _add(report.nodeid or "<collection>", "error", "collection failed: " + _text(report), "collection")


import pytest as _pytest


def pytest_sessionstart(session):
    global _session_started
    _session_started = True


@_pytest.hookimpl(hookwrapper=True)
def pytest_cmdline_main(config):
    outcome = yield
    try:
        status = outcome.get_result()
    except BaseException:  # noqa: BLE001  (pytest itself failed: no result to vouch for)
        return
    if not _DIR:
        return
    path = os.path.join(_DIR, "result-%d.json" % os.getpid())
    payload = {
        "runner": "pytest",
        "pid": os.getpid(),
        "complete": True,
        "exit_status": int(status) if status is not None else None,
        "tests": [
            {"id": k, "outcome": v[0], "message": v[1], "kind": v[2]} for k, v in sorted(_tests.items())
        ],
    }
    try:
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            json.dump(payload, f)
        os.replace(path + ".tmp", path)
        global _written
        _written = True
    except OSError:
        pass
