//! The first guard's rules against real command lines: every dangerous spelling is blocked and
//! every look-alike that is safe is allowed.

use std::path::Path;

use medin::internal::guard::{check_action, check_command, GuardContext, Recommendation, Risk, Verdict};

const WS: &str = "/work/medin-ws/task-1";

fn check(cmd: &str) -> Verdict {
    check_command(
        cmd,
        &GuardContext {
            workspace: Path::new(WS),
        },
    )
}

fn assert_blocked(cmd: &str, rule: &str) -> Verdict {
    let v = check(cmd);
    assert_eq!(
        v.recommendation,
        Recommendation::Block,
        "`{cmd}` should be blocked: {v:#?}"
    );
    assert!(
        v.violations
            .iter()
            .any(|x| x.rule == rule && x.recommendation == Recommendation::Block),
        "`{cmd}` should fire {rule}: {v:#?}"
    );
    assert!(v.alternative.is_some(), "`{cmd}` should carry an alternative");
    v
}

fn assert_allowed(cmd: &str) {
    let v = check(cmd);
    assert_eq!(
        v.recommendation,
        Recommendation::Allow,
        "`{cmd}` should be allowed: {v:#?}"
    );
    assert!(v.violations.is_empty());
}

#[test]
fn recursive_force_deletion_of_dangerous_targets_is_blocked() {
    for cmd in [
        "rm -rf /",
        "rm -fr /",
        "rm -r -f /",
        "rm -Rf /*",
        "rm --recursive --force /",
        "rm --rec --force /etc",
        "rm -rf --no-preserve-root /",
        "rm / -rf",
        "rm -rfv ~",
        "rm -rf ~/",
        "rm -rf $HOME",
        "rm -rf \"$HOME\"",
        "rm -rf ${HOME}/",
        "rm -rf /etc",
        "rm -rf /usr/lib",
        "rm -rf /bin /tmp/x",
        "rm -rf /var",
        "rm -rf /boot",
        "rm -rf /lib64",
        "rm -rf *",
        "rm -rf ./*",
        "rm -rf ..",
        "rm -rf ../other-task",
        "rm -rf build/../../..",
        "rm -r /etc",
        "/bin/rm -rf /",
        "sudo rm -rf /",
        "sudo -u root rm -rf /etc",
        "env FOO=1 rm -rf /",
        "nice -n 10 nohup rm -rf /",
        "timeout 10 rm -rf /",
        "timeout -s KILL 5 /usr/bin/rm -rf /",
        "command rm -rf /",
        "exec rm -rf /",
        "FOO=bar rm -rf /",
        "echo hi; rm -rf /",
        "true && rm -rf /",
        "false || rm -rf /",
        "ls | rm -rf /",
        "echo $(rm -rf /)",
        "echo \"`rm -rf ~`\"",
        "sh -c 'rm -rf /'",
        "bash -c \"sudo rm -rf /etc\"",
        "eval rm -rf /",
        "cd / && rm -rf *",
        "cd .. && rm -rf task-1",
        "r''m -rf /",
        "\\rm -rf /",
        "if true; then rm -rf /; fi",
    ] {
        let v = assert_blocked(cmd, "deletion.recursive_force");
        assert_eq!(v.risk, Risk::Critical, "{cmd}");
    }
}

#[test]
fn deletion_inside_the_workspace_is_allowed() {
    for cmd in [
        "rm -rf build",
        "rm -rf ./build",
        "rm -rf ./build/",
        "rm -rf build dist",
        "rm -r target/debug",
        "rm -rf /work/medin-ws/task-1/build",
        "rm file.txt",
        "rm -f file.txt",
        "rm -f /tmp/x.txt",
        "cd sub && rm -rf ../build",
        "grep -r \"rm -rf\" docs/",
        "grep -rf patterns.txt src/",
        "echo 'rm -rf /'",
        "git rm -r --cached old/",
        "ls -rf /",
        "find . -name '*.pyc' -delete",
        "find build -type f -delete",
        "find / -name passwd",
        "cat > cleanup.md <<'EOF'\nnever rm -rf /\nEOF",
        "git commit -m \"$(cat <<EOF\nrm -rf / is blocked now\nEOF\n)\"",
    ] {
        assert_allowed(cmd);
    }
}

