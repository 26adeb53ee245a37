//! Database: SQL sent to a client (argv such as `psql -c`, `mysql -e`, `sqlite3 db 'SQL'`,
//! here-documents, here-strings, text piped in) is split into statements and tokenized
//! (quotes, comments and identifiers understood, not pattern-matched): `DROP
//! TABLE/DATABASE/SCHEMA`, `ALTER TABLE .. DROP COLUMN`, `TRUNCATE`, `DELETE`/`UPDATE` without `WHERE` or with a tautology
//! (`WHERE 1=1`, `WHERE true`, `OR 1=1`). Also whole-database drops by admin tools (`dropdb`,
//! `mysqladmin drop`, `redis-cli FLUSHALL`, `db.dropDatabase()`, `db.c.remove({})`,
//! `rails db:drop`, `manage.py flush`, `prisma db push --force-reset`); `redis-cli del` fed
//! keys by xargs is warned.

use super::{block, violation};
use crate::guard::verdict::{Category, Recommendation, Risk, Violation};
use crate::guard::{basename, Pipeline, SimpleCommand};

pub const DROP_TABLE: &str = "database.drop_table";
pub const DELETE_WITHOUT_WHERE: &str = "database.delete_without_where";
pub const UPDATE_WITHOUT_WHERE: &str = "database.update_without_where";
pub const FLUSH: &str = "database.flush";

pub fn alternative(rule: &str) -> &'static str {
    match rule {
        DELETE_WITHOUT_WHERE => "add a WHERE clause naming the rows (DELETE FROM t WHERE id = 1), after a backup",
        UPDATE_WITHOUT_WHERE => "add a WHERE clause naming the rows (UPDATE t SET .. WHERE id = 1), after a backup",
        _ => "use a migration with a backup, or DELETE ... WHERE ... for the rows you mean",
    }
}

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
    "bq",
    "spanner-cli",
    "cqlsh",
];

/// Programs that run another command given later in their argv (`docker exec db psql ..`).
const LAUNCHERS: &[&str] = &[
    "docker", "podman", "nerdctl", "kubectl", "oc", "ssh", "heroku", "fly", "flyctl",
];

fn client_index(cmd: &SimpleCommand, names: &[&str]) -> Option<usize> {
    let name = cmd.name();
    if names.contains(&name) {
        return Some(0);
    }
    if LAUNCHERS.contains(&name) {
        return cmd
            .argv
            .iter()
            .skip(1)
            .position(|a| names.contains(&basename(a)))
            .map(|i| i + 1);
    }
    None
}

/// Every database rule for the command at `index` of `pipeline`.
pub fn check(pipeline: &Pipeline, index: usize, out: &mut Vec<Violation>) {
    let cmd = &pipeline[index];
    admin(cmd, out);
    let Some(client) = client_index(cmd, DB_CLIENTS) else {
        return;
    };
    let client_name = basename(&cmd.argv[client]).to_string();
    let mut texts: Vec<&str> = cmd.argv[client + 1..].iter().map(String::as_str).collect();
    texts.extend(cmd.stdin_text.as_deref());
    for upstream in &pipeline[..index] {
        texts.extend(upstream.argv.iter().skip(1).map(String::as_str));
        texts.extend(upstream.stdin_text.as_deref());
    }
    for text in texts {
        // `--command=SQL`, `--execute=SQL`: the value is the SQL.
        let text = match text.split_once('=') {
            Some((opt, sql)) if opt.starts_with('-') => sql,
            _ => text,
        };
        for (raw, stmt) in statements(text) {
            if let Some((rule, risk, what)) = judge(&stmt) {
                out.push(violation(
                    Category::Database,
                    rule,
                    Recommendation::Block,
                    risk,
                    raw.trim(),
                    format!("{what} (sent to {client_name})"),
                ));
            }
        }
    }
}

