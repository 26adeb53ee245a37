//! Deletion: `rm` with its flags parsed in any order and spelling, `find -delete` / `-exec rm`,
//! `rsync --delete`, classified by target: the root, home, system directories, the workspace
//! root itself or everything at it, a variable path that climbs out with `..`, outside the
//! workspace (blocked); the workspace's own files and temp
//! directories (`/tmp`, `/var/tmp`, `$TMPDIR`, caches under `~/.cache`) are ordinary work
//! (allowed, or warned for the temp root itself and for `.git`).
//!
//! Targets `xargs` reads from stdin are taken from what feeds it when that is known
//! (`echo / | xargs rm -rf`, `find / .. | xargs rm`, `ls ~ | xargs rm -rf`). `unlink`,
//! `truncate` and emptying redirects (`> /etc/hosts`) of system files are blocked under
//! `system_file` (`truncate -s 0` of a database file that is not a tmp/cache/test one warned); `infrastructure` blocks tearing down cloud and cluster resources
//! (`terraform destroy`, `kubectl delete namespace`, `aws s3 rm --recursive`, ...) and warns for
//! bulk container and volume removal (not `-f status=exited`), `compose down -v`, and
//! reversible teardown (`cargo yank`, `terraform state rm`, `kubectl drain`), and for changes
//! that delete or alter live resources unreviewed (`terraform apply -auto-approve`, `aws s3 sync
//! --delete`, `gsutil rsync -d`, kubectl/helm apply or upgrade in a `prod*` namespace or
//! context). A `"$DIR"/*` target an unset variable turns into `/*` is blocked. `system_file`
//! also guards home dotfiles (`cp /dev/null ~/.bashrc`, `> ~/.zshrc`), blocks `mv` of the
//! home or a system directory (or anything outside the workspace into `/dev/null`) and
//! `crontab -r`; writing over a system program or library (`> /lib64/ld-linux..`, `tee
//! /usr/bin/x`) or emptying a system file through `echo "" | tee` is blocked too.

use super::{block, cut, violation, warn};
use crate::guard::carriers::built_by_xargs;
use crate::guard::targets::{classify_target, climbs_out_of_a_variable, empty_expands_to_root, home_relative, Target};
use crate::guard::verdict::{Category, Recommendation, Risk, Violation};
use crate::guard::{GuardContext, Pipeline, SimpleCommand};

pub const RECURSIVE_FORCE: &str = "deletion.recursive_force";
pub const FIND_DELETE: &str = "deletion.find_delete";
pub const SYSTEM_FILE: &str = "deletion.system_file";
pub const RSYNC_DELETE: &str = "deletion.rsync_delete";
pub const GIT_DIR: &str = "deletion.git_dir";
pub const INFRASTRUCTURE: &str = "deletion.infrastructure";
/// `deletion.managed_resource`: a resource, setting or member of a managed service deleted
/// through its CLI (decided by the effect model).
pub const MANAGED_RESOURCE: &str = "deletion.managed_resource";

/// Every deletion rule for the command at `index` of `pipeline`.
pub fn check(pipeline: &Pipeline, index: usize, ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    let cmd = &pipeline[index];
    if cmd.args_from_stdin && index > 0 {
        if built_by_xargs(pipeline, index).is_some() {
            // The words xargs reads are known: the commands it builds with them are judged on
            // their own (`echo / | xargs rm -rf` runs `rm -rf /`), and this one has none.
            let mut known = cmd.clone();
            known.args_from_stdin = false;
            out.extend(recursive_force(&known, ctx));
        } else {
            out.extend(recursive_force(cmd, ctx));
        }
        found_by_find(cmd, &pipeline[index - 1], ctx, out);
    } else {
        out.extend(recursive_force(cmd, ctx));
    }
    out.extend(find_delete(cmd, ctx));
    rsync_delete(cmd, ctx, out);
    // `echo "" | sudo tee /etc/hosts`: tee writes what an empty printer fed it.
    let fed_empty = index > 0 && {
        let up = &pipeline[index - 1];
        let a: Vec<&str> = up.argv.iter().skip(1).map(String::as_str).collect();
        matches!(up.name(), ":" | "true")
            || (up.name() == "cat" && a == ["/dev/null"])
            || (matches!(up.name(), "echo" | "printf") && a.iter().all(|w| w.is_empty() || *w == "-n"))
    };
    truncation(cmd, fed_empty, ctx, out);
    infrastructure(cmd, out);
}

