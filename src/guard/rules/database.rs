//! Database: an operation on a whole store — every row, every table, the schema, the database
//! itself — is blocked whoever is told to do it; a change that may lose data as a whole
//! (migrating down to nothing, a schema push told to accept data loss) is warned.
//!
//! - **SQL sent to a client** (argv such as `psql -c`, `mysql -e`, `sqlite3 db 'SQL'`,
//!   here-documents, here-strings, text piped in) is split into statements and tokenized
//!   (quotes, comments and identifiers understood, not pattern-matched): `DROP
//!   TABLE/DATABASE/SCHEMA`, `ALTER TABLE .. DROP COLUMN`, `TRUNCATE`, `DELETE`/`UPDATE`
//!   without `WHERE` or with a tautology (`WHERE 1=1`, `WHERE true`, `OR 1=1`).
//! - **A data-store tool's whole-store verb**, whatever the tool: a verb that drops, resets,
//!   cleans, flushes, wipes or purges ([`WHOLE_VERBS`]) with the database or schema as its
//!   object ([`STORE_NOUNS`]), in one subcommand word or two (`rails db:drop`, `mix
//!   ecto.reset`, `sequelize db:drop`, `typeorm schema:drop`, `diesel database reset`, `heroku
//!   pg:reset`, `liquibase drop-all`, `supabase db reset`), or alone for the tools whose one
//!   object is the database (`flyway clean`, `dbmate drop`, `manage.py flush`); also `dropdb`,
//!   `mysqladmin drop`, `redis-cli FLUSHALL`, `prisma migrate reset`, `--force-reset`. A
//!   project runner in front (`npx`, `poetry run`, `bundle exec`) is read through
//!   ([`super::project`]).
//! - **ORM and driver code** run by the application's runner, a console or an interpreter
//!   ([`orm`]): unscoped bulk calls (`Order.delete_all`, `.objects.all().delete()`,
//!   `deleteMany({})`, `updateMany({}, ..)`), whole drops (`dropDatabase()`, `drop_all`), SQL
//!   in its strings.
//! - **Warned**: migrating to zero or the first version (`db:migrate VERSION=0`, `migrate app
//!   zero`, `ef database update 0`, `downgrade base`, `--all` rollbacks); a schema push that
//!   accepts data loss (`prisma db push --accept-data-loss`, `drizzle-kit push --force`); `redis-cli
//!   shutdown nosave`; `redis-cli del` fed keys by xargs.

mod orm;

use super::{block, violation};
use crate::guard::needles::Needles;
use crate::guard::verdict::{Category, Recommendation, Risk, Violation};
use crate::guard::{basename, Pipeline, SimpleCommand};

pub const DROP_TABLE: &str = "database.drop_table";
pub const DELETE_WITHOUT_WHERE: &str = "database.delete_without_where";
pub const UPDATE_WITHOUT_WHERE: &str = "database.update_without_where";
pub const FLUSH: &str = "database.flush";
pub const MIGRATE_TO_ZERO: &str = "database.migrate_to_zero";
pub const DATA_LOSS: &str = "database.data_loss";

pub fn alternative(rule: &str) -> &'static str {
    match rule {
        DELETE_WITHOUT_WHERE => "add a WHERE clause naming the rows (DELETE FROM t WHERE id = 1), after a backup",
        UPDATE_WITHOUT_WHERE => "add a WHERE clause naming the rows (UPDATE t SET .. WHERE id = 1), after a backup",
        MIGRATE_TO_ZERO => "roll back the one migration you need (e.g. rails db:rollback, alembic downgrade -1)",
        DATA_LOSS => "write a migration that keeps the data, and review the SQL it runs",
        _ => "use a migration with a backup, or DELETE ... WHERE ... for the rows you mean",
    }
}

