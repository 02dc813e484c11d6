#!/usr/bin/env python3
"""Check that every relative link in README.md and docs/*.md names an
existing file and, when it has a #fragment, an existing heading anchor.

Anchors follow GitHub's rule: lowercase, drop punctuation except '-' and
'_', spaces become '-', repeated headings get -1, -2, ... suffixes.
Exit status 1 and one line per broken link when any is broken."""
import glob
import os
import re
import sys

LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")


def anchors(path):
    seen = {}
    result = set()
    in_fence = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if FENCE.match(line):
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            m = HEADING.match(line)
            if not m:
                for a in re.findall(r'<a\s+(?:name|id)="([^"]+)"', line):
                    result.add(a)
                continue
            text = re.sub(r"`|\*|\[|\]\([^)]*\)|\]", "", m.group(2)).strip()
            slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            result.add(slug if n == 0 else "%s-%d" % (slug, n))
    return result


def links(path):
    in_fence = False
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if FENCE.match(line):
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            line = re.sub(r"`[^`]*`", "", line)
            for target in LINK.findall(line):
                yield lineno, target


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..")
    files = [os.path.join(root, "README.md")] + sorted(
        glob.glob(os.path.join(root, "docs", "*.md")))
    cache = {}
    broken = 0
    for md in files:
        for lineno, target in links(md):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # http:, https:, mailto:
            file_part, _, fragment = target.partition("#")
            dest = os.path.normpath(
                os.path.join(os.path.dirname(md), file_part)) if file_part else md
            where = "%s:%d: %s" % (os.path.relpath(md, root), lineno, target)
            if not os.path.exists(dest):
                print("%s: no such file" % where)
                broken += 1
                continue
            if fragment and dest.endswith(".md"):
                if dest not in cache:
                    cache[dest] = anchors(dest)
                if fragment not in cache[dest]:
                    print("%s: no such anchor" % where)
                    broken += 1
    if broken:
        print("%d broken relative link(s)" % broken)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
