//! Where actions run: a fresh workspace per task attempt, and every command as its own process
//! tree with cwd in the workspace, stdin closed, a scrubbed environment, its own session and
//! process group, resource limits, captured output with a cap, and a timeout that kills the
//! whole tree (SIGTERM, grace period, SIGKILL). Nothing a command starts outlives it, and
//! nothing the harness starts outlives the harness (see "Lifetime" below).
//!
//! The sandbox never decides policy: whatever reaches it has passed the guard.
//!
//! # Isolation levels ([`Isolation`])
//!
//! - `none`: own session/process group, scrubbed environment, private `TMPDIR`, timeout, and
//!   the guardian (below): the whole tree ends with the command and with the harness. No
//!   rlimits, no cgroup, no search by environment tag. For debugging.
//! - `process` (every platform; the default where `strict` cannot be had): `none` plus rlimits
//!   (address space, CPU, file size, open files, no core dumps), `CAP_SYS_RESOURCE` dropped
//!   from the bounding set (so a root command cannot raise its own hard limits after exec).
//!   Nothing outlives the command: on Linux (x86_64, aarch64) the command runs under a
//!   *guardian* (`guardian.rs`), a child subreaper, so every process it starts stays a
//!   descendant of the guardian however it left its session, group or environment (`setsid`,
//!   `env -i`, double forks, a pid hopper that forks and exits in a loop), and is ended with
//!   it. Opt-in ([`SandboxConfig::cgroup`]; default at `strict`): a per-command cgroup (v1
//!   `pids` + `memory` hierarchies, or v2 when its controllers are delegated) that caps the
//!   process count and memory even for root — the only thing that contains a fork bomb run by
//!   root — and names the limit that was hit. The decision, measured on the 2-core development
//!   machine: containment comes from the guardian, not from a cgroup by default, because a
//!   guardian costs about 0.03 ms per command while a cgroup costs 0.1-0.3 ms back to back and
//!   1-2 ms (up to ~10 ms loaded) for a command after a pause, which is how agents issue them:
//!   joining a cgroup waits for an RCU grace period unless another migration just happened
//!   (`clone3(CLONE_INTO_CGROUP)` avoids the wait but needs cgroup v2 and still costs ~0.25 ms
//!   for the directory and the new css_set). Files outside the workspace are NOT protected at
//!   this level, and a command runs as the harness's user: it can kill or stop its guardian
//!   (then only the process-group and environment-tag search remains, as without a guardian).
//!   Where there is no guardian (other architectures; macOS, FreeBSD): leftovers are found by
//!   process group and by an environment tag ([`MARKER_VAR`]), so a process that called
//!   `setsid` *and* cleared its environment, or a `setsid` pid hopper, can outlive the command.
//! - `strict` (Linux, as root or through an unprivileged user namespace; the default where
//!   available, see [`default_isolation`]): `process` plus namespaces, Landlock and
//!   seccomp, entered like this (all in the forked child, async-signal-safe syscalls only; every
//!   allocation — Landlock ruleset fd, BPF program, cgroup fds, paths — is made before the fork):
//!
//!   1. `A` (the process `std::process::Command` forks): `setsid`, `PDEATHSIG=SIGKILL` (see
//!      "Lifetime" for why a per-thread death signal is right here), joins
//!      the cgroups (writes `0` to the pre-opened `cgroup.procs`), rlimits, drops dangerous
//!      capabilities from the bounding set, `unshare(NEWPID|NEWNS|NEWIPC|NEWUTS[|NEWNET])`,
//!      forks `B`. `A` then closes every inherited descriptor, ignores SIGTERM (it must outlive
//!      the grace period to relay the status), waits for `B`, and exits with the exact status `B`
//!      relays through a pipe (re-raising a signal death so the harness sees the real signal).
//!   2. `B` is PID 1 of the new PID namespace — the reaper. It sets `PDEATHSIG`, makes every
//!      mount private and **builds the command's filesystem** (`view.rs`, below), pivots into
//!      it, sets the hostname, installs a SIGTERM handler that forwards SIGTERM to every process of
//!      the namespace (`kill(-1)`: reaches children that called `setsid` and double-forked
//!      daemons), and forks `C`. It then closes its descriptors and reaps every orphan. When `C`
//!      exits, B reports its status at once (A relays it to the harness on a status pipe, so
//!      the grace below never counts against the command's timeout); if `C` exited normally
//!      B then sends SIGTERM to the whole namespace and, if anything was left, arms
//!      a timer for the grace period whose SIGALRM SIGKILLs the rest; when `C` exits after the
//!      harness's SIGTERM (timeout), the harness runs that clock (it SIGKILLs the group, B
//!      included, when the grace ends). It reaps until nothing is left, writes
//!      `C`'s raw status to the pipe and exits. When PID 1 exits the kernel kills whatever is
//!      left in the namespace, so nothing can outlive its command; if the harness dies,
//!      `PDEATHSIG` chains A → B → all. B's memory is not readable from inside (Landlock
//!      forbids ptrace-mode access to processes outside the domain: `/proc/1/environ`,
//!      `/proc/1/root` and `/proc/1/cwd` are denied).
//!   3. `C` adds the view's own filesystems to the Landlock ruleset (they did not exist when
//!      the parent built it): `/` (list only), `/proc` (read), `/dev` (read and write its few
//!      nodes, create none), `/dev/shm` and `/tmp` (all). It sets `NO_NEW_PRIVS`, enters the
//!      Landlock domain — creates and writes only in the workspace, the private `TMPDIR`, `/tmp`
//!      and `/dev/shm`; reads and execs only in `/usr`, `/bin`, `/sbin`, `/lib*`, `/opt`, `/sys`,
//!      `/proc`, `/dev`, the workspace, [`SandboxConfig::read_paths`] and `/etc` at leaf
//!      granularity (one rule per largest subtree without a hidden entry, none for a secret, none
//!      for what appeared after the scan); cross-directory hard links and renames need `REFER`,
//!      which no outside directory grants — and installs the seccomp filter (EPERM for ptrace,
//!      process_vm_readv/writev, mount/umount2/pivot_root/chroot and the new mount API,
//!      unshare/setns and namespace flags of clone, bpf, perf_event_open,
//!      keyctl/add_key/request_key, kexec_*, io_uring_*, open_by_handle_at,
//!      init/finit/delete_module, userfaultfd, reboot, swapon/off; ENOSYS for clone3 so libc
//!      falls back to clone, whose flags the filter can inspect), and returns to `std`, which
//!      execs `/bin/sh -c`.
//!
//!   **The filesystem is built, not filtered** (`view.rs`; the decision of issue 9, after a red
//!   team reached a host tmux socket in `/tmp` by path — Landlock does not govern `connect` —,
//!   wrote `/dev/kmsg` and a console, and read a mode-600 key in `/etc/wireguard`). The root is
//!   a fresh tmpfs, read-only once built; what it holds is an allowlist:
//!   - `/usr`, `/opt`, `/sys`, `/bin`, `/sbin`, `/lib*` (merged-usr symlinks recreated as
//!     symlinks): recursive read-only, `nosuid`, `nodev` binds of the host's at the same paths;
//!     every mount nested in them is sealed with the same `mount_setattr(AT_RECURSIVE)` call,
//!     which only adds flags, so the flags a user namespace locks (`noexec`, atime) stay;
//!   - `/etc`: the host's, read-only, minus its secrets (`hostscan.rs`): an entry is hidden when
//!     it is not a symlink and is a socket, FIFO or device; or is not world-readable (a
//!     directory: not world-readable and searchable — so a 0700 directory or a mode-600 key
//!     anywhere below); or its name says so (`shadow*`, `gshadow*`, `sudoers*`, SSH host and
//!     user private keys, `*.key`, `*.psk`, `*.keytab`, `*.p12`, `*.pfx`, `*.jks`,
//!     `*.keystore`, `*secret*`, `*credential*`, `private/`, `wireguard/`, `.htpasswd`,
//!     `.pgpass`, `.netrc`); or it is a file holding a private-key block (PEM, OpenSSH, PGP,
//!     PuTTY — so a private `*.pem` outside `ssl/certs` is caught by what it holds). A hidden
//!     entry is covered by an empty file or directory *and* has no Landlock rule;
//!   - special files (sockets, FIFOs, devices) in `/etc`, `/opt`, `/usr/local` and every read
//!     path are covered by an empty file. The rest of `/usr` is not scanned: it is
//!     package-managed (no package ships a socket; a daemon binding one there needs root on
//!     the host), and `/sys` holds none. The trees where hosts keep their sockets — `/tmp`,
//!     `/run`, `/var/run`, `/var/lib`, home directories, host `/dev` (`/dev/log`) — are not in
//!     the view at all;
//!   - the workspace read-write at its host path (receipts and agents name host paths) — or,
//!     when the task fixes one ([`SandboxConfig::root`], `environment.root: /app`), at that
//!     path *instead* (see "Fixed paths" below) —, the task's fixed mounts
//!     ([`SandboxConfig::mounts`]) at theirs, the
//!     read paths read-only at theirs, the private `TMPDIR` read-write at its host path inside
//!     a fresh tmpfs `/tmp` (512 MiB; `/var/tmp -> /tmp`), an empty `/run` (`/var/run ->
//!     /run`; with the network on, `/etc/resolv.conf`'s target when it lies under `/run`),
//!     a fresh `/proc`;
//!   - `/dev`: a read-only tmpfs with the host's `null`, `zero`, `full`, `random`, `urandom`
//!     and `tty` bound in, a new devpts instance (`/dev/ptmx -> pts/ptmx`, mode 0666), a fresh
//!     `/dev/shm`, and the `fd`/`stdin`/`stdout`/`stderr` links. No other host device.
//!
//!   Nothing else — the host's `/tmp`, `/run`, `/var`, `/home`, `/root`, `/srv`, `/mnt`,
//!   `/media`, `/boot` — exists inside. B detaches the host's root (`MNT_DETACH`) after the
//!   `pivot_root` and enters the working directory again by its path: `std` chdirs before the
//!   fork hooks run, and a directory left in the detached tree would let `cd ..` walk the whole
//!   host. The descriptors the harness holds are close-on-exec, and C marks every other one so
//!   before the exec, so none leads back into the host tree (`/proc/self/fd`). The steps that
//!   are the same for every command (the system trees, `/etc` and its masks, `/dev`) and the
//!   `/etc` and special-file scans are computed once per harness process; a command adds its
//!   workspace, `TMPDIR` and read paths. The new root is mounted on the command's (empty)
//!   `TMPDIR`, which B first clones (`open_tree`) and later attaches (`move_mount`) inside.
//!
//!   **Fixed paths** (`fixed.rs`; issue 13: benchmark tasks name `/app`, `/tests`,
//!   `/logs/verifier`). With [`SandboxConfig::root`] the workspace is bound at that path and
//!   **not** at its host path. Decided so because a command should meet one name for one
//!   folder (pytest's rootdir search, git's `safe.directory`, `realpath` comparisons and
//!   symlinks the agent writes all assume one), because the host path names the run folder's
//!   layout (run id, task name), which the agent has no business learning, and because nothing
//!   inside needs it: `HOME`, `PWD` and `GIT_CEILING_DIRECTORIES` name `/app` and `/`, the
//!   command starts in `/app/<cwd>` (B enters it by its view path after the pivot: the host
//!   has no `/app`), and the harness's own reads go through the host path outside. Landlock
//!   needs no change: its rules attach to inodes, and `/app` is a bind of the workspace's own
//!   directory, so the workspace's rule holds there exactly (a write in `/app` succeeds only
//!   through it; `tests/fixed_paths.rs` checks that every wall gives the same answer at `/app`
//!   as at the host path). A read-only mount is sealed read-only and its source gets a read
//!   rule; a writable one (an `outputs` folder the runner makes in the run folder) a full one.
//!   A fixed path may neither lie in nor hold another place of the view: [`FixedPath`] refuses
//!   the trees every view keeps, and the plan refuses what a given host adds (a read path, the
//!   `TMPDIR`) with both paths named. Only `strict` builds a view, so [`run_shell`] and
//!   [`spawn_agent`] refuse fixed paths at other levels ([`SandboxError::NeedsStrict`]) instead
//!   of running at the host path.
//!
//!   The network namespace has no interface up (not even loopback), so with network off nothing
//!   — not even a listener on the host's 127.0.0.1 — is reachable. With network allowed, the
//!   network namespace is not created.
//!
//!   Without root, `A` adds a user namespace to its `unshare` and maps its own uid and gid to
//!   themselves (`setgroups` denied): inside it, B may mount and set the hostname, while the
//!   command, which is still the caller's uid, holds no capability once it execs. There, with
//!   no pids cgroup (non-root users rarely have one), the process limit is RLIMIT_NPROC, set
//!   after the namespace exists: since Linux 5.14 it counts only that namespace's processes.
//!   The probe runs a command through this whole path once, so "available" means "works here".
//!   Strict mode needs namespaces (as root, or unprivileged user namespaces), Landlock and
//!   seccomp; when it cannot be had, [`run_shell`] fails with [`SandboxError::Unsupported`]
//!   explaining why — never silently weaker (the runner checks before a task starts).
//!
//!   The cost is three forks instead of one (and `fork`, not the cheaper shared-memory clone
//!   the other levels use: see `spawn.rs`) and about 40 mount-related syscalls (~0.6 ms);
//!   a command's wall time is measured from the first fork.
//!   Where the kernel has Landlock ABI 6 (Linux 6.12+), the domain is also scoped: no
//!   connecting to abstract Unix sockets made outside it (they are shared with the host when
//!   the network namespace is not created) and no signals to processes outside it.
//!
//!   Where the mount namespace cannot deliver the view (a container that forbids a fresh
//!   procfs or devpts, a user namespace that may not mount tmpfs, a seccomp policy around the
//!   harness that denies `open_tree` or `mount_setattr`), or Landlock is missing, strict is not
//!   offered: the probe runs a command through the whole path, checks the view from inside
//!   (its own `/dev/null`, no `/dev/kmsg` or `/dev/mem`, its own `/proc`, a writable workspace
//!   and `TMPDIR`), and `medin doctor` names the step that failed.
//!
//!   Known gaps: the view still shows the host's world-readable system files (`/etc/passwd`,
//!   `/sys`, `/usr`, `/opt`); `/etc` and the special files are scanned once per harness
//!   process, so a secret added afterwards under an `/etc` directory that held none when it was
//!   scanned, or a socket created afterwards in `/etc`, `/opt`, `/usr/local` or a read path, is
//!   not covered (a new entry directly in a directory that held a secret has no Landlock rule
//!   and stays unreadable); sockets a host daemon binds in package-managed `/usr` are not
//!   looked for; abstract sockets are reachable with the network on before Landlock ABI 6;
//!   the view's `/tmp` is RAM (charged to the command's memory cgroup when it has one; at most
//!   512 MiB); and a *process* agent started with [`spawn_agent`] keeps the network (it must
//!   reach its model), so under `strict` it is walled for files, processes and syscalls but
//!   not for the network (its receipts say `agent_isolation: strict+network`). A CLI agent
//!   does not: it joins the attempt's network namespace and leaves it only through the
//!   egress proxy ([`egress`]), which reaches its model endpoint and `policy.egress` only.
//!
//! # Agents ([`spawn_agent`])
//!
//! A process agent's own program is confined like a command at the task's level, with what an
//! agent must keep: stdin piped; a scrubbed environment plus the variables its caller passes
//! (the process agent passes `*_API_KEY`, `*_BASE_URL` and names its spec lists); a private
//! scratch directory as `HOME` and `TMPDIR`, removed with it; rlimits without a CPU-time or
//! memory limit; no cgroup (under `strict` the PID namespace ends its tree); its working directory
//! anywhere (the folder that declared it), made empty in the view when nothing else shows it,
//! so relative paths through it (`python3 ../agents/a.py`) still resolve while nothing in it
//! is readable. Its own files come in as [`SandboxConfig::read_paths`]. At `none`,
//! [`spawn_piped`]: the harness's environment, no limits, no walls (`agent_isolation: none`,
//! for developing an agent).
//!
//! # Ending
//!
//! At the end of a command — its shell exited, or the timeout fired — whatever is left of its
//! tree gets SIGTERM, `grace` to exit, then SIGKILL (`tree.rs`): the descendants of its
//! guardian (complete: reparenting keeps every process of the tree below the guardian), the
//! process group, every process carrying [`MARKER_VAR`] and every member of the command's
//! cgroup when it has one; in strict mode the reaper does the same for the whole PID
//! namespace. Then the harness shuts its end of the guardian's socket and the guardian SIGKILLs
//! and reaps whatever is still its child, repeatedly, until it has none — a pid hopper
//! included, since each hop's orphan lands on the guardian — and exits. A command that left
//! nothing running pays nothing for this: the shell's exit is reported by the guardian at
//! once (no polling delay), the search for leftovers reads only the pids allocated since the
//! command started, and the guardian reports the tree's CPU time and peak RSS from `wait4`.
//!
//! # Lifetime: the harness outlives nothing, and nothing outlives the harness
//!
//! If medin dies (`kill -9` included) everything it started dies with it:
//!
//! - `none`/`process` commands and agents ([`spawn_piped`], [`spawn_agent`]): the harness's end of the
//!   guardian's socket is held by the harness alone; the kernel closes it when the harness
//!   dies, and the guardian sweeps the tree as above. This is tied to the process, not to a thread: the thread that
//!   started an agent may end while the agent runs on.
//! - `strict` commands: `A` has `PR_SET_PDEATHSIG`, which fires when the *thread* that forked
//!   it exits. That thread is inside [`run_shell`] until the command is over (it waits for it),
//!   so the signal fires only when the harness dies; `B` has it relative to `A` (one thread),
//!   and PID 1's death ends the namespace. A `strict` agent may outlive the thread that
//!   started it, so its `A` is forked by a thread that lasts as long as the harness
//!   (`medin-agent-forker`). The first process of every guarded command and
//!   agent has `PDEATHSIG` relative to its guardian (one thread): a killed guardian takes it
//!   along (what that process had already started then goes to init).
//!
//! What cannot die with it stays on the host: cgroup directories, private `TMPDIR`s, claimed
//! workspaces ([`claim_workspace`]). They are named after their owner, `<pid>.<start
//! time>.<pid namespace>`, and the first command of every later medin process takes back
//! what a dead owner left (`reclaim.rs`), never what a live one holds.
//!
//! Without a guardian (other architectures and Unixes) a command's shell gets `PDEATHSIG`
//! (Linux) but its escapees do not, and an agent's tree is ended only by [`PipedChild`]'s
//! drop: a `kill -9` of the harness leaves them running there.
//!
//! # Limits and how a hit is named ([`LimitHit`])
//!
//! - `TIMEOUT`: the wall-clock deadline fired (SIGTERM to the group and, in strict mode, to the
//!   whole namespace; grace; SIGKILL).
//! - `CPU_LIMIT`: RLIMIT_CPU (soft = limit, hard = limit + 1 s): death by SIGXCPU, a shell exit
//!   code of 128+SIGXCPU, or a SIGKILL after the CPU time used reached the limit.
//! - `FILE_SIZE_LIMIT`: RLIMIT_FSIZE: death by SIGXFSZ (or exit 128+SIGXFSZ), or `File too
//!   large` (EFBIG) in stderr of a failing command.
//! - `PROCESS_LIMIT`: the cgroup `pids` controller (`pids.max`); a hit is read from
//!   `pids.events` (`max N`). RLIMIT_NPROC does not bind root, so without a cgroup the process
//!   count of a root command is not limited and doctor says so; a non-root strict command gets
//!   RLIMIT_NPROC in its user namespace, and a hit is named from failed forks in stderr.
//! - `MEMORY_LIMIT`: with a memory cgroup (strict, or any explicit memory limit), the cgroup's
//!   limit on the tree's resident memory (v1 `memory.limit_in_bytes`, v2 `memory.max`, no
//!   swap), detected for certain by the OOM-kill counter (`memory.oom_control` /
//!   `memory.events`); RLIMIT_AS is then not set, since runtimes (node, the JVM, Go) reserve
//!   address space far beyond what they use. Without a cgroup, RLIMIT_AS per process, detected
//!   heuristically: a failing command whose stderr says it could not allocate memory (a
//!   program that crashes on a failed allocation without saying so is not named).
//!
//! Files: `process.rs` (one command from start to receipt, limit naming), `spawn.rs` (starting
//! the first process: a `vfork`-style clone for `none`/`process`, fork for `strict`),
//! `guardian.rs` (the subreaper between the harness and a command or agent), `tree.rs`
//! (finding and ending what is left), `strict.rs` (the strict-mode child side, Landlock and
//! seccomp), `view.rs` (strict's built filesystem: the mount plan and the code that runs it),
//! `hostscan.rs` (what of the host the view shows or hides: `/etc`'s secrets, special files),
//! `cgroup.rs` (per-command cgroups), `reclaim.rs` (owner names; taking back what a dead medin
//! left), `probe.rs` (what the machine supports; `medin doctor`), `exec.rs` (`medin exec`),
//! `capture.rs` (capped, hashed output), `workspace.rs` (fresh workspace from a fixture),
//! `fixed.rs` (fixed paths: their rules, and the refusal below `strict`), `container.rs` (a
//! task's container: engine, image, one container per attempt, commands `exec`'d into it),
//! `attempt.rs` (the attempt's namespaces that every command joins, so services live until the
//! attempt ends), `session.rs` (the attempt's persistent shell).

