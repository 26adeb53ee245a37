//! An embedding crate's view of medin: only the documented public surface (the crate root's
//! re-exports, never `medin::internal`). Agents written in Rust are registered by name through
//! the `Harness` builder, named from the builder, `medin.yaml` and a task's `agent:`, and run
//! bundled and new tasks through the whole pipeline; their results come back as `TaskResult`s.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use medin::{
    Action, ActionInput, Agent, AgentContext, AgentEvent, FinalReport, FinalResult, Harness, HarnessError, Outcome,
    Receipt, ReceiptStatus, RegistryError, TaskResult, TrialVerdict,
};

/// Writes one file with `write_file`, then reports success; keeps every receipt it is handed.
struct Writer {
    content: String,
    wrote: bool,
    receipts: Arc<Mutex<Vec<Receipt>>>,
}

impl Agent for Writer {
    fn name(&self) -> String {
        "writer".into()
    }

    fn next(&mut self, last: Option<(&Action, &Receipt)>, _deadline: Instant) -> AgentEvent {
        if let Some((_, receipt)) = last {
            self.receipts.lock().unwrap().push(receipt.clone());
        }
        if self.wrote {
            return AgentEvent::Final(FinalReport {
                result: FinalResult::Success,
                message: "created hello.txt".into(),
                code: None,
            });
        }
        self.wrote = true;
        AgentEvent::Call(Action {
            id: "1".into(),
            tool: "write_file".into(),
            input: ActionInput::Json(serde_json::json!({ "path": "hello.txt", "content": self.content })),
        })
    }

    fn finish(&mut self) {}
}

/// A factory for a writer of `content` (or of the text after `name:` when it was named so).
fn writer(
    content: &'static str,
    receipts: &Arc<Mutex<Vec<Receipt>>>,
) -> impl Fn(&AgentContext<'_>) -> Box<dyn Agent> + Send + Sync + 'static {
    let receipts = Arc::clone(receipts);
    move |context: &AgentContext<'_>| {
        assert!(context.deadline() > Instant::now(), "the task's deadline lies ahead");
        assert!(!context.brief().prompt.is_empty());
        Box::new(Writer {
            content: context
                .arg()
                .map(|a| format!("{a}\n"))
                .unwrap_or_else(|| content.into()),
            wrote: false,
            receipts: Arc::clone(&receipts),
        })
    }
}

fn bundled() -> Harness {
    Harness::new(env!("CARGO_MANIFEST_DIR"))
}

fn only(results: Vec<TaskResult>) -> TaskResult {
    assert_eq!(results.len(), 1, "{results:?}");
    results.into_iter().next().unwrap()
}

#[test]
fn a_registered_rust_agent_passes_a_bundled_task() {
    let receipts = Arc::new(Mutex::new(Vec::new()));
    let result = only(
        bundled()
            .agent("mine", writer("hello\n", &receipts))
            .default_agent("mine")
            .run_tasks(&["golden/gt-002-create-file.yaml"])
            .expect("the harness runs"),
    );
    assert!(result.passed(), "{}", result.failure_message().unwrap_or_default());
    assert_eq!(result.trial, "golden::gt-002-create-file");
    assert_eq!(result.agent, "mine");
    assert_eq!(result.outcome, Some(Outcome::Success));
    assert_eq!(result.metrics.turns, 1);
    // Its one call took the pipeline and came back with a receipt saying how it was confined.
    let receipts = receipts.lock().unwrap();
    assert_eq!(receipts.len(), 1);
    assert_eq!(receipts[0].status, ReceiptStatus::Success);
    assert_eq!(receipts[0].agent_isolation.as_deref(), Some("in-process"));
}

#[test]
fn an_agent_that_does_the_wrong_thing_fails_the_same_task() {
    let receipts = Arc::new(Mutex::new(Vec::new()));
    let result = only(
        bundled()
            .agent("mine", writer("hello\n", &receipts))
            .agent("careless", writer("goodbye\n", &receipts))
            .default_agent("careless")
            .run_filtered("golden::gt-002-create-file")
            .expect("the harness runs"),
    );
    assert_eq!(result.agent, "careless");
    assert_eq!(result.outcome, Some(Outcome::Failure));
    let TrialVerdict::Failed(mismatches) = &result.verdict else {
        panic!("expected a Failed verdict, got {:?}", result.verdict)
    };
    assert!(
        mismatches.iter().any(|m| m.what.contains("hello.txt")),
        "{mismatches:?}"
    );
    let message = result.failure_message().expect("a failure explains itself");
    assert!(message.contains("agent careless"), "{message}");
}

#[test]
fn registered_names_work_in_medin_yaml_and_in_a_task_with_an_argument() {
    let suite = tempfile::tempdir().unwrap();
    let write = |rel: &str, text: &str| {
        let path = suite.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    let task = |pin: &str| {
        format!(
            "description: writes hello.txt\n{pin}prompt: Create hello.txt containing the line \"hello\".\n\
             expect:\n  outcome: success\n  files: {{ hello.txt: {{ equals: \"hello\\n\" }} }}\n  validate: [ {{ file_exists: hello.txt }} ]\n"
        )
    };
    write("medin.yaml", "suites: [golden]\nagent: mine\n");
    write("golden/default.yaml", &task(""));
    write("golden/pinned.yaml", &task("agent: \"careless:hello\"\n"));
    let receipts = Arc::new(Mutex::new(Vec::new()));
    let harness = Harness::new(suite.path())
        .agent("mine", writer("hello\n", &receipts))
        .agent("careless", writer("goodbye\n", &receipts));
    let mut results = harness.run_tasks(&[Path::new("golden")]).expect("the harness runs");
    results.sort_by(|a, b| a.trial.cmp(&b.trial));
    let seen: Vec<(&str, &str, bool)> = results
        .iter()
        .map(|r| (r.trial.as_str(), r.agent.as_str(), r.passed()))
        .collect();
    assert_eq!(
        seen,
        [
            ("golden::default", "mine", true),
            ("golden::pinned", "careless:hello", true)
        ]
    );
}

#[test]
fn unknown_and_invalid_names_are_refused_with_what_is_registered() {
    let receipts = Arc::new(Mutex::new(Vec::new()));
    let unknown = bundled()
        .agent("mine", writer("hello\n", &receipts))
        .default_agent("robot")
        .run_tasks(&["golden/gt-002-create-file.yaml"])
        .unwrap_err();
    let text = unknown.to_string();
    assert!(
        text.contains("(from Harness::default_agent)")
            && text.contains("unknown agent `robot`")
            && text.contains("`oracle`, `process:CMD`, `exec:CMD`, `openai:MODEL`, `anthropic:MODEL`, `claude-code[:MODEL]`, `codex[:MODEL]`, `gemini-cli[:MODEL]`, `aider[:MODEL]`, `mine`"),
        "{text}"
    );
    assert_eq!(unknown.exit_status(), medin::ExitStatus::Usage);

    let taken = bundled()
        .agent("oracle", writer("hello\n", &receipts))
        .run_filtered("golden::gt-002")
        .unwrap_err();
    assert!(
        matches!(&taken, HarnessError::Register(RegistryError::Taken(name)) if name == "oracle"),
        "{taken}"
    );
    let invalid = bundled()
        .agent("My Agent", writer("hello\n", &receipts))
        .run_filtered("golden::gt-002")
        .unwrap_err();
    assert!(
        matches!(invalid, HarnessError::Register(RegistryError::InvalidName(_))),
        "{invalid}"
    );
}
