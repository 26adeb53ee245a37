//! What this machine supports (namespaces, Landlock, seccomp, cgroups, root), probed once and
//! cached; the report behind `medin doctor`, and the check that makes a `strict` request fail
//! loudly where it cannot be had.

use std::sync::OnceLock;

use serde::Serialize;

use super::Isolation;

/// The sandboxing features of this machine.
#[derive(Debug, Clone, Serialize)]
pub struct Capabilities {
    /// `linux`, `macos`, ...
    pub os: &'static str,
    /// Running as uid 0.
    pub root: bool,
    /// PID, mount, network, IPC and UTS namespaces can be created — without root, inside a new
    /// user namespace (`Err`: why not).
    pub namespaces: Result<(), String>,
    /// Landlock ABI version (None: unsupported or disabled).
    pub landlock_abi: Option<i32>,
    /// seccomp filters can be installed.
    pub seccomp: bool,
    /// cgroup controllers usable for per-command limits.
    pub cgroups: String,
    /// A process-count limit holds (pids cgroup).
    pub process_limit: bool,
    /// RLIMIT_NPROC is charged per user namespace (Linux 5.14+), so a harness that is not root
    /// limits a strict command's processes with it.
    pub nproc_in_user_namespace: bool,
    /// A memory cgroup limit (with OOM detection) holds.
    pub memory_cgroup: bool,
    /// Whether `strict` can be had (`Err`: why not, naming the step that failed).
    pub strict: Result<(), String>,
    /// What strict's built filesystem shows of the host and hides (when strict can be had).
    pub strict_view: Option<String>,
    /// The strongest level this machine gives.
    pub best: Isolation,
}

/// Probes once per process.
pub fn probe() -> &'static Capabilities {
    static CAPS: OnceLock<Capabilities> = OnceLock::new();
    CAPS.get_or_init(detect)
}

/// `Ok` when `strict` isolation works here, else the reason.
pub(crate) fn strict_available() -> Result<(), String> {
    probe().strict.clone()
}

#[cfg(target_os = "linux")]
fn detect() -> Capabilities {
    // SAFETY: geteuid cannot fail and touches no memory.
    let root = unsafe { nix::libc::geteuid() } == 0;
    let namespaces = probe_namespaces();
    // SAFETY: landlock_create_ruleset with LANDLOCK_CREATE_RULESET_VERSION only returns a number.
    let abi = unsafe { nix::libc::syscall(nix::libc::SYS_landlock_create_ruleset, 0usize, 0usize, 1u32) };
    let landlock_abi = (abi > 0).then_some(abi as i32);
    // SAFETY: PR_GET_SECCOMP only reads the calling thread's mode.
    let seccomp = unsafe { nix::libc::prctl(nix::libc::PR_GET_SECCOMP, 0, 0, 0, 0) } >= 0;
    let layout = super::cgroup::layout();
    let strict = if let Err(e) = &namespaces {
        Err(if root {
            format!("namespaces cannot be created: {e}")
        } else {
            format!(
                "namespaces cannot be created without root through a user namespace ({e}); \
                 enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 \
                 or user.max_user_namespaces > 0, or the distribution's AppArmor userns policy) \
                 or run as root"
            )
        })
    } else if landlock_abi.is_none() {
        Err("Landlock is not available in this kernel (needs Linux 5.13+ with `landlock` in the LSM list)".to_string())
    } else if !seccomp {
        Err("seccomp filters are not available in this kernel".to_string())
    } else {
        probe_strict_command()
    };
    Capabilities {
        os: std::env::consts::OS,
        root,
        namespaces,
        landlock_abi,
        seccomp,
        cgroups: layout.describe(),
        process_limit: layout.pids.is_some(),
        nproc_in_user_namespace: super::strict::nproc_counts_per_user_namespace(),
        memory_cgroup: layout.memory.is_some(),
        best: if strict.is_ok() {
            Isolation::Strict
        } else {
            Isolation::Process
        },
        strict_view: strict.is_ok().then(super::hostscan::describe),
        strict,
    }
}

