//! Database operations written as code: what an ORM or a driver is told to do in a one-liner
//! run by the application's own runner (`manage.py shell -c`, `rails runner`, `mongosh
//! --eval`, `mix run -e`, `python -c`, `node -e`, a console fed on stdin).
//!
//! The principle is the same as for SQL: an operation on every row, document or table at once.
//! - **unscoped bulk calls**: `Order.delete_all`, `Order.objects.all().delete()`,
//!   `session.query(User).delete()`, `Repo.delete_all(User)`, `knex('t').del()`,
//!   `db.users.deleteMany({})`, `updateMany({}, ..)`, `prisma.user.deleteMany()`, with no
//!   `where`/`filter`/`exclude`/`find` narrowing them (a chain that starts at an instance,
//!   `user.orders.delete_all`, is scoped to it);
//! - **whole drops**: `dropDatabase()`, `.drop()`, `metadata.drop_all(..)`, `flushall()`,
//!   `synchronize(true)`, `.truncate`;
//! - **SQL in the code's strings** (`connection.execute("DELETE FROM users")`), judged by the
//!   SQL rules.

use super::{statements, DELETE_WITHOUT_WHERE, DROP_TABLE, FLUSH, UPDATE_WITHOUT_WHERE};

/// What a piece of ORM or driver code does to a whole store, if anything: the rule and why.
pub fn judge(code: &str) -> Option<(&'static str, String)> {
    sql_in_strings(code)
        .or_else(|| whole_drop(code))
        .or_else(|| empty_filter(code))
        .or_else(|| unscoped_chain(code))
}

/// Calls that take a whole database, collection, table or cache away, compared lower-case
/// without whitespace.
const DROPS: &[(&str, &str)] = &[
    ("dropdatabase(", "drops the whole database"),
    (".drop_all(", "drops every table"),
    ("drop_all(", "drops every table"),
    (".dropcollection(", "drops a collection"),
    (".drop_collection(", "drops a collection"),
    (".drop()", "drops a collection or table"),
    (".dropschema(", "drops a schema"),
    ("synchronize(true)", "drops and recreates the schema"),
    ("flushall", "deletes every key"),
    ("flushdb", "deletes every key of the database"),
    ("truncate:true", "deletes every row of a table"),
];

fn squashed(code: &str) -> String {
    code.chars()
        .filter(|c| !matches!(c, ' ' | '\t' | '\r'))
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

fn whole_drop(code: &str) -> Option<(&'static str, String)> {
    let s = squashed(code) + "\n";
    let (_, what) = DROPS.iter().find(|(call, _)| s.contains(call))?;
    // The whole database or cache is the store itself (like `db:drop`); a table or
    // collection is a drop of one.
    let rule = if what.contains("key") || what.contains("database") {
        FLUSH
    } else {
        DROP_TABLE
    };
    Some((rule, format!("{what} (in code run against the database)")))
}

/// Bulk calls whose first argument is the filter: unscoped when it is empty (`deleteMany()`,
/// `deleteMany({})`, `updateMany({}, ..)`, `{where: {}}`).
fn empty_filter(code: &str) -> Option<(&'static str, String)> {
    const CALLS: &[(&str, &str)] = &[
        ("deletemany(", DELETE_WITHOUT_WHERE),
        ("delete_many(", DELETE_WITHOUT_WHERE),
        ("remove(", DELETE_WITHOUT_WHERE),
        ("destroy(", DELETE_WITHOUT_WHERE),
        ("updatemany(", UPDATE_WITHOUT_WHERE),
        ("update_many(", UPDATE_WITHOUT_WHERE),
    ];
    let s = squashed(code);
    for (call, rule) in CALLS {
        for (at, _) in s.match_indices(call) {
            let args = &s[at + call.len()..];
            // `remove()` and `destroy()` without a filter are one object's own methods.
            let empty_call = args.starts_with(')') && !matches!(*call, "remove(" | "destroy(");
            let empty = empty_call
                || args.starts_with("{})")
                || args.starts_with("{},")
                || args.starts_with("{where:{}")
                || (*call == "destroy(" && args.starts_with("{truncate:true"));
            if empty {
                let verb = if *rule == UPDATE_WITHOUT_WHERE {
                    "changes"
                } else {
                    "deletes"
                };
                return Some((
                    rule,
                    format!(
                        "{verb} every document or row: `{}` with no filter",
                        call.trim_end_matches('(')
                    ),
                ));
            }
        }
    }
    None
}

/// Methods that act on every row a query chain selects; unscoped when the chain narrows
/// nothing.
const CHAIN_CALLS: &[(&str, &str)] = &[
    (".delete_all", DELETE_WITHOUT_WHERE),
    (".destroy_all", DELETE_WITHOUT_WHERE),
    (".update_all", UPDATE_WITHOUT_WHERE),
    (".delete()", DELETE_WITHOUT_WHERE),
    (".update(", UPDATE_WITHOUT_WHERE),
    (".del()", DELETE_WITHOUT_WHERE),
    (".truncate", DROP_TABLE),
];

/// Words that narrow a query to some rows.
const SCOPES: &[&str] = &[
    "where", "filter", "exclude", "find", "get(", "limit", "first", "last", "take", "[", "by_", "slice", "ids",
];

/// `Order.delete_all`, `Order.objects.all().delete()`, `session.query(User).delete()`,
/// `knex('users').del()`, `Repo.delete_all(User)`: a bulk method on a query that narrows
/// nothing.
fn unscoped_chain(code: &str) -> Option<(&'static str, String)> {
    for (call, rule) in CHAIN_CALLS {
        for (at, _) in code.match_indices(call) {
            let chain = receiver(&code[..at]);
            if chain.is_empty() || !selects_rows(chain, call) {
                continue;
            }
            let lower = chain.to_ascii_lowercase();
            let mut scoped = SCOPES.iter().any(|s| lower.contains(s));
            // Ecto: `Repo.delete_all(User)` narrows in its argument.
            if chain.ends_with("Repo") || chain.ends_with(".Repo") {
                let arg = code[at + call.len()..].trim_start_matches('(');
                let arg = arg.split(')').next().unwrap_or("");
                scoped = arg.contains("where") || !arg.starts_with(|c: char| c.is_ascii_uppercase());
            }
            if !scoped {
                let verb = match *rule {
                    UPDATE_WITHOUT_WHERE => "changes",
                    DROP_TABLE => "empties the table of",
                    _ => "deletes",
                };
                return Some((
                    rule,
                    format!(
                        "{verb} every row: `{chain}{}` narrows nothing",
                        call.trim_end_matches('(')
                    ),
                ));
            }
        }
    }
    None
}

/// The receiver chain before a method call: identifiers, dots and balanced calls
/// (`Order.objects.all()`, `session.query(User)`).
fn receiver(before: &str) -> &str {
    let bytes = before.as_bytes();
    let mut i = bytes.len();
    let mut depth = 0usize;
    while i > 0 {
        let c = bytes[i - 1];
        match c {
            b')' | b']' => depth += 1,
            b'(' | b'[' if depth > 0 => depth -= 1,
            b'(' | b'[' => break,
            _ if depth > 0 => {}
            _ if c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b':' | b'@' | b'$') => {}
            _ => break,
        }
        i -= 1;
    }
    &before[i..]
}