use std::path::{Path, PathBuf};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How strongly a command is confined (see the module documentation).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Isolation {
    /// Process group, timeout and environment scrubbing only.
    None,
    /// rlimits, cgroup limits, whole-tree kill (the default).
    #[default]
    Process,
    /// Namespaces, Landlock and seccomp on top of `process` (Linux; root or user namespaces).
    Strict,
    /// The command ran in the attempt's container (a task's `environment.image` or
    /// `dockerfile`; see `container.rs`). What receipts say; never asked for with `isolation:`
    /// (the host level still confines the agent's own process).
    #[serde(skip_deserializing)]
    #[schemars(skip)]
    Container,
}

impl Isolation {
    pub fn as_str(self) -> &'static str {
        match self {
            Isolation::None => "none",
            Isolation::Process => "process",
            Isolation::Strict => "strict",
            Isolation::Container => "container",
        }
    }
}

impl std::fmt::Display for Isolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Isolation {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "none" => Ok(Isolation::None),
            "process" => Ok(Isolation::Process),
            "strict" => Ok(Isolation::Strict),
            "container" => Err(
                "isolation `container` is not a level to ask for: name the task's image with `environment.image` (or `dockerfile`)".into(),
            ),
            other => Err(format!(
                "unknown isolation level `{other}`; use none, process or strict"
            )),
        }
    }
}

