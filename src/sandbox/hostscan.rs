//! What strict isolation's view of the host shows and what it must hide, read from the host
//! once per process (the harness runs many commands; the results are cached):
//!
//! - the system trees bound into the view (`/usr`, `/bin`, `/sbin`, `/lib*`, `/opt`, `/sys`),
//!   as directories to bind or merged-usr symlinks to recreate;
//! - `/etc`'s secrets: the topmost entries the view masks and Landlock leaves without a rule,
//!   and the largest subtrees without one (one Landlock rule each) — see [`etc_secret_name`]
//!   and [`EtcScan`] for the rule;
//! - special files (Unix sockets, FIFOs, device nodes) in the trees that are not
//!   package-managed (`/etc`, `/opt`, `/usr/local`, each [`SandboxConfig::read_paths`] entry),
//!   which the view masks so that no host socket can be reached by path;
//!
//! It never mounts anything and never runs in a forked child: [`super::view`] turns this into
//! a mount plan.
//!
//! [`SandboxConfig::read_paths`]: super::SandboxConfig::read_paths

use std::collections::HashMap;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// Top-level system entries of the view, bound read-only (directories) or recreated
/// (symlinks, e.g. merged-usr `/bin -> usr/bin`) when the host has them.
pub(crate) const SYSTEM_ENTRIES: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/sys",
];

/// Trees scanned for special files (sockets, FIFOs, devices), besides `/etc` and the
/// configured read paths. The rest of `/usr` is package-managed (no package ships a socket;
/// a daemon binding one there would need root on the host) and `/sys` holds none.
pub(crate) const SCANNED_TREES: &[&str] = &["/opt", "/usr/local"];

/// Files larger than this are not read for private-key blocks (keys are a few KiB).
const CONTENT_SCAN_MAX: u64 = 256 * 1024;

/// Why an entry of `/etc` is hidden.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HideReason {
    /// Not world-readable (a file) or not world-readable and searchable (a directory).
    Mode,
    /// The name says it holds a secret ([`etc_secret_name`]).
    Name,
    /// A regular file holding a PEM/OpenSSH/PGP private-key block.
    Content,
    /// A Unix socket, FIFO or device node.
    Special,
}

/// One hidden entry (the topmost: nothing below a hidden directory is listed).
#[derive(Debug, Clone)]
pub(crate) struct Hidden {
    pub(crate) path: PathBuf,
    pub(crate) dir: bool,
    pub(crate) reason: HideReason,
}

/// What `/etc` looks like inside the view.
///
/// The rule: an entry is hidden when it is not a symlink and (a) it is a socket, FIFO or
/// device node, or (b) it is a regular file that is not world-readable, or a directory that
/// is not world-readable and searchable (so `/etc/wireguard/wg0.key` mode 600 or a 0700
/// directory), or (c) its name says it holds a secret ([`etc_secret_name`]), or (d) it is a
/// regular file of at most 256 KiB holding a private-key block (`PRIVATE KEY-----`,
/// `PRIVATE KEY BLOCK-----`, `PuTTY-User-Key-File`). Symlinks are never hidden themselves:
/// what they lead to is judged where it lies (in `/etc` by this rule, elsewhere by whether
/// the view has it at all). Nothing below a hidden directory is read.
#[derive(Debug, Clone, Default)]
pub(crate) struct EtcScan {
    /// The topmost hidden entries: masked in the view, and without a Landlock rule.
    pub(crate) hidden: Vec<Hidden>,
    /// Landlock read rules: `(path, is_dir)` for the largest subtrees of `/etc` without a
    /// hidden entry (a directory that holds one gets a rule per child instead).
    pub(crate) allowed: Vec<(PathBuf, bool)>,
    /// Entries looked at.
    pub(crate) scanned: usize,
}

