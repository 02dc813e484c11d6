#!/usr/bin/env python3
"""Regenerate or check the generated listings in docs/*.md.

A listing is the block between
    <!-- listing: NAME COMMAND -->
and
    <!-- /listing -->
COMMAND runs in a shell in the repository root with $PLUGIN (the pass
plugin), $OPT, $LLC and every NAME=VALUE argument set (the build passes
EMITTER_LISTING, docs/listings/emitter-listing.cpp built); its standard
output, minus assembler directives that only add noise (.cfi_*, .file,
.ident, .section .note*), becomes a fenced ```asm block. Without
--update, exit 1 if any listing differs from what its command prints now
(a hand-edited or stale listing).

usage: gen-doc-listings.py [--update] ROOT PLUGIN [OPT [LLC]] [NAME=VALUE]..."""
import glob
import os
import re
import subprocess
import sys

BLOCK = re.compile(r"(<!-- listing: (\S+) (.*?) -->\n)(.*?)(<!-- /listing -->)",
                   re.S)
NOISE = re.compile(r'^\s*\.(cfi_\S+|file|ident|section\s+"?\.note\S*|addrsig\S*)\b')


def render(cmd, env, root):
    out = subprocess.run(cmd, shell=True, cwd=root, env=env, check=True,
                         stdout=subprocess.PIPE, universal_newlines=True).stdout
    lines = [l.rstrip() for l in out.splitlines() if not NOISE.match(l)]
    return "```asm\n" + "\n".join(lines) + "\n```\n"


def main(argv):
    update = "--update" in argv
    extra = dict(a.split("=", 1) for a in argv if "=" in a)
    args = [a for a in argv if a != "--update" and "=" not in a]
    if len(args) < 2:
        print(__doc__)
        return 2
    root = os.path.abspath(args[0])
    env = dict(os.environ, PLUGIN=os.path.abspath(args[1]),
               OPT=args[2] if len(args) > 2 else "opt-19",
               LLC=args[3] if len(args) > 3 else "llc-19", **extra)
    stale = 0
    for md in sorted(glob.glob(os.path.join(root, "docs", "*.md"))):
        text = open(md, encoding="utf-8").read()

        def replace(m):
            nonlocal stale
            fresh = render(m.group(3), env, root)
            if fresh != m.group(4):
                stale += 1
                print("%s: listing %s is stale" %
                      (os.path.relpath(md, root), m.group(2)))
            return m.group(1) + fresh + m.group(5)

        new = BLOCK.sub(replace, text)
        if update and new != text:
            open(md, "w", encoding="utf-8").write(new)
    if stale and not update:
        print("%d stale listing(s); run scripts/gen-doc-listings.py --update"
              % stale)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