#[test]
fn the_workspace_root_is_blocked_and_unknown_targets_warn() {
    // Everything the task gave the agent, and the agent's work with it.
    for cmd in ["rm -rf .", "rm -rf ./", "rm -rf /work/medin-ws/task-1"] {
        let v = check(cmd);
        assert_eq!(v.recommendation, Recommendation::Block, "`{cmd}`: {v:#?}");
        assert_eq!(v.violations[0].rule, "deletion.recursive_force");
    }
    for cmd in ["rm -rf $BUILD_DIR", "rm -rf \"$(pwd)/x\""] {
        let v = check(cmd);
        assert_eq!(v.recommendation, Recommendation::Warn, "`{cmd}`: {v:#?}");
        assert_eq!(v.violations[0].rule, "deletion.recursive_force");
    }
}

#[test]
fn find_delete_outside_the_workspace_is_blocked() {
    for cmd in [
        "find / -delete",
        "find /etc -name '*.conf' -delete",
        "find ~ -type f -delete",
        "find .. -delete",
        "find -L /var -exec rm -f {} \\;",
        "sudo find /usr -delete",
    ] {
        assert_blocked(cmd, "deletion.find_delete");
    }
}

#[test]
fn destructive_sql_to_a_database_client_is_blocked() {
    for cmd in [
        "psql -c 'DROP TABLE users'",
        "psql mydb -c \"drop table users;\"",
        "psql --command='DROP DATABASE prod'",
        "psql -c 'DROP SCHEMA public CASCADE'",
        "mysql -e 'DROP DATABASE shop'",
        "mysql -u root -p secret -e \"TRUNCATE TABLE orders\"",
        "mariadb -e 'truncate orders'",
        "sqlite3 app.db 'DROP TABLE IF EXISTS users'",
        "/usr/bin/sqlite3 app.db \"SELECT 1; DROP TABLE users;\"",
        "echo \"DROP TABLE x\" | psql",
        "echo 'DROP TABLE x' | sudo psql mydb",
        "printf 'drop database y;' | mysql",
        "cat <<EOF | psql\nDROP TABLE users;\nEOF",
        "psql mydb <<SQL\nBEGIN;\nDROP TABLE users;\nCOMMIT;\nSQL",
        "sqlite3 app.db <<< 'DROP TABLE t'",
        "docker exec -i db psql -U postgres -c 'DROP DATABASE app'",
        "dropdb production",
        "mysqladmin -u root drop shop",
    ] {
        let v = assert_blocked(cmd, "database.drop_table");
        assert_eq!(v.risk, Risk::Critical, "{cmd}");
        assert!(v.alternative.as_deref().unwrap_or("").contains("WHERE"), "{cmd}");
    }
}

#[test]
fn delete_without_where_is_blocked_as_high() {
    for cmd in [
        "psql -c 'DELETE FROM users'",
        "sqlite3 app.db 'delete from t;'",
        "echo 'DELETE FROM orders' | mysql shop",
        "psql -c 'DELETE FROM a WHERE id = 1; DELETE FROM b'",
    ] {
        let v = assert_blocked(cmd, "database.delete_without_where");
        assert_eq!(v.risk, Risk::High, "{cmd}");
    }
}

#[test]
fn harmless_sql_and_sql_text_elsewhere_are_allowed() {
    for cmd in [
        "echo \"DROP TABLE\" >> notes.md",
        "echo 'DROP TABLE users' > plan.txt",
        "grep -ri 'drop table' migrations/",
        "psql -c \"SELECT 1\"",
        "psql -c 'DELETE FROM t WHERE id = 1'",
        "echo 'DELETE FROM t WHERE id = 1' | psql",
        "sqlite3 app.db 'SELECT * FROM drop_table'",
        "mysql -e 'SHOW TABLES'",
        "cat schema.sql",
        "git commit -m 'DROP TABLE users in migration 12'",
    ] {
        assert_allowed(cmd);
    }
}

