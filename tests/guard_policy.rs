//! The guard's verdicts through a task's policy: deny, warn, approve, bypass.

use std::path::Path;

use medin::internal::guard::policy::{decide, Decision, ToolGate};
use medin::internal::guard::{check_command, GuardContext};
use medin::internal::spec::{Bypass, Policy, ToolPolicy};

fn verdict(cmd: &str) -> medin::internal::guard::Verdict {
    check_command(
        cmd,
        &GuardContext {
            workspace: Path::new("/ws"),
        },
    )
}

#[test]
fn blocked_command_is_denied_with_rule_text_and_alternative() {
    match decide(&verdict("sudo rm -rf /"), &Policy::default()) {
        Decision::Deny { message } => {
            assert!(message.contains("deletion.recursive_force"), "{message}");
            assert!(message.contains("`rm -rf /`"), "{message}");
            assert!(message.contains("rm -r build/"), "{message}");
        }
        other => panic!("expected Deny, got {other:?}"),
    }
}

#[test]
fn bypass_with_written_justification_runs_and_is_reported() {
    let policy = Policy {
        bypass: vec![Bypass {
            rule: "database.drop_table".into(),
            justification: "throwaway test database".into(),
        }],
        ..Default::default()
    };
    assert_eq!(
        decide(&verdict("psql -c 'DROP TABLE scratch'"), &policy),
        Decision::Bypassed {
            rules: vec!["database.drop_table".into()],
            justification: "throwaway test database".into()
        }
    );
    // The bypass is for one rule only.
    assert!(matches!(decide(&verdict("rm -rf /"), &policy), Decision::Deny { .. }));
    // An empty justification never bypasses.
    let empty = Policy {
        bypass: vec![Bypass {
            rule: "database.drop_table".into(),
            justification: String::new(),
        }],
        ..Default::default()
    };
    assert!(matches!(
        decide(&verdict("psql -c 'DROP TABLE scratch'"), &empty),
        Decision::Deny { .. }
    ));
}

#[test]
fn warnings_pass_with_messages_or_are_approved() {
    let v = verdict("rm -rf \"$DIR\"");
    assert!(
        matches!(decide(&v, &Policy::default()), Decision::Warn(m) if m.len() == 1 && m[0].contains("deletion.recursive_force"))
    );
    let approve = Policy {
        approve: vec!["deletion".into()],
        ..Default::default()
    };
    assert_eq!(decide(&v, &approve), Decision::Allow);
    assert_eq!(decide(&verdict("ls -la"), &Policy::default()), Decision::Allow);
}

#[test]
fn tool_gate_globs() {
    let gate = ToolGate::new(&ToolPolicy {
        allow: vec![],
        deny: vec!["bash".into()],
    })
    .unwrap();
    let denial = gate.check("bash").unwrap_err();
    assert_eq!(
        denial.message,
        "tool `bash` is denied by this task's policy (deny: [\"bash\"])"
    );
    assert!(denial.alternative.unwrap().contains("verify"));
    for tool in ["read_file", "write_file", "verify"] {
        gate.check(tool).unwrap();
    }
    let gate = ToolGate::new(&ToolPolicy {
        allow: vec!["*_file".into(), "list_dir".into()],
        deny: vec!["delete_*".into()],
    })
    .unwrap();
    assert!(gate.check("delete_file").is_err());
    assert!(gate.check("verify").is_err());
    gate.check("edit_file").unwrap();
    assert!(ToolGate::new(&ToolPolicy {
        allow: vec!["{bash".into()],
        deny: vec![]
    })
    .is_err());
}
