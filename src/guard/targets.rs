//! What a path argument points at, for every rule that judges one: the root, the home
//! directory, a system directory, a temp directory, the workspace (its root, or something
//! inside it), or somewhere else outside it. Also the shapes several rules share: home-relative
//! spellings (`~/x`, `$HOME/x`, `/home/u/x`), shell startup files, and `"$DIR"/*` targets that
//! an unset variable turns into `/*`.
//!
//! Classification is lexical: it reads the word as the parser left it (quotes resolved,
//! literal variables expanded) and the directory the command runs in, and never touches the
//! file system. A word that is not a literal path (a variable, a substitution) is
//! [`Target::Unknown`] unless its literal beginning already places it (`dist/$V` is inside the
//! workspace). What a rule does with a class (block, warn, allow) is the rule's call; this
//! module only says where a path leads.

use std::path::{Path, PathBuf};

use super::normalize;

/// Where a path argument points.
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
    /// Inside a temp directory (`/tmp/x`, `/var/tmp/x`, `$TMPDIR/x`) or a cache under home.
    Temp,
    /// A temp directory itself, or everything in it (`/tmp`, `/tmp/*`).
    TempRoot,
    /// Not a literal path (a variable, a substitution) or the directory is unknown.
    Unknown,
}

impl Target {
    /// Ordinary work: a path inside the workspace or inside a temp directory.
    pub fn is_work_area(&self) -> bool {
        matches!(self, Target::Inside | Target::Temp)
    }

    /// The machine's own directories or the user's: the root, home, a system directory.
    pub fn is_machine_or_home(&self) -> bool {
        matches!(self, Target::Root | Target::Home | Target::System(_))
    }

    /// A known place beyond the workspace and the temp directories: the root, home, a system
    /// directory, or any other path outside the workspace.
    pub fn is_beyond_workspace(&self) -> bool {
        self.is_machine_or_home() || matches!(self, Target::Outside(_))
    }
}

/// Top-level directories whose recursive deletion breaks the machine.
pub const SYSTEM_DIRS: &[&str] = &[
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

/// Directories every program may use for scratch files (world-writable). A user's runtime
/// directory (`/run/user/UID`, writable by that user) counts too: see [`classify_target`].
pub const TEMP_DIRS: &[&str] = &[
    "/tmp",
    "/var/tmp",
    "/dev/shm",
    "/private/tmp",
    "/dev/mqueue",
    "/run/lock",
    "/var/lock",
    "/run/shm",
    "/var/crash",
];

/// Cache directories under home, relative to it: disposable by definition (XDG, macOS).
const HOME_CACHES: &[&str] = &[
    ".cache",
    "Library/Caches",
    ".npm/_cacache",
    ".gradle/caches",
    ".cargo/registry/cache",
    ".m2/repository",
    "go/pkg/mod/cache",
];

/// Shell startup files under home, relative to it: what is written there runs in every new
/// shell.
const HOME_STARTUP_FILES: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".zlogin",
    ".zlogout",
    ".bash_logout",
    // Sourced by the stock `.bashrc` of Debian, Ubuntu and their derivatives.
    ".bash_aliases",
    // sh and dash read `$ENV` (conventionally `~/.shrc`); ksh, mksh, csh and tcsh their own.
    ".shrc",
    ".kshrc",
    ".mkshrc",
    ".cshrc",
    ".tcshrc",
    ".login",
    ".logout",
    // Run by the X session at every graphical login.
    ".xprofile",
    ".xinitrc",
    ".xsessionrc",
    ".config/fish/config.fish",
];