/// The limit that ended (or marked) a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum LimitHit {
    Timeout,
    CpuLimit,
    MemoryLimit,
    ProcessLimit,
    FileSizeLimit,
}

impl LimitHit {
    /// `TIMEOUT`, `CPU_LIMIT`, ...
    pub fn as_str(self) -> &'static str {
        match self {
            LimitHit::Timeout => "TIMEOUT",
            LimitHit::CpuLimit => "CPU_LIMIT",
            LimitHit::MemoryLimit => "MEMORY_LIMIT",
            LimitHit::ProcessLimit => "PROCESS_LIMIT",
            LimitHit::FileSizeLimit => "FILE_SIZE_LIMIT",
        }
    }

    /// One sentence for messages.
    pub fn describe(self) -> &'static str {
        match self {
            LimitHit::Timeout => "the wall-clock timeout fired",
            LimitHit::CpuLimit => "the CPU-time limit was reached",
            LimitHit::MemoryLimit => "the memory limit was reached",
            LimitHit::ProcessLimit => "the process-count limit was reached",
            LimitHit::FileSizeLimit => "the file-size limit was reached",
        }
    }
}

impl std::fmt::Display for LimitHit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Resources a command used (its whole reaped tree).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
pub struct ResourceUsage {
    /// User CPU time, milliseconds.
    pub user_ms: u64,
    /// System CPU time, milliseconds.
    pub system_ms: u64,
    /// Largest resident set of one process, KiB.
    pub max_rss_kib: u64,
    /// Peak number of processes at once (cgroup `pids.peak`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_processes: Option<u64>,
}

