"""A readable development set for the guard: the tldr pages of the platforms `tldr.tsv` leaves
out (osx, freebsd, openbsd, netbsd, sunos, android by default), filled and labelled by the same
code as `tldr.tsv` (tldr.py, tldr_rules.py), without any command already in public/*.tsv. Unlike
the held-out half it may be read and tuned on; it is not committed and not a measure.

Usage: python3 devset.py TLDR_GIT_DIR [PLATFORM,PLATFORM..] > dev.tsv
Rows: `label:source:rules<TAB>command` (command escaped as in public/*.tsv), the format the
guard's scratch judges read (`label<TAB>command`).
"""

import glob
import os
import sys

import tldr
import tldr_rules
from common import Drop, GitDir, escape

HERE = os.path.dirname(os.path.abspath(__file__))
PUBLIC = os.path.join(HERE, "..", "..", "tests", "data", "guard", "public")


def unescape(field):
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and i + 1 < len(field):
            out.append({"n": "\n", "t": "\t", "r": "\r", "\\": "\\"}.get(field[i + 1], field[i + 1]))
            i += 2
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    platforms = (sys.argv[2] if len(sys.argv) > 2 else "osx,freebsd,openbsd,netbsd,sunos,android").split(",")
    seen = set()
    for path in glob.glob(os.path.join(PUBLIC, "*.tsv")):
        with open(path, encoding="utf-8") as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if not line.startswith("#") and len(parts) >= 4:
                    seen.add(unescape(parts[3]))
    tldr.PLATFORMS = tuple(f"pages/{p}/" for p in platforms)
    for source, title, desc, edesc, cmd, notes in tldr.examples(GitDir(sys.argv[1])):
        try:
            label, hits = tldr_rules.label(cmd, title, desc, edesc, notes)
        except Drop:
            continue
        if not cmd.strip() or cmd in seen:
            continue
        seen.add(cmd)
        print(f"{label}:{source.split('@')[0]}:{'|'.join(hits)}\t{escape(cmd)}")


if __name__ == "__main__":
    main()
