#!/usr/bin/env python3
"""Instructions per loop iteration of jitlock-bench's poll kernels, counted
with callgrind.

    scripts/poll-instructions.py --bench build/default/tools/jitlock-bench/jitlock-bench
    scripts/poll-instructions.py --bench ... --update docs/benchmarks.md

For each kernel (poll/none, poll/llvm, poll/unrolled) it runs

    valgrind --tool=callgrind jitlock-bench --jitlock-poll-loop=<path>:<n>

for two iteration counts n1 < n2. That run JIT-compiles shapes.ll and calls
the kernel once, and everything but the loop is the same for both counts, so
the loop costs (Ir(n2) - Ir(n1)) / (n2 - n1) instructions per iteration.
The poll's cost is poll/llvm's figure minus poll/none's; the target is at
most 2 instructions.

valgrind 3.19 cannot read clang 19's DWARF 5, so the script runs a copy of
the binary stripped of debug info. The markdown table goes to stdout, or
with --update into the part of FILE between

    <!-- poll-instructions:begin -->
    <!-- poll-instructions:end -->
"""

import argparse
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile

from benchjson import replace_marked

PATHS = ["none", "llvm", "unrolled"]
TARGET = 2.0


def instructions(binary, path, n, workdir):
    """Ir of one run of the poll loop under callgrind."""
    out = os.path.join(workdir, f"callgrind.{path}.{n}")
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
           binary, f"--jitlock-poll-loop={path}:{n}"]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)
    if proc.returncode != 0:
        raise SystemExit(f"poll-instructions: {' '.join(cmd)} failed:\n"
                         + proc.stderr[-2000:])
    with open(out) as f:
        for line in f:
            m = re.match(r"(summary|totals):\s*(\d+)", line)
            if m:
                return int(m.group(2))
    raise SystemExit(f"poll-instructions: no instruction total in {out}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench", required=True, help="the jitlock-bench binary")
    ap.add_argument("--counts", default="1000000,11000000",
                    help="the two iteration counts n1,n2")
    ap.add_argument("--update", help="replace the marked part of this file")
    args = ap.parse_args()
    try:
        n1, n2 = (int(x) for x in args.counts.split(","))
    except ValueError:
        raise SystemExit("poll-instructions: --counts wants n1,n2")
    if not 0 <= n1 < n2:
        raise SystemExit("poll-instructions: --counts wants 0 <= n1 < n2")
    if not shutil.which("valgrind"):
        raise SystemExit("poll-instructions: needs valgrind "
                         "(Debian: apt-get install valgrind)")

    with tempfile.TemporaryDirectory(prefix="poll-instructions.") as work:
        binary = os.path.join(work, "jitlock-bench")
        shutil.copy(args.bench, binary)
        subprocess.run(["strip", "-g", binary], check=True)
        ir = {}
        for path in PATHS:
            ir[path] = [instructions(binary, path, n, work) for n in (n1, n2)]
            print(f"poll/{path}: Ir {ir[path][0]} at n={n1}, {ir[path][1]} "
                  f"at n={n2}", file=sys.stderr)

    per = {p: (b - a) / (n2 - n1) for p, (a, b) in ir.items()}
    extra = per["llvm"] - per["none"]
    lines = [
        f"Instructions per loop iteration, from callgrind on "
        f"{platform.machine()} ({valgrind_version()}): "
        f"(Ir(n2) - Ir(n1)) / (n2 - n1), n1 = {n1:,}, n2 = {n2:,}.",
        "",
        "| kernel | Ir, n1 | Ir, n2 | per iteration | over poll/none |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for p in PATHS:
        a, b = ir[p]
        over = "" if p == "none" else f"{per[p] - per['none']:+.2f}"
        lines.append(f"| poll/{p} | {a:,} | {b:,} | {per[p]:.2f} | {over} |")
    # The totals vary by a few hundred instructions from run to run (the
    # JIT's own work), a few 1e-5 per iteration: judge the figure as shown.
    verdict = "met" if round(extra, 2) <= TARGET else "**missed**"
    lines += [
        "",
        f"The poll adds **{extra:.2f}** instructions per iteration "
        f"(target: at most {TARGET:g}): {verdict}.",
        "",
    ]
    md = "\n".join(lines)
    if args.update:
        err = replace_marked(args.update, "poll-instructions", md)
        if err:
            raise SystemExit(f"poll-instructions: {err}")
    else:
        sys.stdout.write(md)
    return 0


def valgrind_version():
    proc = subprocess.run(["valgrind", "--version"], stdout=subprocess.PIPE,
                          text=True)
    return proc.stdout.strip() or "valgrind"


if __name__ == "__main__":
    sys.exit(main())
