#!/usr/bin/env bash
# Regenerates the real test-runner outputs under tests/data/testparse/ (the fixtures of
# src/testparse): throwaway projects in a temp dir, run for real with cargo test, cargo nextest,
# pytest, unittest (python3 and, if present, python3.12), node --test, jest, go test and perl's
# Test::More, each output saved as <case>.txt|json|xml with its exit code in <case>.exit.
#
# Not needed to run medin's tests (the outputs are committed). Needs: cargo, cargo-nextest,
# python3 (pytest is pip-installed into a venv), node + npm (jest, jest-junit are npm-installed),
# go (`apt-get install golang-go`), perl. Timings, thread ids and temp paths change on every
# run, so after regenerating: `TESTPARSE_BLESS=1 cargo test --test testparse_fixtures`, then
# read each changed expect.json against its output before committing.
#
# Usage: scripts/testparse_fixtures.sh [OUT_DIR]   (default: tests/data/testparse)
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/tests/data/testparse}
W=$(mktemp -d /tmp/testparse-fixtures.XXXXXX)
echo "work dir: $W, output: $OUT"
unset RUST_BACKTRACE
export CARGO_TERM_COLOR=never

# run DIR CASE CMD...: run CMD, output (stdout+stderr) to $OUT/DIR/CASE.txt, exit code to .exit
run() {
  local dir=$1 case=$2; shift 2
  mkdir -p "$OUT/$dir"
  "$@" >"$OUT/$dir/$case.txt" 2>&1
  echo $? >"$OUT/$dir/$case.exit"
  echo "$dir/$case: exit $(cat "$OUT/$dir/$case.exit")"
}
# runj DIR CASE EXT CMD...: stdout only (JSON reporters), stderr dropped
runj() {
  local dir=$1 case=$2 ext=$3; shift 3
  mkdir -p "$OUT/$dir"
  "$@" >"$OUT/$dir/$case.$ext" 2>/dev/null
  echo $? >"$OUT/$dir/$case.exit"
}

# ---------------------------------------------------------------- cargo test / nextest
mk_crate() { (cd "$W" && cargo new --lib --vcs none "$1" >/dev/null 2>&1); }
mk_crate lt && mkdir -p "$W/lt/tests" "$W/lt/.config"
cat >"$W/lt/src/lib.rs" <<'EOF'
/// Adds two numbers.
///
/// ```
/// assert_eq!(lt::add(1, 2), 3);
/// ```
///
/// ```
/// assert_eq!(lt::add(2, 2), 5);
/// ```
pub fn add(a: i32, b: i32) -> i32 {
    a + b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(1, 1), 2);
    }

    #[test]
    fn fails_eq() {
        assert_eq!(add(1, 1), 3, "one plus one");
    }

    #[test]
    fn panics_msg() {
        panic!("boom: something went wrong");
    }

    #[test]
    #[ignore]
    fn slow() {}

    #[test]
    fn prints_fake() {
        println!("test tests::fake ... ok");
        println!("test result: ok. 99 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s");
    }
}
EOF
printf '#[test]\nfn integ_ok() {\n    assert!(lt::add(2, 3) == 5);\n}\n\n#[test]\nfn integ_fail() {\n    let v: Option<i32> = None;\n    v.unwrap();\n}\n' >"$W/lt/tests/integ.rs"
printf '#[test]\nfn other_ok() {}\n#[test]\nfn other_ok2() {}\n' >"$W/lt/tests/other.rs"
printf '[profile.ci]\nfail-fast = false\n[profile.ci.junit]\npath = "junit.xml"\n' >"$W/lt/.config/nextest.toml"
(
  cd "$W/lt"
  run libtest mixed_no_fail_fast cargo test --offline --no-fail-fast
  run libtest lib_fail_fast cargo test --offline
  run libtest filtered cargo test --offline --lib adds
  run libtest nocapture_fake cargo test --offline --lib -- --nocapture
  run libtest include_ignored_filter cargo test --offline --test other -- --include-ignored
  run libtest ansi_color cargo test --offline --lib -- --color always
  RUST_BACKTRACE=1 run libtest backtrace cargo test --offline --lib panics_msg
  run libtest quiet_terse cargo test --offline -q --no-fail-fast
  run nextest mixed cargo nextest run --offline --no-fail-fast
  run nextest ci_profile cargo nextest run --offline --profile ci
  mkdir -p "$OUT/junit" && cp target/nextest/ci/junit.xml "$OUT/junit/nextest.xml"
)
mk_crate cerr
printf 'pub fn f() -> i32 {\n    let x: i32 = "not a number";\n    x\n}\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() { assert_eq!(super::f(), 1); }\n}\n' >"$W/cerr/src/lib.rs"
(cd "$W/cerr" && run libtest compile_error cargo test --offline && run nextest compile_error cargo nextest run --offline)
mk_crate notests && echo 'pub fn f() {}' >"$W/notests/src/lib.rs"
(cd "$W/notests" && run libtest no_tests cargo test --offline && run nextest no_tests cargo nextest run --offline)
mk_crate allpass
cat >"$W/allpass/src/lib.rs" <<'EOF'
/// ```
/// assert!(true);
/// ```
pub fn f() {}
#[cfg(test)]
mod tests {
    #[test] fn a() {}
    #[test] fn b() {}
    #[test] #[ignore = "needs network"] fn c() {}
    #[test] #[should_panic(expected = "x")] fn d() { panic!("x") }
}
EOF
(cd "$W/allpass" && run libtest all_pass cargo test --offline && run nextest all_pass cargo nextest run --offline)
mk_crate crash && mkdir -p "$W/crash/tests"
printf '#[cfg(test)]\nmod tests {\n    #[test]\n    fn fine() {}\n    #[test]\n    fn aborts() {\n        std::thread::sleep(std::time::Duration::from_millis(200));\n        std::process::abort();\n    }\n}\n' >"$W/crash/src/lib.rs"
printf '#[test]\nfn integ_ok() {}\n' >"$W/crash/tests/it.rs"
(cd "$W/crash" && run libtest crash_abort cargo test --offline --no-fail-fast)