/// `find PATH | xargs rm` / `ls PATH | xargs rm`: the files come from PATH; deleting them is
/// judged like `find PATH -delete`.
fn found_by_find(cmd: &SimpleCommand, upstream: &SimpleCommand, ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    if !crate::guard::effects::destroys_each_fed_file(cmd) {
        return;
    }
    let roots: Vec<&str> = match upstream.name() {
        "find" => upstream
            .argv
            .iter()
            .skip(1)
            .skip_while(|a| matches!(a.as_str(), "-H" | "-L" | "-P"))
            .take_while(|a| !a.starts_with('-') && *a != "(" && *a != "!")
            .map(String::as_str)
            .collect(),
        "ls" | "fd" | "fdfind" => upstream
            .argv
            .iter()
            .skip(1)
            .filter(|a| !a.starts_with('-'))
            .map(String::as_str)
            .collect(),
        _ => return,
    };
    for root in roots {
        let what = match classify_target(root, upstream.cwd.as_deref(), ctx.workspace) {
            Target::Root => "the whole file system".to_string(),
            Target::Home => "the home directory".to_string(),
            Target::System(p) | Target::Outside(p) => p.display().to_string(),
            _ => continue,
        };
        out.push(violation(
            Category::Deletion,
            FIND_DELETE,
            Recommendation::Block,
            Risk::Critical,
            &cmd.display(),
            format!("deletes the files {} lists under {what}", upstream.name()),
        ));
        return;
    }
}

pub fn alternative(rule: &str) -> &'static str {
    match rule {
        FIND_DELETE => "run find on a directory inside the workspace, e.g. find ./build -name '*.o' -delete",
        RSYNC_DELETE => "rsync into a directory inside the workspace, or drop --delete",
        GIT_DIR => "keep .git; use git clean -n to see what would go, or git rm for tracked files",
        INFRASTRUCTURE => "leave shared infrastructure alone; plan the change (terraform plan) and ask the user",
        SYSTEM_FILE => "leave system files alone; work on copies inside the workspace",
        MANAGED_RESOURCE => {
            "leave the service's resources and settings alone; say what you would remove and let the user do it"
        }
        _ => "delete the specific paths inside the workspace, e.g. rm -r build/",
    }
}

