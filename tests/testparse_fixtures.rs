//! Real outputs of real test runners (tests/data/testparse/<framework>/<case>.{txt,json,xml},
//! generated on this machine by scripts/testparse_fixtures.sh) against their hand-checked
//! expected reports (`<case>.expect.json`); `<case>.exit` holds the runner's exit code.
//!
//! `TESTPARSE_BLESS=1 cargo test --test testparse_fixtures` rewrites the expect files from the
//! parser; review the diff by reading the real output before committing.

use std::path::{Path, PathBuf};

use medin::internal::testparse::{error_signature, parse, Framework, Status, TestReport};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/testparse")
}

/// Every fixture: (path, framework named by its folder, exit code).
fn fixtures() -> Vec<(PathBuf, Framework, Option<i32>)> {
    let mut out = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(data_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    for dir in dirs {
        let fw: Framework = dir.file_name().unwrap().to_str().unwrap().parse().unwrap();
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        for f in files {
            let name = f.file_name().unwrap().to_str().unwrap().to_string();
            let is_output =
                [".txt", ".json", ".xml"].iter().any(|e| name.ends_with(e)) && !name.ends_with(".expect.json");
            if !is_output {
                continue;
            }
            let exit = std::fs::read_to_string(f.with_extension("exit"))
                .ok()
                .map(|s| s.trim().parse::<i32>().unwrap());
            out.push((f, fw, exit));
        }
    }
    out
}

fn expect_path(f: &Path) -> PathBuf {
    f.with_extension("expect.json")
}

fn read(f: &Path) -> String {
    String::from_utf8_lossy(&std::fs::read(f).unwrap()).into_owned()
}

#[test]
fn every_real_output_parses_to_its_expected_report() {
    let bless = std::env::var_os("TESTPARSE_BLESS").is_some();
    let all = fixtures();
    assert!(all.len() >= 60, "expected the full fixture set, found {}", all.len());
    let mut failures = Vec::new();
    for (f, fw, exit) in &all {
        let out = read(f);
        let got = parse(&out, *exit, None);
        let expect = expect_path(f);
        if bless {
            std::fs::write(&expect, serde_json::to_string_pretty(&got).unwrap() + "\n").unwrap();
            continue;
        }
        let want: TestReport = match std::fs::read_to_string(&expect) {
            Ok(s) => serde_json::from_str(&s).unwrap(),
            Err(_) => {
                failures.push(format!("{}: no {}", f.display(), expect.display()));
                continue;
            }
        };
        if got != want {
            failures.push(format!(
                "{} (auto-detected) differs from {}:\n got: {}\nwant: {}",
                f.display(),
                expect.display(),
                serde_json::to_string(&got).unwrap(),
                serde_json::to_string(&want).unwrap()
            ));
        }
        // Naming the framework gives the same report.
        let named = parse(&out, *exit, Some(*fw));
        if named != want {
            failures.push(format!(
                "{} with --framework {fw} differs:\n got: {}",
                f.display(),
                serde_json::to_string(&named).unwrap()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} fixture(s) failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn every_framework_has_passing_failing_and_empty_cases() {
    let all = fixtures();
    for fw in Framework::ALL {
        let reports: Vec<TestReport> = all
            .iter()
            .filter(|(_, f, _)| *f == fw)
            .map(|(p, _, e)| parse(&read(p), *e, None))
            .collect();
        assert!(!reports.is_empty(), "no fixture for {fw}");
        assert!(
            reports.iter().any(|r| r.status == Status::Failed),
            "no failing fixture for {fw}"
        );
        if fw != Framework::Junit {
            assert!(
                reports.iter().any(|r| r.status == Status::Passed),
                "no passing fixture for {fw}"
            );
        }
    }
}

fn fixture(rel: &str) -> (String, Option<i32>) {
    let p = data_dir().join(rel);
    let exit = std::fs::read_to_string(p.with_extension("exit"))
        .ok()
        .map(|s| s.trim().parse().unwrap());
    (read(&p), exit)
}

fn report(rel: &str) -> TestReport {
    let (out, exit) = fixture(rel);
    parse(&out, exit, None)
}

fn names(r: &TestReport) -> Vec<&str> {
    r.failures.iter().map(|f| f.name.as_str()).collect()
}

#[test]
fn fake_runner_lines_printed_by_tests_do_not_count() {
    // libtest: `test result: ok. 99 passed` printed with --nocapture.
    let r = report("libtest/nocapture_fake.txt");
    assert_eq!((r.passed, r.failed, r.skipped), (2, 2, 1));
    // pytest -rA shows the captured `=== 50 passed in 0.01s ===` and `... PASSED`.
    let r = report("pytest/rA.txt");
    assert_eq!((r.passed, r.failed, r.skipped), (5, 5, 2));
    // unittest: a test prints `Ran 40 tests` + `OK`.
    let r = report("unittest/verbose.txt");
    assert_eq!((r.total, r.failed), (7, 3));
    // go: `--- PASS: TestGhost` (test2json even makes it a pass event).
    for case in ["go/verbose.txt", "go/json_mixed.json"] {
        let r = report(case);
        assert_eq!((r.passed, r.failed, r.skipped), (4, 4, 1), "{case}");
    }
    let r = report("go/default.txt");
    assert_eq!(r.passed, 1, "the fake `ok example.com/calc` line must not count");
    // node: `ok 99 - fake` / `# pass 99`; jest: `Tests: 99 passed, 99 total`.
    for case in ["node/tap.txt", "node/spec.txt"] {
        let r = report(case);
        assert_eq!((r.passed, r.failed, r.skipped), (4, 3, 2), "{case}");
    }
    let r = report("jest/text.txt");
    assert_eq!((r.total, r.passed), (7, 3));
    // libtest --nocapture: a test prints `running 1 test` + a matching `test result:` line.
    let r = report("libtest/ws_nocapture.txt");
    assert_eq!((r.passed, r.failed, r.skipped), (3, 4, 2));
    // unittest: a fake `Ran 99 tests` + `OK`, and a real `UNEXPECTED SUCCESS` block before the
    // real summary (3.12 leaves `@skip`ped tests out of `Ran N`).
    for case in ["unittest/more_verbose.txt", "unittest/more_default_py312.txt"] {
        let r = report(case);
        assert_eq!((r.passed, r.failed, r.skipped), (2, 3, 5), "{case}");
    }
    // go: a test prints `=== RUN   TestGhost` and `--- PASS: TestGhost` while TestLogs runs.
    for case in ["go/more_verbose.txt", "go/more_json.json"] {
        let r = report(case);
        assert_eq!((r.passed, r.failed, r.skipped), (4, 6, 2), "{case}");
    }
    // pytest: a test prints `=== 40 passed in 0.02s ===`; the blocks after it still count.
    let r = report("pytest/more_default.txt");
    let f = r.failures.iter().find(|f| f.name.ends_with("::test_multiline_msg"));
    assert_eq!(
        f.map(|f| f.message.as_str()),
        Some("AssertionError: line one\nline two\nline three")
    );
}

#[test]
fn a_test_that_failed_and_errored_in_teardown_keeps_both_messages() {
    for case in ["pytest/more_default.txt", "pytest/more_q.txt", "pytest/more_rA.txt"] {
        let r = report(case);
        let msgs: Vec<&str> = r
            .failures
            .iter()
            .filter(|f| f.name.ends_with("::test_fails_and_teardown_errors"))
            .map(|f| f.message.as_str())
            .collect();
        assert_eq!(msgs.len(), 2, "{case}");
        assert!(msgs.contains(&"assert 1 == 2"), "{case}: {msgs:?}");
        assert!(msgs.contains(&"RuntimeError: teardown exploded"), "{case}: {msgs:?}");
    }
}

#[test]
fn failing_test_names_are_the_runners_own() {
    assert_eq!(
        names(&report("libtest/mixed_no_fail_fast.txt")),
        [
            "tests::fails_eq",
            "tests::panics_msg",
            "integ_fail",
            "src/lib.rs - add (line 7)"
        ]
    );
    assert_eq!(
        names(&report("pytest/default.txt")),
        [
            "tests/test_math.py::test_add_fails",
            "tests/test_math.py::test_raises",
            "tests/test_math.py::test_param[2]",
            "tests/test_math.py::TestThing::test_method",
            "tests/test_other.py::test_uses_broken"
        ]
    );
    assert_eq!(
        names(&report("unittest/default.txt")),
        [
            "test_calc.CalcTest.test_error",
            "test_calc.CalcTest.test_add_wrong",
            "test_calc.OtherTest.test_sub (i=1)"
        ]
    );
    assert_eq!(
        names(&report("go/verbose.txt")),
        ["TestAddWrong", "TestTable", "TestTable/n=2", "TestPanic"]
    );
    assert_eq!(names(&report("jest/verbose.txt")), ["math › fails equality", "throws"]);
    assert_eq!(
        names(&report("nextest/mixed.txt")),
        ["tests::fails_eq", "tests::panics_msg", "integ_fail"]
    );
}

#[test]
fn messages_and_locations_come_from_the_failure() {
    let r = report("libtest/mixed_no_fail_fast.txt");
    let f = &r.failures[0];
    assert_eq!((f.file.as_deref(), f.line), (Some("src/lib.rs"), Some(25)));
    assert!(
        f.message.starts_with("assertion `left == right` failed: one plus one"),
        "{}",
        f.message
    );
    let r = report("pytest/q.txt");
    assert_eq!(r.failures[1].message, "ValueError: bad value here");
    assert_eq!(r.failures[1].line, Some(17));
    let r = report("libtest/backtrace.txt");
    assert!(r.failures[0]
        .stack
        .as_deref()
        .unwrap_or("")
        .contains("lt::tests::panics_msg"));
}

#[test]
fn build_failures_are_errors_with_the_compilers_message() {
    for case in ["libtest/compile_error.txt", "nextest/compile_error.txt"] {
        let r = report(case);
        assert_eq!(r.status, Status::Error, "{case}");
        assert_eq!(r.failures[0].name, "<build>");
        assert!(
            r.failures[0].message.contains("error[E0308]: mismatched types"),
            "{case}"
        );
        assert_eq!(r.failures[0].line, Some(2));
    }
    // A test that prints a compile error (it runs cargo itself) is not a build failure.
    let (out, exit) = fixture("libtest/nocapture_fake.txt");
    let printed = out.replace(
        "test tests::fake ... ok",
        "error[E0308]: mismatched types\nerror: could not compile `x` (lib) due to 1 previous error",
    );
    let r = parse(&printed, exit, None);
    assert_eq!((r.status, r.failed), (Status::Failed, 2));
    for case in ["go/build_failure.txt", "go/build_failure_json.json"] {
        let r = report(case);
        assert_eq!(r.status, Status::Error, "{case}");
        assert_eq!(r.failures[0].name, "example.com/calc/broken");
        assert!(r.failures[0].message.contains("cannot use \"x\""), "{case}");
    }
}

#[test]
fn zero_tests_is_no_tests_never_passed() {
    for case in [
        "libtest/no_tests.txt",
        "nextest/no_tests.txt",
        "pytest/no_tests.txt",
        "unittest/no_tests.txt",
        "unittest/no_tests_py312.txt",
        "node/no_tests.txt",
        "node/no_tests_spec.txt",
        "jest/no_tests.txt",
        "go/no_test_files.txt",
        "go/filtered_none.txt",
    ] {
        assert_eq!(report(case).status, Status::NoTests, "{case}");
    }
}

#[test]
fn a_nonzero_exit_without_a_parsed_failure_is_error() {
    let (out, _) = fixture("libtest/all_pass.txt");
    assert_eq!(parse(&out, Some(0), None).status, Status::Passed);
    assert_eq!(parse(&out, Some(101), None).status, Status::Error);
    assert_eq!(parse(&out, None, None).status, Status::Passed);
    // A crashed test binary: no failed test, but cargo says it died.
    let r = report("libtest/crash_abort.txt");
    assert_eq!(r.status, Status::Error);
    assert!(r
        .failures
        .iter()
        .any(|f| f.name == "<crash>" && f.message.contains("SIGABRT")));
}

/// The truncation rule of `testparse` (module docs): with the summary cut off, `passed` needs
/// exit 0 AND the announced number of per-test results; failures need a non-zero (or unknown)
/// exit; anything else is `error`.
#[test]
fn truncated_output_follows_the_documented_rule() {
    let (out, _) = fixture("libtest/all_pass.txt");
    let cut = &out[..out.find("test result:").unwrap()];
    assert_eq!(parse(cut, Some(0), None).status, Status::Passed);
    assert_eq!(parse(cut, None, None).status, Status::Error);
    assert_eq!(parse(cut, Some(101), None).status, Status::Error);
    let fewer = &out[..out.find("test tests::d").unwrap()];
    assert_eq!(
        parse(fewer, Some(0), None).status,
        Status::Error,
        "fewer results than announced"
    );

    let (out, _) = fixture("libtest/lib_fail_fast.txt");
    let cut = &out[..out.find("failures:").unwrap()];
    let r = parse(cut, Some(101), None);
    assert_eq!(r.status, Status::Failed);
    assert_eq!(names(&r), ["tests::fails_eq", "tests::panics_msg"]);
    assert_eq!(parse(cut, Some(0), None).status, Status::Error);

    // Head cut off (`cargo test 2>&1 | tail`) just after the first binary's header: its result
    // line still counts.
    let (out, exit) = fixture("libtest/mixed_no_fail_fast.txt");
    let header = "running 5 tests";
    let tail = &out[out.find(header).unwrap() + header.len()..];
    let r = parse(tail, exit, None);
    assert_eq!((r.status, r.passed, r.failed, r.skipped), (Status::Failed, 6, 4, 1));

    let (out, _) = fixture("pytest/verbose.txt");
    let cut = &out[..out.find("==== ERRORS").unwrap()];
    let r = parse(cut, Some(1), None);
    assert_eq!((r.status, r.failed), (Status::Failed, 5));
    // `collected 3 items` and three progress marks: unambiguous with exit 0.
    let (out, _) = fixture("pytest/all_pass.txt");
    let cut = &out[..out.rfind("passed").unwrap()];
    assert_eq!(parse(cut, Some(0), None).status, Status::Passed);
    let cut = &out[..out.find(" ..s").unwrap()];
    assert_eq!(
        parse(cut, Some(0), None).status,
        Status::Error,
        "no per-test result before the cut"
    );
}

/// A tiny deterministic PRNG, so the mutation test is reproducible.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn char_floor(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[test]
fn random_slices_truncations_and_mutations_never_panic_and_never_pass_a_failing_exit() {
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let frameworks: Vec<Option<Framework>> = std::iter::once(None).chain(Framework::ALL.map(Some)).collect();
    for (f, _, _) in fixtures() {
        let out = read(&f);
        let lines: Vec<&str> = out.lines().collect();
        for round in 0..40 {
            let a = char_floor(&out, rng.below(out.len() + 1));
            let b = char_floor(&out, a + rng.below(out.len() + 1 - a));
            let mut samples = vec![out[..a].to_string(), out[a..b].to_string(), out[a..].to_string()];
            // Line-level mutations: drop, duplicate and shuffle a few lines.
            let mut ls: Vec<&str> = lines.clone();
            for _ in 0..3 {
                if ls.is_empty() {
                    break;
                }
                let i = rng.below(ls.len());
                match rng.below(3) {
                    0 => {
                        ls.remove(i);
                    }
                    1 => ls.insert(i, lines[rng.below(lines.len())]),
                    _ => {
                        let j = rng.below(ls.len());
                        ls.swap(i, j);
                    }
                }
            }
            samples.push(ls.join("\n"));
            // Byte garbage in the middle.
            let mut bytes = out.as_bytes().to_vec();
            if !bytes.is_empty() {
                let k = rng.below(bytes.len());
                bytes[k] = (rng.next() & 0xff) as u8;
            }
            samples.push(String::from_utf8_lossy(&bytes).into_owned());
            for s in &samples {
                let fw = frameworks[(round + rng.below(frameworks.len())) % frameworks.len()];
                for exit in [None, Some(0), Some(1), Some(101)] {
                    let r = parse(s, exit, fw);
                    assert_eq!(r.total, r.passed + r.failed + r.skipped, "{}", f.display());
                    if exit.is_some_and(|c| c != 0) {
                        assert_ne!(
                            r.status,
                            Status::Passed,
                            "{}: non-zero exit read as passed",
                            f.display()
                        );
                    }
                    let _ = error_signature(&r);
                }
            }
        }
    }
}