/// What the probe command checks inside the built view: its own `/dev` (a node the view
/// binds, none it leaves out), its own `/proc`, and a writable workspace and TMPDIR.
#[cfg(target_os = "linux")]
const PROBE_VIEW: &str = "test -c /dev/null && ! test -e /dev/kmsg && ! test -e /dev/mem && test -d /proc/self/fd \
     && : > \"$TMPDIR/.medin-probe\" && : > .medin-probe";

/// Runs a command through the real strict path once (namespaces, the built view, Landlock,
/// seccomp), so that "available" means "works here", not "the syscalls exist": a container
/// may allow the namespaces but not a fresh /proc, or a user namespace may refuse a mount of
/// the view; the reason names the step that failed.
#[cfg(target_os = "linux")]
fn probe_strict_command() -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("medin-strict-probe-{}", std::process::id()));
    let _ = super::beneath::remove_tree(&dir);
    std::fs::create_dir(&dir).map_err(|e| format!("cannot create a probe workspace {}: {e}", dir.display()))?;
    let mut cfg = super::SandboxConfig::new(&dir);
    cfg.isolation = Isolation::Strict;
    cfg.cgroup = Some(false);
    cfg.timeout = std::time::Duration::from_secs(10);
    let result = match super::process::run_shell_unchecked(&cfg, PROBE_VIEW, None) {
        Ok(o) if o.success() => Ok(()),
        // 126: the sandbox's own children failed before the command ran; they said where.
        Ok(o) if o.exit == super::ExitKind::Code(126) => Err(format!(
            "a probe command under strict isolation could not be set up: {}",
            o.stderr.text.trim()
        )),
        Ok(o) => Err(format!(
            "the built view did not hold in a probe command (exit {:?}: it must have its own /dev \
             with /dev/null but no /dev/kmsg or /dev/mem, its own /proc, a writable workspace and TMPDIR): {}",
            o.exit,
            o.stderr.text.trim()
        )),
        Err(e) => Err(format!("a probe command under strict isolation could not start: {e}")),
    };
    let _ = super::beneath::remove_tree(&dir);
    result
}