/// `deletion.recursive_force`: `rm -r` (any spelling) on a target that is not inside the
/// workspace; a variable target that an unset variable would turn into `/` (`"$DIR"/*`) is
/// blocked, and so is any non-literal target with `--no-preserve-root`.
pub fn recursive_force(cmd: &SimpleCommand, ctx: &GuardContext<'_>) -> Vec<Violation> {
    if cmd.name() == "unlink" {
        let targets: Vec<&str> = cmd
            .argv
            .iter()
            .skip(1)
            .filter(|a| !a.starts_with('-'))
            .map(String::as_str)
            .collect();
        return plain_rm(cmd, &targets, ctx);
    }
    if !matches!(cmd.name(), "rm" | "grm") {
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
        return plain_rm(cmd, &targets, ctx);
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
            _ if climbs_out_of_a_variable(t) => (
                Recommendation::Block,
                Risk::Critical,
                format!("`{t}`, which climbs with `..` out of the directory a variable names: it lands anywhere"),
            ),
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
            // `rm -rf .`, `rm -rf "$PWD"`: everything the task gave the agent, its work with
            // it. GNU rm refuses a bare `.`, but `./`, `$PWD` and the absolute path it does
            // not, and other rm implementations do not refuse at all.
            Target::WorkspaceDot => (
                Recommendation::Block,
                Risk::Critical,
                "the workspace root itself, and all the work in it".to_string(),
            ),
            Target::Unknown if empty_expands_to_root(t) || no_preserve => (
                Recommendation::Block,
                Risk::Critical,
                format!(
                    "`{t}`: if the variable is unset or empty this is the root of the file system (or everything under it)"
                ),
            ),
            Target::Unknown => (
                Recommendation::Warn,
                Risk::Medium,
                format!("`{t}`, a target that is not a literal path (it may expand to anything)"),
            ),
            // `/tmp` itself goes with its sticky, world-writable directory (programs then fail
            // to make temp files); `/tmp/*` empties it of other programs' files.
            Target::TempRoot if temp_dir_itself(t) => (
                Recommendation::Block,
                Risk::High,
                format!("the temp directory `{t}` itself (every program that makes a temp file fails after it)"),
            ),
            Target::TempRoot => (
                Recommendation::Warn,
                Risk::Medium,
                "a whole temp directory (other programs keep files there)".to_string(),
            ),
            Target::Inside | Target::Temp => {
                if is_git_dir(t) {
                    out.push(warn(
                        Category::Deletion,
                        GIT_DIR,
                        cmd,
                        "deletes the repository history (.git) of the workspace",
                    ));
                }
                continue;
            }
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
    // `-ok` asks on stdin before each run: with stdin closed, every answer is no.
    let stdin_closed = cmd.inputs.iter().any(|i| i == "/dev/null");
    // `-exec rm {} +`, `-exec truncate -s 0 {} \;`: a command that deletes or empties each
    // file it is handed, judged as a fed command is.
    let destroys = |words: &[String]| {
        let end = words.iter().position(|w| w == ";" || w == "+").unwrap_or(words.len());
        let run = SimpleCommand {
            argv: words[..end].to_vec(),
            ..SimpleCommand::default()
        };
        !run.argv.is_empty() && crate::guard::effects::destroys_each_fed_file(&run)
    };
    let deletes = args.iter().enumerate().any(|(i, a)| {
        a == "-delete"
            || ((matches!(a.as_str(), "-exec" | "-execdir")
                || (matches!(a.as_str(), "-ok" | "-okdir") && !stdin_closed))
                && destroys(&args[i + 1..]))
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
    // `find . -name .git -exec rm -rf {} +`: every repository's history under the path.
    if args
        .windows(2)
        .any(|w| matches!(w[0].as_str(), "-name" | "-iname" | "-path") && is_git_dir(&w[1]))
    {
        out.push(warn(
            Category::Deletion,
            GIT_DIR,
            cmd,
            "deletes the repository history (.git) of every repository it finds",
        ));
    }
    for p in paths {
        let (rec, what) = match classify_target(p, cmd.cwd.as_deref(), ctx.workspace) {
            Target::Root => (Recommendation::Block, "the whole file system".to_string()),
            Target::Home => (Recommendation::Block, "the home directory".to_string()),
            Target::System(d) => (Recommendation::Block, format!("the system directory {}", d.display())),
            Target::Outside(d) => (Recommendation::Block, format!("{}, outside the workspace", d.display())),
            Target::Unknown => (Recommendation::Warn, format!("`{p}`, a path that is not literal")),
            Target::WorkspaceAll | Target::WorkspaceDot | Target::Inside | Target::Temp | Target::TempRoot => continue,
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
            description: format!("find deletes or empties files under {what}"),
            recommendation: rec,
        });
    }
    out
}

/// Whether `path` is a system file or directory (the root, a system directory, home).
fn system_path(path: &str, cmd: &SimpleCommand, ctx: &GuardContext<'_>) -> bool {
    matches!(
        classify_target(path, cmd.cwd.as_deref(), ctx.workspace),
        Target::Root | Target::System(_)
    ) && !path.starts_with("/dev/")
        && !path.starts_with("/proc/")
}

/// `deletion.system_file` for contents: emptying a system file (`truncate -s 0 /etc/passwd`,
/// `> /etc/hosts`, `: > f`, `cat /dev/null > f`, `cp /dev/null f`, `echo "" | tee f`) is
/// blocked; writing over one with other text is warned (it may be an asked-for configuration
/// change), except over a system program or library (`ls > /lib64/ld-linux-x86-64.so.2`,
/// `tee /usr/bin/x`), which is blocked: nothing asks for that.
fn truncation(cmd: &SimpleCommand, fed_empty: bool, ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    let name = cmd.name();
    let args: Vec<&str> = cmd.argv.iter().skip(1).map(String::as_str).collect();
    // A home dotfile (`~/.bashrc`, `~/.ssh/authorized_keys`) is the user's configuration:
    // emptying it is as bad as emptying a system file.
    let system_path = |p: &str, cmd: &SimpleCommand, ctx: &GuardContext<'_>| {
        system_path(p, cmd, ctx)
            || home_relative(p).is_some_and(|rest| rest.starts_with('.') && !rest.starts_with(".cache"))
    };
    if name == "crontab" && args.contains(&"-r") {
        out.push(block(
            Category::Deletion,
            SYSTEM_FILE,
            Risk::High,
            cmd,
            "crontab -r deletes every cron job of the user, without asking",
        ));
        return;
    }
    // `mv ~ /dev/null`, `mv /etc /tmp/x`: the home or a system directory moved away.
    if name == "mv" {
        // `mv -t DIR SRC..`, `--target-directory=DIR`: the destination comes first.
        let mut target = None;
        let mut ops: Vec<&str> = Vec::new();
        let mut words = args.iter().copied();
        while let Some(a) = words.next() {
            if a == "-t" || a == "--target-directory" {
                target = words.next();
            } else if let Some(dir) = a.strip_prefix("--target-directory=") {
                target = Some(dir);
            } else if let Some(dir) = a.strip_prefix("-t").filter(|d| !d.is_empty() && !d.starts_with('-')) {
                target = Some(dir);
            } else if !a.starts_with('-') {
                ops.push(a);
            }
        }
        if let Some(t) = target {
            ops.push(t);
        }
        if let Some((dest, sources)) = ops.split_last() {
            let cwd = cmd.cwd.as_deref();
            let dest_class = classify_target(dest, cwd, ctx.workspace);
            let leaves = dest_class.is_beyond_workspace() || matches!(dest_class, Target::Temp | Target::TempRoot);
            let gone = sources.iter().find(|a| {
                let class = classify_target(a, cwd, ctx.workspace);
                // `mv .. /tmp/x`: a folder that holds the workspace takes it along; the
                // workspace itself moved out of its place (`mv ../task-1 /tmp/x`) goes too.
                let holds_workspace = match &class {
                    Target::WorkspaceDot => true,
                    Target::WorkspaceAll => leaves && !a.contains('*'),
                    Target::Outside(p) => ctx.workspace.starts_with(p),
                    _ => false,
                };
                class.is_machine_or_home() || holds_workspace || (*dest == "/dev/null" && !class.is_work_area())
            });
            if let Some(t) = gone {
                out.push(block(
                    Category::Deletion,
                    SYSTEM_FILE,
                    Risk::Critical,
                    cmd,
                    format!("moves `{t}` away (or into /dev/null), which breaks the system or loses it"),
                ));
            }
        }
        return;
    }
    if name == "truncate" {
        if let Some(t) = args.iter().find(|a| !a.starts_with('-') && system_path(a, cmd, ctx)) {
            out.push(block(
                Category::Deletion,
                SYSTEM_FILE,
                Risk::Critical,
                cmd,
                format!("truncates `{t}`, a system file"),
            ));
            return;
        }
        // `truncate -s 0 app.sqlite3`: a database emptied; a cache or test database under a
        // tmp/cache/test path is disposable.
        let to_zero = args.windows(2).any(|w| w[0] == "-s" && w[1] == "0")
            || args.iter().any(|a| *a == "--size=0" || *a == "-s0");
        let database = |p: &str| {
            let l = p.to_ascii_lowercase();
            [".db", ".sqlite", ".sqlite3", ".mdb", ".ibd"]
                .iter()
                .any(|e| l.ends_with(e))
                && !["tmp", "cache", "test", "fixture"].iter().any(|k| l.contains(k))
        };
        if let Some(t) = args.iter().find(|a| to_zero && !a.starts_with('-') && database(a)) {
            out.push(warn(
                Category::Deletion,
                SYSTEM_FILE,
                cmd,
                format!("empties `{t}`, a database file (its data is lost)"),
            ));
        }
        return;
    }
    // `/bin`, `/lib64`, `/usr/lib/..`, `/boot`: programs and libraries every command needs.
    let program_file = |p: &str| {
        [
            "/bin/",
            "/sbin/",
            "/lib/",
            "/lib32/",
            "/lib64/",
            "/libx32/",
            "/usr/bin/",
            "/usr/sbin/",
            "/usr/lib/",
            "/usr/lib64/",
            "/usr/libexec/",
            "/boot/",
        ]
        .iter()
        .any(|d| p.starts_with(d))
    };
    let appending = args.iter().any(|a| *a == "-a" || *a == "--append");
    if name == "tee" {
        let over = args
            .iter()
            .find(|a| !a.starts_with('-') && (program_file(a) || (fed_empty && system_path(a, cmd, ctx))));
        if let Some(t) = over.filter(|_| !appending) {
            out.push(block(
                Category::Deletion,
                SYSTEM_FILE,
                Risk::Critical,
                cmd,
                format!("writes over `{t}`, a system file, with nothing or with other text"),
            ));
            return;
        }
        if let Some(t) = args.iter().find(|a| !a.starts_with('-') && system_path(a, cmd, ctx)) {
            out.push(warn(
                Category::Deletion,
                SYSTEM_FILE,
                cmd,
                format!("writes into `{t}`, a system file"),
            ));
        }
        return;
    }
    if name == "cp" && args.first() == Some(&"/dev/null") {
        if let Some(t) = args.last().filter(|t| system_path(t, cmd, ctx)) {
            out.push(block(
                Category::Deletion,
                SYSTEM_FILE,
                Risk::Critical,
                cmd,
                format!("empties `{t}`, a system file"),
            ));
        }
        return;
    }
    let empty = cmd.argv.is_empty()
        || matches!(name, ":" | "true")
        || (name == "cat" && args == ["/dev/null"])
        || (name == "echo" && matches!(args.as_slice(), [] | [""] | ["-n"] | ["-n", ""]));
    for r in &cmd.redirects {
        if !system_path(r, cmd, ctx) || cmd.appends.contains(r) {
            continue;
        }
        if empty || program_file(r) {
            out.push(violation(
                Category::Deletion,
                SYSTEM_FILE,
                Recommendation::Block,
                Risk::Critical,
                &format!("{} > {r}", cmd.display()),
                if empty {
                    format!("empties `{r}`, a system file")
                } else {
                    format!("writes over `{r}`, a system program or library")
                },
            ));
        } else {
            out.push(warn(
                Category::Deletion,
                SYSTEM_FILE,
                cmd,
                format!("writes over `{r}`, a system file"),
            ));
        }
        return;
    }
}

/// `kubectl delete pod X` / `pods/X`: pods and nothing else, not every pod (`--all`).
fn only_pods(args: &[&str]) -> bool {
    let positional: Vec<&str> = args.iter().copied().filter(|a| !a.starts_with('-')).collect();
    let kinds: Vec<&str> = positional
        .iter()
        .skip_while(|a| **a != "delete")
        .skip(1)
        .take(1)
        .flat_map(|k| k.split(','))
        .collect();
    let pods = |k: &str| matches!(k, "pod" | "pods" | "po") || k.starts_with("pod/") || k.starts_with("pods/");
    !kinds.is_empty()
        && kinds.iter().all(|k| pods(k))
        && !args.iter().any(|a| matches!(*a, "--all" | "-A" | "--all-namespaces"))
}

/// What a sync with deletion on does to the copy it updates (`aws s3 sync --delete`, `gsutil
/// rsync -d`, `rclone sync`, `azcopy sync --delete-destination=true`, `s5cmd sync --delete`,
/// `mc mirror --remove`).
const SYNC_DELETES: &str = "deletes every object of the destination that the source lacks";

/// Whether an rclone path names a remote (`b2:bucket`, `s3:b/dir`, `:s3:b`), not a local
/// path (`./dir`, `/mnt/x`, `C:\\dir`).
fn rclone_remote(path: Option<&&str>) -> bool {
    path.is_some_and(|p| {
        let before_slash = p.split('/').next().unwrap_or(p);
        let drive = before_slash.len() == 2 && before_slash.ends_with(':');
        before_slash.contains(':') && !drive
    })
}

/// `deletion.infrastructure`: tearing down cloud or cluster resources, which no undo brings
/// back: `terraform destroy` / `apply -destroy`, `kubectl delete namespace|--all`,
/// `aws s3 rm --recursive`, `aws s3 rb --force`, `aws .. delete-table|delete-db-*|
/// terminate-instances|delete-bucket`, `gcloud projects delete`, `az group delete`, `heroku
/// apps:destroy`, `fly apps destroy`, `gh api -X DELETE repos/OWNER/REPO`, `cdk destroy`,
/// `serverless remove`, `sam delete`, `firebase firestore:delete --all-collections`, Laravel
/// `migrate:fresh`/`db:wipe` (blocked); `docker system prune -a`/`--volumes`, `docker volume
/// prune|rm`, `docker rm -f $(docker ps -aq)`, other `gh api` DELETEs, `alembic downgrade
/// base`, rolling back every migration (warned).
pub fn infrastructure(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    let name = cmd.name();
    let args: Vec<&str> = cmd.argv.iter().skip(1).map(String::as_str).collect();
    // `npm unpublish --dry-run`, `kubectl delete ns x --dry-run=client`, `aws ..
    // --generate-cli-skeleton`: shown, not done.
    if crate::guard::effects::shown_not_done(&cmd.argv) || crate::guard::effects::asks_or_previews(&cmd.argv) {
        return;
    }
    let has = |w: &str| args.contains(&w);
    let sub = |words: &[&str]| {
        args.iter()
            .filter(|a| !a.starts_with('-'))
            .take(words.len())
            .eq(words.iter())
    };
    let destroy = match name {
        "terraform" | "tofu" | "terragrunt" => (has("destroy") || (has("apply") && has("-destroy")))
            .then_some("destroys every resource of the configuration"),
        "pulumi" => has("destroy").then_some("destroys every resource of the stack"),
        // Pods alone are restarted by their controller: routine, even in production.
        "kubectl" | "oc" => (has("delete")
            && !only_pods(&args)
            && (args
                .iter()
                .any(|a| matches!(*a, "namespace" | "namespaces" | "ns" | "node" | "nodes" | "pv" | "crd"))
                || args.iter().any(|a| a.starts_with("namespace/") || a.starts_with("ns/"))
                || has("--all")
                || has("-A")
                || has("--all-namespaces")
                || args
                    .iter()
                    .any(|a| a.starts_with("prod") || a.starts_with("--namespace=prod"))))
        .then_some("deletes cluster resources in bulk (a namespace, every object, nodes) or in production"),
        "helm" => (has("uninstall") || has("delete")).then_some("uninstalls a release and its resources"),
        "aws" => {
            let s3_bulk = sub(&["s3", "rm"]) && (has("--recursive") || has("-r"));
            let bucket = sub(&["s3", "rb"]) && has("--force");
            let api = args.iter().any(|a| {
                a.starts_with("delete-")
                    && [
                        "table",
                        "db-",
                        "bucket",
                        "stack",
                        "cluster",
                        "repository",
                        "file-system",
                        "secret",
                        "key",
                        "function",
                        "user",
                        "vpc",
                    ]
                    .iter()
                    .any(|k| a.contains(k))
                    || matches!(*a, "terminate-instances" | "schedule-key-deletion" | "purge-queue")
            });
            if sub(&["s3", "sync"]) && has("--delete") {
                Some(SYNC_DELETES)
            } else {
                (s3_bulk || bucket || api).then_some("deletes cloud resources or their data")
            }
        }
        "gsutil" if has("rsync") => args
            .iter()
            .any(|a| *a == "-d" || (a.starts_with('-') && !a.starts_with("--") && a.contains('d')))
            .then_some(SYNC_DELETES),
        "gsutil" => ((has("rm") && args.iter().any(|a| a.starts_with("-") && a.contains('r'))) || has("rb"))
            .then_some("deletes a bucket or everything under it"),
        "gcloud" => (has("delete")
            && args
                .iter()
                .any(|a| matches!(*a, "projects" | "instances" | "clusters" | "sql" | "buckets")))
        .then_some("deletes cloud resources"),
        "az" => (has("delete")
            && args
                .iter()
                .any(|a| matches!(*a, "group" | "vm" | "aks" | "sql" | "storage")))
        .then_some("deletes cloud resources"),
        "heroku" => args
            .iter()
            .any(|a| a.starts_with("apps:destroy"))
            .then_some("destroys the app and its add-ons"),
        "fly" | "flyctl" => (sub(&["apps", "destroy"]) || sub(&["destroy"])).then_some("destroys the app"),
        "gh" => (sub(&["repo", "delete"]) || sub(&["release", "delete"]) || gh_api_delete(&args) == Some(true))
            .then_some("deletes a GitHub repository or release"),
        "cdk" => has("destroy").then_some("destroys every resource of the CDK stacks"),
        "serverless" | "sls" => has("remove").then_some("removes the deployed service and its resources"),
        "sam" => has("delete").then_some("deletes the deployed stack"),
        "firebase" => args
            .iter()
            .any(|a| {
                (a.starts_with("firestore:delete") && (has("--all-collections") || has("-r") || has("--recursive")))
                    || a.starts_with("database:remove")
                    || a.starts_with("projects:delete")
            })
            .then_some("deletes Firebase data or the project"),
        // Laravel `migrate:fresh`/`migrate:reset`/`db:wipe`, django-extensions `reset_db`.
        "php" | "artisan" | "python" | "python3" | "manage.py" => args
            .iter()
            .any(|a| matches!(*a, "migrate:fresh" | "migrate:reset" | "db:wipe" | "reset_db"))
            .then_some("drops every table of the application's database"),
        "npm" | "pnpm" | "yarn" => has("unpublish").then_some("unpublishes a package from the registry"),
        "rake" | "rails" | "bin/rails" | "bundle" => args
            .iter()
            .any(|a| a.starts_with("db:drop") || *a == "db:reset" || *a == "db:purge")
            .then_some("drops the application's databases"),
        "doctl" => (has("delete") || has("rm")).then_some("deletes cloud resources"),
        "vercel" => (has("remove") || has("rm")).then_some("removes a deployment or project"),
        // `rclone sync SRC remote:B`, like `aws s3 sync --delete` and `gsutil rsync -d` above:
        // the remote copy is made to match the source, and every object it lacks is deleted (an
        // empty source empties the bucket).
        "rclone"
            if args
                .iter()
                .position(|a| *a == "sync")
                .is_some_and(|at| rclone_remote(args[at + 1..].iter().rfind(|a| !a.starts_with('-'))))
                && !(has("-i") || has("--interactive")) =>
        {
            Some(SYNC_DELETES)
        }
        "azcopy" if has("sync") && args.iter().any(|a| a.eq_ignore_ascii_case("--delete-destination=true")) => {
            Some(SYNC_DELETES)
        }
        "s5cmd" if has("sync") && has("--delete") => Some(SYNC_DELETES),
        "vault" if sub(&["secrets", "disable"]) => {
            Some("disables a secrets engine, deleting every secret stored in it")
        }
        "mc" if has("mirror")
            && (has("--remove") || has("--delete"))
            && args
                .iter()
                .rfind(|a| !a.starts_with('-'))
                .is_some_and(|d| !d.starts_with(['.', '/', '~'])) =>
        {
            Some(SYNC_DELETES)
        }
        _ => None,
    };
    if let Some(what) = destroy {
        out.push(block(Category::Deletion, INFRASTRUCTURE, Risk::Critical, cmd, what));
        return;
    }
    // Reversible or partial teardown: warned.
    let partial = match name {
        "cargo" => has("yank").then_some("yanks a published crate version"),
        "terraform" | "tofu" if sub(&["state", "rm"]) => Some("removes resources from the Terraform state"),
        "alembic" | "flask" => (args.windows(2).any(|w| w == ["downgrade", "base"]))
            .then_some("downgrades the database to its first migration, dropping every table the migrations made"),
        "knex" | "npx" | "sequelize" | "sequelize-cli" => args
            .iter()
            .any(|a| *a == "db:migrate:undo:all" || (*a == "migrate:rollback" && has("--all")))
            .then_some("rolls back every migration"),
        "gh" => (gh_api_delete(&args) == Some(false)).then_some("deletes a GitHub object through the API"),
        // `terraform apply -auto-approve`: changes real infrastructure without showing the plan.
        "terraform" | "tofu" | "terragrunt" if has("apply") && args.iter().any(|a| a.starts_with("-auto-approve")) => {
            Some("applies infrastructure changes without the plan being approved")
        }
        "kubectl" | "oc" | "helm"
            if production_target(&args)
                && args.iter().any(|a| {
                    matches!(
                        *a,
                        "apply"
                            | "create"
                            | "replace"
                            | "patch"
                            | "edit"
                            | "set"
                            | "rollout"
                            | "upgrade"
                            | "install"
                            | "rollback"
                            | "scale"
                    )
                }) =>
        {
            Some("changes workloads in a production cluster or namespace")
        }
        "kubectl" | "oc" => (has("drain") || (has("scale") && has("--all")) || (has("scale") && has("--replicas=0")))
            .then_some("drains a node or scales workloads down"),
        _ => None,
    };
    if let Some(what) = partial {
        out.push(warn(Category::Deletion, INFRASTRUCTURE, cmd, what));
        return;
    }
    if matches!(name, "docker" | "podman" | "docker-compose") {
        let bulk = (sub(&["system", "prune"])
            && (has("-a") || has("--all") || has("--volumes") || has("-af") || has("-fa")))
            || sub(&["volume", "prune"])
            || sub(&["volume", "rm"])
            // `podman system reset`: every container, image, volume and network goes.
            || sub(&["system", "reset"])
            // `docker rm -v db`: the container's anonymous volumes go with it.
            // (`docker container rm -v` is the managed-resource rule's.)
            || (sub(&["rm"]) && (has("-v") || has("--volumes")))
            || (sub(&["rm"])
                && args
                    .iter()
                    .any(|a| (a.contains("$(docker ps") || a.contains("$(podman ps")) && !a.contains("status=exited")))
            || ((sub(&["compose", "down"]) || name == "docker-compose" && has("down"))
                && (has("-v") || has("--volumes")));
        if bulk {
            out.push(warn(
                Category::Deletion,
                INFRASTRUCTURE,
                cmd,
                "removes containers, images or volumes in bulk (volumes hold data)",
            ));
        }
    }
}

/// `-n prod`, `--namespace=production`, `--context prod-eu`, `--kube-context=prod`: the command
/// acts on a production namespace or cluster.
fn production_target(args: &[&str]) -> bool {
    const OPTS: &[&str] = &["-n", "--namespace", "--context", "--kube-context", "--cluster"];
    let prod = |v: &str| v.to_ascii_lowercase().starts_with("prod");
    args.windows(2).any(|w| OPTS.contains(&w[0]) && prod(w[1]))
        || args
            .iter()
            .any(|a| a.split_once('=').is_some_and(|(o, v)| OPTS.contains(&o) && prod(v)))
}

/// `gh api -X DELETE PATH`: Some(true) when PATH is a whole repository (`repos/OWNER/REPO`),
/// Some(false) for any other object, None when the call does not delete.
fn gh_api_delete(args: &[&str]) -> Option<bool> {
    if args.first() != Some(&"api") {
        return None;
    }
    let delete = args
        .windows(2)
        .any(|w| matches!(w[0], "-X" | "--method") && w[1].eq_ignore_ascii_case("delete"))
        || args.iter().any(|a| {
            a.strip_prefix("--method=")
                .or_else(|| a.strip_prefix("-X"))
                .is_some_and(|m| m.eq_ignore_ascii_case("delete"))
        });
    if !delete {
        return None;
    }
    let path = args
        .iter()
        .skip(1)
        .find(|a| a.starts_with("repos/") || a.starts_with("/repos/"))?;
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    Some(parts.len() == 3)
}

/// `/tmp`, `/var/tmp/`, `/dev/shm`: the temp directory itself, not its contents or a cache.
fn temp_dir_itself(t: &str) -> bool {
    matches!(
        t.trim_end_matches('/'),
        "/tmp" | "/var/tmp" | "/dev/shm" | "/private/tmp" | "/private/var/tmp"
    )
}

fn is_git_dir(t: &str) -> bool {
    let t = t.trim_end_matches('/');
    t == ".git" || t.ends_with("/.git")
}

/// `rm` without `-r`: a system file is blocked, a file outside the workspace warned.
fn plain_rm(cmd: &SimpleCommand, targets: &[&str], ctx: &GuardContext<'_>) -> Vec<Violation> {
    let mut out = Vec::new();
    for t in targets {
        // Without `-r`, rm refuses a directory: `rm -f /` deletes nothing.
        if t.trim_matches(['"', '\'']).chars().all(|c| c == '/') {
            continue;
        }
        match classify_target(t, cmd.cwd.as_deref(), ctx.workspace) {
            Target::Root | Target::System(_) => out.push(block(
                Category::Deletion,
                SYSTEM_FILE,
                Risk::High,
                cmd,
                format!("deletes `{t}`, a system file"),
            )),
            Target::Home | Target::Outside(_) => out.push(warn(
                Category::Deletion,
                SYSTEM_FILE,
                cmd,
                format!("deletes `{t}`, outside the workspace"),
            )),
            _ => {}
        }
    }
    out
}

/// `deletion.rsync_delete`: `rsync --delete` (any spelling) into the root, home, a system
/// directory or outside the workspace.
fn rsync_delete(cmd: &SimpleCommand, ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    if cmd.name() != "rsync" || !cmd.argv.iter().any(|a| a.starts_with("--delete") || a == "--del") {
        return;
    }
    let Some(dest) = cmd.argv.iter().skip(1).rfind(|a| !a.starts_with('-')) else {
        return;
    };
    if dest.contains(':') {
        return;
    }
    let what = match classify_target(dest, cmd.cwd.as_deref(), ctx.workspace) {
        Target::Root => "the root of the file system".to_string(),
        Target::Home => "the home directory".to_string(),
        Target::System(p) | Target::Outside(p) => p.display().to_string(),
        _ => return,
    };
    out.push(violation(
        Category::Deletion,
        RSYNC_DELETE,
        Recommendation::Block,
        Risk::Critical,
        &cut(&cmd.display(), 200),
        format!("rsync --delete removes every file of {what} that the source lacks"),
    ));
}
