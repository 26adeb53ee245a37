"""tldr pages (pages/common, pages/linux): every example command, placeholders filled with
concrete values, labelled by the rules in tldr_rules.py."""

import re

from common import WS, Drop, hexs, number, password, pick, token

PLATFORMS = ("pages/common/", "pages/linux/")


def parse_page(text):
    """(title, description lines, [(example description, command)])."""
    title = ""
    desc = []
    examples = []
    pending = None
    for line in text.split("\n"):
        if line.startswith("# ") and not title:
            title = line[2:].strip()
        elif line.startswith("> "):
            desc.append(line[2:].strip())
        elif line.startswith("- "):
            pending = line[2:].strip()
        elif line.startswith("`") and line.rstrip().endswith("`") and len(line.rstrip()) >= 2:
            if pending is None:
                raise ValueError(f"command without a description: {line!r}")
            examples.append((pending, line.rstrip()[1:-1]))
            pending = None
    return title, desc, examples


def placeholders(cmd):
    """Splits an example into literal text and placeholders (per the tldr client specification:
    `\\{\\{` and `\\}\\}` are literal braces; for `}}}` the outer braces close)."""
    parts = []  # (is_placeholder, text)
    buf = []
    k = 0
    while k < len(cmd):
        if cmd.startswith("\\{\\{", k):
            buf.append("{{")
            k += 4
        elif cmd.startswith("\\}\\}", k):
            buf.append("}}")
            k += 4
        elif cmd.startswith("{{", k):
            end = _close(cmd, k + 2)
            if end is None:
                buf.append(cmd[k:])
                break
            if buf:
                parts.append((False, "".join(buf)))
                buf = []
            parts.append((True, cmd[k + 2: end].replace("\\{\\{", "{{").replace("\\}\\}", "}}")))
            k = end + 2
        else:
            buf.append(cmd[k])
            k += 1
    if buf:
        parts.append((False, "".join(buf)))
    return parts


def _close(cmd, start):
    depth = 0
    k = start
    while k < len(cmd):
        # Escaped braces are literal braces: they open and close like any other.
        if cmd.startswith("\\{\\{", k):
            depth += 2
            k += 4
            continue
        if cmd.startswith("\\}\\}", k):
            depth -= 2
            k += 4
            continue
        if cmd[k] == "{":
            depth += 1
        elif cmd.startswith("}}", k) and depth == 0:
            # For a run of braces, the last two close the placeholder.
            run = k
            while run < len(cmd) and cmd[run] == "}":
                run += 1
            return run - 2
        elif cmd[k] == "}":
            depth -= 1
        k += 1
    return None


# --- values ------------------------------------------------------------------------------------

USERS = ["alice", "deploy", "dev", "jenkins"]
HOSTS = ["example.com", "api.example.com", "build.example.com", "db.example.com"]
IPS = ["192.168.1.20", "10.0.0.12", "172.16.4.7", "192.168.0.105"]
PORTS = ["8080", "5432", "3000", "8443", "2222", "9000"]
PACKAGES = ["jq", "ripgrep", "htop", "curl", "git", "tmux"]
COMMANDS = ["make test", "npm test", "ls -la", "python3 app.py", "cargo build", "./run.sh"]
DIRS = ["src", "data", "build", "docs", "assets"]

# A placeholder is a credential when its last word names one (`password`, `db_password`,
# `access_token`, `client_secret`, `auth_pin`, `nt_hash`), or it is a `user:password` pair or an
# auth header. `secret_name`, `token_id`, `password_file` name something else.
SECRET = re.compile(
    r"^(?:[a-z0-9]+_)*(password|passwd|passphrase|pass|secret|token|api_?key|apikey|access_?key|"
    r"secret_?key|private_?key|pin|passcode|nt_hash|lm_hash|ntlm_hash|credentials?)_?\d?$"
)
# Inside alternatives (`pod|service|secret`) bare words are resource names, not credentials.
ALT_NOT_SECRET = {"secret", "secrets", "token", "pin", "key", "pass"}
# Per-command exceptions: what the page means is not a credential.
NOT_SECRET_IN = {"lid": {"token"}, "expose": set()}