/// Whether an entry named `name` (anywhere under `/etc`) holds a secret by its name:
/// password hashes (`shadow*`, `gshadow*`, `.htpasswd`, `.pgpass`, `.netrc`), sudo rules
/// (`sudoers*`), SSH host and user private keys (`ssh_host_*` and `id_{rsa,dsa,ecdsa,ed25519}*`
/// but not their `.pub`), key material by extension (`*.key`, `*.psk`, `*.keytab`, `*.p12`,
/// `*.pfx`, `*.jks`, `*.keystore`), anything named `*secret*` or `*credential*` (IPsec and
/// PPP secrets, `.git-credentials`), directories named `private` (`ssl/private`,
/// `pki/tls/private`) and WireGuard's directory. Case-insensitive. Certificates (`*.pem`,
/// `*.crt` in `ssl/certs`) and public keyrings (`*.gpg`) stay: a `*.pem` holding a private key
/// is hidden by its content.
pub(crate) fn etc_secret_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    let public = n.ends_with(".pub");
    let prefixes = ["shadow", "gshadow", "sudoers"];
    let key_files = ["id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"];
    let extensions = [".key", ".psk", ".keytab", ".p12", ".pfx", ".jks", ".keystore"];
    let exact = ["private", "wireguard", ".htpasswd", ".pgpass", ".netrc"];
    prefixes.iter().any(|p| n.starts_with(p))
        || (!public && (n.starts_with("ssh_host_") || key_files.iter().any(|k| n.starts_with(k))))
        || extensions.iter().any(|e| n.ends_with(e))
        || n.contains("secret")
        || n.contains("credential")
        || exact.contains(&n.as_str())
}

/// Whether `bytes` hold a private-key block (PEM, OpenSSH, PGP armour, PuTTY).
fn holds_private_key(bytes: &[u8]) -> bool {
    static KEY: OnceLock<Option<regex::bytes::Regex>> = OnceLock::new();
    KEY.get_or_init(|| regex::bytes::Regex::new(r"PRIVATE KEY(?: BLOCK)?-----|PuTTY-User-Key-File").ok())
        .as_ref()
        // Without the pattern (it is a constant: never), nothing is judged by content.
        .is_some_and(|re| re.is_match(bytes))
}

/// Scans `/etc` (cached).
pub(crate) fn etc() -> &'static EtcScan {
    static ETC: OnceLock<EtcScan> = OnceLock::new();
    ETC.get_or_init(|| scan_etc(Path::new("/etc")))
}

/// Scans an `/etc`-like tree at `root` (a parameter for the unit tests).
pub(crate) fn scan_etc(root: &Path) -> EtcScan {
    let mut scan = EtcScan::default();
    if visit_etc_dir(root, &mut scan) {
        scan.allowed.push((root.to_path_buf(), true));
    }
    scan
}

/// Classifies the children of `dir`; returns whether nothing below it is hidden (then the
/// caller gives `dir` one rule). Otherwise the rules for its visible children are recorded.
fn visit_etc_dir(dir: &Path, scan: &mut EtcScan) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        // Unreadable to us: nothing below can be vouched for.
        return false;
    };
    let mut clean = true;
    let mut child_rules: Vec<(PathBuf, bool)> = Vec::new();
    for entry in entries.flatten() {
        scan.scanned += 1;
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            clean = false;
            continue;
        };
        let ft = meta.file_type();
        if ft.is_symlink() {
            continue;
        }
        let mode = meta.permissions().mode();
        let name = entry.file_name();
        let hide = |reason| Hidden {
            path: path.clone(),
            dir: ft.is_dir(),
            reason,
        };
        let hidden = if ft.is_socket() || ft.is_fifo() || ft.is_char_device() || ft.is_block_device() {
            Some(hide(HideReason::Special))
        } else if ft.is_dir() && mode & 0o005 != 0o005 || ft.is_file() && mode & 0o004 == 0 {
            Some(hide(HideReason::Mode))
        } else if etc_secret_name(&name.to_string_lossy()) {
            Some(hide(HideReason::Name))
        } else if ft.is_file() && meta.len() <= CONTENT_SCAN_MAX && file_holds_private_key(&path) {
            Some(hide(HideReason::Content))
        } else {
            None
        };
        if let Some(h) = hidden {
            scan.hidden.push(h);
            clean = false;
        } else if ft.is_dir() {
            if visit_etc_dir(&path, scan) {
                child_rules.push((path, true));
            } else {
                clean = false;
            }
        } else {
            child_rules.push((path, false));
        }
    }
    if !clean {
        scan.allowed.extend(child_rules);
    }
    clean
}