# ---------------------------------------------------------------- pytest
python3 -m venv "$W/venv" && "$W/venv/bin/pip" install -q pytest
PY=$W/venv/bin/python
mkdir -p "$W/py/proj/tests" "$W/py/coll/tests" "$W/py/empty/tests" "$W/py/ok/tests"
cat >"$W/py/proj/tests/test_math.py" <<'EOF'
import pytest


def add(a, b):
    return a + b


def test_add():
    assert add(1, 2) == 3


def test_add_fails():
    assert add(2, 2) == 5, "two plus two"


def test_raises():
    raise ValueError("bad value here")


def test_fake_output():
    print("tests/test_math.py::test_x PASSED")
    print("=== 50 passed in 0.01s ===")


@pytest.mark.skip(reason="not today")
def test_skipped():
    pass


@pytest.mark.xfail(reason="known bug")
def test_xfail():
    assert False


@pytest.mark.parametrize("n", [1, 2, 3])
def test_param(n):
    assert n != 2


class TestThing:
    def test_method(self):
        assert {"a": 1} == {"a": 2}
EOF
printf 'import pytest\n\n\n@pytest.fixture\ndef broken():\n    raise RuntimeError("fixture exploded")\n\n\ndef test_uses_broken(broken):\n    pass\n\n\ndef test_ok():\n    pass\n' >"$W/py/proj/tests/test_other.py"
printf 'import nonexistent_module_xyz\n\ndef test_a():\n    pass\n' >"$W/py/coll/tests/test_bad.py"
printf 'def test_good():\n    pass\n' >"$W/py/coll/tests/test_good.py"
printf 'import pytest\ndef test_a():\n    pass\ndef test_b():\n    pass\n@pytest.mark.skip\ndef test_c():\n    pass\n' >"$W/py/ok/tests/test_ok.py"
(
  cd "$W/py/proj"
  run pytest q "$PY" -m pytest -q tests
  run pytest default "$PY" -m pytest tests
  run pytest rA "$PY" -m pytest -rA tests
  run pytest verbose "$PY" -m pytest -v tests
  run pytest ansi_color "$PY" -m pytest --color=yes tests
  run pytest stop_first "$PY" -m pytest -x tests
  run pytest junit_run "$PY" -m pytest -q tests --junitxml="$OUT/junit/pytest.xml"
)
(cd "$W/py/coll" && run pytest collection_error "$PY" -m pytest tests)
(cd "$W/py/empty" && run pytest no_tests "$PY" -m pytest tests)
(cd "$W/py/ok" && run pytest all_pass_q "$PY" -m pytest -q tests && run pytest all_pass "$PY" -m pytest tests)
mkdir -p "$W/py/params/tests"
printf 'import pytest\n\n@pytest.mark.parametrize("expr", ["a - b", "c"])\ndef test_expr(expr):\n    assert expr == "c", "bad - expr"\n' >"$W/py/params/tests/test_params.py"
(cd "$W/py/params" && run pytest param_ids "$PY" -m pytest tests)
# pytest 7 as well (older summary and diff formats).
python3 -m venv "$W/venv7" && "$W/venv7/bin/pip" install -q "pytest<8"
(cd "$W/py/proj" && run pytest pytest7_default "$W/venv7/bin/python" -m pytest tests && run pytest pytest7_q "$W/venv7/bin/python" -m pytest -q tests)

# ---------------------------------------------------------------- unittest
mkdir -p "$W/ut/mixed" "$W/ut/ok" "$W/ut/empty" "$W/ut/imperr" "$W/ut/skip"
cat >"$W/ut/mixed/test_calc.py" <<'EOF'
import unittest


class CalcTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(1 + 1, 2)

    def test_add_wrong(self):
        self.assertEqual(1 + 1, 3, "math is broken")

    def test_error(self):
        raise KeyError("missing")

    @unittest.skip("later")
    def test_skip(self):
        pass

    @unittest.expectedFailure
    def test_expected(self):
        self.assertTrue(False)

    def test_fake(self):
        print("test_x (test_calc.CalcTest.test_x) ... ok")
        print("Ran 40 tests in 0.001s")
        print("OK")


