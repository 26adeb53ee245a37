//! What each API does, by language: which calls run a command, run code, write, delete or
//! read files, print, send over the network, decode, download, or reduce data to a size. Names
//! are qualified the way the evaluator builds them (`os.system`, `child_process.execSync`,
//! `File.Path.rmtree`, `Net.HTTP.post`): a module member joined with `.`, whatever the
//! language's separator (`::`, `->`). A qualified pattern also matches a longer name ending
//! with it (`path.expanduser` matches `os.path.expanduser`); a bare one (`system`) only
//! itself.

use super::eval::{join_path, Args, From, Handle, State, Val};
use super::Lang;

/// Whether `name` is one of `patterns`.
fn is(name: &str, patterns: &[&str]) -> bool {
    patterns.iter().any(|p| {
        name == *p
            || (p.contains('.')
                && name.len() > p.len()
                && name.ends_with(p)
                && name.as_bytes()[name.len() - p.len() - 1] == b'.')
    })
}

/// The last segment of a qualified name.
fn last(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

/// A module name as `require`/`import` spell it, in the evaluator's form (`node:fs` → `fs`,
/// `fs/promises` → `fs.promises`).
pub(super) fn module_name(text: &str) -> String {
    text.trim_start_matches("node:").replace('/', ".")
}

/// The value of a word nothing in the program assigned: the environment (`%ENV`, `ENV`,
/// `$_ENV`), a directory (`__dirname`), a module or builtin by name, or an unknown variable.
pub(super) fn word(st: &mut State, w: &str) -> Val {
    let env = |api: &str| Val {
        api: Some(api.to_string()),
        from: From {
            env: true,
            ..From::default()
        },
        ..Val::default()
    };
    match (st.lang, w) {
        (Lang::Perl, "%ENV" | "$ENV") => env("ENV"),
        (Lang::Ruby, "ENV") => env("ENV"),
        (Lang::Php, "$_ENV" | "$_SERVER") => env("ENV"),
        (Lang::Js, "__dirname") => Val::lit("."),
        // Constants read as their spelling (`{recursive: true}`).
        (_, "true" | "True" | "false" | "False" | "null" | "None" | "nil" | "undefined") => Val::lit(w),
        (Lang::Perl | Lang::Ruby, "$stdout" | "STDOUT" | "$stderr" | "STDERR") => Val::api("STDOUT"),
        _ if w.starts_with(['$', '@', '%']) && !(st.lang == Lang::Js) => Val::unknown(),
        _ => settle(st, Val::api(w)),
    }
}

/// A name that stands for a value rather than a function: the environment (`os.environ`,
/// `process.env`, `Bun.env`), the home directory (`Dir.home`), the temp directory.
pub(super) fn settle(_st: &mut State, v: Val) -> Val {
    let Some(name) = v.api.as_deref() else {
        return v;
    };
    let env = |api: &str| Val {
        api: Some(api.to_string()),
        from: From {
            env: true,
            ..From::default()
        },
        ..Val::default()
    };
    if is(
        name,
        &["os.environ", "os.environb", "process.env", "Bun.env", "import.meta.env"],
    ) {
        return env(name);
    }
    if is(name, &["Dir.home"]) {
        return Val::lit("~");
    }
    if is(name, &["Dir.pwd"]) {
        return Val::lit(".");
    }
    if is(name, &["Dir.tmpdir"]) {
        return Val::lit("/tmp");
    }
    v
}

/// `process.env.NAME`, `os.environ.get`: a member of the environment.
pub(super) fn env_member(_st: &mut State, env: Val, name: &str) -> Val {
    // A member of what a method of the environment gave (`ENV.to_h.to_s`): the same data.
    let root = env.api.as_deref().is_some_and(|a| {
        matches!(
            a,
            "ENV" | "os.environ" | "os.environb" | "process.env" | "Bun.env" | "import.meta.env"
        )
    });
    if !root {
        return Val::tainted(env.from);
    }
    let methods = [
        "get",
        "copy",
        "items",
        "keys",
        "values",
        "fetch",
        "to_h",
        "to_a",
        "to_hash",
        "inspect",
        "each",
        "map",
        "select",
        "filter",
        "toObject",
        "entries",
        "dump",
        "setdefault",
        "pop",
    ];
    if methods.contains(&name) {
        return Val {
            api: Some(format!("{}.{name}", env.api.as_deref().unwrap_or("ENV"))),
            from: env.from,
            ..Val::default()
        };
    }
    env_var(name)
}

/// One environment variable's value: the home directory for `HOME`.
pub(super) fn env_var(name: &str) -> Val {
    if matches!(name, "HOME" | "USERPROFILE") {
        return Val::lit("~");
    }
    if matches!(name, "TMPDIR" | "TEMP" | "TMP") {
        return Val::lit("/tmp");
    }
    Val::tainted(From {
        env_vars: vec![name.to_string()],
        ..From::default()
    })
}

/// Whether a call of `api` may take its arguments without parentheses (`system "ls"`,
/// `puts x`, `echo $x`, `require "socket"`).
pub(super) fn takes_bare_args(lang: Lang, api: &str) -> bool {
    match lang {
        Lang::Perl => matches!(
            api,
            "system"
                | "exec"
                | "print"
                | "say"
                | "printf"
                | "unlink"
                | "rmdir"
                | "open"
                | "eval"
                | "rename"
                | "chmod"
                | "chown"
                | "symlink"
                | "chdir"
                | "rmtree"
                | "remove_tree"
                | "require"
                | "do"
                | "readpipe"
                | "glob"
                | "send"
                | "syswrite"
                | "truncate"
                | "copy"
                | "move"
                | "fork"
                | "length"
                | "keys"
                | "values"
                | "each"
                | "scalar"
                | "defined"
                | "exists"
                | "reverse"
                | "pack"
                | "decode_base64"
                | "uncompress"
                | "join"
                | "die"
                | "warn"
                | "getstore"
                | "get"
                | "getprint"
        ),
        Lang::Ruby => {
            matches!(
                api,
                "system"
                    | "exec"
                    | "spawn"
                    | "puts"
                    | "print"
                    | "p"
                    | "pp"
                    | "printf"
                    | "eval"
                    | "require"
                    | "load"
                    | "fork"
                    | "require_relative"
                    | "open"
            ) || api.contains('.')
        }
        Lang::Php => matches!(
            api,
            "echo" | "print" | "include" | "require" | "include_once" | "require_once"
        ),
        Lang::Lua => false,
        Lang::Python => matches!(api, "print" | "exec"),
        _ => false,
    }
}

/// A call of the API `name` with `args`: its effects recorded on `st`, its value returned;
/// None for an API this table does not know.
pub(super) fn call(st: &mut State, name: &str, args: &Args<'_>) -> Option<Val> {
    let lang = st.lang;
    if let Some(v) = loader(st, name, args) {
        return Some(v);
    }
    if let Some(v) = runs(st, name, args) {
        return Some(v);
    }
    if let Some(v) = code_run(st, name, args) {
        return Some(v);
    }
    if forks(lang, name) {
        st.forks = true;
        return Some(Val::unknown());
    }
    if let Some(v) = files(st, name, args) {
        return Some(v);
    }
    if let Some(v) = prints(st, name, args) {
        return Some(v);
    }
    if let Some(v) = network(st, name, args) {
        return Some(v);
    }
    if let Some(v) = decoders(st, name, args) {
        return Some(v);
    }
    if let Some(v) = substitution_calls(st, name, args) {
        return Some(v);
    }
    if let Some(v) = paths_and_env(st, name, args) {
        return Some(v);
    }
    if reducer(name) {
        return Some(Val::unknown());
    }
    None
}

/// `require('fs')`, `__import__('os')`, `importlib.import_module('os')`: a module.
fn loader(st: &mut State, name: &str, args: &Args<'_>) -> Option<Val> {
    let lang = st.lang;
    let module = match (lang, name) {
        (Lang::Js, "require" | "import") | (Lang::Lua, "require") => args.text(0)?,
        (Lang::Python, "__import__" | "importlib.import_module") => args.text(0)?,
        _ => return None,
    };
    if module.starts_with('.') || module.starts_with('/') {
        // A file of the program's own: run as code.
        st.eval_file(&Val::lit(module));
        return Some(Val::unknown());
    }
    Some(Val::api(module_name(&module)))
}

/// APIs that run a command.
fn runs(st: &mut State, name: &str, args: &Args<'_>) -> Option<Val> {
    let lang = st.lang;
    let first = args.pos(0).cloned().unwrap_or_default();
    let rest: Vec<&Val> = args.positional().skip(1).collect();
    let shell = |st: &mut State, v: &Val| Some(st.run(v, &[]));
    match lang {
        Lang::Python => {
            if is(
                name,
                &[
                    "os.system",
                    "os.popen",
                    "subprocess.getoutput",
                    "subprocess.getstatusoutput",
                    "commands.getoutput",
                    "asyncio.create_subprocess_shell",
                    "pty.spawn",
                ],
            ) {
                return shell(st, &first);
            }
            if is(
                name,
                &[
                    "subprocess.run",
                    "subprocess.call",
                    "subprocess.check_call",
                    "subprocess.check_output",
                    "subprocess.Popen",
                ],
            ) {
                let cmd = args.named("args").cloned().unwrap_or(first);
                return Some(st.run(&cmd, &[]));
            }
            if is(name, &["asyncio.create_subprocess_exec"]) {
                let words: Vec<Val> = args.positional().cloned().collect();
                let list = Val {
                    items: Some(words),
                    ..Val::default()
                };
                return Some(st.run(&list, &[]));
            }
            // `os.execv(path, [argv0, ..])`, `os.execl(path, argv0, ..)`, `os.spawnv(mode,
            // path, [argv0, ..])`, `os.posix_spawn(path, [argv0, ..], env)`.
            let l = last(name);
            let family = name.starts_with("os.")
                && (l.starts_with("exec") || l.starts_with("spawn") || l.starts_with("posix_spawn"));
            if family {
                let skip = usize::from(l.starts_with("spawn"));
                let path = args.pos(skip).cloned().unwrap_or_default();
                let listed = l.contains('v') || l.starts_with("posix_spawn");
                let tail: Vec<Val> = if listed {
                    args.pos(skip + 1)
                        .and_then(|v| v.items.clone())
                        .map(|items| items.into_iter().skip(1).collect())
                        .unwrap_or_default()
                } else {
                    args.positional()
                        .skip(skip + 2)
                        .filter(|v| v.fields.is_empty())
                        .cloned()
                        .collect()
                };
                let mut words = vec![path];
                words.extend(tail);
                let list = Val {
                    items: Some(words),
                    ..Val::default()
                };
                return Some(st.run(&list, &[]));
            }
            None
        }
        Lang::Js => {
            if is(
                name,
                // JXA's `$.system(..)` after `ObjC.import("stdlib")`: C's system(3).
                &[
                    "child_process.exec",
                    "child_process.execSync",
                    "shelljs.exec",
                    "$",
                    "$.system",
                ],
            ) {
                return shell(st, &first);
            }
            if is(
                name,
                &[
                    "child_process.spawn",
                    "child_process.spawnSync",
                    "child_process.execFile",
                    "child_process.execFileSync",
                ],
            ) {
                // `spawn(cmd, {shell: true})` runs a shell line; else a program and its argv.
                let shell_line = args
                    .named("shell")
                    .is_some_and(|v| v.text().as_deref() != Some("false"));
                if shell_line && rest.iter().all(|r| r.items.is_none()) {
                    return shell(st, &first);
                }
                return Some(st.run(&first, &rest));
            }
            if is(name, &["child_process.fork"]) {
                st.forks = true;
                return Some(Val::unknown());
            }
            if is(name, &["Bun.spawn", "Bun.spawnSync"]) {
                let cmd = args.named("cmd").cloned().unwrap_or(first);
                return Some(st.run(&cmd, &[]));
            }
            if is(name, &["Bun.$"]) {
                return shell(st, &first);
            }
            if is(name, &["Deno.Command"]) {
                let argv = args.named("args").cloned().unwrap_or_default();
                return Some(st.run(&first, &[&argv]));
            }
            if is(name, &["Deno.run"]) {
                let cmd = args.named("cmd").cloned().unwrap_or_default();
                return Some(st.run(&cmd, &[]));
            }
            None
        }
        Lang::Perl => match name {
            "system"
            | "exec"
            | "readpipe"
            | "IPC.Run.run"
            | "IPC.System.Simple.system"
            | "IPC.System.Simple.capture" => {
                if rest.is_empty() {
                    shell(st, &first)
                } else {
                    Some(st.run(&first, &rest))
                }
            }
            "open3" | "IPC.Open3.open3" | "open2" | "IPC.Open2.open2" => {
                let skip = if name.ends_with('3') { 3 } else { 2 };
                let words: Vec<&Val> = args.positional().skip(skip).collect();
                let (head, tail) = words.split_first()?;
                Some(st.run(head, tail))
            }
            _ => None,
        },
        Lang::Ruby => {
            if is(
                name,
                &[
                    "system",
                    "exec",
                    "spawn",
                    "Kernel.system",
                    "Kernel.exec",
                    "Kernel.spawn",
                    "Process.spawn",
                    "Process.exec",
                    "IO.popen",
                    "Open3.capture2",
                    "Open3.capture2e",
                    "Open3.capture3",
                    "Open3.popen2",
                    "Open3.popen2e",
                    "Open3.popen3",
                    "Open3.pipeline",
                    "PTY.spawn",
                ],
            ) {
                // A leading environment hash (`system({'A' => '1'}, 'cmd')`) is not a word.
                let words: Vec<&Val> = args.positional().filter(|v| v.fields.is_empty()).collect();
                let (head, tail) = words.split_first()?;
                return Some(if tail.is_empty() {
                    st.run(head, &[])
                } else {
                    st.run(head, tail)
                });
            }
            if name == "open" && first.text().is_some_and(|t| t.starts_with('|')) {
                let cmd = Val::lit(first.text().unwrap_or_default().trim_start_matches('|').to_string());
                return shell(st, &cmd);
            }
            None
        }
        Lang::Php => match name {
            "system" | "exec" | "shell_exec" | "passthru" | "popen" | "proc_open" => shell(st, &first),
            "pcntl_exec" => {
                let argv = rest.first().copied().cloned().unwrap_or_default();
                Some(st.run(&first, &[&argv]))
            }
            _ => None,
        },
        Lang::Lua => match name {
            "os.execute" | "io.popen" => shell(st, &first),
            _ => None,
        },
        Lang::AppleScript => None,
    }
}

/// APIs that run code: `exec`, `eval`, `Function`, `vm.runIn*`, `load`, `include`.
fn code_run(st: &mut State, name: &str, args: &Args<'_>) -> Option<Val> {
    let first = args.pos(0).cloned().unwrap_or_default();
    let lang = st.lang;
    let code = match lang {
        Lang::Python => is(
            name,
            &[
                "exec",
                "eval",
                "builtins.exec",
                "builtins.eval",
                "execfile",
                "runpy.run_path",
            ],
        ),
        Lang::Js => is(
            name,
            &[
                "eval",
                "vm.runInThisContext",
                "vm.runInNewContext",
                "vm.runInContext",
                "vm.compileFunction",
                "vm.Script",
                "setTimeout",
                "setInterval",
            ],
        ),
        Lang::Perl => matches!(name, "eval" | "do"),
        Lang::Ruby => is(
            name,
            &[
                "eval",
                "Kernel.eval",
                "instance_eval",
                "class_eval",
                "module_eval",
                "binding.eval",
            ],
        ),
        Lang::Php => matches!(name, "eval" | "assert" | "create_function"),
        Lang::Lua => matches!(name, "load" | "loadstring"),
        Lang::AppleScript => false,
    };
    if code {
        if (lang == Lang::Python && matches!(last(name), "execfile" | "run_path"))
            || (lang == Lang::Perl && name == "do" && first.text().is_some())
        {
            st.eval_file(&first);
        } else if matches!(name, "setTimeout" | "setInterval") {
            // Only a string is code; a function is a callback.
            if first.text().is_some() {
                st.eval_code(&first);
            }
        } else {
            st.eval_code(&first);
        }
        return Some(Val::unknown());
    }
    // `compile(src, ..)` is the source, to be run by `exec`.
    if lang == Lang::Python && name == "compile" {
        return Some(first);
    }
    // `Function(..args, body)`, `new Function(body)`: the last argument is the code.
    if lang == Lang::Js && name == "Function" {
        if let Some(body) = args.positional().last() {
            st.eval_code(body);
        }
        return Some(Val::unknown());
    }
    let file = match lang {
        Lang::Ruby => matches!(name, "load" | "require" | "require_relative"),
        Lang::Php => matches!(name, "include" | "require" | "include_once" | "require_once"),
        Lang::Lua => matches!(name, "dofile" | "loadfile"),
        Lang::Perl => name == "require",
        _ => false,
    };
    if file {
        st.eval_file(&first);
        return Some(Val::unknown());
    }
    None
}

fn forks(lang: Lang, name: &str) -> bool {
    match lang {
        Lang::Python => is(name, &["os.fork", "os.forkpty", "pty.fork"]),
        Lang::Perl => name == "fork",
        Lang::Ruby => is(name, &["fork", "Process.fork", "Kernel.fork"]),
        Lang::Php => name == "pcntl_fork",
        Lang::Js => is(name, &["cluster.fork"]),
        _ => false,
    }
}

/// Whether an `open` mode writes (`w`, `a`, `x`, `+`, `>`), and whether it appends.
fn write_mode(mode: &str) -> Option<bool> {
    let m = mode.trim();
    if m.contains('a') || m.starts_with(">>") {
        return Some(true);
    }
    (m.contains('w') || m.contains('x') || m.contains('+') || m.starts_with('>')).then_some(false)
}

/// A file read: its contents.
fn read_file(path: &Val) -> Val {
    let mut v = Val::tainted(From {
        files: path.text().into_iter().filter(|p| !p.is_empty()).collect(),
        ..From::default()
    });
    // A path read from a file the program wrote keeps where that data came from.
    v.from.merge(&path.from);
    v
}

/// APIs that write, delete, move, copy, change or read files.
fn files(st: &mut State, name: &str, args: &Args<'_>) -> Option<Val> {
    let lang = st.lang;
    let p0 = args.pos(0).cloned().unwrap_or_default();
    let p1 = args.pos(1).cloned().unwrap_or_default();
    let recursive = args
        .named("recursive")
        .is_some_and(|v| matches!(v.text().as_deref(), Some("true" | "True" | "1")));
    let rm = |st: &mut State, flags: &str, p: &Val| {
        st.file_command(&["rm", flags], &[p]);
        Some(Val::unknown())
    };
    match lang {
        Lang::Python => {
            if matches!(name, "open" | "io.open" | "codecs.open") || is(name, &["builtins.open"]) {
                let mode = args
                    .text(1)
                    .or_else(|| args.named("mode").and_then(Val::text))
                    .unwrap_or_default();
                return Some(open_file(st, &p0, &mode));
            }
            if is(name, &["os.remove", "os.unlink"]) {
                return rm(st, "-f", &p0);
            }
            if is(name, &["shutil.rmtree"]) {
                return rm(st, "-rf", &p0);
            }
            if is(name, &["os.rmdir", "os.removedirs"]) {
                st.file_command(&["rmdir"], &[&p0]);
                return Some(Val::unknown());
            }
            if is(name, &["shutil.move", "os.rename", "os.replace", "os.renames"]) {
                st.file_command(&["mv"], &[&p0, &p1]);
                return Some(Val::unknown());
            }
            if is(name, &["shutil.copy", "shutil.copy2", "shutil.copyfile"]) {
                st.file_command(&["cp"], &[&p0, &p1]);
                return Some(Val::unknown());
            }
            if is(name, &["shutil.copytree"]) {
                st.file_command(&["cp", "-r"], &[&p0, &p1]);
                return Some(Val::unknown());
            }
            if is(name, &["os.chmod"]) {
                return chmod(st, &p1, &p0);
            }
            if is(name, &["os.chown", "shutil.chown"]) {
                return chown(st, &p0, args.pos(1), args.pos(2));
            }
            if is(name, &["os.symlink"]) {
                st.file_command(&["ln", "-s"], &[&p0, &p1]);
                return Some(Val::unknown());
            }
            if is(name, &["os.truncate"]) {
                st.file_command(&["truncate", "-s", &args.text(1).unwrap_or_else(|| "0".into())], &[&p0]);
                return Some(Val::unknown());
            }
            if is(name, &["os.chdir"]) {
                st.file_command(&["cd"], &[&p0]);
                return Some(Val::unknown());
            }
            if is(
                name,
                &["urllib.request.urlretrieve", "urllib.urlretrieve", "wget.download"],
            ) {
                let data = st.fetched(Some(&p0));
                st.write(&p1, &data, false);
                return Some(data);
            }
            if is(
                name,
                &["pathlib.Path", "Path", "PurePath", "PosixPath", "pathlib.PurePath"],
            ) {
                let parts: Vec<String> = args.positional().filter_map(Val::text).collect();
                if parts.is_empty() {
                    return Some(if args.0.is_empty() {
                        Val::lit(".")
                    } else {
                        Val::unknown()
                    });
                }
                return Some(Val::lit(
                    parts.iter().skip(1).fold(parts[0].clone(), |a, b| join_path(&a, b)),
                ));
            }
            None
        }
        Lang::Js => {
            let l = last(name);
            let fs = is(name, &["fs", "fs.promises", "fs-extra", "fse"])
                || ["fs.", "fs.promises.", "fs-extra.", "fse.", "Deno.", "graceful-fs."]
                    .iter()
                    .any(|m| name.starts_with(m));
            if name == "rimraf" || is(name, &["rimraf.sync", "rimraf.rimraf", "rimraf.rimrafSync"]) {
                return rm(st, "-rf", &p0);
            }
            if is(name, &["Bun.write"]) {
                st.write(&p0, &p1, false);
                return Some(Val::unknown());
            }
            if is(name, &["Bun.file"]) {
                let mut v = read_file(&p0);
                v.parts = p0.parts.clone();
                return Some(v);
            }
            if is(name, &["process.chdir", "Deno.chdir"]) {
                st.file_command(&["cd"], &[&p0]);
                return Some(Val::unknown());
            }
            if !fs {
                return None;
            }
            let append = l.starts_with("append")
                || args
                    .named("flag")
                    .or_else(|| args.named("flags"))
                    .and_then(Val::text)
                    .is_some_and(|f| f.contains('a'))
                || args
                    .named("append")
                    .is_some_and(|v| v.text().as_deref() == Some("true"));
            match l.trim_end_matches("Sync") {
                "writeFile" | "appendFile" | "outputFile" | "writeTextFile" | "writeJson" | "outputJson" => {
                    st.write(&p0, &p1, append);
                }
                "createWriteStream" | "open"
                    if l == "createWriteStream" || args.text(1).and_then(|m| write_mode(&m)).is_some() =>
                {
                    let append = append || args.text(1).and_then(|m| write_mode(&m)) == Some(true);
                    return Some(Val {
                        handle: st.open_write(&p0, append),
                        ..Val::default()
                    });
                }
                "rm" | "remove" | "rmdir" if recursive || l.starts_with("remove") => return rm(st, "-rf", &p0),
                "emptyDir" => return rm(st, "-rf", &p0),
                "rm" | "unlink" => return rm(st, "-f", &p0),
                "rmdir" => {
                    st.file_command(&["rmdir"], &[&p0]);
                }
                "rename" | "move" => st.file_command(&["mv"], &[&p0, &p1]),
                "copyFile" | "copy" | "cp" => {
                    let flags: &[&str] = if recursive || l.starts_with("copy") && l != "copyFile" {
                        &["cp", "-r"]
                    } else {
                        &["cp"]
                    };
                    st.file_command(flags, &[&p0, &p1]);
                }
                "chmod" => return chmod(st, &p1, &p0),
                "chown" => return chown(st, &p0, args.pos(1), args.pos(2)),
                "symlink" => st.file_command(&["ln", "-s"], &[&p0, &p1]),
                "truncate" => st.file_command(&["truncate", "-s", "0"], &[&p0]),
                "readFile" | "createReadStream" | "readTextFile" | "readJson" | "readJSON" | "readFileStr" => {
                    return Some(read_file(&p0));
                }
                _ => return None,
            }
            Some(Val::unknown())
        }
        Lang::Perl => {
            let all: Vec<&Val> = args.positional().collect();
            match last(name) {
                "open" | "sysopen" => Some(perl_open(st, args)),
                "unlink" => {
                    for p in &all {
                        st.file_command(&["rm", "-f"], &[p]);
                    }
                    Some(Val::unknown())
                }
                "rmtree" | "remove_tree" => {
                    for p in all.iter().filter(|p| p.fields.is_empty()) {
                        st.file_command(&["rm", "-rf"], &[p]);
                    }
                    Some(Val::unknown())
                }
                "rmdir" => {
                    st.file_command(&["rmdir"], &[&p0]);
                    Some(Val::unknown())
                }
                "rename" | "move" | "mv" => {
                    st.file_command(&["mv"], &[&p0, &p1]);
                    Some(Val::unknown())
                }
                "copy" | "cp" => {
                    st.file_command(&["cp"], &[&p0, &p1]);
                    Some(Val::unknown())
                }
                "chmod" => {
                    for p in all.iter().skip(1) {
                        chmod(st, &p0, p);
                    }
                    Some(Val::unknown())
                }
                "chown" => {
                    for p in all.iter().skip(2) {
                        chown(st, p, args.pos(0), args.pos(1));
                    }
                    Some(Val::unknown())
                }
                "symlink" => {
                    st.file_command(&["ln", "-s"], &[&p0, &p1]);
                    Some(Val::unknown())
                }
                "truncate" => {
                    st.file_command(&["truncate", "-s", "0"], &[&p0]);
                    Some(Val::unknown())
                }
                "chdir" => {
                    st.file_command(&["cd"], &[&p0]);
                    Some(Val::unknown())
                }
                "glob" => Some(p0),
                "catfile" | "catdir" => Some(join_all(args)),
                "getstore" | "mirror" => {
                    let data = st.fetched(Some(&p0));
                    st.write(&p1, &data, false);
                    Some(Val::unknown())
                }
                _ => None,
            }
        }
        Lang::Ruby => {
            if is(name, &["File.write", "IO.write", "File.binwrite", "IO.binwrite"]) {
                let append = args.named("mode").and_then(Val::text).and_then(|m| write_mode(&m)) == Some(true);
                st.write(&p0, &p1, append);
                return Some(Val::unknown());
            }
            if is(name, &["File.open", "File.new", "open", "Kernel.open"]) {
                let mode = args
                    .text(1)
                    .or_else(|| args.named("mode").and_then(Val::text))
                    .unwrap_or_default();
                return Some(open_file(st, &p0, &mode));
            }
            if is(
                name,
                &[
                    "File.read",
                    "IO.read",
                    "File.readlines",
                    "IO.readlines",
                    "File.binread",
                    "File.foreach",
                    "IO.foreach",
                ],
            ) {
                return Some(read_file(&p0));
            }
            if is(
                name,
                &[
                    "File.delete",
                    "File.unlink",
                    "FileUtils.rm",
                    "FileUtils.rm_f",
                    "FileUtils.remove",
                    "FileUtils.remove_file",
                ],
            ) {
                for p in args.positional() {
                    let p = p.clone();
                    match &p.items {
                        Some(items) => {
                            for i in items.clone() {
                                st.file_command(&["rm", "-f"], &[&i]);
                            }
                        }
                        None => st.file_command(&["rm", "-f"], &[&p]),
                    }
                }
                return Some(Val::unknown());
            }
            if is(
                name,
                &[
                    "FileUtils.rm_r",
                    "FileUtils.rm_rf",
                    "FileUtils.rmtree",
                    "FileUtils.remove_dir",
                    "FileUtils.remove_entry",
                    "FileUtils.remove_entry_secure",
                ],
            ) {
                return rm(st, "-rf", &p0);
            }
            if is(name, &["Dir.rmdir", "Dir.delete", "Dir.unlink", "FileUtils.rmdir"]) {
                st.file_command(&["rmdir"], &[&p0]);
                return Some(Val::unknown());
            }
            if is(name, &["File.rename", "FileUtils.mv", "FileUtils.move"]) {
                st.file_command(&["mv"], &[&p0, &p1]);
                return Some(Val::unknown());
            }
            if is(
                name,
                &[
                    "FileUtils.cp",
                    "FileUtils.copy",
                    "FileUtils.copy_file",
                    "IO.copy_stream",
                ],
            ) {
                st.file_command(&["cp"], &[&p0, &p1]);
                return Some(Val::unknown());
            }
            if is(name, &["FileUtils.cp_r"]) {
                st.file_command(&["cp", "-r"], &[&p0, &p1]);
                return Some(Val::unknown());
            }
            if is(name, &["File.chmod", "FileUtils.chmod", "FileUtils.chmod_R"]) {
                return chmod(st, &p0, &p1);
            }
            if is(name, &["File.chown", "FileUtils.chown", "FileUtils.chown_R"]) {
                return chown(st, args.pos(2).unwrap_or(&Val::unknown()), Some(&p0), Some(&p1));
            }
            if is(name, &["File.symlink", "FileUtils.ln_s", "FileUtils.symlink"]) {
                st.file_command(&["ln", "-s"], &[&p0, &p1]);
                return Some(Val::unknown());
            }
            if is(name, &["File.truncate"]) {
                st.file_command(&["truncate", "-s", "0"], &[&p0]);
                return Some(Val::unknown());
            }
            if is(name, &["Dir.chdir", "FileUtils.cd"]) {
                st.file_command(&["cd"], &[&p0]);
                return Some(Val::unknown());
            }
            if is(
                name,
                &["File.expand_path", "File.absolute_path", "Pathname.new", "Pathname"],
            ) {
                return Some(p0);
            }
            if is(name, &["File.join"]) {
                return Some(join_all(args));
            }
            None
        }
        Lang::Php => match name {
            "file_put_contents" => {
                let append = args
                    .pos(2)
                    .and_then(|v| v.api.clone())
                    .is_some_and(|f| f.contains("APPEND"));
                st.write(&p0, &p1, append);
                Some(Val::unknown())
            }
            "fopen" => {
                let mode = args.text(1).unwrap_or_default();
                Some(open_file(st, &p0, &mode))
            }
            "unlink" => rm(st, "-f", &p0),
            "rmdir" => {
                st.file_command(&["rmdir"], &[&p0]);
                Some(Val::unknown())
            }
            "rename" => {
                st.file_command(&["mv"], &[&p0, &p1]);
                Some(Val::unknown())
            }
            "copy" => {
                st.file_command(&["cp"], &[&p0, &p1]);
                Some(Val::unknown())
            }
            "chmod" => chmod(st, &p1, &p0),
            "chown" => chown(st, &p0, args.pos(1), None),
            "symlink" => {
                st.file_command(&["ln", "-s"], &[&p0, &p1]);
                Some(Val::unknown())
            }
            "chdir" => {
                st.file_command(&["cd"], &[&p0]);
                Some(Val::unknown())
            }
            "file_get_contents" | "file" | "fopen_read" => {
                if p0
                    .text()
                    .is_some_and(|t| t.starts_with("http://") || t.starts_with("https://"))
                {
                    // A stream context's `content` is the body sent.
                    if let Some(ctx) = args.pos(2) {
                        st.send(Some(&p0), ctx);
                    }
                    return Some(st.fetched(Some(&p0)));
                }
                Some(read_file(&p0))
            }
            "readfile" => {
                let v = read_file(&p0);
                st.print(&v);
                Some(Val::unknown())
            }
            "fwrite" | "fputs" => {
                match &p0.handle {
                    Some(Handle::Write(k)) => st.write_to(*k, &p1),
                    Some(Handle::Net(h)) => {
                        let host = Val::lit(h.clone());
                        st.send(Some(&host), &p1);
                    }
                    _ => {}
                }
                Some(Val::unknown())
            }
            "fread" | "fgets" | "stream_get_contents" => Some(Val::tainted(p0.all_from())),
            "fpassthru" => {
                st.print(&Val::tainted(p0.all_from()));
                Some(Val::unknown())
            }
            _ => None,
        },
        Lang::Lua => match name {
            "io.open" => {
                let mode = args.text(1).unwrap_or_default();
                Some(open_file(st, &p0, &mode))
            }
            "io.lines" => Some(read_file(&p0)),
            "os.remove" => rm(st, "-f", &p0),
            "os.rename" => {
                st.file_command(&["mv"], &[&p0, &p1]);
                Some(Val::unknown())
            }
            "io.output" => Some(Val {
                handle: st.open_write(&p0, false),
                ..Val::default()
            }),
            _ => None,
        },
        Lang::AppleScript => None,
    }
}

/// `open(path, mode)`: a handle that writes, or the file's contents.
fn open_file(st: &mut State, path: &Val, mode: &str) -> Val {
    match write_mode(mode) {
        Some(append) => Val {
            handle: st.open_write(path, append),
            ..Val::default()
        },
        None => read_file(path),
    }
}

/// Perl's `open(FH, MODE, PATH)` and `open(FH, "MODEPATH")`: a write handle, a read handle,
/// or a command run (`"cmd |"`, `'-|'`), bound to the handle's name by the caller.
fn perl_open(st: &mut State, args: &Args<'_>) -> Val {
    let words: Vec<&Val> = args.positional().collect();
    let handle_name = words.first().and_then(|v| v.var.clone().or_else(|| v.api.clone()));
    let (mode, target, extra): (String, Val, Vec<&Val>) = match words.len() {
        0 | 1 => return Val::unknown(),
        2 => {
            let spec = words[1].text().unwrap_or_default();
            let t = spec.trim();
            if let Some(cmd) = t.strip_suffix('|') {
                (String::from("-|"), Val::lit(cmd.trim()), Vec::new())
            } else if let Some(cmd) = t.strip_prefix('|') {
                (String::from("|-"), Val::lit(cmd.trim()), Vec::new())
            } else {
                let m: String = t.chars().take_while(|c| matches!(c, '<' | '>' | '+')).collect();
                let path = t[m.len()..].trim().to_string();
                // A mode glued to an interpolated path keeps the path's holes.
                let target = if words[1].text().is_some() {
                    Val::lit(path)
                } else {
                    let mut v = (*words[1]).clone();
                    if let Some(super::eval::Part::Lit(first)) = v.parts.first_mut() {
                        *first = first.trim_start_matches(['<', '>', '+', ' ']).to_string();
                    }
                    v
                };
                (m, target, Vec::new())
            }
        }
        _ => (
            words[1].text().unwrap_or_default().trim().to_string(),
            words[2].clone(),
            words[3..].to_vec(),
        ),
    };
    let v = match mode.as_str() {
        "-|" | "|-" => {
            if extra.is_empty() {
                st.run(&target, &[])
            } else {
                st.run(&target, &extra)
            }
        }
        m if m.contains('>') || m.starts_with("+<") => Val {
            handle: st.open_write(&target, m.starts_with(">>")),
            ..Val::default()
        },
        _ => read_file(&target),
    };
    if let Some(h) = handle_name {
        st_bind(st, &h, &v);
    }
    v
}

fn st_bind(st: &mut State, name: &str, v: &Val) {
    st.bind(name, v.clone());
}

/// `chmod MODE PATH`, when both are known (`0o777` and `0777` read as `777`).
fn chmod(st: &mut State, mode: &Val, path: &Val) -> Option<Val> {
    let m = mode.text()?;
    let m = m.trim_start_matches("0o").trim_start_matches("0O");
    let m = if m.len() == 4 && m.starts_with('0') { &m[1..] } else { m };
    if m.is_empty() || !m.chars().all(|c| c.is_ascii_digit()) {
        return Some(Val::unknown());
    }
    st.file_command(&["chmod", m], &[path]);
    Some(Val::unknown())
}

fn chown(st: &mut State, path: &Val, user: Option<&Val>, group: Option<&Val>) -> Option<Val> {
    let u = user.and_then(Val::text)?;
    let owner = match group.and_then(Val::text) {
        Some(g) => format!("{u}:{g}"),
        None => u,
    };
    st.file_command(&["chown", &owner], &[path]);
    Some(Val::unknown())
}

fn join_all(args: &Args<'_>) -> Val {
    let parts: Option<Vec<String>> = args.positional().map(Val::text).collect();
    match parts {
        Some(p) if !p.is_empty() => Val::lit(p.iter().skip(1).fold(p[0].clone(), |a, b| join_path(&a, b))),
        _ => Val::tainted(args.all_from()),
    }
}

/// APIs that print to the terminal.
fn prints(st: &mut State, name: &str, args: &Args<'_>) -> Option<Val> {
    let lang = st.lang;
    let printer = match lang {
        Lang::Python => is(
            name,
            &[
                "print",
                "sys.stdout.write",
                "sys.stderr.write",
                "pprint.pprint",
                "pprint",
                "pp",
            ],
        ),
        Lang::Js => is(
            name,
            &[
                "console.log",
                "console.info",
                "console.error",
                "console.warn",
                "console.debug",
                "console.dir",
                "console.table",
                "console.trace",
                "process.stdout.write",
                "process.stderr.write",
                "print",
            ],
        ),
        Lang::Perl => matches!(name, "print" | "say" | "printf"),
        Lang::Ruby => is(
            name,
            &[
                "puts",
                "print",
                "p",
                "pp",
                "printf",
                "STDOUT.puts",
                "STDOUT.print",
                "STDOUT.write",
                "$stdout.puts",
                "warn",
            ],
        ),
        Lang::Php => matches!(
            name,
            "echo" | "print" | "print_r" | "var_dump" | "var_export" | "printf" | "vprintf"
        ),
        Lang::Lua => matches!(name, "print" | "io.write"),
        Lang::AppleScript => false,
    };
    if !printer {
        return None;
    }
    // Python's `print(x, file=f)` writes to `f`.
    if let Some(f) = args.named("file") {
        if let Some(Handle::Write(k)) = f.handle {
            for v in args.positional() {
                st.write_to(k, v);
            }
            return Some(Val::unknown());
        }
    }
    if lang == Lang::Perl {
        return Some(perl_print(st, args));
    }
    for v in args.positional() {
        st.print(v);
    }
    Some(Val::unknown())
}

/// Perl's `print`, `print $fh LIST`, `print STDERR LIST`, and `print` alone (prints `$_`).
fn perl_print(st: &mut State, args: &Args<'_>) -> Val {
    let all: Vec<&Val> = args.positional().collect();
    if all.is_empty() {
        if let Some(line) = st.var("$_") {
            st.print(&line);
        }
        return Val::unknown();
    }
    // `print $fh "x"`: the evaluator sees one argument holding both; its handle says where.
    let target = all.iter().find_map(|v| v.handle.clone());
    match target {
        Some(Handle::Write(k)) => {
            for v in &all {
                let mut content = (*v).clone();
                content.handle = None;
                st.write_to(k, &content);
            }
        }
        Some(Handle::Net(h)) => {
            let host = Val::lit(h);
            for v in &all {
                st.send(Some(&host), v);
            }
        }
        _ => {
            for v in &all {
                st.print(v);
            }
        }
    }
    Val::unknown()
}

/// APIs that download, or send data to another host.
fn network(st: &mut State, name: &str, args: &Args<'_>) -> Option<Val> {
    let lang = st.lang;
    let first = args.pos(0).cloned().unwrap_or_default();
    let body_of = |args: &Args<'_>, keys: &[&str]| {
        let mut b = Val::unknown();
        for k in keys {
            if let Some(v) = args.named(k) {
                b.from.merge(&v.all_from());
            }
        }
        b
    };
    match lang {
        Lang::Python => {
            if is(
                name,
                &[
                    "urllib.request.urlopen",
                    "urllib.urlopen",
                    "urllib2.urlopen",
                    "request.urlopen",
                    "urlopen",
                ],
            ) {
                // `urlopen(url, data)` or `urlopen(Request(url, data=..))`.
                let url = first.field("url").cloned().unwrap_or_else(|| first.clone());
                let mut body = args.pos(1).cloned().unwrap_or_default();
                if let Some(d) = first.field("data").or_else(|| args.named("data")) {
                    body.from.merge(&d.all_from());
                }
                st.send(Some(&url), &body);
                return Some(st.fetched(Some(&url)));
            }
            if is(
                name,
                &[
                    "urllib.request.Request",
                    "urllib2.Request",
                    "request.Request",
                    "Request",
                ],
            ) {
                let data = args.pos(1).or_else(|| args.named("data")).cloned().unwrap_or_default();
                return Some(Val {
                    fields: vec![("url".into(), first), ("data".into(), data)],
                    ..Val::default()
                });
            }
            let client = name.starts_with("requests.") || name.starts_with("httpx.") || name.starts_with("urllib3.");
            if client {
                let l = last(name);
                if matches!(l, "Session" | "session" | "Client" | "AsyncClient" | "PoolManager") {
                    return Some(Val {
                        handle: Some(Handle::Client),
                        ..Val::default()
                    });
                }
                return Some(http_call(st, l, args));
            }
            if is(
                name,
                &[
                    "http.client.HTTPSConnection",
                    "http.client.HTTPConnection",
                    "httplib.HTTPSConnection",
                    "httplib.HTTPConnection",
                    "smtplib.SMTP",
                    "smtplib.SMTP_SSL",
                    "ftplib.FTP",
                ],
            ) {
                return Some(net(first.text().unwrap_or_default()));
            }
            if is(name, &["socket.socket"]) {
                return Some(net(String::new()));
            }
            if is(name, &["socket.create_connection"]) {
                return Some(net(first_host(&first)));
            }
            None
        }
        Lang::Js => {
            if is(name, &["fetch", "Deno.fetch", "Bun.fetch"]) {
                let body = args.pos(1).and_then(|o| o.field("body")).cloned().unwrap_or_default();
                st.send(Some(&first), &body);
                return Some(st.fetched(Some(&first)));
            }
            if is(
                name,
                &["http.get", "https.get", "axios.get", "got", "got.get", "needle.get"],
            ) {
                let url = url_of(&first);
                return Some(st.fetched(Some(&url)));
            }
            if is(name, &["http.request", "https.request"]) {
                let url = url_of(&first);
                return Some(net(url.text().unwrap_or_default()));
            }
            if name == "axios"
                || is(
                    name,
                    &[
                        "axios.post",
                        "axios.put",
                        "axios.patch",
                        "axios.request",
                        "got.post",
                        "needle.post",
                    ],
                )
            {
                let url = first.field("url").cloned().unwrap_or_else(|| first.clone());
                let mut body = args.pos(1).cloned().unwrap_or_default();
                if let Some(d) = first
                    .field("data")
                    .or_else(|| first.field("body"))
                    .or_else(|| args.named("json"))
                {
                    body.from.merge(&d.all_from());
                }
                st.send(Some(&url), &body);
                return Some(st.fetched(Some(&url)));
            }
            if is(name, &["navigator.sendBeacon"]) {
                let body = args.pos(1).cloned().unwrap_or_default();
                st.send(Some(&first), &body);
                return Some(Val::unknown());
            }
            if is(name, &["net.connect", "net.createConnection", "tls.connect"]) {
                let host = args
                    .pos(1)
                    .and_then(Val::text)
                    .or_else(|| first.field("host").and_then(Val::text));
                return Some(net(host.unwrap_or_default()));
            }
            if is(name, &["net.Socket"]) {
                return Some(net(String::new()));
            }
            None
        }
        Lang::Perl => match last(name) {
            "get" | "getprint" if name == "get" || name.ends_with("Simple.get") || name == "getprint" => {
                let v = st.fetched(Some(&first));
                if name.ends_with("getprint") {
                    st.print(&v);
                }
                Some(v)
            }
            "new" if name.contains("UserAgent") || name.contains("HTTP.Tiny") => Some(Val {
                handle: Some(Handle::Client),
                ..Val::default()
            }),
            "new" if name.contains("Socket") => {
                let host = args
                    .named("PeerAddr")
                    .or_else(|| args.named("PeerHost"))
                    .and_then(Val::text);
                Some(net(host.or_else(|| first.text()).unwrap_or_default()))
            }
            "send" | "syswrite" => {
                if let Some(Handle::Net(h)) = &first.handle {
                    let host = Val::lit(h.clone());
                    st.send(Some(&host), &args.pos(1).cloned().unwrap_or_default());
                }
                Some(Val::unknown())
            }
            _ => None,
        },
        Lang::Ruby => {
            if is(
                name,
                &[
                    "Net.HTTP.get",
                    "Net.HTTP.get_response",
                    "URI.open",
                    "HTTParty.get",
                    "RestClient.get",
                    "Faraday.get",
                ],
            ) {
                return Some(st.fetched(Some(&first)));
            }
            if is(
                name,
                &[
                    "Net.HTTP.post",
                    "Net.HTTP.post_form",
                    "HTTParty.post",
                    "HTTParty.put",
                    "RestClient.post",
                    "RestClient.put",
                    "Faraday.post",
                ],
            ) {
                let mut body = args.pos(1).cloned().unwrap_or_default();
                body.from.merge(&body_of(args, &["body", "payload"]).from);
                st.send(Some(&first), &body);
                return Some(st.fetched(Some(&first)));
            }
            if is(name, &["URI", "URI.parse"]) {
                let mut v = first.clone();
                v.api = None;
                return Some(v);
            }
            if is(
                name,
                &["TCPSocket.new", "TCPSocket.open", "Socket.tcp", "UDPSocket.new"],
            ) {
                return Some(net(first.text().unwrap_or_default()));
            }
            if name == "open" && first.text().is_some_and(|t| t.starts_with("http")) {
                return Some(st.fetched(Some(&first)));
            }
            None
        }
        Lang::Php => match name {
            "curl_init" => Some(net(first.text().unwrap_or_default())),
            "curl_setopt" => {
                let opt = args.pos(1).and_then(|v| v.api.clone()).unwrap_or_default();
                if opt.contains("POSTFIELDS") {
                    let host = match &first.handle {
                        Some(Handle::Net(h)) => Some(Val::lit(h.clone())),
                        _ => None,
                    };
                    st.send(host.as_ref(), &args.pos(2).cloned().unwrap_or_default());
                }
                Some(Val::unknown())
            }
            "curl_exec" => {
                let url = match &first.handle {
                    Some(Handle::Net(h)) => Val::lit(h.clone()),
                    _ => Val::unknown(),
                };
                Some(st.fetched(Some(&url)))
            }
            "fsockopen" | "pfsockopen" | "stream_socket_client" => Some(net(first.text().unwrap_or_default())),
            _ => None,
        },
        Lang::Lua => match name {
            "socket.http.request" | "http.request" | "ssl.https.request" | "https.request" => {
                if let Some(body) = args.pos(1) {
                    st.send(Some(&first), body);
                }
                Some(st.fetched(Some(&first)))
            }
            "socket.tcp" | "socket.udp" => Some(net(String::new())),
            "socket.connect" => Some(net(first.text().unwrap_or_default())),
            _ => None,
        },
        Lang::AppleScript => None,
    }
}

