//! Where an effect lands: the path classes the effect rules judge. Built on
//! [`crate::guard::targets::classify_target`] (root, home, system, temp, workspace) and refined
//! with the places whose writes mean more than a changed file: VCS metadata and its hooks,
//! kernel state, devices, the locations the system runs commands from (persistence), shell
//! startup files, and the workspace's dependency and build folders. Lexical, like `targets`.
//!
//! Inside the workspace, [`check_place`] tells apart the files the project's checks decide a
//! verdict from: test and coverage reports, the programs the tests run, CI and test-runner
//! configuration; [`holds_expected`] and [`holds_actual`] tell a test's expected output from a
//! program's actual one.

use std::path::Path;

use crate::guard::ascii::contains_lowercase;
use crate::guard::targets::{self, Target};

/// Where a path points, for the effect rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// Inside the workspace.
    Workspace,
    /// The workspace itself or everything in it (`.`, `*`, its absolute path).
    WorkspaceAll,
    /// A folder of installed dependencies (`node_modules`, `.venv`, `vendor`): getting it back
    /// needs the network. Build output (`target`, `dist`) is rebuilt locally and is ordinary
    /// workspace.
    DependencyDir,
    /// A repository's metadata (`.git/…`), other than its hooks.
    VcsMeta,
    /// A repository's hooks (`.git/hooks/…`): files git runs on commit, checkout, push.
    VcsHooks,
    /// Kernel state: `/proc/sys`, `/sys`, `/proc/sysrq-trigger`.
    Kernel,
    /// A device node other than the harmless ones (`/dev/null`, `/dev/stdout`).
    Device,
    /// A place the system or the login runs commands from: cron, systemd units, init scripts,
    /// autostart entries, the dynamic loader's preload list.
    Persistence,
    /// A shell or tool startup file in the home directory (`~/.bashrc`, `~/.profile`).
    Startup,
    /// The machine's logs or the user's shell history: the record of what was done.
    Logs,
    /// The home directory or something in it.
    Home,
    /// The root or a system directory.
    System,
    /// A temp directory or something in it.
    Temp,
    /// Any other path outside the workspace.
    Outside,
    /// A harmless device or descriptor: `/dev/null`, `/dev/stdout`, `/dev/fd/N`.
    Sink,
    /// Not a literal path.
    Unknown,
}

/// Folders that hold a workspace's installed dependencies.
const DEPENDENCY_DIRS: &[&str] = &[
    "node_modules",
    "vendor",
    ".venv",
    "venv",
    ".terraform",
    "bower_components",
    "Pods",
    "site-packages",
];

/// Caches and stores of installed packages outside the workspace (`~/` is the home): what
/// every project of the user installs from. Emptied, they come back only over the network.
const DEPENDENCY_STORES: &[&str] = &[
    "~/.cache",
    "~/Library/Caches",
    "~/.m2",
    "~/.ivy2",
    "~/.sbt",
    "~/.gradle",
    "~/.cargo/registry",
    "~/.cargo/git",
    "~/.rustup",
    "~/.npm",
    "~/.pnpm-store",
    "~/.local/share/pnpm",
    "~/.yarn",
    "~/.bun/install",
    "~/.deno",
    "~/go/pkg",
    "~/.nuget",
    "~/.gem",
    "~/.bundle",
    "~/.composer",
    "~/.conda",
    "~/.pyenv/versions",
    "~/.nvm/versions",
    "~/.local/share/virtualenvs",
    "/usr/lib/node_modules",
    "/usr/local/lib/node_modules",
];

