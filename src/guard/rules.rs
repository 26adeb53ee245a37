//! The rules of the first guard: recursive forced deletion and destructive SQL. The semantic,
//! parser-based guard replaces this file's matching with one file per category.
//!
//! Every rule reads parsed [`SimpleCommand`]s (never raw text) and returns [`Violation`]s with
//! a stable rule id:
//!
//! | rule | fires on | verdict |
//! |---|---|---|
//! | `deletion.recursive_force` | `rm` with `-r` (any spelling, with or without `-f`) on `/`, `~`, `$HOME`, a system directory, everything at the workspace root (`*`), or a path outside the workspace | block, critical (warn for `.` and for targets that are not literal) |
//! | `deletion.find_delete` | `find PATH.. -delete` / `-exec rm` on such a path | block, critical |
//! | `database.drop_table` | `DROP TABLE/DATABASE/SCHEMA`, `TRUNCATE` sent to a database client (argv, here-doc, or text piped into it); `dropdb`; `mysqladmin drop` | block, critical |
//! | `database.delete_without_where` | `DELETE FROM t` without `WHERE` sent to a database client | block, high |
//! | `parse.unparseable` | a command line that does not parse | warn, medium |

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use regex::Regex;

use super::verdict::{Category, Recommendation, Risk, Violation};
use super::{basename, normalize, GuardContext, Pipeline, SimpleCommand};

pub const RECURSIVE_FORCE: &str = "deletion.recursive_force";
pub const FIND_DELETE: &str = "deletion.find_delete";
pub const DROP_TABLE: &str = "database.drop_table";
pub const DELETE_WITHOUT_WHERE: &str = "database.delete_without_where";
pub const UNPARSEABLE: &str = "parse.unparseable";

/// Top-level directories whose recursive deletion breaks the machine.
const SYSTEM_DIRS: &[&str] = &[
    "bin",
    "boot",
    "dev",
    "etc",
    "home",
    "lib",
    "lib32",
    "lib64",
    "libx32",
    "opt",
    "proc",
    "root",
    "run",
    "sbin",
    "srv",
    "sys",
    "usr",
    "var",
    "snap",
    "nix",
    "Applications",
    "Library",
    "System",
    "Users",
];

/// Every rule that applies to a pipeline.
pub fn check_pipeline(pipeline: &Pipeline, ctx: &GuardContext<'_>) -> Vec<Violation> {
    let mut out = Vec::new();
    for (i, cmd) in pipeline.iter().enumerate() {
        out.extend(recursive_force(cmd, ctx));
        out.extend(find_delete(cmd, ctx));
        out.extend(destructive_sql(pipeline, i));
    }
    out
}

/// The safer alternative for the strongest violation.
pub fn alternative_for(violations: &[Violation]) -> Option<String> {
    let worst = violations.iter().max_by_key(|v| (v.recommendation, v.severity))?;
    let text = match worst.rule.as_str() {
        RECURSIVE_FORCE => "delete the specific paths inside the workspace, e.g. rm -r build/",
        FIND_DELETE => "run find on a directory inside the workspace, e.g. find ./build -name '*.o' -delete",
        DROP_TABLE => "use a migration with a backup, or DELETE ... WHERE ... for the rows you mean",
        DELETE_WITHOUT_WHERE => "add a WHERE clause naming the rows (DELETE FROM t WHERE id = 1), after a backup",
        UNPARSEABLE => "balance the quotes, `$(` and backticks, or write the script to a file and run it",
        _ => return None,
    };
    Some(text.to_string())
}

/// `parse.unparseable`: the command line could not be parsed (warns; the rules still ran on
/// what could be parsed).
pub fn unparseable(command: &str, reason: &str) -> Violation {
    Violation {
        category: Category::Parse,
        rule: UNPARSEABLE.into(),
        severity: Risk::Medium,
        matched: cut(command, 200),
        description: format!("the command could not be parsed ({reason}); the guard may have missed part of it"),
        recommendation: Recommendation::Warn,
    }
}

// ------------------------------------------------------------------------------ deletion

/// Where a deletion target points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `/`, `/*`.
    Root,
    /// `~`, `$HOME`.
    Home,
    /// A system directory or something under it.
    System(PathBuf),
    /// Outside the workspace.
    Outside(PathBuf),
    /// Everything at the workspace root: `*`, `./*`, or the workspace directory by name.
    WorkspaceAll,
    /// The workspace root itself: `.`.
    WorkspaceDot,
    /// A path inside the workspace.
    Inside,
    /// Not a literal path (a variable, a substitution) or the directory is unknown.
    Unknown,
}