fn admin(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    let name = cmd.name();
    let args = || cmd.argv.iter().skip(1).map(|a| a.to_ascii_lowercase());
    let what = if name == "dropdb" || (name == "mysqladmin" && args().any(|a| a == "drop")) {
        "drops a whole database"
    } else if client_index(cmd, &["redis-cli", "valkey-cli", "keydb-cli"]).is_some()
        && args().any(|a| a == "flushall" || a == "flushdb")
    {
        "deletes every key of the Redis database"
    } else if client_index(cmd, &["mongo", "mongosh"]).is_some()
        && args().any(|a| {
            let a: String = a.chars().filter(|c| !c.is_whitespace()).collect();
            a.contains("dropdatabase(")
                || a.contains(".drop(")
                || a.contains(".deletemany({})")
                || a.contains(".remove({})")
                || a.contains(".deletemany()")
        })
    {
        "drops a MongoDB database or collection"
    } else if matches!(name, "rails" | "rake" | "bin/rails")
        && args().any(|a| matches!(a.as_str(), "db:drop" | "db:reset" | "db:schema:load" | "db:drop:all"))
    {
        "drops the application's database"
    } else if (name == "prisma" || (matches!(name, "npx" | "bunx" | "pnpm" | "yarn") && args().any(|a| a == "prisma")))
        && args().any(|a| a == "reset" || a == "--force-reset")
    {
        "resets the database, deleting all data"
    } else if name.starts_with("python") && args().any(|a| a.ends_with("manage.py")) && args().any(|a| a == "flush") {
        "deletes every row of every table (Django flush)"
    } else {
        if client_index(cmd, &["redis-cli", "valkey-cli"]).is_some()
            && cmd.args_from_stdin
            && args().any(|a| matches!(a.as_str(), "del" | "unlink"))
        {
            out.push(super::warn(
                Category::Database,
                FLUSH,
                cmd,
                "deletes every Redis key a scan lists",
            ));
        }
        return;
    };
    out.push(block(Category::Database, FLUSH, Risk::Critical, cmd, what));
    if name == "dropdb" || name == "mysqladmin" {
        // Kept under the historical id too, so expectations on drop_table still match.
        if let Some(last) = out.last_mut() {
            last.rule = DROP_TABLE.into();
        }
    }
}

/// SQL text → statements (their source text, and upper-cased tokens: string literals keep
/// their quotes, comments are dropped).
fn statements(sql: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let mut cur: Vec<String> = Vec::new();
    let b: Vec<char> = sql.chars().collect();
    let mut i = 0;
    let mut start = 0;
    let flush = |cur: &mut Vec<String>, out: &mut Vec<(String, Vec<String>)>, start: usize, end: usize| {
        if !cur.is_empty() {
            let raw: String = b[start.min(b.len())..end.min(b.len())].iter().collect();
            out.push((raw, std::mem::take(cur)));
        }
    };
    while i < b.len() {
        let c = b[i];
        if c == ';' {
            flush(&mut cur, &mut out, start, i);
            i += 1;
            start = i;
        } else if c == '-' && b.get(i + 1) == Some(&'-') || c == '#' {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && b.get(i + 1) == Some(&'*') {
            i += 2;
            while i < b.len() && !(b[i] == '*' && b.get(i + 1) == Some(&'/')) {
                i += 1;
            }
            i += 2;
        } else if c == '\'' || c == '"' || c == '`' {
            let q = c;
            let mut s = String::new();
            i += 1;
            while i < b.len() && b[i] != q {
                s.push(b[i]);
                i += 1;
            }
            i += 1;
            // Identifiers in "" or `` keep their name; string literals are marked.
            cur.push(if q == '\'' {
                format!("'{s}'")
            } else {
                s.to_ascii_uppercase()
            });
        } else if c.is_alphanumeric() || c == '_' || c == '.' {
            let mut s = String::new();
            while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_' || b[i] == '.') {
                s.push(b[i].to_ascii_uppercase());
                i += 1;
            }
            cur.push(s);
        } else if c.is_whitespace() {
            i += 1;
        } else {
            // Operators: `=`, `<>`, `!=`, `(`, ...
            let mut s = String::from(c);
            if matches!((c, b.get(i + 1)), ('<', Some('>' | '=')) | ('!' | '>', Some('='))) {
                s.push(b[i + 1]);
                i += 1;
            }
            cur.push(s);
            i += 1;
        }
    }
    flush(&mut cur, &mut out, start, b.len());
    out
}