#[test]
fn unparseable_commands_fail_closed() {
    // Clearly malformed: bash would read something else than what was checked.
    for cmd in ["echo 'unterminated", "echo \"open", "echo $(ls", "echo `ls"] {
        let v = check(cmd);
        assert_eq!(v.recommendation, Recommendation::Block, "`{cmd}`: {v:#?}");
        assert!(v.violations.iter().any(|x| x.rule == "parse.unparseable"), "{cmd}");
    }
    // bash runs an unclosed here-document to the end of input: flagged, not blocked.
    let v = check("cat <<EOF\nno end");
    assert_ne!(v.recommendation, Recommendation::Allow, "{v:#?}");
    // What could be parsed is still checked.
    let v = check("rm -rf / 'oops");
    assert_eq!(v.recommendation, Recommendation::Block);
}

#[test]
fn violations_carry_matched_text_and_description() {
    let v = check("sudo rm -rf /etc");
    let x = &v.violations[0];
    assert_eq!(x.matched, "rm -rf /etc");
    assert!(x.description.contains("/etc"), "{}", x.description);
    let v = check("psql -c 'SELECT 1; DROP TABLE users'");
    assert_eq!(v.violations[0].matched, "DROP TABLE users");
}

#[test]
fn check_action_reads_commands_inside_tool_calls() {
    let ctx = GuardContext {
        workspace: Path::new(WS),
    };
    let v = check_action("bash", &serde_json::json!({"command": "rm -rf /"}), &ctx);
    assert_eq!(v.recommendation, Recommendation::Block);
    let v = check_action(
        "verify",
        &serde_json::json!({"type": "command_succeeds", "target": "psql -c 'DROP TABLE t'"}),
        &ctx,
    );
    assert_eq!(v.recommendation, Recommendation::Block);
    let v = check_action(
        "verify",
        &serde_json::json!({"type": "file_exists", "target": "rm -rf /"}),
        &ctx,
    );
    assert_eq!(v.recommendation, Recommendation::Allow);
    let v = check_action(
        "write_file",
        &serde_json::json!({"path": "x", "content": "rm -rf /"}),
        &ctx,
    );
    assert_eq!(v.recommendation, Recommendation::Allow);
    // `cwd` moves where relative paths resolve.
    let v = check_action(
        "bash",
        &serde_json::json!({"command": "rm -rf ../..", "cwd": "a"}),
        &ctx,
    );
    assert_eq!(v.recommendation, Recommendation::Block);
    let v = check_action("bash", &serde_json::json!({"command": "rm -rf ..", "cwd": "a/b"}), &ctx);
    assert_eq!(v.recommendation, Recommendation::Allow);
    // Missing command: the tool reports INVALID_INPUT, the guard has nothing to judge.
    assert_eq!(
        check_action("bash", &serde_json::json!({}), &ctx).recommendation,
        Recommendation::Allow
    );
}

#[test]
fn xargs_deletion_warns_about_unknown_targets() {
    let v = check("cat list.txt | xargs rm -rf");
    assert_eq!(v.recommendation, Recommendation::Warn, "{v:#?}");
    assert!(v.violations[0].description.contains("xargs"));
    // When what feeds xargs is known, the targets are judged: files found under / are
    // system files.
    let v = check("find / -name '*.log' | xargs rm -rf");
    assert_eq!(v.recommendation, Recommendation::Block, "{v:#?}");
    let v = check("find . -name '*.log' | xargs rm -f");
    assert_eq!(v.recommendation, Recommendation::Allow, "{v:#?}");
}