/// Classifies a deletion target, lexically (never touches the file system).
pub fn classify_target(target: &str, cwd: Option<&Path>, workspace: &Path) -> Target {
    let t = target.trim();
    if let Some(rest) = t.strip_prefix('~') {
        let (user, path) = rest.split_once('/').unwrap_or((rest, ""));
        let _ = user;
        return if matches!(path.trim_end_matches('/'), "" | "*" | "." | ".*") {
            Target::Home
        } else {
            Target::Outside(PathBuf::from(t))
        };
    }
    for home in ["$HOME", "${HOME}"] {
        if let Some(rest) = t.strip_prefix(home) {
            if rest.is_empty() || rest.starts_with('/') {
                return if matches!(rest.trim_matches('/'), "" | "*" | "." | ".*") {
                    Target::Home
                } else {
                    Target::Outside(PathBuf::from(t))
                };
            }
        }
    }
    if t.is_empty() || t.contains('$') || t.contains('`') {
        return Target::Unknown;
    }
    let full = if t.starts_with('/') {
        PathBuf::from(t)
    } else {
        match cwd {
            Some(c) => c.join(t),
            None => return Target::Unknown,
        }
    };
    let norm = normalize(&full);
    let glob_all = matches!(norm.file_name().and_then(|n| n.to_str()), Some("*" | ".*"));
    let base = if glob_all {
        norm.parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("/"))
    } else {
        norm.clone()
    };
    let ws = normalize(workspace);
    if base == ws {
        // `rm -rf .` is refused by rm itself; any other spelling of the root (`*`, `../ws`,
        // the absolute path) really deletes the whole workspace.
        let dot = t.trim_end_matches('/') == "." || t.trim_end_matches('/').ends_with("/.");
        return if dot && !glob_all {
            Target::WorkspaceDot
        } else {
            Target::WorkspaceAll
        };
    }
    if base.starts_with(&ws) {
        return Target::Inside;
    }
    if base == Path::new("/") {
        return Target::Root;
    }
    let top = base
        .components()
        .nth(1)
        .and_then(|c| c.as_os_str().to_str())
        .unwrap_or("");
    if SYSTEM_DIRS.contains(&top) {
        Target::System(norm)
    } else {
        Target::Outside(norm)
    }
}

/// `deletion.recursive_force`: `rm -r` (any spelling) on a target that is not inside the
/// workspace.
pub fn recursive_force(cmd: &SimpleCommand, ctx: &GuardContext<'_>) -> Vec<Violation> {
    if cmd.name() != "rm" {
        return Vec::new();
    }
    let (mut recursive, mut force, mut no_preserve) = (false, false, false);
    let mut targets = Vec::new();
    let mut options_done = false;
    for a in &cmd.argv[1..] {
        if options_done || !a.starts_with('-') || a == "-" {
            targets.push(a.as_str());
        } else if a == "--" {
            options_done = true;
        } else if let Some(long) = a.strip_prefix("--") {
            // GNU accepts any unambiguous prefix: `--rec`, `--f`.
            let long = long.split('=').next().unwrap_or(long);
            if !long.is_empty() && "recursive".starts_with(long) {
                recursive = true;
            } else if !long.is_empty() && "force".starts_with(long) {
                force = true;
            } else if long.len() >= 2 && "no-preserve-root".starts_with(long) {
                no_preserve = true;
            }
        } else {
            recursive |= a.contains(['r', 'R']);
            force |= a.contains('f');
        }
    }
    if !recursive {
        return Vec::new();
    }
    let spelled = if force {
        "recursive forced deletion"
    } else {
        "recursive deletion"
    };
    let mut out = Vec::new();
    if cmd.args_from_stdin {
        out.push(Violation {
            category: Category::Deletion,
            rule: RECURSIVE_FORCE.into(),
            severity: Risk::Medium,
            matched: cut(&cmd.display(), 200),
            description: format!("{spelled} of targets read from stdin by xargs (they may be anything)"),
            recommendation: Recommendation::Warn,
        });
    }
    for t in targets {
        let class = classify_target(t, cmd.cwd.as_deref(), ctx.workspace);
        let (rec, risk, what) = match &class {
            Target::Root => (
                Recommendation::Block,
                Risk::Critical,
                "the root of the file system".to_string(),
            ),
            Target::Home => (Recommendation::Block, Risk::Critical, "the home directory".to_string()),
            Target::System(p) => (
                Recommendation::Block,
                Risk::Critical,
                format!("the system directory {}", p.display()),
            ),
            Target::Outside(p) => (
                Recommendation::Block,
                Risk::Critical,
                format!("{}, which is outside the workspace", p.display()),
            ),
            Target::WorkspaceAll => (
                Recommendation::Block,
                Risk::Critical,
                "everything at the workspace root".to_string(),
            ),
            Target::WorkspaceDot => (
                Recommendation::Warn,
                Risk::Medium,
                "the workspace root itself".to_string(),
            ),
            Target::Unknown => (
                Recommendation::Warn,
                Risk::Medium,
                format!("`{t}`, a target that is not a literal path (it may expand to anything)"),
            ),
            Target::Inside => continue,
        };
        let extra = if no_preserve { " with --no-preserve-root" } else { "" };
        out.push(Violation {
            category: Category::Deletion,
            rule: RECURSIVE_FORCE.into(),
            severity: risk,
            matched: cut(&cmd.display(), 200),
            description: format!("{spelled}{extra} of {what}"),
            recommendation: rec,
        });
    }
    out
}