/// Where the system runs commands from (persistence), as path prefixes; `~/` is the home.
const PERSISTENCE: &[&str] = &[
    "/etc/cron",
    "/var/spool/cron",
    "/etc/anacrontab",
    "/etc/systemd/",
    "/lib/systemd/system",
    "/usr/lib/systemd/system",
    "/etc/init.d",
    "/etc/init/",
    "/etc/rc.local",
    "/etc/rc.d",
    "/etc/profile",
    "/etc/bash.bashrc",
    "/etc/zsh/",
    "/etc/environment",
    "/etc/xdg/autostart",
    "/etc/ld.so.preload",
    "/etc/update-motd.d",
    "/etc/udev/rules.d",
    "/etc/sudoers",
    "/usr/local/etc/sudoers",
    "/etc/doas.conf",
    "/usr/local/etc/doas.conf",
    "/etc/polkit-1/",
    "/etc/pam.d",
    "/etc/security/",
    "/etc/ssh/sshrc",
    "/etc/ssh/sshd_config",
    "/etc/apt/apt.conf.d",
    // Package managers' hooks: commands run at every install or update.
    "/etc/dnf/plugins/post-transaction-actions.d",
    "/etc/yum/post-actions",
    "/etc/dpkg/dpkg.cfg",
    "/etc/pacman.d/hooks",
    "/usr/share/libalpm/hooks",
    // Scripts run on network, login and session events, and at boot elsewhere.
    "/etc/NetworkManager/dispatcher.d",
    "/etc/network/if-",
    "/etc/ppp/ip-",
    "/etc/X11/Xsession.d",
    "/etc/X11/xinit/",
    "/etc/inittab",
    "/etc/rc.common",
    "/etc/rcS.d",
    "/etc/rc0.d",
    "/etc/rc1.d",
    "/etc/rc2.d",
    "/etc/rc3.d",
    "/etc/rc4.d",
    "/etc/rc5.d",
    "/etc/rc6.d",
    "/etc/periodic/",
    "/etc/emond.d",
    "/etc/launchd.conf",
    "/Library/StartupItems",
    "/etc/ld.so.conf",
    "/etc/skel/",
    "/usr/local/lib/systemd/",
    "/run/systemd/system",
    "/var/spool/at",
    "/var/at/",
    "/etc/modules-load.d",
    "/etc/modprobe.d",
    "/etc/passwd",
    "/etc/shadow",
    "/etc/group",
    "/etc/gshadow",
    "~/.config/autostart",
    "~/.config/systemd",
    "~/.ssh/rc",
    "~/.ssh/authorized_keys",
    "~/.local/share/systemd",
    "~/.config/autostart-scripts",
    "~/.config/plasma-workspace/env",
    "~/.pam_environment",
    "~/Library/LaunchAgents",
    "/Library/LaunchAgents",
    "/Library/LaunchDaemons",
];

/// Logs and shell histories, as path prefixes; `~/` is the home.
const LOGS: &[&str] = &[
    "/var/log/",
    "/var/adm/",
    "/var/run/utmp",
    "/run/utmp",
    "/var/account/",
    "~/.bash_history",
    "~/.zsh_history",
    "~/.history",
    "~/.sh_history",
    "~/.local/share/fish/fish_history",
    "~/.python_history",
    "~/.mysql_history",
    "~/.psql_history",
    "~/.lesshst",
    "~/.viminfo",
];

/// Device nodes that are harmless to write.
const HARMLESS_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/stdin",
    "/dev/tty",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// Classifies `path` (a word as the parser left it), run from `cwd`.