/// Command words of database clients that take SQL.
/// Whether `name` is a database shell (it runs the statements it is handed or reads on stdin).
pub(crate) fn is_client(name: &str) -> bool {
    DB_CLIENTS.contains(&name)
}

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
    "cypher-shell",
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
    whole_store_verb(cmd, out);
    code(pipeline, index, out);
    migrated_to_zero(cmd, out);
    data_loss_accepted(cmd, out);
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
    } else if name == "pg_dropcluster" {
        "drops a whole PostgreSQL cluster, every database in it"
    } else if name == "memcflush" {
        "deletes every item of the memcached servers"
    } else if client_index(cmd, &["redis-cli", "valkey-cli", "keydb-cli"]).is_some()
        && args().any(|a| a == "flushall" || a == "flushdb")
    {
        "deletes every key of the Redis database"
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
        let redis = client_index(cmd, &["redis-cli", "valkey-cli", "keydb-cli"]).is_some();
        if redis && cmd.args_from_stdin && args().any(|a| matches!(a.as_str(), "del" | "unlink")) {
            out.push(super::warn(
                Category::Database,
                FLUSH,
                cmd,
                "deletes every Redis key a scan lists",
            ));
        }
        if redis && args().any(|a| a == "shutdown") && args().any(|a| a == "nosave") {
            out.push(super::warn(
                Category::Database,
                FLUSH,
                cmd,
                "stops the Redis server and throws away what it has not saved",
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

/// Verbs that take a whole store away when their object is one.
const WHOLE_VERBS: &[&str] = &[
    "drop", "reset", "wipe", "clean", "flush", "purge", "nuke", "destroy", "truncate", "fresh", "refresh", "replant",
    "recreate", "erase",
];

/// Objects that make such a verb whole-store: the database, its schema, the migrations'
/// state (`migrate:fresh`), a database server's own name (`pg:reset`, `ecto.reset`).
const STORE_NOUNS: &[&str] = &[
    "db",
    "dbs",
    "database",
    "databases",
    "schema",
    "schemas",
    "pg",
    "postgres",
    "postgresql",
    "mysql",
    "ecto",
    "migrate",
    "keyspace",
    "tables",
    "redis",
    "mongo",
    "sqlite",
];

/// Whole-store verbs glued to their object.
const WHOLE_WORDS: &[&str] = &["dropall", "dropdb", "flushall", "flushdb", "resetdb", "dropschema"];

/// Tools whose one object is the database: a whole verb needs no object (`flyway clean`,
/// `dbmate drop`, `manage.py flush`).
const STORE_TOOLS: &[&str] = &["flyway", "dbmate", "manage.py", "django-admin", "liquibase"];

/// `rails db:drop`, `mix ecto.reset`, `npx typeorm schema:drop`, `diesel database reset`,
/// `heroku pg:reset`, `flyway clean`, `liquibase drop-all`, `poetry run python manage.py
/// flush`: a whole-store verb with the database as its object.
fn whole_store_verb(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    if crate::guard::effects::shown_not_done(&cmd.argv)
        || cmd.argv.iter().any(|a| matches!(a.as_str(), "--help" | "-h" | "help"))
    {
        return;
    }
    let words = super::project::launched(&cmd.argv);
    let Some(first) = words.first() else {
        return;
    };
    // Most commands name no such verb: a scan without allocation decides.
    // Each of WHOLE_WORDS holds one of WHOLE_VERBS: the verbs alone find them all.
    static NAMED: Needles = Needles::ignoring_case(WHOLE_VERBS);
    let named = words[1..].iter().take(6).any(|w| NAMED.found_in(w));
    if !named {
        return;
    }
    let tool = basename(first);
    let subcommands: Vec<Vec<String>> = words[1..]
        .iter()
        .filter(|w| !w.starts_with('-') && !w.contains(char::is_whitespace) && !w.contains('='))
        .take(4)
        .map(|w| {
            w.split([':', '.', '-', '_', '/'])
                .filter(|t| !t.is_empty())
                .map(str::to_ascii_lowercase)
                .collect()
        })
        .collect();
    let verb = |t: &String| WHOLE_VERBS.contains(&t.as_str());
    let noun = |t: &String| STORE_NOUNS.contains(&t.as_str());
    let glued = |w: &Vec<String>| {
        let joined: String = w.concat();
        WHOLE_WORDS.contains(&joined.as_str()) || (w.len() == 2 && w[0] == "drop" && w[1] == "all")
    };
    let whole = subcommands.iter().enumerate().any(|(k, w)| {
        glued(w)
            || (w.iter().any(verb)
                && (w.iter().any(noun)
                    || k.checked_sub(1)
                        .and_then(|j| subcommands.get(j))
                        .is_some_and(|p| p.iter().any(noun))
                    || (k == 0 && w.len() == 1 && STORE_TOOLS.contains(&tool))))
    });
    // `rails destroy model X`, `rake clean`: generators and build tasks, no object of the
    // store, pass.
    if whole {
        out.push(block(
            Category::Database,
            FLUSH,
            Risk::Critical,
            cmd,
            "drops, resets or wipes a whole database or schema, with every row in it",
        ));
    }
}

/// Programs that run code given in an option (`-c`, `-e`, `--eval`, `runner`), and the words
/// that introduce it.
const CODE_OPTIONS: &[&str] = &["-c", "--command", "-e", "--eval", "-r", "-p", "--print", "runner", "r"];

/// Programs that evaluate code against the application's database: its runners and consoles,
/// the database shells, and interpreters' one-liners.
fn evaluates_code(word: &str) -> bool {
    let b = basename(word);
    matches!(
        b,
        "manage.py"
            | "django-admin"
            | "rails"
            | "mongosh"
            | "mongo"
            | "mix"
            | "iex"
            | "node"
            | "ruby"
            | "php"
            | "bun"
            | "deno"
            | "tsx"
            | "ts-node"
            | "irb"
            | "rake"
    ) || b.starts_with("python")
}

/// ORM or driver code given to the application's runner, a database shell or an interpreter
/// (`manage.py shell -c CODE`, `rails runner CODE`, `mongosh --eval CODE`, a console or
/// interpreter fed on stdin): judged by [`orm::judge`].
fn code(pipeline: &Pipeline, index: usize, out: &mut Vec<Violation>) {
    let cmd = &pipeline[index];
    let Some(at) = cmd.argv.iter().position(|w| evaluates_code(w)) else {
        return;
    };
    let rest = &cmd.argv[at + 1..];
    let mut texts: Vec<&str> = rest
        .windows(2)
        .filter(|w| CODE_OPTIONS.contains(&w[0].as_str()))
        .map(|w| w[1].as_str())
        .collect();
    texts.extend(
        rest.iter()
            .filter_map(|w| ["--command=", "--eval="].iter().find_map(|p| w.strip_prefix(p))),
    );
    texts.extend(cmd.stdin_text.as_deref());
    // `echo 'Order.delete_all' | rails c`: what is printed into a console is its code.
    let printed: Vec<String> = match index.checked_sub(1).map(|k| &pipeline[k]) {
        Some(up) if matches!(up.name(), "echo" | "printf" | "cat") => crate::guard::carriers::printed_text(up)
            .or_else(|| up.stdin_text.clone())
            .into_iter()
            .collect(),
        _ => Vec::new(),
    };
    texts.extend(printed.iter().map(String::as_str));
    for text in texts {
        if let Some((rule, what)) = orm::judge(text) {
            out.push(block(Category::Database, rule, Risk::Critical, cmd, what));
            return;
        }
    }
}

/// `rails db:migrate VERSION=0`, `manage.py migrate billing zero`, `dotnet ef database update
/// 0`, `flask db downgrade base`, `mix ecto.rollback --all`, `goose reset`: every migration
/// rolled back, which drops what they created (warned: a fresh development database is
/// sometimes rebuilt so).
fn migrated_to_zero(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    let words = super::project::launched(&cmd.argv);
    let Some(first) = words.first() else {
        return;
    };
    let tool = basename(first);
    static MIGRATION_WORDS: Needles = Needles::ignoring_case(&["migrat", "downgrade", "ecto.", "update"]);
    let named = matches!(tool, "goose" | "dbmate" | "yoyo" | "migrate")
        || words[1..].iter().take(4).any(|w| MIGRATION_WORDS.found_in(w));
    if !named {
        return;
    }
    let lower: Vec<String> = words[1..].iter().map(|w| w.to_ascii_lowercase()).collect();
    let migration = lower.iter().take(4).any(|w| {
        !w.starts_with('-') && (w.contains("migrat") || w.contains("downgrade") || w.starts_with("ecto.rollback"))
    }) || matches!(tool, "goose" | "dbmate" | "yoyo" | "migrate")
        || (tool == "dotnet" && lower.windows(3).any(|w| w == ["ef", "database", "update"]));
    if !migration {
        return;
    }
    let zero = |w: &str| matches!(w, "0" | "zero" | "base");
    let target = lower.iter().enumerate().any(|(k, w)| {
        let after_option = k > 0 && lower[k - 1].starts_with('-') && !lower[k - 1].starts_with("--all");
        (zero(w) && !after_option && k > 0)
            || w == "version=0"
            || w == "--all"
            || w == "-all"
            || w.ends_with(":all")
            || ["--target=", "--to=", "--target-version=", "--version="]
                .iter()
                .any(|p| w.strip_prefix(p).is_some_and(zero))
            || (matches!(w.as_str(), "--target" | "--to" | "--target-version") && lower.get(k + 1).is_some_and(|v| zero(v)))
            || (tool == "goose" && (w == "reset" || (w == "down-to" && lower.get(k + 1).is_some_and(|v| zero(v)))))
            // golang-migrate: `down` with no count rolls back every migration.
            || (tool == "migrate" && w == "down" && k + 1 == lower.len())
    });
    if target {
        out.push(super::warn(
            Category::Database,
            MIGRATE_TO_ZERO,
            cmd,
            "migrates the database down to before its first migration, dropping what the migrations made",
        ));
    }
}

/// `prisma db push --accept-data-loss`, `drizzle-kit push --force`: schema changes applied
/// after being told not to stop for the columns and tables they drop.
fn data_loss_accepted(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    let words = super::project::launched(&cmd.argv);
    let tool = words.first().map(|w| basename(w)).unwrap_or("");
    let accepts = cmd
        .argv
        .iter()
        .any(|a| matches!(a.as_str(), "--accept-data-loss" | "--allow-data-loss"));
    let forced_push =
        tool == "drizzle-kit" && words.iter().any(|w| w == "push") && words.iter().any(|w| w == "--force" || w == "-f");
    if accepts || forced_push {
        out.push(super::warn(
            Category::Database,
            DATA_LOSS,
            cmd,
            "applies schema changes that drop data without asking",
        ));
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
    // Cypher: `MATCH (n) DETACH DELETE n` deletes every node the pattern matches; without a
    // WHERE or a property map (`{id: 7}`) that is every node of the label, or of the graph.
    if at(0) == "MATCH" || (at(0) == "OPTIONAL" && at(1) == "MATCH") {
        let delete = t.iter().position(|w| w == "DELETE")?;
        let narrowed = t[..delete].iter().any(|w| w == "WHERE" || w == "{" || w == "LIMIT");
        return (!narrowed).then(|| {
            (
                DELETE_WITHOUT_WHERE,
                Risk::High,
                "`MATCH .. DELETE` without a condition deletes every node the pattern matches".into(),
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
    fn every_whole_word_holds_a_whole_verb_so_the_verbs_alone_find_it() {
        for word in WHOLE_WORDS {
            assert!(WHOLE_VERBS.iter().any(|v| word.contains(v)), "{word}");
        }
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
