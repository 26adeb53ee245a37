//! **Not API.** What medin's own `medin` binary (`src/main.rs`), benchmarks (`benches/`) and
//! integration tests (`tests/`) use of the crate's internals, re-exported in one place and
//! nowhere else. Nothing here follows semver: any item may change or go in any release,
//! patch releases included. A crate embedding medin uses the re-exports at the crate root
//! (see the crate documentation), never this module.
//!
//! The layout mirrors the crate's modules (`internal::sandbox::run_shell` is
//! `crate::sandbox::run_shell`), and each list holds exactly what those targets use: an item
//! they stop using goes from here too.

pub mod agent {
    pub use crate::agent::model::cassette::ModelLink;

    pub mod model {
        pub use crate::agent::model::cassette::{Player, Recorder};
        pub use crate::agent::model::transport::{
            HttpTransport, ModelRequest, ModelResponse, ModelTransport, Observations, TransportError,
        };
    }
    pub use crate::agent::{
        parse_reply, start, Action, Agent, AgentEvent, AgentFailure, AgentRegistry, AgentSource, TaskBrief,
    };

    pub mod cli {
        pub use crate::agent::cli::{adapter, adapters, hook, install};
    }
    pub mod process {
        pub use crate::agent::process::{group_alive, parse_line, ProcessAgent};
    }
}

pub mod error {
    pub use crate::error::Cause;
}

pub mod exit {
    pub use crate::exit::HELP;
}

pub mod prd {
    pub use crate::prd::{apply, coverage, parse, LivePrd, Prd, PrdError, Priority, Reload, Why};
}

pub mod guard {
    pub use crate::guard::{check_action, check_command, GuardContext, Recommendation, Risk, Verdict};

    pub mod cli {
        pub use crate::guard::cli::{run, GuardArgs};
    }

    pub mod policy {
        pub use crate::guard::policy::{decide, Decision, Origin, ToolGate};
    }
}

pub mod harness {
    pub use crate::harness::{compare_runs, plan, report_run, run_suite, trial_names, write_schemas, Driver};
}

pub mod import {
    pub use crate::import::{import, Format, ImportError, ImportReport};
}

pub mod partition {
    pub use crate::partition::{Partition, PartitionError};
}

pub mod inert {
    pub use crate::inert::{json, line, text};
}

pub mod log {
    pub use crate::log::{
        export_json, parse_log, read_jsonl, ActivityEntry, ActivityLog, Correction, EntryKind, EntryStatus, Finding,
        JsonlLog,
    };

    pub mod correct {
        pub use crate::log::correct::{
            correct_false_positive, false_positive_rate, CorrectError, FalsePositiveRate, DEFAULT_FALSE_POSITIVE_ALERT,
        };
    }

    pub mod activity {
        pub use crate::log::activity::{format_entry, DEFAULT_MAX_SIZE, END_MARKER};
    }

    pub mod status {
        pub use crate::log::status::{
            filter_entries, parse_since, parse_until, render, CategoryFilter, StatusFilter, StatusFormat,
        };
    }

    pub mod query {
        pub use crate::log::query::{apply, corrections, query};
    }

    pub mod tail {
        pub use crate::log::tail::{read_from_end, TailRead};
    }
}

pub mod plan {
    pub use crate::plan::TrafficMode;
}

pub mod pipeline {
    pub use crate::pipeline::{Origin, Pipeline};

    pub mod changes {
        pub use crate::pipeline::changes::{Snapshot, SnapshotLimits};
    }

    pub mod checkpoint {
        pub use crate::pipeline::checkpoint::{Checkpoint, CheckpointLimits};
    }
}

pub mod report {
    pub use crate::report::quality::{measure as measure_quality, AttemptQuality};
    pub use crate::report::results::schema_json as results_schema_json;
    pub use crate::report::{EventSink, Gate, Reporter};

    pub mod events {
        pub use crate::report::events::{Event, ReportError, Reporter, RoundEndReason};
    }

    pub mod junit {
        pub use crate::report::junit::JunitFile;
    }

    pub mod github {
        pub use crate::report::github::{Annotations, StepSummary};
    }

    pub mod html {
        pub use crate::report::html::HtmlFile;
    }

    pub mod reporters {
        pub use crate::report::reporters::{
            ActivityLogReporter, FailureDigest, LibtestLine, MetricsText, Output, Progress, SummaryJson,
        };
    }
}

pub mod runner {
    pub use crate::runner::{run_spec_file, RunSettings, TaskResult, TrialVerdict};

    pub mod toolchain {
        pub use crate::runner::toolchain::toolchain_setup;
    }
}

pub mod sandbox {
    #[cfg(target_os = "linux")]
    pub use crate::sandbox::bind_inside;
    pub use crate::sandbox::{
        check_config, check_isolation, default_isolation, doctor_main, exec_main, prepare_workspace, probe,
        ready_image, run_shell, spawn_agent, spawn_piped, AttemptSandbox, Beneath, Container, ContainerEngine,
        ContainerRequest, ExecArgs, ExitKind, FixedMount, FixedPath, ImageSource, Isolation, LimitHit, MountAccess,
        ResourceLimits, SandboxConfig, SandboxError, SANDBOX_PATH,
    };
    pub use crate::sandbox::{
        Egress, EgressError, EgressEvent, EgressRules, EgressVia, EventSink, HostPort, HostPortError, EVENTS_PER_SECOND,
    };
}

pub mod spec {
    pub use crate::spec::{
        check::warnings, check_paths, discover, load_suite, load_task, parse_task, task_schema_json, AgentSpec, Bypass,
        CommandCheck, CustomCheck, DockerCheck, DurationSpec, FileContainsCheck, FinalReport, FinalResult, HttpCheck,
        Outcome, Policy, PortCheck, SpecError, SpecFile, SpecWarning, Step, TaskKind, TaskSpec, ToolPolicy, Toolchain,
        Validator, ValidatorSpec, VerifySpec,
    };

    pub mod limits {
        pub use crate::spec::limits::MAX_SPEC_BYTES;
    }

    pub mod schema {
        pub use crate::spec::schema::{suite_schema_json, task_schema_json};
    }
}

pub mod testparse {
    pub use crate::testparse::{
        error_signature, parse, parse_tests_command, Failure, Framework, ParseTestsError, Status, TestReport,
    };

    pub mod signature {
        pub use crate::testparse::signature::{normalize_message, top_functions};
    }
}

pub mod tools {
    pub use crate::tools::{registry, ActionInput, ErrorCode, Receipt};
}

pub mod validate {
    pub use crate::validate::{
        run_all, run_all_cached, ValidateContext, ValidationCache, ValidationResult, ValidationStatus,
    };

    pub mod judged {
        pub use crate::validate::judged::{Protection, RunnerShims};
    }

    pub mod verify {
        pub use crate::validate::verify::{
            ResultsSource, RewardSource, TestOutcome, TestStatus, Verification, LOG_FILE,
        };
    }
}

pub mod watch {
    pub use crate::watch::{watch, WatchError, WatchOptions, UNFREEZE_FILE};
}