pub fn place_of(path: &str, cwd: Option<&Path>, workspace: &Path) -> Place {
    let p = path.trim_matches(|c| c == '"' || c == '\'');
    if p.is_empty() {
        return Place::Unknown;
    }
    // macOS keeps /etc, /var and /tmp under /private; the links at the root point there.
    let p = match p.strip_prefix("/private") {
        Some(rest)
            if ["/etc", "/var", "/tmp"]
                .iter()
                .any(|d| rest == *d || rest.starts_with(&format!("{d}/"))) =>
        {
            rest
        }
        _ => p,
    };
    let home_rest = targets::home_relative(p);
    if let Some(rest) = home_rest {
        // `rest` read as `~/rest`: the tables spell home paths that way.
        let rest = rest.trim_start_matches('/');
        let under_home = |x: &&str| {
            x.strip_prefix('~').is_some_and(|after| match after.strip_prefix('/') {
                Some(below) => rest.starts_with(below),
                None => after.is_empty(),
            })
        };
        if PERSISTENCE.iter().any(under_home) {
            return Place::Persistence;
        }
        if LOGS.iter().any(under_home) {
            return Place::Logs;
        }
        if DEPENDENCY_STORES.iter().any(under_home) {
            return Place::DependencyDir;
        }
        if targets::startup_file(p) {
            return Place::Startup;
        }
    }
    if is_git_hooks(p) {
        return Place::VcsHooks;
    }
    // A cgroup's `release_agent` names a program the kernel runs as root on the host when the
    // group empties, wherever the hierarchy is mounted (`mount -t cgroup .. /tmp/cg`): only
    // a cgroup file system holds a file of that name.
    // (`/release_agent` alone is what is left of a glob, `/sys/fs/cgroup/*/release_agent`.)
    let in_a_folder = Path::new(p).parent().is_none_or(|d| d != Path::new("/"));
    if in_a_folder && Path::new(p).file_name().is_some_and(|n| n == "release_agent") {
        return Place::Kernel;
    }
    let target = targets::classify_target(p, cwd, workspace);
    // A project's own virtual environment may hold its `.pth` files; anywhere else they run.
    if python_startup_hook(p) && !matches!(target, Target::Inside | Target::WorkspaceAll | Target::WorkspaceDot) {
        return Place::Persistence;
    }
    // The absolute form, for the prefix tables.
    let absolute = match &target {
        Target::System(x) | Target::Outside(x) => Some(x.to_string_lossy().into_owned()),
        _ if p.starts_with('/') => Some(crate::guard::normalize(Path::new(p)).to_string_lossy().into_owned()),
        _ => None,
    };
    if let Some(abs) = &absolute {
        if HARMLESS_DEVICES.contains(&abs.as_str()) || abs.starts_with("/dev/fd/") || abs.starts_with("/proc/self/fd/")
        {
            return Place::Sink;
        }
        if abs == "/proc/sys"
            || abs.starts_with("/proc/sys/")
            || abs == "/proc/sysrq-trigger"
            || (abs.starts_with("/sys/") && !abs.starts_with("/sys/fs/cgroup"))
        {
            return Place::Kernel;
        }
        if abs.starts_with("/dev/")
            && !HARMLESS_DEVICES.contains(&abs.as_str())
            && !abs.starts_with("/dev/fd/")
            && !abs.starts_with("/dev/shm")
            && !abs.starts_with("/dev/mqueue")
        {
            return Place::Device;
        }
        if PERSISTENCE.iter().any(|x| x.starts_with('/') && abs.starts_with(x)) {
            return Place::Persistence;
        }
        if LOGS
            .iter()
            .any(|x| x.starts_with('/') && (abs.starts_with(x) || abs == x.trim_end_matches('/')))
        {
            return Place::Logs;
        }
        if DEPENDENCY_STORES
            .iter()
            .any(|x| x.starts_with('/') && abs.starts_with(x))
        {
            return Place::DependencyDir;
        }
    }
    match target {
        Target::Root | Target::System(_) => Place::System,
        Target::Home => Place::Home,
        Target::Outside(x) => {
            if home_rest.is_some() || x.starts_with("/home") || x.starts_with("/root") || x.starts_with("/Users") {
                Place::Home
            } else {
                Place::Outside
            }
        }
        Target::WorkspaceAll | Target::WorkspaceDot => Place::WorkspaceAll,
        Target::Inside => {
            let last = Path::new(p.trim_end_matches('/'))
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("");
            if p.split('/').any(|c| c.eq_ignore_ascii_case(".git")) {
                Place::VcsMeta
            } else if DEPENDENCY_DIRS.contains(&last) {
                Place::DependencyDir
            } else {
                Place::Workspace
            }
        }
        Target::Temp | Target::TempRoot => Place::Temp,
        Target::Unknown => {
            if home_rest.is_some() {
                Place::Home
            } else {
                Place::Unknown
            }
        }
    }
}

/// A file every Python interpreter runs at start: `sitecustomize.py`, `usercustomize.py`, or a
/// `.pth` file in a site directory (whose `import` lines run), the directory spelled out, asked
/// of Python (`$(python3 -m site --user-site)/x.pth`) or kept in a variable.
fn python_startup_hook(path: &str) -> bool {
    const SITE: &[&str] = &[
        "site-packages",
        "dist-packages",
        "getsitepackages",
        "getusersitepackages",
        "user_site",
        "user-site",
        "purelib",
        "platlib",
    ];
    let file = path.rsplit('/').next().unwrap_or(path);
    // A `.pth` file in a folder held by a variable (`SITE=$(python3 -c 'import site; ..')`;
    // `"$SITE/x.pth"`) is where a site directory is kept: nothing else reads `.pth` files.
    matches!(file, "sitecustomize.py" | "usercustomize.py")
        || (file.ends_with(".pth") && (path.starts_with('$') || SITE.iter().any(|s| contains_lowercase(path, s))))
}