fn file_holds_private_key(path: &Path) -> bool {
    let mut buf = Vec::new();
    match std::fs::File::open(path) {
        Ok(f) => f.take(CONTENT_SCAN_MAX).read_to_end(&mut buf).is_ok() && holds_private_key(&buf),
        // Unreadable to us (a non-root harness): the mode rule decides.
        Err(_) => false,
    }
}

/// The special files below `path` (canonical), found once per path and per process.
pub(crate) fn special_files_cached(path: &Path) -> Arc<Vec<PathBuf>> {
    static FOUND: OnceLock<Mutex<HashMap<PathBuf, Arc<Vec<PathBuf>>>>> = OnceLock::new();
    let cache = FOUND.get_or_init(Default::default);
    if let Some(found) = cache.lock().ok().and_then(|m| m.get(path).cloned()) {
        return found;
    }
    let found = Arc::new(special_files(path));
    if let Ok(mut m) = cache.lock() {
        m.insert(path.to_path_buf(), found.clone());
    }
    found
}

/// What is covered below `root` (symlinks not followed): sockets, FIFOs and device nodes, and
/// credential files by their exact names ([`credential_file_name`]) — a toolchain directory
/// such as `~/.cargo` keeps `credentials.toml` next to the binaries a command needs.
pub(crate) fn special_files(root: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(root)
        .follow_links(false)
        .into_iter()
        .flatten()
        .filter(|e| {
            let ft = e.file_type();
            ft.is_socket()
                || ft.is_fifo()
                || ft.is_char_device()
                || ft.is_block_device()
                || (ft.is_file() && credential_file_name(&e.file_name().to_string_lossy()))
        })
        .map(|e| e.into_path())
        .collect()
}

/// Whether a file of a scanned tree (`/opt`, `/usr/local`, a toolchain) is a credential store by
/// its exact name: package-registry tokens (cargo's `credentials`/`credentials.toml`,
/// `.pypirc`, `.npmrc`, `.gem/credentials`), `.netrc`, `.git-credentials`, `.pgpass`,
/// `.htpasswd`, SSH private keys. Exact names only: these trees hold code, and a name rule as
/// wide as `/etc`'s would hide modules such as Python's `secrets.py`.
pub(crate) fn credential_file_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    let exact = [
        "credentials",
        "credentials.toml",
        ".credentials.toml",
        ".pypirc",
        ".npmrc",
        ".netrc",
        ".git-credentials",
        ".pgpass",
        ".htpasswd",
    ];
    let key_files = ["id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"];
    exact.contains(&n.as_str()) || (!n.ends_with(".pub") && key_files.iter().any(|k| n.starts_with(k)))
}

/// A top-level system entry as the view recreates it.
#[derive(Debug, Clone)]
pub(crate) enum SystemEntry {
    /// A directory bound read-only at the same path.
    Dir(PathBuf),
    /// A symlink recreated with the same target (`/bin -> usr/bin`).
    Symlink { path: PathBuf, target: PathBuf },
}

/// The system entries this host has (cached). A symlink whose target lies outside the other
/// entries (`/opt -> /data/opt`) also gets its target directory bound.
pub(crate) fn system_entries() -> &'static [SystemEntry] {
    static ENTRIES: OnceLock<Vec<SystemEntry>> = OnceLock::new();
    ENTRIES.get_or_init(|| {
        let mut out = Vec::new();
        let mut extra = Vec::new();
        for e in SYSTEM_ENTRIES {
            let path = PathBuf::from(e);
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.file_type().is_symlink() {
                let (Ok(target), Ok(canonical)) = (std::fs::read_link(&path), path.canonicalize()) else {
                    continue;
                };
                if !canonical.is_dir() {
                    continue;
                }
                let covered = SYSTEM_ENTRIES
                    .iter()
                    .any(|s| canonical.starts_with(s) && std::fs::symlink_metadata(s).is_ok_and(|m| m.is_dir()));
                if !covered {
                    extra.push(SystemEntry::Dir(canonical));
                }
                out.push(SystemEntry::Symlink { path, target });
            } else if meta.is_dir() {
                out.push(SystemEntry::Dir(path));
            }
        }
        out.extend(extra);
        out
    })
}

