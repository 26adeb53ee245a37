"""Reading command strings out of JavaScript and TypeScript test files: a small lexer that knows
string literals (single, double and template quotes, with JavaScript's escapes), comments and
punctuation, and finds the calls of named functions with their arguments. Not a parser: it reads
only what the bypass corpus takes from test files (string arguments of assertion helpers,
arrays of strings, `command:` properties), and says so when an argument is not a plain literal.
Stdlib only."""

import re

_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_NUMBER = re.compile(r"\d[\d_]*(\.\d+)?")
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


class Tok:
    """A token: kind is `str` (a literal; `value` its decoded text, `parts` the names of the
    template's `${...}` interpolations in order, `None` where there is none), `id`, `punct`
    or `num`; `pos` its offset in the source and `end` the offset after it."""

    __slots__ = ("kind", "value", "pos", "end", "parts")

    def __init__(self, kind, value, pos, end, parts=None):
        self.kind, self.value, self.pos, self.end, self.parts = kind, value, pos, end, parts

    def __repr__(self):
        return f"Tok({self.kind}, {self.value!r})"


# A `${...}` interpolation stands in the decoded text as this marker and its index.
MARK = "\x00"


def normal_expr(expr):
    """An interpolated expression with its layout removed (`f(\n  a,\n)` → `f(a)`), so that
    it can be looked up whatever the formatter did to it."""
    return re.sub(r",\)", ")", re.sub(r"\s+", "", expr))


def _escape(src, k):
    """Decodes the escape at src[k] (after the backslash); returns (text, next index)."""
    c = src[k]
    if c in _SIMPLE_ESCAPES and not (c == "0" and k + 1 < len(src) and src[k + 1].isdigit()):
        return _SIMPLE_ESCAPES[c], k + 1
    if c == "x":
        return chr(int(src[k + 1: k + 3], 16)), k + 3
    if c == "u":
        if src[k + 1] == "{":
            close = src.index("}", k)
            return chr(int(src[k + 2: close], 16)), close + 1
        return chr(int(src[k + 1: k + 5], 16)), k + 5
    if c == "\r" and src[k + 1: k + 2] == "\n":
        return "", k + 2
    if c == "\n":
        return "", k + 1
    return c, k + 1


def tokens(src):
    """The tokens of a JS/TS source, comments and whitespace left out. Regular-expression
    literals are read as punctuation and identifiers (their text never holds a command here),
    except that a `/.../` after `(`, `,`, `=` or `:` is skipped whole."""
    out = []
    k = 0
    n = len(src)
    while k < n:
        c = src[k]
        if c in " \t\r\n":
            k += 1
        elif src.startswith("//", k):
            k = src.find("\n", k)
            k = n if k < 0 else k
        elif src.startswith("/*", k):
            k = src.index("*/", k + 2) + 2
        elif c in "'\"":
            start = k
            k += 1
            buf = []
            while src[k] != c:
                if src[k] == "\\":
                    text, k = _escape(src, k + 1)
                    buf.append(text)
                else:
                    buf.append(src[k])
                    k += 1
            out.append(Tok("str", "".join(buf), start, k + 1))
            k += 1
        elif c == "`":
            start = k
            k += 1
            buf, parts = [], []
            while src[k] != "`":
                if src[k] == "\\":
                    text, k = _escape(src, k + 1)
                    buf.append(text)
                elif src.startswith("${", k):
                    depth, j = 1, k + 2
                    while depth:
                        depth += {"{": 1, "}": -1}.get(src[j], 0)
                        j += 1
                    parts.append(normal_expr(src[k + 2: j - 1]))
                    buf.append(MARK + str(len(parts) - 1) + MARK)
                    k = j
                else:
                    buf.append(src[k])
                    k += 1
            out.append(Tok("str", "".join(buf), start, k + 1, parts))
            k += 1
        elif c == "/" and out and out[-1].kind == "punct" and out[-1].value in "(,=:[!&|?":
            start = k
            k += 1
            in_class = False
            while src[k] != "/" or in_class:
                if src[k] == "\\":
                    k += 1
                elif src[k] == "[":
                    in_class = True
                elif src[k] == "]":
                    in_class = False
                k += 1
            k += 1
            while k < n and src[k].isalpha():
                k += 1
            out.append(Tok("regex", src[start:k], start, k))
        else:
            m = _IDENT.match(src, k) or _NUMBER.match(src, k)
            if m:
                out.append(Tok("id" if m.group(0)[0] not in "0123456789" else "num", m.group(0), k, m.end()))
                k = m.end()
            else:
                out.append(Tok("punct", c, k, k + 1))
                k += 1
    return out


def matching(toks, i):
    """The index of the bracket closing the one at toks[i]."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    opener = toks[i].value
    depth = 0
    for j in range(i, len(toks)):
        t = toks[j]
        if t.kind != "punct":
            continue
        if t.value in pairs:
            depth += 1
        elif t.value in (")", "]", "}"):
            depth -= 1
            if depth == 0:
                if t.value != pairs[opener]:
                    raise ValueError(f"bracket at {toks[i].pos} closed by {t.value!r} at {t.pos}")
                return j
    raise ValueError(f"bracket at {toks[i].pos} is never closed")


def split_args(toks, open_i, close_i):
    """The top-level comma-separated items between the brackets at open_i and close_i, each a
    list of tokens (a trailing comma leaves no empty item)."""
    items, cur = [], []
    j = open_i + 1
    while j < close_i:
        t = toks[j]
        if t.kind == "punct" and t.value in "([{":
            end = matching(toks, j)
            cur.extend(toks[j: end + 1])
            j = end + 1
            continue
        if t.kind == "punct" and t.value == ",":
            items.append(cur)
            cur = []
        else:
            cur.append(t)
        j += 1
    if cur:
        items.append(cur)
    return items


def calls(toks, names):
    """Yields (name, index of the name token, index of `(`, index of `)`, arguments) for every
    call of one of `names` (a plain call or a method call `.name(`)."""
    for i, t in enumerate(toks[:-1]):
        if t.kind == "id" and t.value in names and toks[i + 1].kind == "punct" and toks[i + 1].value == "(":
            if i > 0 and toks[i - 1].kind == "id" and toks[i - 1].value in ("function", "def"):
                continue  # a definition, not a call
            close = matching(toks, i + 1)
            yield t.value, i, i + 1, close, split_args(toks, i + 1, close)


def literal(item):
    """The string an argument holds when it is one literal (or literals joined by `+`), else
    None. A template's interpolations stay as MARK-delimited indexes; see `fill`."""
    if not item or item[0].kind != "str":
        return None
    text = item[0].value
    parts = list(item[0].parts or [])
    j = 1
    while j < len(item):
        if item[j].kind == "punct" and item[j].value == "+" and j + 1 < len(item) and item[j + 1].kind == "str":
            nxt = item[j + 1]
            offset = len(parts)
            text += re.sub(MARK + r"(\d+)" + MARK, lambda m: MARK + str(int(m.group(1)) + offset) + MARK, nxt.value)
            parts.extend(nxt.parts or [])
            j += 2
        else:
            return None
    return text, parts


def fill(text, parts, values):
    """The literal with each interpolation replaced by values[its expression]; raises KeyError
    naming an interpolation that has no value."""
    table = {normal_expr(k): v for k, v in values.items()}

    def one(m):
        expr = parts[int(m.group(1))]
        if expr not in table:
            raise KeyError(expr)
        return table[expr]

    return re.sub(MARK + r"(\d+)" + MARK, one, text)