/// A connection to `host`.
fn net(host: String) -> Val {
    Val {
        handle: Some(Handle::Net(host)),
        ..Val::default()
    }
}

/// The host of `("host", port)`.
fn first_host(v: &Val) -> String {
    v.items
        .as_ref()
        .and_then(|i| i.first())
        .and_then(Val::text)
        .or_else(|| v.text())
        .unwrap_or_default()
}

/// The URL of a request: a string, or an options object (`{hostname, path}`).
fn url_of(v: &Val) -> Val {
    if v.text().is_some() {
        return v.clone();
    }
    let host = v.field("hostname").or_else(|| v.field("host")).and_then(Val::text);
    match host {
        Some(h) => Val::lit(format!(
            "https://{h}{}",
            v.field("path").and_then(Val::text).unwrap_or_default()
        )),
        None => Val::unknown(),
    }
}

/// `requests.get/post/..(url, data=, json=, files=, params=)`, also on a session or client.
fn http_call(st: &mut State, verb: &str, args: &Args<'_>) -> Val {
    let (url, body_pos) = if verb == "request" {
        (args.pos(1).cloned().unwrap_or_default(), 2)
    } else {
        (args.pos(0).cloned().unwrap_or_default(), 1)
    };
    let mut body = args.pos(body_pos).cloned().unwrap_or_default();
    for k in ["data", "json", "files", "params", "content", "body", "fields"] {
        if let Some(v) = args.named(k) {
            body.from.merge(&v.all_from());
        }
    }
    st.send(Some(&url), &body);
    st.fetched(Some(&url))
}