/// Classifies a path argument, lexically (never touches the file system). `cwd` is the
/// directory the command runs in (None when unknown); relative paths resolve against it.
pub fn classify_target(target: &str, cwd: Option<&Path>, workspace: &Path) -> Target {
    let t = target.trim();
    let in_home = |path: &str| {
        let path = path.trim_matches('/');
        if matches!(path, "" | "*" | "." | ".*") {
            return Target::Home;
        }
        // Caches are disposable by definition (XDG, macOS): deleting inside one is cleanup.
        let norm = normalize(Path::new(path));
        for cache in HOME_CACHES {
            let all = norm.parent() == Some(Path::new(cache)) && norm.file_name().is_some_and(|n| n == "*");
            if norm == Path::new(cache) || all {
                return Target::TempRoot;
            }
            if norm.starts_with(cache) {
                return Target::Temp;
            }
        }
        Target::Outside(PathBuf::from(t))
    };
    if let Some(rest) = t.strip_prefix('~') {
        let (_user, path) = rest.split_once('/').unwrap_or((rest, ""));
        return in_home(path);
    }
    for home in ["$HOME", "${HOME}"] {
        if let Some(rest) = t.strip_prefix(home) {
            if rest.is_empty() || rest.starts_with('/') {
                return in_home(rest);
            }
        }
    }
    // `$PWD/target` is `./target`: the current directory, wherever the line has moved it
    // (a value the line gives `PWD` was expanded before this). `$(pwd)` stays unknown: a
    // function defined earlier may answer for `pwd`.
    for here in ["$PWD", "${PWD}"] {
        if let Some(rest) = t.strip_prefix(here) {
            if rest.is_empty() || rest.starts_with('/') {
                return classify_target(&format!(".{rest}"), cwd, workspace);
            }
        }
    }
    // A fresh temp directory or a user's runtime directory, spelled with what makes it
    // (`$(mktemp -d)/x.sh`, `/run/user/$(id -u)/x`).
    for tmp in [
        "$TMPDIR",
        "${TMPDIR}",
        "$XDG_RUNTIME_DIR",
        "${XDG_RUNTIME_DIR}",
        "$(mktemp -d)",
        "$(mktemp)",
        "`mktemp -d`",
        "/run/user/$UID",
        "/run/user/${UID}",
        "/run/user/$EUID",
        "/run/user/$(id -u)",
    ] {
        if let Some(rest) = t.strip_prefix(tmp) {
            let rest = rest.trim_matches('/');
            // `$(mktemp -d)` alone is a fresh directory of the command's own, not all of /tmp.
            let fresh = tmp.contains("mktemp") && rest.is_empty();
            return if !fresh && (matches!(rest, "" | "*" | ".*") || rest.contains('$')) {
                Target::TempRoot
            } else {
                Target::Temp
            };
        }
    }
    if t.is_empty() {
        return Target::Unknown;
    }
    if t.contains('$') || t.contains('`') {
        return variable_suffix(t, cwd, workspace);
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
    let base: &Path = if glob_all {
        norm.parent().unwrap_or(Path::new("/"))
    } else {
        &norm
    };
    let ws = crate::guard::normalized(workspace);
    // Both paths are spelled in normal form, so they compare as bytes (component-wise
    // comparisons of `Path` were most of this function's time).
    let (base_bytes, ws_bytes) = (base.as_os_str().as_encoded_bytes(), ws.as_os_str().as_encoded_bytes());
    if base_bytes == ws_bytes {
        // `rm -rf .` is refused by rm itself; any other spelling of the root (`*`, `../ws`,
        // the absolute path) really deletes the whole workspace.
        let dot = t.trim_end_matches('/') == "." || t.trim_end_matches('/').ends_with("/.");
        return if dot && !glob_all {
            Target::WorkspaceDot
        } else {
            Target::WorkspaceAll
        };
    }
    if normal_starts_with(base_bytes, ws_bytes) {
        return Target::Inside;
    }
    if base_bytes == b"/" {
        return Target::Root;
    }
    // An ancestor of the workspace holds the run folder (logs, receipts) and more: deleting it
    // is never ordinary work, even when it sits in a temp directory.
    if normal_starts_with(ws_bytes, base_bytes) {
        return Target::Outside(base.to_path_buf());
    }
    for tmp in TEMP_DIRS {
        if base_bytes == tmp.as_bytes() {
            return Target::TempRoot;
        }
        if normal_starts_with(base_bytes, tmp.as_bytes()) {
            return Target::Temp;
        }
    }
    // `/run/user/1000/x`: the runtime directory of a user, scratch space as `/tmp` is.
    if let Some(rest) = base_bytes.strip_prefix(b"/run/user/") {
        let uid = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if uid > 0 && uid == rest.len() {
            return Target::TempRoot;
        }
        if uid > 0 && rest[uid] == b'/' {
            return Target::Temp;
        }
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

/// `Path::starts_with` (whole components) for two paths spelled in normal form (no `.`, `..`
/// or empty components, no trailing `/`; what [`normalize`] writes), as bytes.
fn normal_starts_with(path: &[u8], prefix: &[u8]) -> bool {
    prefix.is_empty()
        || (path.starts_with(prefix) && (path.len() == prefix.len() || path[prefix.len()] == b'/' || prefix == b"/"))
}

/// A path whose literal beginning already places it: `dist/$VERSION` is inside the workspace,
/// `/tmp/pytest-of-$USER` inside a temp directory. The literal part must name a directory
/// strictly inside the workspace or a temp directory (or a named entry of a temp root);
/// anything else is unknown.
fn variable_suffix(t: &str, cwd: Option<&Path>, workspace: &Path) -> Target {
    let dynamic = t.find(['$', '`']).unwrap_or(0);
    let rest = &t[dynamic..];
    if rest.contains("..") {
        return Target::Unknown;
    }
    let Some(slash) = t[..dynamic].rfind('/') else {
        return Target::Unknown;
    };
    let (dir, partial) = (&t[..slash.max(1)], &t[slash + 1..dynamic]);
    if dir.contains(['*', '?', '[']) {
        return Target::Unknown;
    }
    match classify_target(dir, cwd, workspace) {
        Target::Inside => Target::Inside,
        Target::Temp => Target::Temp,
        // `/tmp/name-$X`: a named entry of the temp directory, not the directory itself.
        Target::TempRoot if !partial.is_empty() => Target::Temp,
        _ => Target::Unknown,
    }
}

/// `"$DIR"/*`, `"$ROOT/"*`, `${OUT}/`: nothing but variables before a final `/`, `/*` or `/.*`.
/// When the variable is unset or empty (a typo, a step that failed earlier) the target is `/`
/// or everything under it: the Steam and Bumblebee incidents. `${DIR:?}` (bash refuses to
/// expand an unset variable) is not this shape.
pub fn empty_expands_to_root(t: &str) -> bool {
    let mut rest = t.trim_matches(|c| c == '"' || c == '\'');
    let mut vars = 0;
    loop {
        rest = rest.trim_start_matches(['"', '\'']);
        if let Some(r) = rest.strip_prefix("${") {
            let Some(end) = r.find('}') else { return false };
            let body = &r[..end];
            if !body.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return false;
            }
            rest = &r[end + 1..];
        } else if let Some(r) = rest.strip_prefix('$') {
            let len = r
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(r.len());
            if len == 0 {
                return false;
            }
            rest = &r[len..];
        } else {
            break;
        }
        vars += 1;
    }
    let rest = rest.trim_matches(['"', '\'']);
    vars > 0 && matches!(rest, "/" | "/*" | "/.*" | "/**")
}

/// `$TMPDIR/../x`, `"${OUT}"/a/../../y`: a path that starts with a variable and climbs with
/// `..` above the directory the variable names. Whatever the variable holds, the target is
/// not inside it, and nothing says where it is.
///
/// One level up from a project's own variable (`$SCRIPT_DIR/../build`) is the project's
/// layout and stays unknown (warned); one level up from a variable that names a shared place
/// (`$TMPDIR`, `$HOME`, `$PWD`, ...) or two levels up from any is out of it.
pub fn climbs_out_of_a_variable(t: &str) -> bool {
    let t = t.trim_start_matches(['"', '\'']);
    if !t.starts_with('$') || t.starts_with("$(") {
        return false;
    }
    let var = t
        .trim_start_matches('$')
        .trim_start_matches('{')
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .next()
        .unwrap_or("");
    let shared = matches!(
        var,
        "TMPDIR" | "TMP" | "TEMP" | "HOME" | "PWD" | "OLDPWD" | "USERPROFILE"
    ) || var.starts_with("XDG_");
    let mut depth: i32 = 0;
    let mut lowest: i32 = 0;
    for part in t.split('/').skip(1).map(|p| p.trim_matches(['"', '\''])) {
        match part {
            "" | "." => {}
            ".." => {
                depth -= 1;
                lowest = lowest.min(depth);
            }
            _ => depth += 1,
        }
    }
    lowest <= -2 || (lowest == -1 && shared)
}

/// The part of `path` below a home directory, for the spellings a command may use (`~/`,
/// `$HOME/`, `${HOME}/`, `/root/`, `/home/USER/`, `/Users/USER/`); None for other paths.
pub fn home_relative(path: &str) -> Option<&str> {
    for p in ["~/", "$HOME/", "${HOME}/", "/root/"] {
        if let Some(rest) = path.strip_prefix(p) {
            return Some(rest);
        }
    }
    if let Some(rest) = path.strip_prefix("/home/") {
        return rest.split_once('/').map(|(_, r)| r);
    }
    // `~root/`, `~dev/`: a named user's home.
    if let Some((user, rest)) = path.strip_prefix('~').and_then(|p| p.split_once('/')) {
        if !user.is_empty()
            && user
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
        {
            return Some(rest);
        }
    }
    if let Some(rest) = path.strip_prefix("/Users/") {
        return rest.split_once('/').map(|(_, r)| r);
    }
    None
}

/// A shell startup file, the user's (`~/.bashrc`, `~/.zshrc`, fish's `config.fish`, ...) or
/// the system's (`/etc/profile`, `/etc/profile.d/*`, `/etc/bash.bashrc`): what is written
/// there runs in every new shell.
pub fn startup_file(path: &str) -> bool {
    // `~/./.bashrc`, `~//.bashrc`: the same file; `~/.bashrc.d/*.sh`: sourced by the stock
    // `.bashrc` of Fedora and its derivatives.
    home_relative(path).is_some_and(|rest| {
        let normal = crate::guard::normalize(&std::path::Path::new("/").join(rest));
        let rest = normal.to_str().unwrap_or(rest).trim_start_matches('/');
        HOME_STARTUP_FILES.contains(&rest) || rest.strip_prefix(".bashrc.d/").is_some_and(|f| !f.is_empty())
    }) || path.starts_with("/etc/profile")
        || path == "/etc/bash.bashrc"
}

#[cfg(test)]
mod tests {
    #[test]
    fn normal_paths_compare_as_bytes_as_they_do_as_components() {
        let paths = [
            "/",
            "/tmp",
            "/tmpx",
            "/tmp/x",
            "/var/tmp",
            "/work/ws",
            "/work/ws/a",
            "/work/wsx",
            "/work",
            "a",
            "a/b",
            "",
        ];
        for p in paths {
            for q in paths {
                assert_eq!(
                    super::normal_starts_with(p.as_bytes(), q.as_bytes()),
                    std::path::Path::new(p).starts_with(q),
                    "{p} starts with {q}"
                );
            }
        }
    }

    use super::*;

    const WS: &str = "/work/ws";

    fn class(target: &str) -> Target {
        classify_target(target, Some(Path::new(WS)), Path::new(WS))
    }

    #[test]
    fn the_root_and_home_in_every_spelling() {
        for root in ["/", "/*", "/.", "//", "/etc/.."] {
            assert_eq!(class(root), Target::Root, "{root}");
        }
        for home in ["~", "~/", "~/*", "~/.*", "$HOME", "$HOME/", "${HOME}", "~user"] {
            assert_eq!(class(home), Target::Home, "{home}");
        }
        assert!(matches!(class("~/projects"), Target::Outside(_)));
        // `$HOMEDIR` is some other variable, not home.
        assert_eq!(class("$HOMEDIR"), Target::Unknown);
    }

    #[test]
    fn system_directories_and_other_places_outside() {
        for sys in ["/etc", "/usr/lib", "/opt/x", "/home/other", "/Users/me", "/var/log/"] {
            assert!(matches!(class(sys), Target::System(_)), "{sys}");
        }
        assert_eq!(class("/etc/../usr"), Target::System(PathBuf::from("/usr")));
        for out in ["../other", "/data/x", "/work"] {
            assert!(matches!(class(out), Target::Outside(_)), "{out}");
        }
        // An ancestor of the workspace is outside it, even under a temp directory.
        let ws = Path::new("/tmp/run/ws");
        assert_eq!(
            classify_target("/tmp/run", Some(ws), ws),
            Target::Outside(PathBuf::from("/tmp/run"))
        );
        assert_eq!(classify_target("/tmp/run/ws/x", Some(ws), ws), Target::Inside);
    }

    #[test]
    fn the_workspace_its_root_and_its_files() {
        assert_eq!(class("*"), Target::WorkspaceAll);
        assert_eq!(class("./*"), Target::WorkspaceAll);
        assert_eq!(class("../ws"), Target::WorkspaceAll);
        assert_eq!(class("/work/ws/"), Target::WorkspaceAll);
        assert_eq!(class("."), Target::WorkspaceDot);
        assert_eq!(class("./"), Target::WorkspaceDot);
        assert_eq!(class("./build/"), Target::Inside);
        assert_eq!(class("/work/ws/build"), Target::Inside);
        assert_eq!(class("src/*"), Target::Inside);
        // A relative path with no known directory is unknown.
        assert_eq!(classify_target("build", None, Path::new(WS)), Target::Unknown);
        // From a subdirectory, `..` is the workspace root again.
        let sub = Path::new("/work/ws/sub");
        assert_eq!(classify_target("..", Some(sub), Path::new(WS)), Target::WorkspaceAll);
    }

    #[test]
    fn temp_directories_and_home_caches() {
        for tmp in TEMP_DIRS {
            assert_eq!(class(tmp), Target::TempRoot, "{tmp}");
            assert_eq!(class(&format!("{tmp}/*")), Target::TempRoot, "{tmp}/*");
            assert_eq!(class(&format!("{tmp}/x")), Target::Temp, "{tmp}/x");
        }
        assert_eq!(class("$TMPDIR"), Target::TempRoot);
        assert_eq!(class("${TMPDIR}/x"), Target::Temp);
        assert_eq!(class("/run/user/1000"), Target::TempRoot);
        assert_eq!(class("/run/user/1000/x.lua"), Target::Temp);
        assert_eq!(class("$XDG_RUNTIME_DIR/x"), Target::Temp);
        assert!(
            matches!(class("/run/user"), Target::System(_)),
            "{:?}",
            class("/run/user")
        );
        assert!(matches!(class("/run/user/x/y"), Target::System(_)));
        assert!(matches!(class("/run/systemd/x"), Target::System(_)));
        assert_eq!(class("~/.cache"), Target::TempRoot);
        assert_eq!(class("~/.cache/*"), Target::TempRoot);
        assert_eq!(class("~/.cache/pip"), Target::Temp);
        assert_eq!(class("$HOME/Library/Caches/x"), Target::Temp);
    }

    #[test]
    fn words_that_are_not_literal_paths() {
        assert_eq!(class("$DIR"), Target::Unknown);
        assert_eq!(class("$(pwd)/x"), Target::Unknown);
        assert_eq!(class(""), Target::Unknown);
        // A literal beginning inside the workspace or a temp directory places it.
        assert_eq!(class("dist/$VERSION"), Target::Inside);
        assert_eq!(class("/tmp/pytest-of-$USER"), Target::Temp);
        assert_eq!(class("/tmp/$X"), Target::Unknown);
        assert_eq!(class("dist/$V/../../.."), Target::Unknown);
        assert_eq!(class("/etc/$X"), Target::Unknown);
    }

    #[test]
    fn class_groups() {
        assert!(class("src/x").is_work_area() && class("/tmp/x").is_work_area());
        assert!(!class("/tmp").is_work_area() && !class("*").is_work_area());
        for t in ["/", "~", "/etc"] {
            assert!(class(t).is_machine_or_home() && class(t).is_beyond_workspace(), "{t}");
        }
        assert!(!class("/data").is_machine_or_home() && class("/data").is_beyond_workspace());
        for t in ["src", "*", ".", "/tmp/x", "/tmp", "$X"] {
            assert!(!class(t).is_beyond_workspace(), "{t}");
        }
    }

    #[test]
    fn unset_variables_before_a_root_slash() {
        for t in ["$DIR/", "\"$DIR\"/*", "${OUT}/", "$A$B/.*", "$ROOT/**"] {
            assert!(empty_expands_to_root(t), "{t}");
        }
        for t in ["${DIR:?}/*", "$DIR/x", "/", "$DIR", "x$DIR/*"] {
            assert!(!empty_expands_to_root(t), "{t}");
        }
    }

    #[test]
    fn home_spellings_and_startup_files() {
        for p in ["~/x", "$HOME/x", "${HOME}/x", "/root/x", "/home/u/x", "/Users/u/x"] {
            assert_eq!(home_relative(p), Some("x"), "{p}");
        }
        assert_eq!(home_relative("/home/u"), None);
        assert_eq!(home_relative("/etc/x"), None);
        for f in [
            "~/.bashrc",
            "/home/u/.zshrc",
            "$HOME/.config/fish/config.fish",
            "/etc/profile",
            "/etc/profile.d/x.sh",
            "/etc/bash.bashrc",
        ] {
            assert!(startup_file(f), "{f}");
        }
        for f in ["~/.bashrc.bak", "./.bashrc", "~/.vimrc", "/etc/bashrc.d"] {
            assert!(!startup_file(f), "{f}");
        }
    }
}
