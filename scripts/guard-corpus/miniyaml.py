"""A small YAML reader, stdlib only, for the block-style YAML of GTFOBins' front matter and
Atomic Red Team's test files.

It reads block mappings and sequences (including the compact `- key: value` form), plain
scalars (also folded over several lines), single- and double-quoted scalars (with their
escapes and line folding), literal and folded block scalars (`|`, `>`, with chomping and
indentation indicators), flow sequences and mappings of scalars, and comments. Scalars stay
strings (no int/bool typing): the corpus wants the text as written. Anchors, aliases, tags and
complex keys are not supported and raise YamlError, so a file the reader cannot read is never
silently misread.
"""

import re


class YamlError(Exception):
    pass


_KEY = re.compile(r"""^(?P<key>"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s#'"\[\]{},&*!|>%@`-][^#]*?|-[^\s][^#]*?):(?:\s+|$)""")


def load(text):
    """Parses one YAML document (the first, when `---`/`...` delimit several)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    body = []
    started = False
    for line in lines:
        if line.rstrip() == "---" or line.startswith("--- "):
            if started and body:
                break
            started = True
            rest = line[4:] if line.startswith("--- ") else ""
            if rest.strip():
                body.append(rest)
            continue
        if line.rstrip() == "...":
            break
        body.append(line)
    parser = _Parser(body, text.endswith("\n") or len(body) < len(lines))
    i = parser.skip(0)
    if i >= len(parser.lines):
        return None
    value, i = parser.node(i, _indent(parser.lines[i]))
    i = parser.skip(i)
    if i < len(parser.lines):
        raise YamlError(f"unexpected content at line {i + 1}: {parser.lines[i]!r}")
    return value


def _indent(line):
    return len(line) - len(line.lstrip(" "))


def _blank_or_comment(line):
    s = line.strip()
    return s == "" or s.startswith("#")


class _Parser:
    def __init__(self, lines, final_newline=True):
        self.lines = list(lines)
        # Whether the last line of the document ends with a line break (a block scalar that
        # ends the input without one keeps no final newline).
        self.final_newline = final_newline

    def skip(self, i):
        while i < len(self.lines) and _blank_or_comment(self.lines[i]):
            i += 1
        return i

    def node(self, i, indent):
        line = self.lines[i]
        content = line[indent:]
        if content == "-" or content.startswith("- "):
            return self.sequence(i, indent)
        if _KEY.match(content):
            return self.mapping(i, indent)
        return self.scalar_lines(i, indent, indent - 1)

    def sequence(self, i, indent):
        out = []
        while True:
            i = self.skip(i)
            if i >= len(self.lines):
                break
            line = self.lines[i]
            ind = _indent(line)
            content = line[ind:]
            if ind != indent or not (content == "-" or content.startswith("- ")):
                if ind > indent:
                    raise YamlError(f"bad indentation in sequence at line {i + 1}: {line!r}")
                break
            rest = content[1:].lstrip(" ")
            if rest == "" or rest.startswith("#"):
                j = self.skip(i + 1)
                if j < len(self.lines) and _indent(self.lines[j]) > indent:
                    value, i = self.node(j, _indent(self.lines[j]))
                else:
                    value, i = None, i + 1
            else:
                col = indent + (len(content) - len(rest))
                # The item's content starts at `col`: parse it as if the dash were spaces.
                self.lines[i] = " " * col + rest
                value, i = self.node(i, col)
            out.append(value)
        return out, i

    def mapping(self, i, indent):
        out = {}
        while True:
            i = self.skip(i)
            if i >= len(self.lines):
                break
            line = self.lines[i]
            ind = _indent(line)
            if ind != indent:
                if ind > indent:
                    raise YamlError(f"bad indentation in mapping at line {i + 1}: {line!r}")
                break
            content = line[ind:]
            m = _KEY.match(content)
            if not m:
                if content == "-" or content.startswith("- "):
                    break
                raise YamlError(f"expected a key at line {i + 1}: {line!r}")
            key = self.unquote_key(m.group("key").strip())
            if key in out:
                raise YamlError(f"duplicate key {key!r} at line {i + 1}")
            rest = content[m.end():]
            value, i = self.value(i, indent, rest)
            out[key] = value
        return out, i

    @staticmethod
    def unquote_key(key):
        if key.startswith('"'):
            return _double(key[1:-1])
        if key.startswith("'"):
            return key[1:-1].replace("''", "'")
        return key

    def value(self, i, indent, rest):
        """The value of a key at `indent` whose text after `key:` on line i is `rest`."""
        stripped = rest.strip()
        if stripped == "" or stripped.startswith("#"):
            j = self.skip(i + 1)
            if j < len(self.lines):
                ind = _indent(self.lines[j])
                c = self.lines[j][ind:]
                if ind > indent or (ind == indent and (c == "-" or c.startswith("- "))):
                    return self.node(j, ind)
            return None, i + 1
        if stripped[0] in "|>":
            return self.block_scalar(i, indent, stripped)
        if stripped[0] in "&*!":
            raise YamlError(f"anchors, aliases and tags are not supported (line {i + 1})")
        col = len(self.lines[i]) - len(rest.lstrip(" "))
        self.lines[i] = " " * col + rest.lstrip(" ")
        return self.scalar_lines(i, col, indent)

    def scalar_lines(self, i, col, parent_indent):
        """A scalar starting at column `col` of line i; continuation lines must be indented
        deeper than `parent_indent`."""
        first = self.lines[i][col:]
        if first.startswith('"') or first.startswith("'"):
            return self.quoted(i, col, first[0])
        if first.startswith("[") or first.startswith("{"):
            return self.flow(i, col, parent_indent)
        parts = [_strip_comment(first).strip()]
        j = i + 1
        while j < len(self.lines):
            line = self.lines[j]
            if line.strip() == "":
                parts.append("")
                j += 1
                continue
            if _indent(line) <= parent_indent or line.lstrip().startswith("#"):
                break
            text = line.strip()
            if _KEY.match(text) and _indent(line) <= col:
                break
            parts.append(_strip_comment(text).strip())
            j += 1
        while parts and parts[-1] == "":
            parts.pop()
            j -= 0
        return _fold_plain(parts), j

    def quoted(self, i, col, quote):
        text = self.lines[i][col + 1:]
        j = i
        buf = []
        while True:
            end = _find_close(text, quote)
            if end is not None:
                buf.append(text[:end])
                after = text[end + 1:].strip()
                if after and not after.startswith("#"):
                    raise YamlError(f"text after a quoted scalar at line {j + 1}")
                break
            buf.append(text)
            j += 1
            if j >= len(self.lines):
                raise YamlError(f"unterminated quoted scalar from line {i + 1}")
            text = self.lines[j]
        raw = _fold_quoted(buf, quote)
        return (_double(raw) if quote == '"' else raw.replace("''", "'")), j + 1

    def flow(self, i, col, parent_indent):
        text = self.lines[i][col:]
        j = i
        while not _balanced(text):
            j += 1
            if j >= len(self.lines):
                raise YamlError(f"unterminated flow collection from line {i + 1}")
            text += " " + self.lines[j].strip()
        value, pos = _flow_value(text, 0)
        rest = text[pos:].strip()
        if rest and not rest.startswith("#"):
            raise YamlError(f"text after a flow collection at line {j + 1}")
        return value, j + 1

    def block_scalar(self, i, indent, header):
        h = _strip_comment(header).strip()
        m = re.fullmatch(r"([|>])([+-]?)([1-9]?)([+-]?)", h)
        if not m:
            raise YamlError(f"bad block scalar header {header!r} at line {i + 1}")
        style, chomp, explicit = m.group(1), m.group(2) or m.group(4), m.group(3)
        j = i + 1
        block_indent = indent + int(explicit) if explicit else None
        raw = []
        while j < len(self.lines):
            line = self.lines[j]
            if line.strip() == "":
                # Spaces beyond the block's indentation are content.
                keep = block_indent is not None and len(line) > block_indent
                raw.append(line[block_indent:] if keep else "")
                j += 1
                continue
            ind = _indent(line)
            if block_indent is None:
                if ind <= indent:
                    break
                block_indent = ind
            if ind < block_indent:
                break
            raw.append(line[block_indent:])
            j += 1
        # Trailing empty lines belong to the scalar only for chomping.
        content = raw
        trailing = 0
        while content and content[-1].strip(" ") == "" and not content[-1].startswith(" "):
            content = content[:-1]
            trailing += 1
        if style == "|":
            text = "\n".join(content)
        else:
            text = _fold_block(content)
        if not content:
            text = ""
            body_nl = ""
        elif j >= len(self.lines) and trailing == 0 and not self.final_newline:
            body_nl = ""
        else:
            body_nl = "\n"
        if chomp == "-":
            value = text
        elif chomp == "+":
            value = text + body_nl + "\n" * trailing
        else:
            value = text + body_nl
        # Lines consumed: stop before the first line that ended the block (blank lines at the
        # end were consumed too, harmlessly).
        return value, j


def _strip_comment(text):
    """Removes a ` #comment` from a plain scalar line."""
    m = re.search(r"(^|\s)#", text)
    return text[: m.start()] if m else text


def _fold_plain(parts):
    out = ""
    pending_newlines = 0
    for k, p in enumerate(parts):
        if p == "":
            pending_newlines += 1
            continue
        if k == 0 or out == "":
            out += p
        elif pending_newlines:
            out += "\n" * pending_newlines + p
        else:
            out += " " + p
        pending_newlines = 0
    return out


def _find_close(text, quote):
    k = 0
    while k < len(text):
        c = text[k]
        if quote == '"' and c == "\\":
            k += 2
            continue
        if c == quote:
            if quote == "'" and k + 1 < len(text) and text[k + 1] == "'":
                k += 2
                continue
            return k
        k += 1
    return None


def _fold_quoted(buf, quote):
    if len(buf) == 1:
        return buf[0]
    out = buf[0].rstrip(" \t") if not (quote == '"' and buf[0].endswith("\\")) else buf[0]
    pending = 0
    for line in buf[1:]:
        s = line.strip(" \t")
        if s == "" and line is not buf[-1]:
            pending += 1
            continue
        if quote == '"' and out.endswith("\\") and not out.endswith("\\\\"):
            out = out[:-1] + ("\n" * pending) + s
        elif pending:
            out += "\n" * pending + s
        else:
            out += " " + s
        pending = 0
    return out


_ESC = {
    "0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f",
    "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85",
    "_": "\xa0", "L": "\u2028", "P": "\u2029",
}


def _double(raw):
    out = []
    k = 0
    while k < len(raw):
        c = raw[k]
        if c != "\\":
            out.append(c)
            k += 1
            continue
        if k + 1 >= len(raw):
            raise YamlError("dangling backslash in a double-quoted scalar")
        e = raw[k + 1]
        if e in _ESC:
            out.append(_ESC[e])
            k += 2
        elif e in "xuU":
            n = {"x": 2, "u": 4, "U": 8}[e]
            hexd = raw[k + 2: k + 2 + n]
            if len(hexd) != n or not all(h in "0123456789abcdefABCDEF" for h in hexd):
                raise YamlError(f"bad escape \\{e}{hexd}")
            out.append(chr(int(hexd, 16)))
            k += 2 + n
        else:
            raise YamlError(f"unknown escape \\{e}")
    return "".join(out)


def _fold_block(lines):
    """Folding of a `>` block scalar: lines joined by spaces, blank lines kept as newlines,
    more-indented lines kept as they are."""
    out = []
    prev_kind = None  # "normal", "more", "blank"
    for line in lines:
        if line == "":
            out.append("\n")
            prev_kind = "blank" if prev_kind != "more" else "more-blank"
            continue
        more = line[0] in " \t"
        if not out:
            out.append(line)
        elif more or prev_kind in ("more", "more-blank"):
            if prev_kind == "blank" or prev_kind == "more-blank":
                out.append(line)
            else:
                out.append("\n" + line)
        elif prev_kind == "blank":
            out.append(line)
        else:
            out.append(" " + line)
        prev_kind = "more" if more else "normal"
    text = "".join(out)
    return text


def _balanced(text):
    depth = 0
    quote = None
    k = 0
    while k < len(text):
        c = text[k]
        if quote:
            if c == quote:
                if quote == "'" and text[k + 1: k + 2] == "'":
                    k += 1
                else:
                    quote = None
            elif c == "\\" and quote == '"':
                k += 1
        elif c in "'\"":
            quote = c
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
            if depth == 0:
                return True
        k += 1
    return depth == 0


def _flow_value(text, pos):
    pos = _skip_ws(text, pos)
    c = text[pos]
    if c == "[":
        items = []
        pos += 1
        while True:
            pos = _skip_ws(text, pos)
            if text[pos] == "]":
                return items, pos + 1
            item, pos = _flow_value(text, pos)
            items.append(item)
            pos = _skip_ws(text, pos)
            if text[pos] == ",":
                pos += 1
            elif text[pos] != "]":
                raise YamlError(f"bad flow sequence: {text!r}")
    if c == "{":
        out = {}
        pos += 1
        while True:
            pos = _skip_ws(text, pos)
            if text[pos] == "}":
                return out, pos + 1
            key, pos = _flow_scalar(text, pos, ":")
            pos = _skip_ws(text, pos)
            if text[pos] != ":":
                raise YamlError(f"bad flow mapping: {text!r}")
            value, pos = _flow_value(text, pos + 1)
            out[key] = value
            pos = _skip_ws(text, pos)
            if text[pos] == ",":
                pos += 1
            elif text[pos] != "}":
                raise YamlError(f"bad flow mapping: {text!r}")
    return _flow_scalar(text, pos, "")


def _skip_ws(text, pos):
    while pos < len(text) and text[pos] in " \t":
        pos += 1
    if pos >= len(text):
        raise YamlError(f"unterminated flow collection: {text!r}")
    return pos


def _flow_scalar(text, pos, extra_stop):
    c = text[pos]
    if c in "'\"":
        end = _find_close(text[pos + 1:], c)
        if end is None:
            raise YamlError(f"unterminated quoted scalar: {text!r}")
        raw = text[pos + 1: pos + 1 + end]
        value = _double(raw) if c == '"' else raw.replace("''", "'")
        return value, pos + end + 2
    k = pos
    while k < len(text) and text[k] not in ",]}" + extra_stop:
        k += 1
    return text[pos:k].strip(), k