/// How one command is confined.
#[derive(Debug, Clone)]
pub struct SandboxConfig {
    /// The workspace root; commands run here (or below).
    pub workspace: PathBuf,
    /// Wall-clock limit per command.
    pub timeout: Duration,
    /// Time between SIGTERM and SIGKILL.
    pub grace: Duration,
    pub limits: ResourceLimits,
    /// Bytes kept per stream; the rest is counted and hashed, not kept.
    pub output_cap: usize,
    /// Whether the command may use the network (enforced by later isolation levels).
    pub network: bool,
    /// Hosts (`host:port`) an agent process may reach through the egress proxy when the
    /// network is off (a CLI agent's; `policy.egress`). Commands get none of them.
    pub egress: Vec<String>,
    /// Extra environment variables on top of the scrubbed base.
    pub env: Vec<(String, String)>,
    /// The names among [`SandboxConfig::env`] that are host variables the task passes
    /// (`pass_env:`): an agent process started from this config gets them too.
    pub passed_env: Vec<String>,
    /// How strongly commands are confined (default `process`).
    pub isolation: Isolation,
    /// Extra directories readable (and executable) in `strict` mode, e.g. a toolchain: bound
    /// read-only into the command's view at their own paths (and at their canonical paths when
    /// a symlink leads there), their sockets and FIFOs covered (scanned once per process).
    /// An entry that would cover the view's system trees or `/tmp` (`/`, say) is refused.
    pub read_paths: Vec<PathBuf>,
    /// Extra directories writable in `strict` mode besides the workspace and the private temp
    /// dir, e.g. the report folder of a judged test run (outside the agent's workspace).
    pub write_paths: Vec<PathBuf>,
    /// Whether each command gets its own cgroup (process-count and memory limits that hold for
    /// root, named hits). `None` = the level's default: on for `strict`, off for `process`
    /// (containment comes from the guardian at 0.03 ms; a cgroup costs 0.1-0.3 ms back to back
    /// and 1-2 ms, up to ~10 ms loaded, after a pause: see the module documentation), never
    /// for `none`.
    pub cgroup: Option<bool>,
    /// Where `strict` commands (and a `strict` agent) see the workspace instead of its host
    /// path: the task's `environment.root` (`/app`). Commands start there, `HOME` and `PWD`
    /// name it, and the file tools take paths below it as workspace paths. Only `strict` can
    /// build it: at other levels [`run_shell`] and [`spawn_agent`] refuse
    /// ([`SandboxError::NeedsStrict`]) rather than run at the host path.
    pub root: Option<FixedPath>,
    /// Host directories shown at fixed paths of the `strict` view (the task's
    /// `environment.mounts`, read-only, and `environment.outputs`, read-write). `strict` only,
    /// like [`SandboxConfig::root`].
    pub mounts: Vec<FixedMount>,
    /// The attempt this command belongs to (see [`AttemptSandbox`]): under `strict` the
    /// command joins the attempt's namespaces, so what it leaves running lives until the
    /// attempt ends. `None`: the command is alone, and its whole tree ends with it.
    pub attempt: Option<AttemptSandbox>,
    /// The attempt's container, when the task names an image (`environment.image` /
    /// `dockerfile`): [`run_shell`] then `exec`s every command into it (at
    /// [`SandboxConfig::root`], with this config's environment, timeout and output cap) instead
    /// of starting it on the host; `isolation` then confines only the agent's own process.
    /// Shared by every command of the attempt; the container is removed when the last handle
    /// drops.
    pub container: Option<std::sync::Arc<Container>>,
}