class OtherTest(unittest.TestCase):
    def test_sub(self):
        for i in range(2):
            with self.subTest(i=i):
                self.assertEqual(i, 0)
EOF
printf 'import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n        pass\n    def test_b(self):\n        pass\n' >"$W/ut/ok/test_ok.py"
printf 'import nothere_abc\n' >"$W/ut/imperr/test_imp.py"
printf 'import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n        pass\n    def test_b(self):\n        pass\n    @unittest.skip("no")\n    def test_c(self):\n        pass\n' >"$W/ut/skip/test_s.py"
(cd "$W/ut/mixed" && run unittest verbose python3 -m unittest -v && run unittest default python3 -m unittest)
(cd "$W/ut/ok" && run unittest all_pass python3 -m unittest && run unittest all_pass_verbose python3 -m unittest -v)
(cd "$W/ut/empty" && run unittest no_tests python3 -m unittest)
(cd "$W/ut/imperr" && run unittest import_error python3 -m unittest)
(cd "$W/ut/skip" && run unittest skip_py311 python3 -m unittest)
mkdir -p "$W/ut/doc"
printf 'import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n        """Checks that a equals b."""\n        self.assertEqual(1, 2)\n    def test_b(self):\n        pass\n' >"$W/ut/doc/test_doc.py"
(cd "$W/ut/doc" && run unittest docstring_verbose python3 -m unittest -v)
PY312=
for c in python3.12 /root/.pyenv/versions/3.12*/bin/python3; do
  if "$c" -c 'import unittest' >/dev/null 2>&1; then PY312=$c; break; fi
done
if [ -n "$PY312" ]; then
  (cd "$W/ut/empty" && run unittest no_tests_py312 "$PY312" -m unittest)
  (cd "$W/ut/mixed" && run unittest verbose_py312 "$PY312" -m unittest -v)
  (cd "$W/ut/skip" && run unittest skip_py312 "$PY312" -m unittest)
fi
PY313=
for c in python3.13 /root/.pyenv/versions/3.13*/bin/python3; do
  if "$c" -c 'import unittest' >/dev/null 2>&1; then PY313=$c; break; fi
done
if [ -n "$PY313" ]; then
  (cd "$W/ut/mixed" && run unittest verbose_py313 "$PY313" -m unittest -v)
  (cd "$W/ut/skip" && run unittest skip_py313 "$PY313" -m unittest)
fi

# ---------------------------------------------------------------- node --test
mkdir -p "$W/nd/mixed/test" "$W/nd/ok/test" "$W/nd/empty/test"
cat >"$W/nd/mixed/test/math.test.js" <<'EOF'
const test = require('node:test');
const assert = require('node:assert');

test('adds', () => {
  assert.strictEqual(1 + 1, 2);
});

test('fails equality', () => {
  assert.strictEqual(1 + 1, 3);
});

test('throws error', () => {
  throw new Error('kaboom');
});

test('skipped one', { skip: 'not now' }, () => {});

test('todo one', { todo: true }, () => {});

test('fake output', () => {
  console.log('ok 99 - fake');
  console.log('# pass 99');
});

test.describe('group', () => {
  test.it('inner ok', () => {});
  test.it('inner fail', () => {
    assert.deepStrictEqual({ a: 1 }, { a: 2 });
  });
});
EOF
printf "const test = require('node:test');\ntest('other ok', () => {});\n" >"$W/nd/mixed/test/other.test.js"
printf "const test = require('node:test');\ntest('a', () => {});\ntest('b', () => {});\n" >"$W/nd/ok/test/a.test.js"
(cd "$W/nd/mixed" && run node default_nontty node --test && run node tap node --test --test-reporter=tap && run node spec node --test --test-reporter=spec)
(cd "$W/nd/ok" && run node all_pass_default node --test && run node all_pass_tap node --test --test-reporter=tap && run node all_pass_spec node --test --test-reporter=spec)
(cd "$W/nd/empty" && run node no_tests node --test && run node no_tests_tap node --test --test-reporter=tap && run node no_tests_spec node --test --test-reporter=spec)
# node 22 too (its spec reporter prints errors only in the `failing tests` section).
mkdir -p "$W/n22" && (cd "$W/n22" && npm init -y >/dev/null && npm install --no-audit --no-fund node@22 >/dev/null 2>&1)
N22=$W/n22/node_modules/.bin/node
if "$N22" --version >/dev/null 2>&1; then
  (cd "$W/nd/mixed" && run node node22_default "$N22" --test && run node node22_tap "$N22" --test --test-reporter=tap && run node node22_spec "$N22" --test --test-reporter=spec)
  (cd "$W/nd/empty" && run node node22_no_tests "$N22" --test)
fi