/// `deletion.find_delete`: `find PATH.. -delete` (or `-exec rm`) on a path outside the
/// workspace.
pub fn find_delete(cmd: &SimpleCommand, ctx: &GuardContext<'_>) -> Vec<Violation> {
    if cmd.name() != "find" {
        return Vec::new();
    }
    let args = &cmd.argv[1..];
    let deletes = args.iter().enumerate().any(|(i, a)| {
        a == "-delete"
            || (matches!(a.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir")
                && args
                    .get(i + 1)
                    .is_some_and(|w| matches!(basename(w), "rm" | "shred" | "unlink")))
    });
    if !deletes {
        return Vec::new();
    }
    // Leading options (-H, -L, -P, -O3, -D x) come before the paths.
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match a.as_str() {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i += 2,
            o if o.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    let mut paths: Vec<&str> = args[i.min(args.len())..]
        .iter()
        .take_while(|a| !a.starts_with('-') && *a != "(" && *a != "!" && *a != "\\(")
        .map(String::as_str)
        .collect();
    if paths.is_empty() {
        paths.push(".");
    }
    let mut out = Vec::new();
    for p in paths {
        let (rec, what) = match classify_target(p, cmd.cwd.as_deref(), ctx.workspace) {
            Target::Root => (Recommendation::Block, "the whole file system".to_string()),
            Target::Home => (Recommendation::Block, "the home directory".to_string()),
            Target::System(d) => (Recommendation::Block, format!("the system directory {}", d.display())),
            Target::Outside(d) => (Recommendation::Block, format!("{}, outside the workspace", d.display())),
            Target::Unknown => (Recommendation::Warn, format!("`{p}`, a path that is not literal")),
            Target::WorkspaceAll | Target::WorkspaceDot | Target::Inside => continue,
        };
        let severity = if rec == Recommendation::Block {
            Risk::Critical
        } else {
            Risk::Medium
        };
        out.push(Violation {
            category: Category::Deletion,
            rule: FIND_DELETE.into(),
            severity,
            matched: cut(&cmd.display(), 200),
            description: format!("find deletes files under {what}"),
            recommendation: rec,
        });
    }
    out
}

// ------------------------------------------------------------------------------ database

/// Command words of database clients that take SQL.
const DB_CLIENTS: &[&str] = &[
    "psql",
    "mysql",
    "mariadb",
    "sqlite3",
    "sqlite",
    "sqlcmd",
    "duckdb",
    "clickhouse-client",
    "clickhouse",
    "cockroach",
    "pgcli",
    "mycli",
    "litecli",
    "usql",
    "isql",
    "sqlplus",
    "snowsql",
    "trino",
    "presto",
    "beeline",
];

/// Programs that run another command given later in their argv (`docker exec db psql ..`).
const LAUNCHERS: &[&str] = &["docker", "podman", "nerdctl", "kubectl", "oc", "ssh"];

fn db_client_index(cmd: &SimpleCommand) -> Option<usize> {
    let name = cmd.name();
    if DB_CLIENTS.contains(&name) {
        return Some(0);
    }
    if LAUNCHERS.contains(&name) {
        return cmd
            .argv
            .iter()
            .skip(1)
            .position(|a| DB_CLIENTS.contains(&basename(a)))
            .map(|i| i + 1);
    }
    None
}

fn drop_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?is)\b(drop\s+(table|database|schema)\b|truncate\s+(table\s+)?[\w`\x22\[])")
            .expect("constant regex compiles")
    })
}

fn delete_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"(?is)\bdelete\s+from\b").expect("constant regex compiles"))
}

fn where_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"(?i)\bwhere\b").expect("constant regex compiles"))
}

/// `database.drop_table` and `database.delete_without_where` for the command at `index` of
/// `pipeline`: SQL in its argv, its here-doc, or text piped into it.
pub fn destructive_sql(pipeline: &Pipeline, index: usize) -> Vec<Violation> {
    let cmd = &pipeline[index];
    let mut out = Vec::new();
    let name = cmd.name();
    let admin_drop =
        name == "dropdb" || (name == "mysqladmin" && cmd.argv.iter().skip(1).any(|a| a.eq_ignore_ascii_case("drop")));
    if admin_drop {
        out.push(Violation {
            category: Category::Database,
            rule: DROP_TABLE.into(),
            severity: Risk::Critical,
            matched: cut(&cmd.display(), 200),
            description: "drops a whole database".into(),
            recommendation: Recommendation::Block,
        });
        return out;
    }
    let Some(client) = db_client_index(cmd) else { return out };
    let client_name = basename(&cmd.argv[client]).to_string();
    let mut texts: Vec<&str> = cmd.argv[client + 1..].iter().map(String::as_str).collect();
    texts.extend(cmd.stdin_text.as_deref());
    for upstream in &pipeline[..index] {
        texts.extend(upstream.argv.iter().skip(1).map(String::as_str));
        texts.extend(upstream.stdin_text.as_deref());
    }
    for text in texts {
        for stmt in text.split(';') {
            let stmt = stmt.trim();
            if let Some(m) = drop_re().find(stmt) {
                out.push(Violation {
                    category: Category::Database,
                    rule: DROP_TABLE.into(),
                    severity: Risk::Critical,
                    matched: cut(stmt, 200),
                    description: format!(
                        "`{}` sent to {client_name} destroys a table, schema or database",
                        m.as_str().split_whitespace().collect::<Vec<_>>().join(" ")
                    ),
                    recommendation: Recommendation::Block,
                });
            } else if delete_re().is_match(stmt) && !where_re().is_match(stmt) {
                out.push(Violation {
                    category: Category::Database,
                    rule: DELETE_WITHOUT_WHERE.into(),
                    severity: Risk::High,
                    matched: cut(stmt, 200),
                    description: format!("DELETE without WHERE sent to {client_name} deletes every row of the table"),
                    recommendation: Recommendation::Block,
                });
            }
        }
    }
    out
}

fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let mut s: String = text.chars().take(max).collect();
        s.push('…');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_classified() {
        let ws = Path::new("/work/ws");
        let cwd = Some(ws);
        assert_eq!(classify_target("/", cwd, ws), Target::Root);
        assert_eq!(classify_target("/*", cwd, ws), Target::Root);
        assert_eq!(classify_target("~", cwd, ws), Target::Home);
        assert_eq!(classify_target("$HOME/", cwd, ws), Target::Home);
        assert!(matches!(classify_target("/etc", cwd, ws), Target::System(_)));
        assert!(matches!(classify_target("../other", cwd, ws), Target::Outside(_)));
        assert!(matches!(classify_target("/tmp/x", cwd, ws), Target::Outside(_)));
        assert_eq!(classify_target("*", cwd, ws), Target::WorkspaceAll);
        assert_eq!(classify_target(".", cwd, ws), Target::WorkspaceDot);
        assert_eq!(classify_target("./build/", cwd, ws), Target::Inside);
        assert_eq!(classify_target("/work/ws/build", cwd, ws), Target::Inside);
        assert_eq!(classify_target("$DIR", cwd, ws), Target::Unknown);
        assert_eq!(classify_target("build", None, ws), Target::Unknown);
    }

    #[test]
    fn alternative_follows_the_worst_violation() {
        let v = unparseable("echo '", "unbalanced");
        assert!(alternative_for(&[v]).unwrap().contains("balance"));
        assert_eq!(alternative_for(&[]), None);
    }
}