/// Whether the API `name` decodes, decompresses or reverses what it is given: how.
pub(super) fn decoder(lang: Lang, name: &str) -> Option<&'static str> {
    decoding(lang, name, &Args(&[]))
}

/// APIs that decode, decompress or reverse data: their result hides what it is.
fn decoders(st: &mut State, name: &str, args: &Args<'_>) -> Option<Val> {
    let first = args.pos(0).cloned().unwrap_or_default();
    if matches!(name, "chr") {
        return Some(char_code(st, &first));
    }
    let how = decoding(st.lang, name, args)?;
    if how.is_empty() {
        return Some(first);
    }
    let all = Val::tainted(args.all_from());
    Some(st.hidden(how, &all))
}

/// How `name` called with `args` decodes ("" when it passes its argument through unchanged).
fn decoding(lang: Lang, name: &str, args: &Args<'_>) -> Option<&'static str> {
    let first = args.pos(0).cloned().unwrap_or_default();
    let how = match lang {
        Lang::Python => {
            if is(
                name,
                &[
                    "base64.b64decode",
                    "base64.b32decode",
                    "base64.b16decode",
                    "base64.a85decode",
                    "base64.b85decode",
                    "base64.urlsafe_b64decode",
                    "base64.standard_b64decode",
                    "base64.decodebytes",
                    "base64.decodestring",
                    "binascii.a2b_base64",
                ],
            ) {
                "base64-decoded"
            } else if is(
                name,
                &[
                    "binascii.unhexlify",
                    "binascii.a2b_hex",
                    "bytes.fromhex",
                    "bytearray.fromhex",
                ],
            ) {
                "hex-decoded"
            } else if is(name, &["codecs.decode"]) {
                "decoded"
            } else if is(
                name,
                &[
                    "zlib.decompress",
                    "gzip.decompress",
                    "bz2.decompress",
                    "lzma.decompress",
                ],
            ) {
                "decompressed"
            } else if is(name, &["marshal.loads"]) {
                "unmarshalled"
            } else if name == "chr" {
                "built from char codes"
            } else if name == "reversed" {
                "reversed"
            } else {
                return None;
            }
        }
        Lang::Js => {
            if is(name, &["Buffer.from"]) {
                let enc = args.text(1).unwrap_or_default();
                if matches!(enc.as_str(), "base64" | "base64url" | "hex" | "binary" | "latin1") {
                    "decoded"
                } else if first.items.is_some() {
                    "built from byte codes"
                } else {
                    ""
                }
            } else if name == "atob" {
                "base64-decoded"
            } else if is(
                name,
                &[
                    "zlib.inflateSync",
                    "zlib.gunzipSync",
                    "zlib.unzipSync",
                    "zlib.brotliDecompressSync",
                    "zlib.inflateRawSync",
                ],
            ) {
                "decompressed"
            } else if is(name, &["String.fromCharCode", "String.fromCodePoint"]) {
                "built from char codes"
            } else if matches!(name, "decodeURIComponent" | "unescape" | "decodeURI") {
                "percent-decoded"
            } else {
                return None;
            }
        }
        Lang::Perl => match last(name) {
            "pack" | "unpack" => "packed",
            "decode_base64" | "decode_base64url" => "base64-decoded",
            "uncompress" | "memGunzip" | "inflate" => "decompressed",
            "reverse" => "reversed",
            "chr" => "built from char codes",
            _ => return None,
        },
        Lang::Ruby => {
            if is(
                name,
                &["Base64.decode64", "Base64.strict_decode64", "Base64.urlsafe_decode64"],
            ) {
                "base64-decoded"
            } else if is(name, &["Zlib.Inflate.inflate", "Zlib.inflate", "Zlib.gunzip"]) {
                "decompressed"
            } else {
                return None;
            }
        }
        Lang::Php => match name {
            "base64_decode" => "base64-decoded",
            "hex2bin" | "pack" => "hex-decoded",
            "gzinflate" | "gzuncompress" | "gzdecode" => "decompressed",
            "str_rot13" => "rot13-decoded",
            "strrev" => "reversed",
            "convert_uudecode" => "uudecoded",
            "urldecode" | "rawurldecode" => "percent-decoded",
            "chr" => "built from char codes",
            _ => return None,
        },
        Lang::Lua => match name {
            "string.char" => "built from char codes",
            "string.reverse" => "reversed",
            "mime.unb64" => "base64-decoded",
            _ => return None,
        },
        Lang::AppleScript => return None,
    };
    Some(how)
}

/// `chr(N)`: the character, known, but marked as built from char codes (a command spelled
/// that way hides itself).
fn char_code(st: &mut State, code: &Val) -> Val {
    let mut v = st.hidden("built from char codes", code);
    if let Some(c) = code.text().and_then(|n| n.parse::<u32>().ok()).and_then(char::from_u32) {
        v.parts = vec![super::eval::Part::Lit(c.to_string())];
    }
    v
}

/// Paths, the home directory and environment lookups.
fn paths_and_env(st: &mut State, name: &str, args: &Args<'_>) -> Option<Val> {
    let first = args.pos(0).cloned().unwrap_or_default();
    let home = Val::lit("~");
    let env_lookup = |k: Option<String>| match k {
        Some(k) => env_var(&k),
        None => Val::tainted(From {
            env: true,
            ..From::default()
        }),
    };
    match st.lang {
        Lang::Python => {
            if is(
                name,
                &[
                    "os.path.expanduser",
                    "os.path.abspath",
                    "os.path.realpath",
                    "os.path.normpath",
                    "os.path.expandvars",
                    "os.fspath",
                    "str",
                ],
            ) {
                // The same text or data, no longer a module or the environment's own object.
                let mut v = first;
                v.api = None;
                return Some(v);
            }
            if is(name, &["os.path.join", "posixpath.join"]) {
                return Some(join_all(args));
            }
            if is(name, &["Path.home", "pathlib.Path.home", "os.path.expanduser.home"]) {
                return Some(home);
            }
            if is(name, &["os.getcwd", "Path.cwd", "pathlib.Path.cwd"]) {
                return Some(Val::lit("."));
            }
            if is(name, &["tempfile.gettempdir", "tempfile.mkdtemp"]) {
                return Some(Val::lit("/tmp"));
            }
            if is(
                name,
                &["os.getenv", "os.environ.get", "os.environ.pop", "os.environ.setdefault"],
            ) {
                return Some(env_lookup(args.text(0)));
            }
            if is(
                name,
                &[
                    "os.environ.copy",
                    "os.environ.items",
                    "os.environ.values",
                    "dict",
                    "json.dumps",
                    "repr",
                ],
            ) && args.all_from().env
            {
                return Some(Val::tainted(args.all_from()).with_env(true));
            }
            if is(name, &["os.environ.copy", "os.environ.items", "os.environ.values"]) {
                return Some(env_lookup(None));
            }
            if is(name, &["os.environ.keys"]) {
                return Some(Val::unknown());
            }
            None
        }
        Lang::Js => {
            if is(name, &["os.homedir"]) {
                return Some(home);
            }
            if is(name, &["os.tmpdir"]) {
                return Some(Val::lit("/tmp"));
            }
            if is(name, &["process.cwd", "Deno.cwd"]) {
                return Some(Val::lit("."));
            }
            if is(name, &["path.join", "path.resolve", "path.posix.join"]) {
                return Some(join_all(args));
            }
            if is(name, &["path.normalize", "String"]) {
                return Some(first);
            }
            if is(name, &["Deno.env.get"]) {
                return Some(env_lookup(args.text(0)));
            }
            if is(name, &["Deno.env.toObject", "process.env.entries"]) {
                return Some(env_lookup(None));
            }
            if is(name, &["Object.keys", "Object.getOwnPropertyNames"]) {
                return Some(Val::unknown());
            }
            None
        }
        Lang::Ruby => {
            if is(name, &["Dir.home", "Etc.getpwuid.dir"]) {
                return Some(home);
            }
            if is(name, &["Dir.pwd", "Dir.getwd"]) {
                return Some(Val::lit("."));
            }
            if is(name, &["ENV.fetch", "ENV.[]"]) {
                return Some(env_lookup(args.text(0)));
            }
            if is(
                name,
                &[
                    "ENV.to_h",
                    "ENV.to_a",
                    "ENV.to_hash",
                    "ENV.inspect",
                    "ENV.each",
                    "ENV.map",
                    "ENV.select",
                    "ENV.filter",
                ],
            ) {
                return Some(env_lookup(None));
            }
            if is(name, &["ENV.keys"]) {
                return Some(Val::unknown());
            }
            None
        }
        Lang::Perl => None,
        Lang::Php => match name {
            "getenv" => Some(env_lookup(args.text(0))),
            "getcwd" => Some(Val::lit(".")),
            "sys_get_temp_dir" => Some(Val::lit("/tmp")),
            "realpath" => Some(first),
            _ => None,
        },
        Lang::Lua => match name {
            "os.getenv" => Some(env_lookup(args.text(0))),
            "os.tmpname" => Some(Val::lit("/tmp/lua")),
            _ => None,
        },
        Lang::AppleScript => None,
    }
}

/// Calls that reduce data to a size, a count, a truth value or a digest: nothing of the data
/// itself leaves through them.
fn reducer(name: &str) -> bool {
    matches!(
        name,
        "len"
            | "bool"
            | "int"
            | "float"
            | "hash"
            | "sum"
            | "any"
            | "all"
            | "type"
            | "id"
            | "isinstance"
            | "callable"
            | "length"
            | "scalar"
            | "defined"
            | "exists"
            | "keys"
            | "strlen"
            | "count"
            | "md5"
            | "sha1"
            | "crc32"
            | "isset"
            | "empty"
            | "array_keys"
            | "is_file"
            | "file_exists"
            | "Boolean"
            | "Number"
            | "parseInt"
            | "string.len"
    ) || name.starts_with("hashlib.")
        || name.starts_with("Digest.")
        || name.starts_with("crypto.")
        || name.ends_with("path.exists")
        || name.ends_with("path.isfile")
        || name.ends_with("path.getsize")
}

/// A method called on a data value: writes and sends through handles, reads of paths,
/// substitutions, decoding methods, and the callbacks of downloads.
pub(super) fn method(st: &mut State, recv: &Val, m: &str, args: &Args<'_>) -> Option<Val> {
    let first = args.pos(0).cloned().unwrap_or_default();
    // Writes and sends through a handle.
    match &recv.handle {
        Some(Handle::Write(k))
            if matches!(
                m,
                "write" | "writelines" | "puts" | "print" | "syswrite" | "end" | "printf" | "say" | "binwrite"
            ) =>
        {
            let k = *k;
            for v in args.positional() {
                st.write_to(k, v);
            }
            return Some(Val::unknown());
        }
        Some(Handle::Net(h)) => {
            let host = h.clone();
            match m {
                "connect" | "open" => {
                    let target = if first.items.is_some() {
                        first_host(&first)
                    } else if args.positional().count() >= 2 {
                        // node's `s.connect(port, host)`, Lua's `t:connect(host, port)`.
                        args.positional()
                            .filter_map(Val::text)
                            .find(|t| t.parse::<u64>().is_err())
                            .unwrap_or_default()
                    } else {
                        first.text().unwrap_or_default()
                    };
                    return Some(net(target));
                }
                "send" | "sendall" | "sendto" | "write" | "end" | "puts" | "print" | "request" | "sendmail"
                | "send_message" => {
                    let url = if host.is_empty() {
                        None
                    } else {
                        Some(Val::lit(host.clone()))
                    };
                    let mut body = Val::tainted(args.all_from());
                    body.from.merge(&first.all_from());
                    st.send(url.as_ref(), &body);
                    return Some(st.fetched(url.as_ref()));
                }
                "recv" | "read" | "receive" | "getresponse" | "makefile" => {
                    let url = Val::lit(host);
                    return Some(st.fetched(Some(&url)));
                }
                _ => return Some(recv.clone()),
            }
        }
        Some(Handle::Client) => {
            return Some(match m {
                "get" | "post" | "put" | "patch" | "delete" | "head" | "request" | "urlopen" | "stream" => {
                    http_call(st, m, args)
                }
                _ => recv.clone(),
            });
        }
        _ => {}
    }
    // A connection's socket piped a file or a stream: `createReadStream(p).pipe(req)`.
    if m == "pipe" {
        match &first.handle {
            Some(Handle::Net(h)) => {
                let url = Val::lit(h.clone());
                st.send(Some(&url), recv);
            }
            Some(Handle::Write(k)) => st.write_to(*k, recv),
            _ => {}
        }
        return Some(first);
    }
    // Code run by a method (JXA's `doShellScript`, Ruby's `instance_eval`).
    if m == "doShellScript" {
        return Some(st.run(&first, &[]));
    }
    if matches!(m, "instance_eval" | "class_eval" | "module_eval" | "eval") && st.lang == Lang::Ruby {
        if first.text().is_some() || !first.all_from().eq(&From::default()) {
            st.eval_code(&first);
        }
        return Some(Val::unknown());
    }
    if matches!(m, "runInThisContext" | "runInNewContext" | "runInContext") {
        st.eval_code(recv);
        return Some(Val::unknown());
    }
    // `.then(eval)`, `.then(r => ..)`: a callback handed the data.
    if matches!(m, "then" | "on" | "once" | "forEach" | "map" | "each" | "subscribe") {
        for cb in args.positional() {
            if let Some(api) = cb.api.as_deref() {
                if matches!(api, "eval" | "Function") {
                    st.eval_code(recv);
                }
            }
        }
        let mut from = recv.all_from();
        from.merge(&args.all_from());
        return Some(Val::tainted(from));
    }
    // Path objects (pathlib, Deno, Bun): writes, deletions, reads.
    if let Some(v) = path_method(st, recv, m, args) {
        return Some(v);
    }
    // Substitutions: `.replace(/a/g, 'b')`, `.gsub(/a/, 'b')`, `.sub`.
    if matches!(m, "replace" | "replaceAll" | "gsub" | "sub" | "gsub!" | "sub!" | "tr") {
        return Some(substituted(st, recv, m, args));
    }
    // Decoding methods.
    let how = match m {
        "reverse" => Some("reversed"),
        "unpack" | "unpack1" | "pack" => Some("packed"),
        "hex" if st.lang == Lang::Ruby => Some("hex-decoded"),
        "decode"
            if first
                .text()
                .is_some_and(|e| matches!(e.as_str(), "base64" | "hex" | "rot13" | "rot_13" | "zlib" | "bz2")) =>
        {
            Some("decoded")
        }
        _ => None,
    };
    if let Some(how) = how {
        return Some(st.hidden(how, recv));
    }
    // `sep.join(items)`, `items.join(sep)`.
    if m == "join" {
        return Some(joined(recv, &first));
    }
    // Reducers: a size, a count, a digest.
    if matches!(
        m,
        "length"
            | "size"
            | "count"
            | "hexdigest"
            | "digest"
            | "isdigit"
            | "startswith"
            | "endswith"
            | "__len__"
            | "bit_length"
    ) {
        return Some(Val::unknown());
    }
    // Methods that keep the same text (`.decode()`, `.strip()`, `.toString()`).
    if matches!(
        m,
        "decode"
            | "encode"
            | "strip"
            | "rstrip"
            | "lstrip"
            | "trim"
            | "toString"
            | "to_s"
            | "chomp"
            | "format"
            | "expanduser"
            | "resolve"
            | "absolute"
            | "as_posix"
    ) {
        let mut v = recv.clone();
        v.method = None;
        v.handle = None;
        if m == "format" {
            v.parts = Vec::new();
            v.from.merge(&args.all_from());
        }
        return Some(v);
    }
    None
}

/// Methods of a path value: pathlib's `write_text`, `unlink`, `rename`, `open`, `read_text`,
/// `joinpath`, Bun's `file(..).text()`.
fn path_method(st: &mut State, recv: &Val, m: &str, args: &Args<'_>) -> Option<Val> {
    let first = args.pos(0).cloned().unwrap_or_default();
    match m {
        "write_text" | "write_bytes" => {
            st.write(recv, &first, false);
            Some(Val::unknown())
        }
        "unlink" => {
            st.file_command(&["rm", "-f"], &[recv]);
            Some(Val::unknown())
        }
        "rmdir" => {
            st.file_command(&["rmdir"], &[recv]);
            Some(Val::unknown())
        }
        "rename" | "replace"
            if recv.text().is_some()
                && first.text().is_some()
                && first.regex.is_none()
                && args.positional().count() == 1
                && st.lang == Lang::Python =>
        {
            st.file_command(&["mv"], &[recv, &first]);
            Some(first)
        }
        "chmod" if st.lang == Lang::Python => chmod(st, &first, recv),
        "symlink_to" => {
            st.file_command(&["ln", "-s"], &[&first, recv]);
            Some(Val::unknown())
        }
        "read_text" | "read_bytes" | "text" | "json" | "arrayBuffer" | "bytes"
            if recv.text().is_some() || !recv.from.files.is_empty() =>
        {
            let mut v = if recv.from.files.is_empty() {
                read_file(recv)
            } else {
                Val::tainted(recv.all_from())
            };
            v.parts.clear();
            Some(v)
        }
        "open" if recv.text().is_some() && st.lang == Lang::Python => {
            let mode = args
                .text(0)
                .or_else(|| args.named("mode").and_then(Val::text))
                .unwrap_or_default();
            Some(open_file(st, recv, &mode))
        }
        "joinpath" | "join_path" => {
            let parts: Option<Vec<String>> = args.positional().map(Val::text).collect();
            match (recv.text(), parts) {
                (Some(base), Some(p)) => Some(Val::lit(p.iter().fold(base, |a, b| join_path(&a, b)))),
                _ => Some(Val::unknown()),
            }
        }
        _ => None,
    }
}

/// `text.replace(pattern, replacement)` and its kin: the same data, with the substitution
/// noted (a file rewritten with it is a `sed -i` of that file).
fn substituted(st: &mut State, recv: &Val, m: &str, args: &Args<'_>) -> Val {
    let pat = args.pos(0).cloned().unwrap_or_default();
    let repl = args.pos(1).cloned().unwrap_or_default();
    if m == "tr" {
        // Ruby's `tr('A-Za-z', 'N-ZA-Mn-za-m')`: rot13.
        if pat.text().is_some_and(|p| p.contains("a-z") || p.contains("A-Z")) {
            return st.hidden("rot13-decoded", recv);
        }
    }
    let pattern = pat.regex.clone().or_else(|| pat.text().map(|t| regex_escape(&t)));
    let mut v = Val::tainted(recv.all_from());
    v.edits.clone_from(&recv.edits);
    // A plain-text replacement of known text is known text.
    if let (Some(t), Some(p), Some(r)) = (recv.text(), pat.text(), repl.text()) {
        if pat.regex.is_none() {
            v.parts = vec![super::eval::Part::Lit(if m == "replace" && st.lang == Lang::Js {
                t.replacen(&p, &r, 1)
            } else {
                t.replace(&p, &r)
            })];
        }
    }
    if let Some(p) = pattern {
        v.edits.push((p, repl.text().unwrap_or_default()));
    }
    // The line loop's own line changed (`$_.gsub!(..)`, a bare `gsub(..)` in `ruby -p`).
    if recv.var.as_deref() == Some("$_") {
        if let Some(e) = v.edits.last().cloned() {
            st.line_edits.push(e);
        }
    }
    v
}

/// Substitutions called as functions: `re.sub(p, r, s)`, `preg_replace(p, r, s)`,
/// `str_replace(a, b, s)`, and Ruby's bare `gsub(p, r)` on the line loop's `$_`.
fn substitution_calls(st: &mut State, name: &str, args: &Args<'_>) -> Option<Val> {
    let arg = |k: usize| args.pos(k).cloned().unwrap_or_default();
    let (subject, pattern, repl, regex) = match (st.lang, name) {
        (Lang::Python, "re.sub" | "re.subn" | "regex.sub") => (arg(2), arg(0), arg(1), true),
        (Lang::Php, "preg_replace") => (arg(2), arg(0), arg(1), true),
        (Lang::Php, "str_replace" | "str_ireplace") => (arg(2), arg(0), arg(1), false),
        (Lang::Ruby, "gsub" | "sub" | "gsub!" | "sub!") => {
            let mut line = st.var("$_").unwrap_or_default();
            line.var = Some("$_".into());
            (line, arg(0), arg(1), false)
        }
        _ => return None,
    };
    let mut pat = pattern;
    if regex && pat.regex.is_none() {
        // A pattern given as a string (`r'^\s*assert'`, PHP's `'/x/'` with delimiters).
        let text = pat.text().unwrap_or_default();
        let text = if st.lang == Lang::Php {
            let d = text.chars().next().unwrap_or('/');
            text.trim_start_matches(d)
                .rsplit_once(d)
                .map_or(text.clone(), |(body, _)| body.to_string())
        } else {
            text
        };
        pat.regex = Some(text);
    }
    let sub_args = [
        super::eval::Arg { name: None, val: pat },
        super::eval::Arg { name: None, val: repl },
    ];
    let m = if name.starts_with("gsub") || name.starts_with("sub") {
        name
    } else {
        "sub"
    };
    Some(substituted(st, &subject, m, &Args(&sub_args)))
}

fn regex_escape(t: &str) -> String {
    let mut s = String::new();
    for c in t.chars() {
        if "\\.^$|?*+()[]{}/".contains(c) {
            s.push('\\');
        }
        s.push(c);
    }
    s
}

/// A join of items with a separator, known when both are.
fn joined(recv: &Val, arg: &Val) -> Val {
    let (sep, list) = if recv.items.is_some() { (arg, recv) } else { (recv, arg) };
    let mut from = recv.all_from();
    from.merge(&arg.all_from());
    if let (Some(s), Some(items)) = (sep.text(), &list.items) {
        let texts: Option<Vec<String>> = items.iter().map(Val::text).collect();
        if let Some(t) = texts {
            let mut v = Val::lit(t.join(&s));
            v.from = from;
            return v;
        }
    }
    Val::tainted(from)
}

/// A member of a data value read without a call: `.length` (a size), `.content`, `.text`,
/// `.body`, `.stdout` (the same data).
pub(super) fn attribute(st: &mut State, recv: Val, name: &str) -> Val {
    match name {
        "length" | "size" | "status" | "status_code" | "ok" | "statusCode" | "code" | "returncode" => Val::unknown(),
        "text" | "content" | "body" | "data" | "stdout" | "stderr" | "raw" | "output" | "result" => {
            if matches!(recv.handle, Some(Handle::Net(_))) {
                return st.fetched(None);
            }
            Val::tainted(recv.all_from())
        }
        "parent" | "name" | "stem" | "suffix" => Val::unknown(),
        "home" if recv.text().is_some() => Val::lit("~"),
        _ => {
            let mut v = Val::tainted(recv.all_from());
            v.handle = recv.handle.clone();
            v
        }
    }
}

impl Val {
    /// This value with the whole environment among its data.
    fn with_env(mut self, env: bool) -> Val {
        self.from.env |= env;
        self
    }
}