impl SandboxConfig {
    /// The `PATH` its commands get: the last one set in [`SandboxConfig::env`], else
    /// [`SANDBOX_PATH`].
    pub fn path(&self) -> String {
        self.env
            .iter()
            .rev()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| SANDBOX_PATH.to_string())
    }

    /// Defaults: 30 s timeout, 2 s grace, 1 MiB output cap, default limits, no network.
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        SandboxConfig {
            workspace: workspace.into(),
            timeout: Duration::from_secs(30),
            grace: Duration::from_secs(2),
            limits: ResourceLimits::default(),
            output_cap: 1024 * 1024,
            network: false,
            egress: Vec::new(),
            env: Vec::new(),
            passed_env: Vec::new(),
            isolation: Isolation::Process,
            read_paths: Vec::new(),
            write_paths: Vec::new(),
            cgroup: None,
            root: None,
            mounts: Vec::new(),
            attempt: None,
            container: None,
        }
    }

    /// The workspace as commands see it: [`SandboxConfig::root`] when set, else its host path.
    pub fn workspace_seen(&self) -> &Path {
        self.root.as_ref().map_or(self.workspace.as_path(), FixedPath::as_path)
    }
}

/// rlimits applied to each command (None = inherit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceLimits {
    /// Memory, bytes: the memory cgroup's limit when the command has one, else RLIMIT_AS.
    pub memory: Option<u64>,
    /// CPU seconds.
    pub cpu_secs: Option<u64>,
    /// Largest file written, bytes.
    pub file_size: Option<u64>,
    /// Open files.
    pub open_files: Option<u64>,
    /// Processes (threads count too) alive at once in the command's cgroup.
    pub processes: Option<u64>,
}