/// `.git/hooks/…` (or a bare repository's `hooks/` next to its `HEAD`): files git runs. ASCII
/// case is ignored.
fn is_git_hooks(path: &str) -> bool {
    let bytes = path.as_bytes();
    let ends_with = |suffix: &str| {
        bytes.len() >= suffix.len() && bytes[bytes.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
    };
    let starts_with = |prefix: &str| {
        bytes
            .get(..prefix.len())
            .is_some_and(|p| p.eq_ignore_ascii_case(prefix.as_bytes()))
    };
    contains_lowercase(path, ".git/hooks/")
        || ends_with(".git/hooks")
        || contains_lowercase(path, "/.husky/")
        || starts_with(".husky/")
}

/// What a workspace file is to the project's checks, when writing it can decide a verdict
/// without the code changing: the checks' outputs, the programs they run, and their
/// configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckPlace {
    /// A test runner's result or coverage report (`junit.xml`, `TEST-*.xml`, `results.xml`
    /// beside the tests, `coverage.xml`, `lcov.info`, `coverage/coverage-summary.json`,
    /// `.coverage`, anything under `test-results/` or `surefire-reports/`): what CI and the
    /// evaluator read as the verdict.
    Report,
    /// A program the project's scripts run, installed there by a package manager
    /// (`node_modules/.bin/jest`, `.venv/bin/pytest`, `vendor/bin/phpunit`).
    ToolBin,
    /// Continuous-integration configuration (`.github/workflows/*.yml`, `.gitlab-ci.yml`, ...).
    CiConfig,
    /// The test runner's or the coverage tool's configuration (`jest.config.js`, `pytest.ini`,
    /// `pyproject.toml`, `.coveragerc`, `package.json`, ...).
    TestConfig,
}

/// Directories whose every file is a test or coverage report.
const REPORT_DIRS: &[&str] = &[
    "test-results",
    "test_results",
    "testresults",
    "test-reports",
    "test_reports",
    "surefire-reports",
    "failsafe-reports",
    "htmlcov",
    ".nyc_output",
    "allure-results",
    "coverage-reports",
    "junit-reports",
];

/// Report file names, lower-cased, whatever directory they are in.
const REPORT_FILES: &[&str] = &[
    "coverage.xml",
    "coverage.json",
    "coverage-final.json",
    "coverage-summary.json",
    "lcov.info",
    ".coverage",
    "coverage.out",
    "cover.out",
    "coverage.lcov",
    "nosetests.xml",
    "cobertura.xml",
    "clover.xml",
    "jacoco.xml",
    "test-results.json",
    "test_results.json",
];

/// Virtual environments' folders, whose `bin/` (or `Scripts/`) holds the installed tools.
const VENVS: &[&str] = &[".venv", "venv", ".tox", ".nox", "virtualenv", ".virtualenv"];

/// The check place a path inside the workspace is, if any. Lexical: the path as written.
pub fn check_place(path: &str) -> Option<CheckPlace> {
    let p = path.trim_matches(|c| c == '"' || c == '\'').trim_start_matches("./");
    let parts: Vec<&str> = p.split('/').filter(|c| !c.is_empty() && *c != ".").collect();
    let (file, dirs) = parts.split_last()?;
    let lower = file.to_ascii_lowercase();
    // A virtual environment's `activate` scripts set the environment; they run no check.
    if tool_bin(dirs) && !lower.starts_with("activate") {
        return Some(CheckPlace::ToolBin);
    }
    // `.gitignore`, `.gitkeep` in a report folder are the repository's, not a report.
    let housekeeping = lower.starts_with(".git") || lower == ".keep";
    if !housekeeping && is_report(file, &lower, dirs) {
        return Some(CheckPlace::Report);
    }
    if is_ci_config(&lower, dirs) {
        return Some(CheckPlace::CiConfig);
    }
    is_test_config(&lower).then_some(CheckPlace::TestConfig)
}

/// `node_modules/.bin/`, `vendor/bin/`, a virtual environment's `bin/` or `Scripts/` (also
/// one level down: `.tox/py312/bin/`).
fn tool_bin(dirs: &[&str]) -> bool {
    let n = dirs.len();
    let bin = |i: usize| matches!(dirs[i], "bin" | "Scripts");
    (n >= 2 && dirs[n - 2] == "node_modules" && dirs[n - 1] == ".bin")
        || (n >= 2 && dirs[n - 2] == "vendor" && dirs[n - 1] == "bin")
        || (n >= 2 && VENVS.contains(&dirs[n - 2]) && bin(n - 1))
        || (n >= 3 && matches!(dirs[n - 3], ".tox" | ".nox") && bin(n - 1))
}