def secret_value(word, k, cmd_word):
    w = word.lower()
    if cmd_word in ("gh", "github-label-sync", "zizmor", "tea", "gh-auth", "hub"):
        return token("github", k)
    if cmd_word in ("glab", "gitlab-runner", "gitlab"):
        return token("gitlab", k)
    if cmd_word in ("npm", "pnpm", "yarn"):
        return token("npm", k)
    if cmd_word in ("tgpt", "openai", "llm", "aichat", "sgpt", "mods"):
        return token("openai", k)
    if cmd_word == "kubeadm":
        from common import chars
        a = "abcdefghijklmnopqrstuvwxyz0123456789"
        return chars(6, a, "kt1", k) + "." + chars(16, a, "kt2", k)
    if cmd_word == "docker" and "token" in w:
        from common import chars
        a = "abcdefghijklmnopqrstuvwxyz0123456789"
        return "SWMTKN-1-" + chars(50, a, "sw1", k) + "-" + chars(25, a, "sw2", k)
    if "aws" in w and ("id" in w or w == "access_key"):
        return token("aws_id", k)
    if "aws" in w or "secret_access" in w:
        return token("aws_secret", k)
    if "hash" in w:
        return token("hex32", k)
    if w in ("pin", "auth_pin", "passcode", "one_time_password", "otp") or w.endswith("_pin"):
        return str(100000 + number("pin", k) % 900000)
    if "pass" in w:
        return password(k)
    if "private_key" in w:
        return token("hex32", k) + token("hex32", k, "2")
    from common import b62
    return b62(40, "tok", k)