# ---------------------------------------------------------------- jest
mkdir -p "$W/jest/__tests__"
(cd "$W/jest" && npm init -y >/dev/null && npm install --no-audit --no-fund jest jest-junit >/dev/null 2>&1)
cat >"$W/jest/__tests__/math.test.js" <<'EOF'
describe('math', () => {
  test('adds', () => {
    expect(1 + 1).toBe(2);
  });
  test('fails equality', () => {
    expect(1 + 1).toBe(3);
  });
  test.skip('skipped one', () => {});
  test.todo('todo one');
  test('fake output', () => {
    console.log('Tests:       99 passed, 99 total');
  });
});
test('throws', () => {
  throw new Error('kaboom');
});
EOF
printf "test('other ok', () => {\n  expect(true).toBe(true);\n});\n" >"$W/jest/__tests__/other.test.js"
printf "const x = require('./does-not-exist');\ntest('never', () => {});\n" >"$W/jest/__tests__/broken.test.js"
(
  cd "$W/jest"
  run jest text npx jest --ci
  runj jest json_mixed json npx jest --ci --json
  JEST_JUNIT_OUTPUT_FILE="$OUT/junit/jest.xml" npx jest --ci --reporters=default --reporters=jest-junit >/dev/null 2>&1
  run jest verbose npx jest --ci --verbose __tests__/math.test.js
  run jest all_pass npx jest --ci __tests__/other.test.js
  runj jest all_pass_json json npx jest --ci --json __tests__/other.test.js
  run jest no_tests npx jest --ci nomatchpattern
  run jest suite_error_only npx jest --ci __tests__/broken.test.js
)
# jest 29 too.
mkdir -p "$W/j29" && cp -r "$W/jest/__tests__" "$W/j29/"
(
  cd "$W/j29" && npm init -y >/dev/null && npm install --no-audit --no-fund jest@29 >/dev/null 2>&1
  run jest jest29_text ./node_modules/.bin/jest --ci
  runj jest jest29_json json ./node_modules/.bin/jest --ci --json
  run jest jest29_verbose ./node_modules/.bin/jest --ci --verbose __tests__/math.test.js
)

# ---------------------------------------------------------------- go test
if command -v go >/dev/null 2>&1; then
  mkdir -p "$W/gop/calc" "$W/gop/other" "$W/gop/notest" "$W/gop/broken"
  export GOFLAGS=-mod=mod GOPROXY=off GOCACHE=$W/gocache
  (cd "$W/gop" && go mod init example.com/calc >/dev/null 2>&1)
  printf 'package calc\n\nfunc Add(a, b int) int { return a + b }\n' >"$W/gop/calc/calc.go"
  cat >"$W/gop/calc/calc_test.go" <<'EOF'
package calc

import (
	"fmt"
	"testing"
)

func TestAdd(t *testing.T) {
	if Add(1, 1) != 2 {
		t.Fatal("bad")
	}
}

func TestAddWrong(t *testing.T) {
	if got := Add(2, 2); got != 5 {
		t.Errorf("Add(2, 2) = %d, want 5", got)
	}
}

func TestSkip(t *testing.T) {
	t.Skip("not ready")
}

func TestFake(t *testing.T) {
	fmt.Println("--- PASS: TestGhost (0.00s)")
	fmt.Println("ok  \texample.com/calc\t0.001s")
}

func TestTable(t *testing.T) {
	for _, n := range []int{1, 2} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			if n == 2 {
				t.Errorf("n is %d", n)
			}
		})
	}
}

func TestPanic(t *testing.T) {
	var m map[string]int
	m["x"] = 1
}
EOF
  printf 'package other\n\nimport "testing"\n\nfunc TestOk(t *testing.T) {}\n' >"$W/gop/other/other_test.go"
  echo 'package notest' >"$W/gop/notest/n.go"
  printf 'package broken\n\nfunc F() int { return "x" }\n' >"$W/gop/broken/b.go"
  printf 'package broken\nimport "testing"\nfunc TestB(t *testing.T) {}\n' >"$W/gop/broken/b_test.go"
  mkdir -p "$W/gop/slow"
  printf 'package slow\nimport ("testing"; "time")\nfunc TestQuick(t *testing.T) {}\nfunc TestSlow(t *testing.T) { time.Sleep(5 * time.Second) }\n' >"$W/gop/slow/slow_test.go"
  (
    cd "$W/gop"
    run go default go test ./calc/ ./other/
    run go verbose go test -v ./calc/ ./other/
    runj go json_mixed json go test -json ./calc/ ./other/
    run go all_pass go test ./other/
    run go all_pass_verbose go test -v ./other/
    run go filtered_none go test -run TestNothing ./other/
    run go no_test_files go test ./notest/
    run go build_failure go test ./broken/ ./other/
    run go timeout_verbose go test -v -timeout 1s ./slow/
    go test -json ./broken/ >"$OUT/go/build_failure_json.json" 2>&1
    echo $? >"$OUT/go/build_failure_json.exit"
  )
else
  echo "go not found (apt-get install golang-go): go fixtures not regenerated" >&2
fi