#[test]
fn the_exec_agent_prompt_export_is_not_a_command() {
    let v =
        check("export MEDIN_PROMPT='Never run rm -rf / or DROP TABLE users; it'\\''s bad' MEDIN_TASK_ID='t'; ./agent");
    assert_eq!(v.recommendation, Recommendation::Allow, "{v:#?}");
}

/// No input makes the guard panic: a deterministic fuzz over shell metacharacters.
#[test]
fn arbitrary_text_never_panics() {
    let alphabet: Vec<char> = "rm -rf/ ~$(){}`'\"\\;|&<>\n#*.=psql -c DROP TABLE EOF<<<<-x2>&1é"
        .chars()
        .collect();
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..20_000 {
        let len = (next() % 40) as usize;
        let text: String = (0..len)
            .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
            .collect();
        let v = check(&text);
        assert!(v.violations.iter().all(|x| !x.rule.is_empty()), "{text:?}");
    }
    // Deep nesting is cut off, not a stack overflow.
    let deep = "$(".repeat(5000) + &")".repeat(5000);
    let _ = check(&deep);
    let deep = "sh -c \"".repeat(200);
    let _ = check(&deep);
}

#[test]
fn a_relative_workspace_is_resolved_against_the_current_directory() {
    let ws = Path::new("target/medin-guard-test-ws");
    let abs = std::env::current_dir().unwrap().join(ws).join("build");
    let ctx = GuardContext { workspace: ws };
    let cmd = format!("rm -rf {}", abs.display());
    assert_eq!(check_command(&cmd, &ctx).recommendation, Recommendation::Allow);
    assert_eq!(
        check_command("rm -rf build", &ctx).recommendation,
        Recommendation::Allow
    );
    assert_eq!(
        check_command("rm -rf ../..", &ctx).recommendation,
        Recommendation::Block
    );
}

#[test]
fn deleting_an_ancestor_of_the_workspace_is_blocked_even_in_temp() {
    // A workspace under /tmp (a clone in /tmp, as CI may have): its parents hold the run logs.
    let ctx = GuardContext {
        workspace: Path::new("/tmp/clone/target/medin/runs/r/golden/t/attempt-1/workspace"),
    };
    for cmd in [
        "rm -rf ..",
        "rm -rf ../..",
        "rm -rf /tmp/clone",
        "rm -rf ../receipts.jsonl/..",
    ] {
        assert_eq!(check_command(cmd, &ctx).recommendation, Recommendation::Block, "{cmd}");
    }
    // Its own files, and unrelated temp paths, are ordinary work.
    assert_eq!(
        check_command("rm -rf build", &ctx).recommendation,
        Recommendation::Allow
    );
    assert_eq!(
        check_command("rm -rf /tmp/scratch-123", &ctx).recommendation,
        Recommendation::Allow
    );
}

#[test]
fn rewriting_what_an_assertion_expects_is_warned_and_moving_it_is_not() {
    use medin::internal::guard::{check_action, GuardContext, Recommendation};
    let ws = tempfile::tempdir().unwrap();
    let ctx = GuardContext { workspace: ws.path() };
    let edit = |old: &str, new: &str| {
        check_action(
            "edit_file",
            &serde_json::json!({"path": "tests/test_calc.py", "old_string": old, "new_string": new}),
            &ctx,
        )
    };
    let v = edit(
        "self.assertEqual(calc.add(2, 3), 5)",
        "self.assertEqual(calc.add(2, 3), -1)",
    );
    assert_eq!(v.recommendation, Recommendation::Warn);
    assert_eq!(v.violations[0].rule, "test_tampering.change_assertion");
    // Same assertion, only re-indented, or a new test added: not a change of what is expected.
    assert_eq!(
        edit("  self.assertEqual(x, 5)\n", "    self.assertEqual(x, 5)\n").recommendation,
        Recommendation::Allow
    );
    assert_eq!(
        edit(
            "self.assertEqual(x, 5)\n",
            "self.assertEqual(x, 5)\nself.assertEqual(y, 6)\n"
        )
        .recommendation,
        Recommendation::Allow
    );
}