/// Whether a chain selects rows of a model or table (not one object or a plain value): a
/// class name first (`Order`, `Billing::Order`), a Django manager, a SQLAlchemy or knex query.
fn selects_rows(chain: &str, call: &str) -> bool {
    let lower = chain.to_ascii_lowercase();
    match call {
        ".delete()" | ".update(" => lower.contains("objects") || lower.contains("query"),
        ".del()" => lower.starts_with("knex(") || lower.starts_with("db(") || lower.contains(".table("),
        ".truncate" => {
            chain.starts_with(|c: char| c.is_ascii_uppercase())
                || lower.starts_with("knex(")
                || lower.starts_with("db(")
                || lower.contains(".table(")
        }
        _ => chain.starts_with(|c: char| c.is_ascii_uppercase()),
    }
}

/// SQL in the code's string literals, when the code sends SQL (`execute`, `exec`, `raw`,
/// `query`, `sql`).
fn sql_in_strings(code: &str) -> Option<(&'static str, String)> {
    let lower = code.to_ascii_lowercase();
    if !["execute", "exec(", "raw(", "query(", "sql"]
        .iter()
        .any(|w| lower.contains(w))
    {
        return None;
    }
    for text in string_literals(code) {
        for (raw, stmt) in statements(text) {
            if let Some((rule, _, what)) = super::judge(&stmt) {
                return Some((rule, format!("{what}: `{}`", raw.trim())));
            }
        }
    }
    None
}

/// The texts of the quoted literals in `code` ('..', "..", `..`).
fn string_literals(code: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(start) = rest.find(['\'', '"', '`']) {
        let q = rest[start..].chars().next().unwrap_or('"');
        let body = &rest[start + 1..];
        match body.find(q) {
            Some(end) => {
                out.push(&body[..end]);
                rest = &body[end + 1..];
            }
            None => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unscoped_operations_are_found_and_scoped_ones_pass() {
        for code in [
            "Order.delete_all",
            "Order.all.destroy_all",
            "from shop.models import Order; Order.objects.all().delete()",
            "User.objects.update(plan='free')",
            "session.query(User).delete()",
            "db.users.updateMany({}, {$set: {plan: \"free\"}})",
            "db.sessions.deleteMany( { } )",
            "prisma.user.deleteMany()",
            "Repo.delete_all(User)",
            "knex('users').del()",
            "db.dropDatabase()",
            "Base.metadata.drop_all(engine)",
            "ActiveRecord::Base.connection.execute('TRUNCATE orders')",
            "r.flushall()",
        ] {
            assert!(judge(code).is_some(), "{code}");
        }
        for code in [
            "Order.where(status: 'test').delete_all",
            "user.orders.delete_all",
            "Order.objects.filter(status='test').delete()",
            "session.query(User).filter(User.id == 1).delete()",
            "db.orders.deleteMany({status: \"test\"})",
            "prisma.user.deleteMany({ where: { email: { contains: 'test' } } })",
            "Repo.delete_all(from u in User, where: u.inserted_at < ^cutoff)",
            "knex('users').where('id', 1).del()",
            "d.update(x=1)",
            "print(Order.objects.count())",
            "@user.destroy",
            "cart.remove(item)",
        ] {
            assert!(judge(code).is_none(), "{code}");
        }
    }
}