def fill(content, k, notes, cmd_word="", in_alt=False, prev=""):
    """The concrete value of one placeholder. `notes` collects facts for the labeller
    ("secret" when a credential was filled in)."""
    c = content
    # Option variants `[-r|--recursive]`: pick one; they are never credentials.
    m = re.fullmatch(r"\[(.*)\]", c)
    if m and "|" in m.group(1) and " | " not in c:
        opts = [o for o in m.group(1).split("|") if o and o != "..."]
        return pick(opts, "opt", k)
    c = re.sub(
        r"\[([^\[\]]*\|[^\[\]]*)\]",
        lambda g: pick([o for o in g.group(1).split("|") if o != "..."], "inner", k, g.group(1)),
        c,
    )
    # Value alternatives `a|b|c`: pick one, then fill it as a placeholder of its own.
    if "|" in c and " | " not in c and "||" not in c and not re.search(r"^'|[()&]", c) and not in_alt:
        alts = [a for a in c.split("|") if a and a != "..."]
        if alts:
            return fill(pick(alts, "alt", k), k, notes, cmd_word, True, prev)
    # Lists: `a b ...`, `a,b,...`.
    c = re.sub(r"[;,]?\s*\.\.\.$", "", c) if re.search(r"\S[;,]?\s+\.\.\.$", c) else c
    c = re.sub(r",\.\.\.$", "", c)
    low = c.lower().strip()
    key = re.sub(r"[\s-]+", "_", low)
    # `api_key_string`, `secret_value`: the noun before the suffix decides.
    key_noun = re.sub(r"_(string|value|here)$", "", key)
    is_secret = (
        SECRET.match(key_noun)
        or key in ("your_token", "your_api_key")
        or key_noun in ("account_key", "storage_account_key", "server_key", "master_key", "auth_key", "license_key", "hex_key", "client_key_secret")
    )
    # Not credentials: names of things, pagination and idempotency tokens, type tokens, and
    # one-time codes (valid for seconds: printed, they give nothing away).
    if is_secret and (
        re.search(r"(--name|-n|--id|--label|--secrets-provider)\s*=?\s*['\"]?$", prev)
        or "_of_" in key
        or re.match(r"^(type|starting|next|page|pagination|continuation|sync|resume)_token$", key)
    ):
        is_secret = False
    if key in ("one_time_password", "otp", "totp") or (is_secret and re.search(r"--mfa-passcode\s+$", prev)):
        return str(100000 + number("otp", k) % 900000)
    if is_secret and re.search(r"--(idempotency|client)-token\s*=?\s*['\"]?$", prev):
        return hexs(8, "idem", k) + "-" + hexs(4, "i2", k) + "-" + hexs(4, "i3", k) + "-" + hexs(4, "i4", k) + "-" + hexs(12, "i5", k)
    if is_secret and not (in_alt and key in ALT_NOT_SECRET) and key not in NOT_SECRET_IN.get(cmd_word, set()):
        notes.add("secret")
        if re.search(r"(-b|--base32)\s+['\"]?$", prev):
            from common import chars
            return chars(32, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", "b32", k)
        return secret_value(key, k, cmd_word)
    m = re.fullmatch(r"(user(?:name)?|login)\s*:\s*(password|pass)", low)
    if m:
        notes.add("secret")
        return WORDS["username"](k) + ":" + password(k)
    if re.fullmatch(r"authorization:\s*bearer\s+token", low):
        notes.add("secret")
        return "Authorization: Bearer " + token("jwt", k)
    m = re.fullmatch(r"([a-z0-9-]*(api-?key|token|secret)[a-z0-9-]*)\s*:\s*(x{3,}|token|key|value|secret)", low)
    if m:
        notes.add("secret")
        return c.split(":")[0] + ":" + secret_value("token", k, cmd_word)
    if re.search(r"(^|\s)/dev/", c) or c.startswith("/dev/"):
        return " ".join(_device(w) for w in c.split(" "))
    if c.startswith("path/to") and prev.endswith("/") and not prev.endswith("//"):
        # `/{{path/to/file}}`: the page means an absolute path.
        return WS[1:] + c[len("path/to"):]
    if "path/to" in c or c.startswith("absolute/path"):
        return " ".join(_path(w, k, i) for i, w in enumerate(c.split(" ")))
    return _word(c, key, k, notes)


def _device(w):
    if not w.startswith("/dev/"):
        return w
    w = re.sub(r"^/dev/sdX[YN1]$", "/dev/sdb1", w)
    w = re.sub(r"^/dev/sdX[Z2]$", "/dev/sdb2", w)
    w = re.sub(r"^/dev/sdX$", "/dev/sdb", w)
    w = re.sub(r"^/dev/sdY$", "/dev/sdc", w)
    w = w.replace("/dev/ttyXYZ", "/dev/ttyUSB0").replace("/dev/ttyN", "/dev/tty2")
    w = re.sub(r"^/dev/(sg|nst)X$", r"/dev/\g<1>0", w)
    w = w.replace("eventX", "event3")
    if re.fullmatch(r"/dev/(device|device_name|storage_device|usb_drive|source_drive|dest_drive|drive_device|disk_device|to/block/device|optical_drive)", w):
        return {
            "/dev/source_drive": "/dev/sdb",
            "/dev/dest_drive": "/dev/sdc",
            "/dev/optical_drive": "/dev/sr0",
        }.get(w, "/dev/sdb")
    return w


def _path(w, k, i):
    """`path/to/x` → a workspace-relative path; `/path/to/x` and `absolute/path/to/x` → a path
    under the workspace; `file:///path/to/x` keeps its scheme; URLs keep their paths."""
    if re.match(r"^[a-z][a-z0-9+.-]*://[^/]", w) and not w.startswith("file://"):
        return w
    w = w.replace("absolute/path/to/", WS + "/")
    w = re.sub(r"(^|[=:@,(])/path/to/", lambda m: m.group(1) + WS + "/", w)
    w = re.sub(r"^file://path/to/", "file://" + WS + "/", w)
    d = pick(DIRS, "dir", k, str(i))
    w = re.sub(r"(^|[=:@,(])path/to/", lambda m: m.group(1) + d + "/", w)
    w = re.sub(r"(^|[=:@,(])path/to$", lambda m: m.group(1) + d, w)
    w = re.sub(r"^\./path/to/", "./" + d + "/", w)
    return w


WORDS = {
    "username": lambda k: pick(USERS, "u", k),
    "user": lambda k: pick(USERS, "u", k),
    "user_name": lambda k: pick(USERS, "u", k),
    "userid": lambda k: pick(USERS, "u", k),
    "login": lambda k: pick(USERS, "u", k),
    "owner": lambda k: pick(USERS, "u", k),
    "host": lambda k: pick(HOSTS, "h", k),
    "hostname": lambda k: pick(HOSTS, "h", k),
    "remote_host": lambda k: pick(HOSTS, "h", k),
    "server": lambda k: pick(HOSTS, "h", k),
    "server_name": lambda k: pick(HOSTS, "h", k),
    "domain": lambda k: "example.com",
    "domain_name": lambda k: "example.com",
    "ip_address": lambda k: pick(IPS, "ip", k),
    "ip": lambda k: pick(IPS, "ip", k),
    "host_ip": lambda k: pick(IPS, "ip", k),
    "server_ip": lambda k: pick(IPS, "ip", k),
    "target_ip": lambda k: pick(IPS, "ip", k),
    "ip_or_hostname": lambda k: pick(IPS, "ip", k),
    "hostname_or_ip": lambda k: pick(IPS, "ip", k),
    "address": lambda k: pick(IPS, "ip", k),
    "port": lambda k: pick(PORTS, "p", k),
    "port_number": lambda k: pick(PORTS, "p", k),
    "local_port": lambda k: pick(PORTS, "p", k),
    "remote_port": lambda k: pick(PORTS, "p", k),
    "server_port": lambda k: pick(PORTS, "p", k),
    "url": lambda k: "https://example.com/" + pick(["index.html", "api/v1/status", "data.json", "release.tar.gz"], "url", k),
    "repository_url": lambda k: "https://github.com/example-org/example-repo.git",
    "package": lambda k: pick(PACKAGES, "pkg", k),
    "package_name": lambda k: pick(PACKAGES, "pkg", k),
    "package1 package2": lambda k: " ".join(sorted({pick(PACKAGES, "pkg", k), pick(PACKAGES, "pkg2", k)})),
    "packages": lambda k: " ".join(sorted({pick(PACKAGES, "pkg", k), pick(PACKAGES, "pkg2", k)})),
    "command": lambda k: pick(COMMANDS, "cmd", k),
    "pid": lambda k: str(1000 + number_of(k) % 60000),
    "process_id": lambda k: str(1000 + number_of(k) % 60000),
    "branch_name": lambda k: pick(["feature/login", "fix/typo", "develop", "release/1.4"], "br", k),
    "branch": lambda k: pick(["feature/login", "fix/typo", "develop", "release/1.4"], "br", k),
    "remote_name": lambda k: "origin",
    "remote": lambda k: "origin",
    "commit": lambda k: hexs(7, "c", k),
    "commit_hash": lambda k: hexs(7, "c", k),
    "hash": lambda k: hexs(7, "c", k),
    "email": lambda k: "dev@example.com",
    "database_name": lambda k: "appdb",
    "database": lambda k: "appdb",
    "db_name": lambda k: "appdb",
    "dbname": lambda k: "appdb",
    "table_name": lambda k: "users",
    "table": lambda k: "users",
    "container_name": lambda k: pick(["web", "db", "redis", "api"], "ct", k),
    "container": lambda k: pick(["web", "db", "redis", "api"], "ct", k),
    "image": lambda k: pick(["nginx:1.27", "python:3.12-slim", "node:20-alpine"], "img", k),
    "image_name": lambda k: pick(["nginx", "python", "node"], "imgn", k),
    "image:tag": lambda k: pick(["nginx:1.27", "python:3.12-slim", "node:20-alpine"], "img", k),
    "service_name": lambda k: pick(["nginx", "postgresql", "docker"], "svc", k),
    "unit": lambda k: pick(["nginx.service", "postgresql.service", "docker.service"], "unit", k),
    "interface": lambda k: "eth0",
    "network_interface": lambda k: "eth0",
    "interface_name": lambda k: "eth0",
    "wireless_interface": lambda k: "wlan0",
    "process_name": lambda k: pick(["node", "python3", "nginx"], "pn", k),
    "program": lambda k: pick(["node", "python3", "make"], "prog", k),
    "group_name": lambda k: "developers",
    "group": lambda k: "developers",
    "namespace": lambda k: "staging",
    "pod_name": lambda k: "web-7d9f8c6b5-x2kqp",
    "version": lambda k: pick(["1.2.3", "2.0.1", "3.11"], "ver", k),
    "tag": lambda k: pick(["v1.2.3", "latest", "v2.0.0"], "tag", k),
    "tag_name": lambda k: pick(["v1.2.3", "v2.0.0"], "tag", k),
    "message": lambda k: "Fix typo in README",
    "region": lambda k: "us-east-1",
    "bucket_name": lambda k: "acme-build-artifacts",
    "project_name": lambda k: "my-app",
    "app_name": lambda k: "my-app",
    "project": lambda k: "my-app",
}


def number_of(k):
    return number("n", k)


def _word(c, low, k, notes):
    base = re.sub(r"_?\d+$", "", low)
    if low in WORDS:
        return WORDS[low](k)
    if low.replace("_", " ") in WORDS:
        return WORDS[low.replace("_", " ")](k)
    if base in WORDS and base not in ("ip", "port", "host"):
        return WORDS[base](k + "#" + low)
    # Anything else is already a concrete example (`example.com`, `8080`, `*.html`) or a name
    # that reads as one (`container_name`).
    return c


def render(cmd, key):
    """(command, notes) for one example; `key` seeds every choice."""
    notes = set()
    out = []
    parts = placeholders(cmd)
    first = cmd.split()[0] if cmd.split() else ""
    if first in ("sudo", "doas") and len(cmd.split()) > 1:
        first = cmd.split()[1]
    for i, (is_ph, text) in enumerate(parts):
        out.append(fill(text, f"{key}#{i}", notes, first, False, "".join(out)) if is_ph else text)
    return "".join(out), notes


def examples(git):
    """Yields (source, page title, page description, example description, command, notes)."""
    for prefix in PLATFORMS:
        for path in git.ls(prefix):
            if not path.endswith(".md"):
                continue
            title, desc, exs = parse_page(git.read(path))
            for n, (edesc, raw) in enumerate(exs, 1):
                source = f"{path}@{git.short}#{n}"
                try:
                    cmd, notes = render(raw, f"{path}#{n}")
                except Drop as d:
                    yield source, title, desc, edesc, raw, {"drop:" + d.reason}
                    continue
                yield source, title, desc, edesc, cmd, notes