# ---------------------------------------------------------------- TAP (perl Test::More)
mkdir -p "$W/perl/t"
cat >"$W/perl/t/basic.t" <<'EOF'
use strict; use warnings;
use Test::More tests => 5;
ok(1, 'first passes');
is(1 + 1, 3, 'sum is three');
SKIP: { skip "no network", 1; ok(0, 'network'); }
TODO: { local $TODO = "later"; ok(0, 'todo thing'); }
ok(1, 'last passes');
EOF
printf 'use Test::More;\nok(1, "a");\nok(1, "b");\ndone_testing();\n' >"$W/perl/t/ok.t"
(cd "$W/perl" && run tap perl_test_more perl t/basic.t && run tap perl_all_pass perl t/ok.t)

# ================================================================ more variants
# (a 2-crate workspace, should_panic, doc tests, --ignored, quiet, --nocapture; pytest fixture
# errors, xfail/xpass, --tb styles, odd parameter ids; unittest setUpClass errors, unexpected
# successes; node nested suites, todo, --test-name-pattern; jest nested/each/syntax errors; go
# subtests, examples, a test printing `=== RUN`)
(
# ---------------------------------------------------------------- cargo: a 2-crate workspace
mkdir -p "$W/ws" && cd "$W/ws" || exit 1
printf '[workspace]\nmembers = ["alpha", "beta"]\nresolver = "2"\n' >Cargo.toml
cargo new --lib --vcs none alpha >/dev/null 2>&1
cargo new --lib --vcs none beta >/dev/null 2>&1
mkdir -p alpha/tests beta/tests .config
cat >alpha/src/lib.rs <<'RS'
/// Doubles.
///
/// ```
/// assert_eq!(alpha::double(2), 4);
/// ```
///
/// ```
/// assert_eq!(alpha::double(2), 5, "doc says five");
/// ```
pub fn double(x: i32) -> i32 {
    x * 2
}

/// Panics on zero.
///
/// ```should_panic
/// alpha::nonzero(1);
/// ```
///
/// ```no_run
/// alpha::nonzero(3);
/// ```
///
/// ```ignore
/// not rust at all
/// ```
pub fn nonzero(x: i32) -> i32 {
    if x == 0 {
        panic!("zero!");
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles() {
        assert_eq!(double(3), 6);
    }

    #[test]
    fn multiline_panic() {
        panic!("first line of the message\nsecond line: {}\nthird line", 42);
    }

    #[test]
    #[should_panic]
    fn should_panic_but_does_not() {
        let _ = nonzero(5);
    }

    #[test]
    #[should_panic(expected = "negative")]
    fn should_panic_wrong_message() {
        nonzero(0);
    }

    #[test]
    #[should_panic(expected = "zero")]
    fn should_panic_ok() {
        nonzero(0);
    }

    #[test]
    fn prints_fake_ok() {
        println!("test foo ... ok");
        println!("test alpha_fake::bar ... ok");
        println!("running 1 test");
        println!("test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s");
    }

    #[test]
    #[ignore = "slow"]
    fn ignored_slow() {}

    #[test]
    #[ignore]
    fn ignored_failing() {
        assert!(1 > 2, "ignored test fails when run");
    }

    #[test]
    fn result_err() -> Result<(), String> {
        Err("returned an Err".to_string())
    }
}
RS
cat >alpha/tests/api.rs <<'RS'
#[test]
fn api_ok() {
    assert_eq!(alpha::double(1), 2);
}

#[test]
fn api_eq_fail() {
    let v = vec![1, 2, 3];
    assert_eq!(v, vec![1, 2, 4]);
}
RS
cat >beta/src/lib.rs <<'RS'
pub fn greet(n: &str) -> String {
    format!("hi {n}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn greets() {
        assert_eq!(super::greet("a"), "hi a");
    }

    #[test]
    fn noisy() {
        println!("noisy stdout line 1");
        eprintln!("noisy stderr line");
        println!("noisy stdout line 2");
    }

    #[test]
    fn noisy_fail() {
        println!("about to fail");
        assert!(super::greet("b").is_empty(), "greeting was {:?}", super::greet("b"));
    }
}
RS
cat >beta/tests/flow.rs <<'RS'
#[test]
fn flow_ok() {}

#[test]
fn flow_unwrap() {
    let r: Result<u8, String> = Err("no such file".into());
    r.unwrap();
}
RS
printf '[profile.default.junit]\npath = "junit.xml"\n' >.config/nextest.toml
run libtest ws_no_fail_fast cargo test --offline --no-fail-fast
run libtest ws_fail_fast cargo test --offline
run libtest ws_quiet cargo test --offline -q --no-fail-fast
run libtest ws_ignored cargo test --offline --no-fail-fast --lib -- --ignored
run libtest ws_include_ignored cargo test --offline --no-fail-fast -p alpha -- --include-ignored
run libtest ws_filter_none cargo test --offline nosuchtestname
run libtest ws_doc_only cargo test --offline --doc -p alpha
run libtest ws_threads1_nocapture cargo test --offline --no-fail-fast -p beta -- --test-threads=1 --nocapture
run libtest ws_nocapture cargo test --offline --no-fail-fast -p alpha --lib -- --nocapture
RUST_BACKTRACE=1 run libtest ws_backtrace cargo test --offline --no-fail-fast -p beta
run libtest ws_exact_one cargo test --offline -p beta --lib -- --exact tests::greets
run nextest ws_no_fail_fast cargo nextest run --offline --no-fail-fast
mkdir -p "$OUT/junit" && cp target/nextest/default/junit.xml "$OUT/junit/nextest_ws.xml"
run nextest ws_fail_fast cargo nextest run --offline
run nextest ws_filter_none cargo nextest run --offline nosuchtestname
run nextest ws_run_ignored cargo nextest run --offline --no-fail-fast --run-ignored all
run nextest ws_beta_pass cargo nextest run --offline -p beta -E 'test(greets) | test(noisy)' -- --exact tests::greets tests::noisy
# a compile error in an integration test file (lib compiles fine)
mkdir -p "$W/tcerr/tests" && cd "$W/tcerr" || exit 1
cargo init --lib --vcs none --name tcerr . >/dev/null 2>&1
printf 'pub fn f() -> u8 {\n    1\n}\n' >src/lib.rs
printf '#[test]\nfn t() {\n    let s: String = tcerr::f();\n    assert_eq!(s, "1");\n}\n\n#[test]\nfn u() {\n    undefined_fn();\n}\n' >tests/bad.rs
run libtest test_file_compile_error cargo test --offline
run nextest test_file_compile_error cargo nextest run --offline
)
# ---------------------------------------------------------------- pytest: more variants
PY=$W/venv/bin/python
mkdir -p "$W/py2/proj/tests" "$W/py2/coll/tests" "$W/py2/empty"
cat >"$W/py2/proj/tests/test_more.py" <<'PYEOF'
import pytest


@pytest.fixture
def setup_fails():
    raise RuntimeError("setup exploded")


@pytest.fixture
def teardown_fails():
    yield 1
    raise RuntimeError("teardown exploded")


def test_ok():
    assert True


def test_setup_error(setup_fails):
    pass


def test_teardown_error(teardown_fails):
    assert teardown_fails == 1


def test_fails_and_teardown_errors(teardown_fails):
    assert teardown_fails == 2


@pytest.mark.xfail(reason="known")
def test_xfail():
    assert 0


@pytest.mark.xfail(reason="should fail but passes")
def test_xpass():
    assert 1


@pytest.mark.xfail(strict=True, reason="strict")
def test_xpass_strict():
    assert 1


@pytest.mark.parametrize("s", ["a b", "x[1]", "p::q", "with - dash"])
def test_ids(s):
    assert s == "a b"


@pytest.mark.parametrize("a,b", [(1, 2), (3, 3)], ids=["one two", "three [3]"])
def test_custom_ids(a, b):
    assert a == b


def test_prints_pytest_lines():
    print("tests/test_more.py::test_ghost PASSED")
    print("FAILED tests/test_more.py::test_ok - nope")
    print("=================== 40 passed in 0.02s ===================")
    assert False, "after printing"


def test_skip_inside():
    pytest.skip("skipped at runtime")


def helper(x):
    return 1 / x


def test_nested_call():
    helper(0)


def test_multiline_msg():
    raise AssertionError("line one\nline two\nline three")
PYEOF
printf 'from missing_pkg_xyz import thing\n\ndef test_never():\n    pass\n' >"$W/py2/coll/tests/test_imp.py"
printf 'def test_fine():\n    pass\n' >"$W/py2/coll/tests/test_fine.py"
printf 'def helper():\n    pass\n' >"$W/py2/empty/not_a_test.py"
(
  cd "$W/py2/proj"
  run pytest more_q "$PY" -m pytest -q tests
  run pytest more_default "$PY" -m pytest tests
  run pytest more_v "$PY" -m pytest -v tests
  run pytest more_rA "$PY" -m pytest -rA tests
  run pytest more_tb_short "$PY" -m pytest --tb=short tests
  run pytest more_tb_line "$PY" -m pytest --tb=line tests
  run pytest more_tb_native "$PY" -m pytest --tb=native tests
  run pytest more_tb_no_q "$PY" -m pytest -q --tb=no tests
  run pytest more_junit "$PY" -m pytest -q tests --junitxml="$OUT/junit/pytest_more.xml"
  run pytest deselect_all "$PY" -m pytest -q -k nosuchthing tests
  run pytest one_pass_v "$PY" -m pytest -v "tests/test_more.py::test_ok"
)
(cd "$W/py2/coll" && run pytest collection_error_q "$PY" -m pytest -q tests && run pytest collection_error_v "$PY" -m pytest -v tests && run pytest collection_error_continue "$PY" -m pytest --continue-on-collection-errors tests)
(cd "$W/py2/empty" && run pytest no_tests_q "$PY" -m pytest -q && run pytest no_tests_v "$PY" -m pytest -v)
# ---------------------------------------------------------------- unittest: more variants
mkdir -p "$W/ut2/pkg/tests" "$W/ut2/setup"
cat >"$W/ut2/pkg/tests/__init__.py" <<'PYEOF'
PYEOF
cat >"$W/ut2/pkg/tests/test_more.py" <<'PYEOF'
import unittest


def helper(x):
    return 1 / x


class MoreTest(unittest.TestCase):
    def test_ok(self):
        self.assertTrue(True)

    def test_fail_multiline(self):
        self.assertEqual("a\nb\nc", "a\nB\nc")

    def test_error_nested(self):
        helper(0)

    @unittest.skip("not now")
    def test_skip_deco(self):
        pass

    def test_skip_runtime(self):
        self.skipTest("runtime skip")

    @unittest.expectedFailure
    def test_expected_failure(self):
        self.assertEqual(1, 2)

    @unittest.expectedFailure
    def test_unexpected_success(self):
        self.assertEqual(1, 1)

    def test_prints_fake(self):
        print("test_ghost (tests.test_more.MoreTest.test_ghost) ... ok")
        print("FAIL: test_ok (tests.test_more.MoreTest.test_ok)")
        print("----------------------------------------------------------------------")
        print("Ran 99 tests in 0.000s")
        print("OK")


@unittest.skip("whole class")
class SkippedClass(unittest.TestCase):
    def test_a(self):
        pass

    def test_b(self):
        pass
PYEOF
cat >"$W/ut2/setup/test_setup.py" <<'PYEOF'
import unittest


class BrokenSetUpClass(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        raise RuntimeError("class setup exploded")

    def test_never(self):
        pass


class BrokenSetUp(unittest.TestCase):
    def setUp(self):
        raise ValueError("setUp exploded")

    def test_a(self):
        pass


class Fine(unittest.TestCase):
    def test_fine(self):
        pass
PYEOF
(
  cd "$W/ut2/pkg"
  run unittest more_verbose python3 -m unittest -v
  run unittest more_default python3 -m unittest
  run unittest more_discover_v python3 -m unittest discover -v -s tests -t .
  run unittest more_failfast python3 -m unittest -f
  run unittest more_filter_none python3 -m unittest -k nosuchtest
)
(cd "$W/ut2/setup" && run unittest setup_errors_v python3 -m unittest -v && run unittest setup_errors python3 -m unittest)
for v in 3.12 3.13; do
  PYV=$(ls -d /root/.pyenv/versions/$v*/bin/python3 2>/dev/null | head -1)
  [ -n "$PYV" ] || continue
  tag=py${v/./}
  (cd "$W/ut2/pkg" && run unittest more_verbose_$tag "$PYV" -m unittest -v && run unittest more_default_$tag "$PYV" -m unittest && run unittest more_filter_none_$tag "$PYV" -m unittest -k nosuchtest)
  (cd "$W/ut2/setup" && run unittest setup_errors_$tag "$PYV" -m unittest)
done
# ---------------------------------------------------------------- node --test: more variants
mkdir -p "$W/nd2/test"
cat >"$W/nd2/test/nested.test.js" <<'JSEOF'
const { describe, it, test } = require('node:test');
const assert = require('node:assert');

describe('outer', () => {
  it('passes', () => {});
  describe('inner', () => {
    it('deep fail', () => {
      assert.deepStrictEqual({ a: 1, b: [1, 2] }, { a: 1, b: [1, 3] });
    });
    it('deep ok', () => {});
    it.skip('deep skip', () => {});
    it.todo('deep todo');
  });
  it('strict equal strings', () => {
    assert.strictEqual('hello\nworld', 'hello\nthere');
  });
});

test('top level ok', () => {});
test('async rejects', async () => {
  await Promise.reject(new TypeError('async boom'));
});
test('todo that fails', { todo: 'not done' }, () => {
  throw new Error('todo fails');
});
test('prints fake tap', () => {
  console.log('ok 1 - ghost');
  console.log('# pass 50');
  console.log('✔ ghost (1ms)');
});
test('with subtests', async (t) => {
  await t.test('sub ok', () => {});
  await t.test('sub fail', () => { assert.ok(false, 'sub failed'); });
});
JSEOF
mkdir -p "$W/nd2ok/test"
cat >"$W/nd2ok/test/n.test.js" <<'JSEOF'
const { describe, it } = require('node:test');
describe('suite', () => {
  it('a', () => {});
  it.skip('b', () => {});
  it.todo('c');
});
JSEOF
mkdir -p "$W/nd2syn/test"
printf "const { test } = require('node:test');\ntest('x', () => {\n" >"$W/nd2syn/test/bad.test.js"
printf "const { test } = require('node:test');\ntest('fine', () => {});\n" >"$W/nd2syn/test/good.test.js"
(cd "$W/nd2" && run node nested_default node --test && run node nested_tap node --test --test-reporter=tap && run node nested_spec node --test --test-reporter=spec && run node nested_only_file node --test test/nested.test.js)
(cd "$W/nd2ok" && run node skip_todo_pass_spec node --test --test-reporter=spec && run node skip_todo_pass_tap node --test --test-reporter=tap)
(cd "$W/nd2syn" && run node syntax_error_default node --test && run node syntax_error_spec node --test --test-reporter=spec)
(cd "$W/nd2" && run node name_pattern_none node --test --test-name-pattern=zzznomatch)
# ---------------------------------------------------------------- jest: more variants
mkdir -p "$W/jest2/__tests__"
(cd "$W/jest2" && npm init -y >/dev/null && npm install --no-audit --no-fund jest jest-junit >/dev/null 2>&1)
cat >"$W/jest2/__tests__/nested.test.js" <<'JSEOF'
describe('outer', () => {
  describe('inner', () => {
    test('deep equal fails', () => {
      expect({ a: 1, b: [1, 2] }).toEqual({ a: 1, b: [1, 3] });
    });
    it('passes', () => {});
  });
  test.skip('skipped', () => {});
  test.todo('to write');
  test('prints fake summary', () => {
    console.log('Tests:       0 failed, 50 passed, 50 total');
    console.log('  ✓ ghost test (1 ms)');
  });
});
test('async rejects', async () => {
  await expect(Promise.resolve(1)).rejects.toThrow('x');
});
test.each([[1, 1], [2, 3]])('each %i == %i', (a, b) => {
  expect(a).toBe(b);
});
JSEOF
printf "test('fine', () => {\n  expect(1).toBe(1);\n});\n" >"$W/jest2/__tests__/fine.test.js"
printf "test('broken syntax', () => {\n  expect(1).toBe(1;\n});\n" >"$W/jest2/__tests__/syntax.test.js"
(
  cd "$W/jest2"
  run jest more_text ./node_modules/.bin/jest --ci
  runj jest more_json json ./node_modules/.bin/jest --ci --json
  run jest more_verbose ./node_modules/.bin/jest --ci --verbose
  run jest syntax_only ./node_modules/.bin/jest --ci __tests__/syntax.test.js
  runj jest syntax_only_json json ./node_modules/.bin/jest --ci --json __tests__/syntax.test.js
  # --json with no tests prints nothing on stdout: keep the merged output, and the JSON of --passWithNoTests
  run jest no_tests_json_merged ./node_modules/.bin/jest --ci --json nomatchpattern
  runj jest no_tests_pass_json json ./node_modules/.bin/jest --ci --json --passWithNoTests nomatchpattern
  run jest filter_t_none ./node_modules/.bin/jest --ci -t zzznomatch __tests__/fine.test.js
  run jest pass_skip_todo ./node_modules/.bin/jest --ci --verbose -t 'passes|skipped|to write' __tests__/nested.test.js
  JEST_JUNIT_OUTPUT_FILE="$OUT/junit/jest_more.xml" ./node_modules/.bin/jest --ci --reporters=default --reporters=jest-junit >/dev/null 2>&1
)
if command -v go >/dev/null 2>&1; then
# ---------------------------------------------------------------- go test: more variants
mkdir -p "$W/gop2/calc" "$W/gop2/util" "$W/gop2/empty"
export GOFLAGS=-mod=mod GOPROXY=off GOCACHE=$W/gocache
(cd "$W/gop2" && go mod init example.com/m >/dev/null 2>&1)
printf 'package calc\n\nfunc Div(a, b int) int { return a / b }\n' >"$W/gop2/calc/calc.go"
cat >"$W/gop2/calc/calc_test.go" <<'GOEOF'
package calc

import (
	"fmt"
	"testing"
)

func TestDivOk(t *testing.T) {
	if Div(4, 2) != 2 {
		t.Fatal("bad")
	}
}

func TestMultiError(t *testing.T) {
	t.Errorf("first problem")
	t.Errorf("second problem\nspans lines")
}

func TestNested(t *testing.T) {
	t.Run("group", func(t *testing.T) {
		t.Run("leaf ok", func(t *testing.T) {})
		t.Run("leaf fail", func(t *testing.T) { t.Fatal("leaf broke") })
	})
	t.Run("skipme", func(t *testing.T) { t.Skip("later") })
}

func TestLogs(t *testing.T) {
	t.Log("a log line")
	fmt.Println("=== RUN   TestGhost")
	fmt.Println("--- PASS: TestGhost (0.00s)")
	fmt.Println("PASS")
}

func TestDivZeroPanics(t *testing.T) {
	Div(1, 0)
}

func TestAfterPanic(t *testing.T) {}
GOEOF
cat >"$W/gop2/util/util_test.go" <<'GOEOF'
package util

import "testing"

func TestA(t *testing.T) {}
func TestB(t *testing.T) { t.Skip("skipped b") }

func ExampleHello() {
	println("x")
	// Output: hello
}
GOEOF
echo 'package empty' >"$W/gop2/empty/e.go"
(
  cd "$W/gop2"
  run go more_default go test ./...
  run go more_verbose go test -v ./...
  runj go more_json json go test -json ./...
  run go util_verbose go test -v ./util/
  run go run_filter_verbose go test -v -run 'TestNested/group' ./calc/
  run go count1_pass go test -count=1 -run TestDivOk ./calc/
  run go short_pass_json_text go test -run 'TestA|TestB' ./util/
)
fi

echo "done; work dir $W can be removed"
