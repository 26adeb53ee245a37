"""What the three corpus builders share: reading a bare git directory, deterministic choices
and values derived from SHA-256, shell-ish splitting, and the TSV format."""

import hashlib
import re
import shlex
import subprocess

# The guard's test workspace: commands run there (tests/guard_public.rs uses the same path).
WS = "/work/medin-ws/task-1"

LABELS = ("block", "flag", "allow")


class Drop(Exception):
    """A row that is left out, with the reason counted in PROVENANCE.md."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


class GitDir:
    """Reads files at HEAD of a bare git directory with one `git cat-file --batch` process."""

    def __init__(self, path):
        self.path = path
        self.commit = self.git("rev-parse", "HEAD").strip()
        self.short = self.commit[:7]
        self._batch = subprocess.Popen(
            ["git", "--git-dir", path, "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )

    def git(self, *args):
        return subprocess.run(
            ["git", "--git-dir", self.path, *args], check=True, capture_output=True, text=True
        ).stdout

    def ls(self, prefix):
        """Paths of the files under `prefix` at HEAD, sorted."""
        out = self.git("ls-tree", "-r", "--name-only", self.commit, "--", prefix)
        return sorted(p for p in out.split("\n") if p)

    def read(self, path):
        self._batch.stdin.write(f"{self.commit}:{path}\n".encode())
        self._batch.stdin.flush()
        header = self._batch.stdout.readline().decode()
        parts = header.split()
        if len(parts) != 3 or parts[1] != "blob":
            raise RuntimeError(f"{self.path}: cannot read {path}: {header.strip()}")
        size = int(parts[2])
        data = self._batch.stdout.read(size)
        self._batch.stdout.read(1)  # the newline after the object
        return data.decode("utf-8")

    def close(self):
        self._batch.stdin.close()
        self._batch.wait()


def digest(*parts):
    """SHA-256 of the parts joined by U+001F, as bytes."""
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()


def number(*parts):
    return int.from_bytes(digest(*parts)[:8], "big")


def pick(options, *parts):
    """One of `options`, chosen by the hash of `parts` (deterministic, spread evenly)."""
    return options[number(*parts) % len(options)]


_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def chars(n, alphabet, *parts):
    """`n` characters of `alphabet`, derived from the hash of `parts`."""
    out = []
    k = 0
    while len(out) < n:
        for b in digest(*parts, str(k)):
            if b < 256 - 256 % len(alphabet):
                out.append(alphabet[b % len(alphabet)])
                if len(out) == n:
                    break
        k += 1
    return "".join(out)


def b62(n, *parts):
    return chars(n, _B62, *parts)


def hexs(n, *parts):
    return chars(n, "0123456789abcdef", *parts)


def password(*parts):
    """A strong-looking password: letters, digits and one symbol that needs no shell quoting."""
    body = chars(10, "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789", "pw", *parts)
    return body[:4] + pick(["%", "_", "+", "@", "#"], "pws", *parts) + body[4:] + chars(2, "23456789", "pwd", *parts)


def token(kind, *parts):
    """A credential in a real vendor format (never a placeholder word)."""
    if kind == "github":
        return "ghp_" + b62(36, "gh", *parts)
    if kind == "gitlab":
        return "glpat-" + b62(20, "gl", *parts)
    if kind == "slack":
        return "xoxb-" + chars(12, "0123456789", "sl1", *parts) + "-" + chars(13, "0123456789", "sl2", *parts) + "-" + b62(24, "sl3", *parts)
    if kind == "aws_id":
        return "AKIA" + chars(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", "ak", *parts)
    if kind == "aws_secret":
        return b62(40, "as", *parts)
    if kind == "openai":
        return "sk-proj-" + b62(48, "oa", *parts)
    if kind == "stripe":
        return "sk_live_" + b62(24, "st", *parts)
    if kind == "npm":
        return "npm_" + b62(36, "npm", *parts)
    if kind == "hex32":
        return hexs(32, "h32", *parts)
    if kind == "jwt":
        return "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + b62(36, "jw1", *parts) + "." + b62(43, "jw2", *parts)
    raise ValueError(kind)


TOKEN_KINDS = ["github", "gitlab", "slack", "openai", "stripe", "npm"]


def split_of(command):
    """heldout when the first byte of SHA-256 of the command text (UTF-8, real newlines) is
    even, tuning when it is odd: frozen and reproducible."""
    return "heldout" if hashlib.sha256(command.encode("utf-8")).digest()[0] % 2 == 0 else "tuning"


def escape(command):
    """The command as one TSV field: backslash first (`\\` → `\\\\`), then newline → `\\n`, tab →
    `\\t`, carriage return → `\\r`."""
    return (
        command.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
    )


def unescape(field):
    out = []
    k = 0
    while k < len(field):
        c = field[k]
        if c == "\\" and k + 1 < len(field):
            out.append({"\\": "\\", "n": "\n", "t": "\t", "r": "\r"}[field[k + 1]])
            k += 2
        else:
            out.append(c)
            k += 1
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# Shell-ish reading, for labelling rules. Not a parser: it splits a line into simple commands at
# the unquoted operators and words them with shlex; what it cannot read it reports as one word.

_OPS = re.compile(r"(\|\||&&|;|\||&|\n|\$\(|`|\(|\))")


def simple_commands(line):
    """The simple commands of a line as argv lists (quotes resolved where shlex can), with
    wrappers (sudo, doas, env, nohup, time, nice, timeout, watch, xargs, exec) removed."""
    out = []
    for part in _split_ops(line):
        try:
            argv = shlex.split(part, comments=False, posix=True)
        except ValueError:
            argv = part.split()
        argv = unwrap(argv)
        if argv:
            out.append(argv)
    return out


def _split_ops(line):
    parts = []
    buf = []
    quote = None
    k = 0
    while k < len(line):
        c = line[k]
        if quote:
            buf.append(c)
            if c == quote:
                quote = None
            elif c == "\\" and quote == '"' and k + 1 < len(line):
                buf.append(line[k + 1])
                k += 1
        elif c in "'\"":
            quote = c
            buf.append(c)
        elif c == "\\" and k + 1 < len(line):
            buf.append(c + line[k + 1])
            k += 1
        else:
            m = _OPS.match(line, k)
            if m and not (c == "&" and k > 0 and line[k - 1] in "<>") and not (c == "&" and line[k + 1: k + 2] == ">"):
                parts.append("".join(buf))
                buf = []
                k = m.end()
                continue
            buf.append(c)
        k += 1
    parts.append("".join(buf))
    return [p.strip() for p in parts if p.strip()]


_WRAPPERS = {
    "sudo": {"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "--user", "--group"},
    "doas": {"-u", "-C"},
    "nohup": set(),
    "time": set(),
    "nice": {"-n"},
    "ionice": {"-c", "-n"},
    "timeout": {"-s", "-k", "--signal", "--kill-after"},
    "env": {"-u", "-C", "--unset", "--chdir"},
    "exec": set(),
    "command": set(),
    "builtin": set(),
    "stdbuf": {"-i", "-o", "-e"},
    "watch": {"-n", "--interval", "-d"},
}


def unwrap(argv):
    argv = list(argv)
    while argv:
        if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", argv[0]):
            argv = argv[1:]
            continue
        name = argv[0].rsplit("/", 1)[-1]
        if name not in _WRAPPERS:
            break
        opts = _WRAPPERS[name]
        k = 1
        while k < len(argv) and argv[k].startswith("-"):
            k += 2 if argv[k] in opts else 1
        if name == "timeout" and k < len(argv):
            k += 1  # the duration
        if name == "env":
            while k < len(argv) and "=" in argv[k]:
                k += 1
        if k >= len(argv):
            return argv  # the wrapper alone (`env`, `time`) is a command of its own
        argv = argv[k:]
    return argv


def base(word):
    return word.rsplit("/", 1)[-1]


def write_tsv(path, header_lines, rows):
    """rows: (label, split, source, command) with real newlines in the command."""
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for h in header_lines:
            f.write(("# " + h).rstrip() + "\n")
        for label, split, source, command in rows:
            for field in (label, split, source):
                if "\t" in field or "\n" in field:
                    raise ValueError(f"bad field {field!r}")
            f.write(f"{label}\t{split}\t{source}\t{escape(command)}\n")