#[cfg(target_os = "linux")]
fn probe_namespaces() -> Result<(), String> {
    use std::os::unix::process::CommandExt;
    let mut flags = nix::libc::CLONE_NEWPID
        | nix::libc::CLONE_NEWNS
        | nix::libc::CLONE_NEWNET
        | nix::libc::CLONE_NEWIPC
        | nix::libc::CLONE_NEWUTS;
    // SAFETY: geteuid cannot fail and touches no memory.
    if unsafe { nix::libc::geteuid() } != 0 {
        flags |= nix::libc::CLONE_NEWUSER;
    }
    let mut cmd = std::process::Command::new("/bin/true");
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: unshare(2) is a plain syscall; nothing is allocated after the fork.
    unsafe {
        cmd.pre_exec(move || {
            if nix::libc::unshare(flags) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    match cmd.status() {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("a probe process in new namespaces ended with {s}")),
        Err(e) => Err(format!(
            "unshare(PID|mount|net|IPC|UTS{}) failed: {e}",
            if flags & nix::libc::CLONE_NEWUSER != 0 {
                "|user"
            } else {
                ""
            }
        )),
    }
}

#[cfg(not(target_os = "linux"))]
fn detect() -> Capabilities {
    let unsupported = format!(
        "strict isolation is implemented on Linux only (this is {})",
        std::env::consts::OS
    );
    Capabilities {
        os: std::env::consts::OS,
        // SAFETY: geteuid cannot fail and touches no memory.
        root: unsafe { nix::libc::geteuid() } == 0,
        namespaces: Err(unsupported.clone()),
        landlock_abi: None,
        seccomp: false,
        cgroups: "unavailable".to_string(),
        process_limit: false,
        nproc_in_user_namespace: false,
        memory_cgroup: false,
        strict: Err(unsupported),
        strict_view: None,
        best: Isolation::Process,
    }
}

impl Capabilities {
    /// The human-readable report of `medin doctor`.
    pub fn render(&self) -> String {
        let yes = |b: bool| if b { "yes" } else { "no" };
        let res = |r: &Result<(), String>| match r {
            Ok(()) => "yes".to_string(),
            Err(e) => format!("no ({e})"),
        };
        let mut s = String::new();
        s.push_str(&format!("os               {}\n", self.os));
        s.push_str(&format!("running as root  {}\n", yes(self.root)));
        s.push_str(&format!("namespaces       {}\n", res(&self.namespaces)));
        s.push_str(&format!(
            "landlock         {}\n",
            self.landlock_abi
                .map(|a| format!("yes (ABI {a})"))
                .unwrap_or_else(|| "no".into())
        ));
        s.push_str(&format!("seccomp          {}\n", yes(self.seccomp)));
        s.push_str(&format!("cgroups          {}\n", self.cgroups));
        s.push_str(&format!(
            "process limit    {}\n",
            if self.process_limit {
                "yes at strict (pids cgroup; holds for root); at process only with a cgroup (medin exec --cgroup / --max-procs)"
            } else if !self.root && self.strict.is_ok() && self.nproc_in_user_namespace {
                "at strict: RLIMIT_NPROC inside the command's user namespace (counts its own processes only; hits named from failed forks); at process: no (no usable pids cgroup)"
            } else {
                "no (no usable pids cgroup; RLIMIT_NPROC does not bind root, so fork bombs are stopped only by the timeout)"
            }
        ));
        s.push_str(&format!(
            "memory limit     {}\n",
            if self.memory_cgroup {
                "a memory cgroup at strict and with any explicit limit (the tree's resident memory; OOM kills named MEMORY_LIMIT), else RLIMIT_AS per process"
            } else {
                "RLIMIT_AS only (hits named heuristically)"
            }
        ));
        s.push_str(&format!("strict           {}\n", res(&self.strict)));
        if let Some(view) = &self.strict_view {
            s.push_str(&format!("strict view      {view}\n"));
        }
        s.push_str(&format!(
            "levels           none, process{}; tasks and `medin exec` get `{}` (the strongest available) unless they or the suite ask for another level\n",
            if self.strict.is_ok() { ", strict" } else { "" },
            self.best
        ));
        s
    }
}

/// `medin doctor`: prints the report (and JSON with `json`); returns the process exit code
/// (0 always: the report is the product).
pub fn doctor_main(json: bool) -> u8 {
    let caps = probe();
    // The engine for tasks that name an image (`environment.image` / `dockerfile`).
    let engine = super::container::Engine::probe(std::env::var(super::container::ENGINE_VAR).ok().as_deref())
        .map(|e| format!("{} ({})", e.version(), e.program().display()))
        .map_err(|e| e.to_string());
    if json {
        let v = serde_json::json!({
            "os": caps.os,
            "root": caps.root,
            "namespaces": caps.namespaces.as_ref().err(),
            "namespaces_ok": caps.namespaces.is_ok(),
            "landlock_abi": caps.landlock_abi,
            "seccomp": caps.seccomp,
            "cgroups": caps.cgroups,
            "process_limit": caps.process_limit,
            "nproc_in_user_namespace": caps.nproc_in_user_namespace,
            "memory_cgroup": caps.memory_cgroup,
            "strict_ok": caps.strict.is_ok(),
            "strict_unavailable_because": caps.strict.as_ref().err(),
            "strict_view": caps.strict_view,
            "best": caps.best,
            "container_engine": engine.as_ref().ok(),
            "container_engine_unavailable_because": engine.as_ref().err(),
        });
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        print!("{}", caps.render());
        match &engine {
            Ok(e) => println!("container engine: {e}"),
            Err(why) => println!("container engine: none: tasks that name an image stay pending ({why})"),
        }
    }
    0
}