fn is_report(file: &str, lower: &str, dirs: &[&str]) -> bool {
    let lower_dirs = || dirs.iter().map(|d| d.to_ascii_lowercase());
    if lower_dirs().any(|d| REPORT_DIRS.contains(&d.as_str())) {
        return true;
    }
    let ext = lower.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    // `coverage/` of nyc, jest, c8 (a package named `coverage` holds `.py` files, not these).
    if lower_dirs().any(|d| d == "coverage") && matches!(ext, "json" | "xml" | "info" | "lcov" | "html" | "out" | "txt")
    {
        return true;
    }
    let beside_tests = lower_dirs().any(|d| matches!(d.as_str(), "tests" | "test" | "reports" | "report" | "spec"));
    REPORT_FILES.contains(&lower)
        || lower.starts_with(".coverage.")
        || ext == "trx"
        || ext == "lcov"
        || (ext == "xml"
            && (lower.contains("junit")
                || lower.contains("xunit")
                || lower.contains("nunit")
                || file.starts_with("TEST-")
                || lower.starts_with("test-results")
                || lower.starts_with("test_results")
                || lower.starts_with("test-report")
                || (beside_tests && matches!(lower, "results.xml" | "report.xml"))))
}

fn is_ci_config(lower: &str, dirs: &[&str]) -> bool {
    let yaml = lower.ends_with(".yml") || lower.ends_with(".yaml");
    let under = |a: &str, b: &str| dirs.windows(2).any(|w| w[0] == a && w[1] == b);
    matches!(
        lower,
        ".gitlab-ci.yml"
            | "azure-pipelines.yml"
            | "jenkinsfile"
            | ".travis.yml"
            | "bitbucket-pipelines.yml"
            | ".drone.yml"
            | "appveyor.yml"
            | ".woodpecker.yml"
            | "cloudbuild.yaml"
    ) || (yaml
        && (under(".github", "workflows") || dirs.last() == Some(&".circleci") || dirs.last() == Some(&".buildkite")))
        || (yaml && under(".gitlab", "ci"))
}

fn is_test_config(lower: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "jest.config.",
        "vitest.config.",
        "vitest.workspace.",
        "playwright.config.",
        "cypress.config.",
        "karma.conf.",
        ".mocharc",
        "ava.config.",
        ".nycrc",
        "phpunit.xml",
        "codecov.y",
        ".codecov.y",
        "jest.setup.",
    ];
    matches!(
        lower,
        "pytest.ini"
            | "tox.ini"
            | "setup.cfg"
            | "pyproject.toml"
            | ".coveragerc"
            | "package.json"
            | ".rspec"
            | "noxfile.py"
    ) || PREFIXES.iter().any(|p| lower.starts_with(p))
}

/// A file that holds what a test expects (`tests/golden/expected.json`, `__snapshots__/x.snap`,
/// `x.approved.txt`): the words expected, golden, approved, snapshot or baseline in its name
/// or its directories.
pub fn holds_expected(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    ["expected", "golden", "approved", "snapshot", ".snap", "baseline"]
        .iter()
        .any(|w| lower.contains(w))
}