/// One line for `medin doctor`: what the view exposes and hides.
pub(crate) fn describe() -> String {
    let etc = etc();
    let count = |r: HideReason| etc.hidden.iter().filter(|h| h.reason == r).count();
    let special: usize = SCANNED_TREES
        .iter()
        .filter(|t| Path::new(t).is_dir())
        .map(|t| special_files_cached(Path::new(t)).len())
        .sum();
    let dirs: Vec<String> = system_entries()
        .iter()
        .map(|e| match e {
            SystemEntry::Dir(p) => p.display().to_string(),
            SystemEntry::Symlink { path, target } => format!("{} -> {}", path.display(), target.display()),
        })
        .collect();
    format!(
        "built: {} read-only; /etc with {} of {} entries hidden ({} by mode, {} by name, {} by content, {} special files); \
         {special} special files masked in {}; a private /dev, /tmp, /var/tmp, /run, /proc; the workspace read-write",
        dirs.join(", "),
        etc.hidden.len(),
        etc.scanned,
        count(HideReason::Mode),
        count(HideReason::Name),
        count(HideReason::Content),
        count(HideReason::Special),
        SCANNED_TREES.join(" and "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn secret_names() {
        for n in [
            "shadow",
            "shadow-",
            "gshadow",
            "sudoers.d",
            "ssh_host_ed25519_key",
            "id_rsa",
            "wg0.key",
            "server.KEY",
            "ipsec.secrets",
            "chap-secrets",
            "krb5.keytab",
            "private",
            "wireguard",
            ".git-credentials",
            "store.p12",
        ] {
            assert!(etc_secret_name(n), "{n} should be hidden");
        }
        for n in [
            "passwd",
            "group",
            "hosts",
            "ssh_host_ed25519_key.pub",
            "id_rsa.pub",
            "ssh_config",
            "ca-certificates.crt",
            "ISRG_Root_X1.pem",
            "trusted.gpg",
            "keyboard",
            "openssl.cnf",
        ] {
            assert!(!etc_secret_name(n), "{n} should stay");
        }
    }

    #[test]
    fn etc_scan_hides_by_mode_name_content_and_type() {
        let d = tempfile::tempdir().unwrap();
        let etc = d.path();
        let mk = |p: &str, body: &str, mode: u32| {
            let path = etc.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, body).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        mk("passwd", "root:x:0:0", 0o644);
        mk("clean/a.conf", "a", 0o644);
        mk("clean/sub/b.conf", "b", 0o644);
        mk("wg/wg0.conf", "PrivateKey = x", 0o600);
        mk("wg/readme", "hi", 0o644);
        mk("ssl/certs/root.pem", "-----BEGIN CERTIFICATE-----", 0o644);
        mk("ssl/server.pem", "-----BEGIN RSA PRIVATE KEY-----\n", 0o644);
        mk("app/api.key", "k", 0o644);
        std::fs::create_dir(etc.join("closed")).unwrap();
        mk("closed/x", "x", 0o644);
        std::fs::set_permissions(etc.join("closed"), std::fs::Permissions::from_mode(0o700)).unwrap();
        symlink("/etc/shadow", etc.join("link")).unwrap();
        nix::unistd::mkfifo(&etc.join("fifo"), nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();

        let scan = scan_etc(etc);
        let hidden: Vec<(String, HideReason)> = {
            let mut v: Vec<_> = scan
                .hidden
                .iter()
                .map(|h| (h.path.strip_prefix(etc).unwrap().display().to_string(), h.reason))
                .collect();
            v.sort_by(|a, b| a.0.cmp(&b.0));
            v
        };
        assert_eq!(
            hidden,
            [
                ("app/api.key".to_string(), HideReason::Name),
                ("closed".to_string(), HideReason::Mode),
                ("fifo".to_string(), HideReason::Special),
                ("ssl/server.pem".to_string(), HideReason::Content),
                ("wg/wg0.conf".to_string(), HideReason::Mode),
            ]
        );
        let mut allowed: Vec<(String, bool)> = scan
            .allowed
            .iter()
            .map(|(p, d)| (p.strip_prefix(etc).unwrap().display().to_string(), *d))
            .collect();
        allowed.sort();
        // A clean directory is one rule; a directory holding a hidden entry gets one per
        // visible child; symlinks need none (their targets are judged where they lie).
        assert_eq!(
            allowed,
            [
                ("clean".to_string(), true),
                ("passwd".to_string(), false),
                ("ssl/certs".to_string(), true),
                ("wg/readme".to_string(), false),
            ]
        );
    }
}