impl Default for ResourceLimits {
    fn default() -> Self {
        ResourceLimits {
            memory: Some(1024 * 1024 * 1024),
            cpu_secs: None,
            file_size: Some(256 * 1024 * 1024),
            open_files: Some(1024),
            processes: Some(1024),
        }
    }
}

/// One captured output stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapturedOutput {
    /// The kept bytes, decoded lossily as UTF-8.
    pub text: String,
    /// Total bytes the command wrote to this stream.
    pub total_bytes: u64,
    /// True when `text` holds less than the command wrote.
    pub truncated: bool,
    /// `sha256:<hex>` of the full stream, so a truncated output can be matched later.
    pub sha256: String,
}

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExitKind {
    /// Exited with this code.
    Code(i32),
    /// Killed by this signal.
    Signal(i32),
}

/// The result of one sandboxed command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandOutcome {
    pub exit: ExitKind,
    pub stdout: CapturedOutput,
    pub stderr: CapturedOutput,
    pub duration_ms: u64,
    /// The timeout fired and the tree was killed.
    pub timed_out: bool,
    /// The limit that ended the command, if one did (`TIMEOUT` when `timed_out`).
    #[serde(default)]
    pub limit: Option<LimitHit>,
    /// The isolation level the command actually ran under.
    #[serde(default)]
    pub isolation: Isolation,
    #[serde(default)]
    pub usage: ResourceUsage,
}