/// A file a program wrote as its actual output (`actual.json`, `x.received.txt`,
/// `output.json`, `x.snap.new`, `target/out/..`, `build/..`, a temp file): its words, or the
/// directory it was written to.
pub fn holds_actual(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let parts: Vec<&str> = lower.split('/').filter(|c| !c.is_empty() && *c != ".").collect();
    let Some((file, dirs)) = parts.split_last() else {
        return false;
    };
    const WORDS: &[&str] = &[
        "actual", "received", "output", "out", "got", "new", "result", "results", "current",
    ];
    const DIRS: &[&str] = &[
        "out", "output", "outputs", "target", "build", "dist", "tmp", ".tmp", "actual", "received",
    ];
    file.split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| WORDS.contains(&w))
        || dirs.iter().any(|d| DIRS.contains(d))
        || lower.starts_with("/tmp/")
        || lower.starts_with("$tmpdir")
        || lower.starts_with("${tmpdir}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const WS: &str = "/work/ws";

    fn at(p: &str) -> Place {
        place_of(p, Some(Path::new(WS)), Path::new(WS))
    }

    #[test]
    fn places_are_told_apart() {
        assert_eq!(at("src/main.rs"), Place::Workspace);
        assert_eq!(at("."), Place::WorkspaceAll);
        assert_eq!(at("node_modules"), Place::DependencyDir);
        assert_eq!(at("./.venv/"), Place::DependencyDir);
        assert_eq!(at("target"), Place::Workspace);
        assert_eq!(at(".git/config"), Place::VcsMeta);
        assert_eq!(at(".git/hooks/pre-commit"), Place::VcsHooks);
        assert_eq!(at("/proc/sys/kernel/randomize_va_space"), Place::Kernel);
        assert_eq!(at("/proc/sysrq-trigger"), Place::Kernel);
        assert_eq!(at("/tmp/cgrp/release_agent"), Place::Kernel);
        assert_eq!(at("/sys/fs/cgroup/rdma/release_agent"), Place::Kernel);
        assert_ne!(at("/sys/fs/cgroup/app/cpu.max"), Place::Kernel);
        assert_eq!(at("/dev/sda"), Place::Device);
        assert_eq!(at("/dev/null"), Place::Sink);
        assert_eq!(at("/dev/stderr"), Place::Sink);
        assert_eq!(at("/etc/cron.d/job"), Place::Persistence);
        assert_eq!(at("/etc/systemd/system/x.service"), Place::Persistence);
        assert_eq!(at("~/.config/systemd/user/x.service"), Place::Persistence);
        assert_eq!(at("~/.bashrc"), Place::Startup);
        assert_eq!(at("~/.bash_history"), Place::Logs);
        assert_eq!(at("/var/log/auth.log"), Place::Logs);
        assert_eq!(at("/var/log"), Place::Logs);
        assert_eq!(at("~/notes.txt"), Place::Home);
        assert_eq!(at("/etc/hosts"), Place::System);
        assert_eq!(at("/tmp/x"), Place::Temp);
        assert_eq!(at("/opt2/x"), Place::Outside);
        assert_eq!(at("$X"), Place::Unknown);
        assert_eq!(
            at("~/.local/lib/python3.12/site-packages/sitecustomize.py"),
            Place::Persistence
        );
        assert_eq!(
            at("$(python3 -c 'import site; print(site.getusersitepackages())')/zz.pth"),
            Place::Persistence
        );
        assert_eq!(at("/usr/lib/python3/dist-packages/zz.pth"), Place::Persistence);
        assert_eq!(at(".venv/lib/python3.12/site-packages/project.pth"), Place::Workspace);
        assert_eq!(at("src/model.pth"), Place::Workspace);
        assert_eq!(
            at("/etc/dnf/plugins/post-transaction-actions.d/x.action"),
            Place::Persistence
        );
    }

    #[test]
    fn check_places_are_told_apart() {
        use CheckPlace::*;
        for (path, want) in [
            ("reports/junit.xml", Some(Report)),
            ("tests/results.xml", Some(Report)),
            ("coverage.xml", Some(Report)),
            ("coverage/coverage-summary.json", Some(Report)),
            ("./coverage/lcov.info", Some(Report)),
            ("target/surefire-reports/TEST-com.acme.AppTest.xml", Some(Report)),
            ("build/test-results/test/out.xml", Some(Report)),
            (".coverage", Some(Report)),
            ("node_modules/.bin/jest", Some(ToolBin)),
            (".venv/bin/pytest", Some(ToolBin)),
            (".tox/py312/bin/pytest", Some(ToolBin)),
            ("vendor/bin/phpunit", Some(ToolBin)),
            (".github/workflows/ci.yml", Some(CiConfig)),
            (".gitlab-ci.yml", Some(CiConfig)),
            ("jest.config.js", Some(TestConfig)),
            ("pytest.ini", Some(TestConfig)),
            ("src/coverage/__init__.py", None),
            ("results.xml", None),
            ("scan/results.xml", None),
            ("node_modules/jest/bin/jest.js", None),
            (".venv/bin/activate", None),
            ("test-results/.gitkeep", None),
            ("coverage/.gitignore", None),
            ("bin/setup", None),
            ("src/app.py", None),
        ] {
            assert_eq!(check_place(path), want, "{path}");
        }
        assert!(holds_expected("tests/golden/expected_output.json"));
        assert!(holds_expected("src/__snapshots__/a.test.ts.snap"));
        assert!(!holds_expected("tests/fixtures/order.json"));
        assert!(holds_actual("tests/golden/actual_output.json"));
        assert!(holds_actual("target/out/actual.json"));
        assert!(holds_actual("a.received.txt"));
        assert!(!holds_actual("tests/fixtures/order.json"));
    }
}