/// The rule a statement breaks, if any.
fn judge(t: &[String]) -> Option<(&'static str, Risk, String)> {
    let at = |i: usize| t.get(i).map(String::as_str).unwrap_or("");
    // Skip a leading CTE (`WITH x AS (...) DELETE ...`) or EXPLAIN.
    // `ALTER TABLE t DROP COLUMN c`: the column's data is gone.
    if at(0) == "ALTER" && at(1) == "TABLE" {
        let drop = t.iter().position(|w| w == "DROP")?;
        let what = t.get(drop + 1).map(String::as_str).unwrap_or("");
        let column = what == "COLUMN"
            || !matches!(
                what,
                "CONSTRAINT"
                    | "INDEX"
                    | "KEY"
                    | "DEFAULT"
                    | "NOT"
                    | "PRIMARY"
                    | "FOREIGN"
                    | "PARTITION"
                    | "CHECK"
                    | "TRIGGER"
                    | "IDENTITY"
                    | "EXPRESSION"
            );
        return column.then(|| {
            (
                DROP_TABLE,
                Risk::Critical,
                "`ALTER TABLE .. DROP COLUMN` destroys the column's data".into(),
            )
        });
    }
    let start = t
        .iter()
        .position(|w| matches!(w.as_str(), "DROP" | "TRUNCATE" | "DELETE" | "UPDATE"))?;
    if start > 0 && !matches!(at(0), "WITH" | "EXPLAIN") {
        return None;
    }
    if at(start) == "EXPLAIN" {
        return None;
    }
    let rest = &t[start..];
    match rest[0].as_str() {
        "DROP" => {
            let mut k = 1;
            if rest.get(k).map(String::as_str) == Some("TEMPORARY") {
                k += 1;
            }
            let obj = rest.get(k).map(String::as_str).unwrap_or("");
            matches!(obj, "TABLE" | "DATABASE" | "SCHEMA" | "KEYSPACE" | "COLLECTION").then(|| {
                (
                    DROP_TABLE,
                    Risk::Critical,
                    format!("`DROP {obj}` destroys a {} and its data", obj.to_ascii_lowercase()),
                )
            })
        }
        "TRUNCATE" => Some((
            DROP_TABLE,
            Risk::Critical,
            "`TRUNCATE` deletes every row of a table".into(),
        )),
        "DELETE" => {
            let w = rest.iter().position(|x| x == "WHERE");
            match w {
                None => Some((
                    DELETE_WITHOUT_WHERE,
                    Risk::High,
                    "DELETE without WHERE deletes every row of the table".into(),
                )),
                Some(w) if tautology(&rest[w + 1..]) => Some((
                    DELETE_WITHOUT_WHERE,
                    Risk::High,
                    "DELETE with an always-true WHERE deletes every row of the table".into(),
                )),
                _ => None,
            }
        }
        "UPDATE" => {
            rest.iter().any(|x| x == "SET").then_some(())?;
            match rest.iter().position(|x| x == "WHERE") {
                None => Some((
                    UPDATE_WITHOUT_WHERE,
                    Risk::High,
                    "UPDATE without WHERE changes every row of the table".into(),
                )),
                Some(w) if tautology(&rest[w + 1..]) => Some((
                    UPDATE_WITHOUT_WHERE,
                    Risk::High,
                    "UPDATE with an always-true WHERE changes every row of the table".into(),
                )),
                _ => None,
            }
        }
        _ => None,
    }
}

/// A WHERE condition that is always true: `1=1`, `true`, `1`, `'a'='a'`, `x = x`, or any
/// `OR` branch that is.
fn tautology(cond: &[String]) -> bool {
    let cond: Vec<&str> = cond
        .iter()
        .map(String::as_str)
        .take_while(|w| !matches!(*w, "RETURNING" | "LIMIT" | "ORDER"))
        .filter(|w| *w != "(" && *w != ")")
        .collect();
    cond.split(|w| *w == "OR").any(|branch| match branch {
        ["TRUE"] | ["1"] => true,
        [a, "=", b] => a == b,
        [a, "IS", "NOT", "NULL"] => a.starts_with('\'') || a.chars().all(|c| c.is_ascii_digit()),
        [a, "<>" | "!=", b] => a.chars().all(|c| c.is_ascii_digit()) && b.chars().all(|c| c.is_ascii_digit()) && a != b,
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(sql: &str) -> Option<&'static str> {
        statements(sql).iter().find_map(|(_, s)| judge(s)).map(|(r, _, _)| r)
    }

    #[test]
    fn statements_are_parsed_not_matched() {
        assert_eq!(rule("DROP TABLE users"), Some(DROP_TABLE));
        assert_eq!(rule("drop   table if exists users;"), Some(DROP_TABLE));
        assert_eq!(rule("truncate accounts"), Some(DROP_TABLE));
        assert_eq!(rule("DELETE FROM users"), Some(DELETE_WITHOUT_WHERE));
        assert_eq!(rule("delete from users where 1=1"), Some(DELETE_WITHOUT_WHERE));
        assert_eq!(rule("DELETE FROM t WHERE id = 1 OR 1 = 1"), Some(DELETE_WITHOUT_WHERE));
        assert_eq!(rule("UPDATE t SET a = 1"), Some(UPDATE_WITHOUT_WHERE));
        assert_eq!(rule("DELETE FROM users WHERE id = 1"), None);
        assert_eq!(rule("UPDATE t SET a = 1 WHERE id = 2"), None);
        assert_eq!(rule("SELECT 'DROP TABLE x' FROM t"), None);
        assert_eq!(rule("-- DROP TABLE x\nSELECT 1"), None);
        assert_eq!(rule("SELECT * FROM t WHERE note = 'delete from x'"), None);
        assert_eq!(rule("DROP INDEX idx"), None);
    }
}