impl CommandOutcome {
    pub fn success(&self) -> bool {
        self.exit == ExitKind::Code(0) && !self.timed_out
    }
}

/// The sandbox itself failed (not the command).
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("cannot start `{command}` in {workspace}: {source}")]
    Spawn {
        command: String,
        workspace: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot prepare workspace {path}: {source}")]
    Workspace {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("working directory {0} is outside the workspace")]
    OutsideWorkspace(PathBuf),
    /// The requested isolation level cannot be had on this machine.
    #[error("isolation `{level}` is not available here: {reason}; run `medin doctor` to see what this machine supports, or ask for a weaker level explicitly")]
    Unsupported { level: Isolation, reason: String },
    /// The configuration asks for fixed paths ([`SandboxConfig::root`], [`SandboxConfig::mounts`])
    /// at a level that cannot build them.
    /// The attempt's container failed (not the command in it).
    #[error("{detail}; the attempt cannot go on without its container")]
    Container { detail: String },
    #[error("{what} needs isolation `strict`, and this task runs at `{level}`: only strict builds each command's own filesystem, where a folder can be shown at a fixed path; at `{level}` commands see the host's filesystem, where that path is not the task's folder, and medin does not run the task at the host path instead; run it where strict is available (`medin doctor`) and do not ask for a weaker `isolation:`")]
    NeedsStrict { level: Isolation, what: String },
    /// The egress proxy could not start ([`Egress::start`]).
    #[error(transparent)]
    Egress(#[from] egress::EgressError),
}

mod attempt;
mod beneath;
mod capture;
#[cfg(target_os = "linux")]
mod cgroup;
mod container;
pub(crate) mod egress;
mod exec;
mod fixed;
#[cfg(target_os = "linux")]
mod guardian;
#[cfg(target_os = "linux")]
mod hostscan;
mod probe;
mod process;
mod reclaim;
mod session;
mod spawn;
#[cfg(target_os = "linux")]
mod strict;
mod tree;
#[cfg(target_os = "linux")]
mod view;
mod workspace;

pub use attempt::AttemptSandbox;
pub use beneath::{remove_tree, Beneath, BeneathError, EntryKind, WalkEntry, WalkLimits};
pub use container::{
    image_name_is_valid, ready_image, Container, ContainerError, ContainerRequest, Engine as ContainerEngine,
    ImageSource, ReadyImage,
};
#[cfg(target_os = "linux")]
pub use egress::bind_inside;
pub use egress::{
    Egress, EgressError, EgressEvent, EgressRules, EgressVia, EventSink, HostPort, HostPortError, EVENTS_PER_SECOND,
};
pub use exec::{exec_main, ExecArgs};
pub use fixed::{check_layout, FixedMount, FixedPath, MountAccess};
pub use probe::{doctor_main, probe};
pub use process::PipedChild;
pub use reclaim::{claim_workspace, WorkspaceClaim};
pub use tree::MARKER_VAR;

/// The fixed `PATH` every sandboxed command sees.
pub const SANDBOX_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Runs `command` with `/bin/sh -c` in `cfg.workspace` (or `cwd`, a workspace-relative dir).
///
/// The command gets stdin from `/dev/null`, a scrubbed environment (`PATH`, `HOME` = the
/// workspace, a private `TMPDIR` removed afterwards, `LANG=C.UTF-8`, `TERM=dumb`,
/// `PYTHONDONTWRITEBYTECODE=1` (no stale `.pyc` in fix-and-retest loops),
/// `GIT_CEILING_DIRECTORIES` = the workspace's parent so git never finds a repository above
/// the workspace, plus `cfg.env`), its own session and process group, and the rlimits of `cfg.limits` (core dumps
/// off). When the timeout fires the whole group gets SIGTERM, then SIGKILL after `cfg.grace`;
/// when the shell exits, whatever it left running in its group is killed too.
///
/// With [`SandboxConfig::container`] set, the command is `exec`'d into the attempt's container
/// instead (at the task's root, with the image's environment plus `cfg.env` minus `PATH`, the
/// same timeout, grace and output cap; receipts say `isolation: container`; see `container.rs`).
///
/// A non-zero exit, a signal or a timeout is a normal [`CommandOutcome`]; `Err` means the
/// sandbox itself failed (the command could not be started, or `cwd` leads outside).
pub fn run_shell(cfg: &SandboxConfig, command: &str, cwd: Option<&Path>) -> Result<CommandOutcome, SandboxError> {
    if let Some(container) = &cfg.container {
        return container.run_shell(cfg, command, cwd);
    }
    process::run_shell(cfg, command, cwd)
}

/// Starts a long-running program (an agent) with `/bin/sh -c` in `cwd` (any directory), its own
/// session and process group, stdin/stdout/stderr piped, and the current environment plus
/// `cfg.env` and [`MARKER_VAR`] (see [`spawn_agent`] for a confined one; this is its `none`
/// level). It is not confined (no rlimits, no namespaces), but it runs
/// under a guardian like a command: the returned [`PipedChild`] ends the whole tree when killed
/// or dropped, daemons that left its session and environment included, and the tree ends
/// with the harness. It may be moved to, and outlive, any thread.
pub fn spawn_piped(cfg: &SandboxConfig, command: &str, cwd: &Path) -> Result<PipedChild, SandboxError> {
    process::spawn_piped(cfg, command, cwd)
}

/// Starts an agent's own program (a `process:` agent) with `/bin/sh -c` in `cwd`, stdin,
/// stdout and stderr piped, confined at `cfg.isolation` like a command, minus what an agent
/// must keep:
///
/// - `none`: [`spawn_piped`] — the harness's whole environment, no limits (for developing an
///   agent; every receipt then says `agent_isolation: none`).
/// - `process`: a scrubbed environment (`PATH`, `LANG`, `TERM`, `PYTHONDONTWRITEBYTECODE`,
///   `HOME` and `TMPDIR` = a private scratch directory removed with the agent, plus `cfg.env`
///   and [`MARKER_VAR`]), rlimits of `cfg.limits` except CPU time (an agent waits for its
///   model) and memory (no RLIMIT_AS: runtimes reserve address space; no memory cgroup),
///   capabilities dropped like a command's, under a guardian: its whole tree ends
///   with it, at the deadline and with the harness. Files are not walled at this level.
/// - `strict`: `process` in its own namespaces under Landlock and seccomp, in a built view
///   of the host like a command's: readable are the system directories, the workspace,
///   `cfg.read_paths` (the agent's own directory) and nothing else; writable the workspace,
///   the scratch directory, `/tmp` of the view and `cfg.write_paths`; `cwd`, when nothing else
///   shows it, exists in the view as an empty directory. The network follows `cfg.network`.
///   No cgroup: the PID namespace ends the tree.
///
/// A level that cannot be had is [`SandboxError::Unsupported`], never a weaker one.
pub fn spawn_agent(cfg: &SandboxConfig, command: &str, cwd: &Path) -> Result<PipedChild, SandboxError> {
    process::spawn_agent(cfg, command, cwd)
}

/// The level a task (or `medin exec`) gets when neither it nor its suite asks for one: the
/// strongest this machine supports — `strict` where it can be had (Linux with namespaces,
/// Landlock, seccomp), else `process` — so that a task's `network: false` and its workspace
/// walls hold wherever the kernel allows. Receipts record the level each command got; `medin
/// doctor` prints it. A level asked for explicitly is never weakened (see [`check_isolation`]).
pub fn default_isolation() -> Isolation {
    probe().best
}

/// `Ok` when commands can run at `level` on this machine; otherwise
/// [`SandboxError::Unsupported`] saying why (checked once per process, see [`probe`]).
pub fn check_isolation(level: Isolation) -> Result<(), SandboxError> {
    match level {
        Isolation::Strict => probe::strict_available().map_err(|reason| SandboxError::Unsupported { level, reason }),
        _ => Ok(()),
    }
}

/// `Ok` when a command configured by `cfg` can run on this machine: its level is available
/// ([`check_isolation`]) and what it asks of the view can be had at that level (fixed paths
/// need `strict`: [`SandboxError::NeedsStrict`]). The runner checks this before a task starts.
pub fn check_config(cfg: &SandboxConfig) -> Result<(), SandboxError> {
    check_isolation(cfg.isolation)?;
    // A container shows the fixed paths itself, whatever the host's level.
    if cfg.container.is_some() {
        return Ok(());
    }
    fixed::require_strict(cfg)
}

/// Whether a live (non-zombie) process is left in process group `pgid`.
pub fn group_alive(pgid: i32) -> bool {
    tree::group_has_live_members(nix::unistd::Pid::from_raw(pgid))
}

/// Copies `fixture` (if any) into a fresh, empty `dest`.
///
/// `dest` is created (with its parents); it is an error if it already exists and is not empty.
/// Files keep their permission bits, directories are recreated, symlinks are copied as
/// symlinks (their targets are not followed). `None` leaves an empty directory.
pub fn prepare_workspace(fixture: Option<&Path>, dest: &Path) -> Result<(), SandboxError> {
    workspace::prepare(fixture, dest)
}
