#!/usr/bin/env python3
"""Runs the pass fuzzer for a fixed time and says what it covered.

libFuzzer first runs every input of the corpus once, then fuzzes for
--seconds. New inputs that add coverage go to <work>/corpus-found (kept
between runs), a crashing input to <work>/artifacts/. Prints libFuzzer's
seed and its coverage (cov: edges, ft: features, corp: inputs) after the
corpus pass and at the end, and how many functions of lib/Passes ran.
Exits with libFuzzer's status: non-zero on a crash, a sanitizer report,
a timeout or a broken contract.
"""

import argparse
import os
import pathlib
import re
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fuzzer", required=True)
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--work", required=True)
    ap.add_argument("--dict", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--symbolizer")
    ap.add_argument("extra", nargs="*", help="more libFuzzer options")
    args = ap.parse_args()

    work = pathlib.Path(args.work)
    found = work / "corpus-found"
    artifacts = work / "artifacts"
    found.mkdir(parents=True, exist_ok=True)
    artifacts.mkdir(parents=True, exist_ok=True)
    log = work / "pass-fuzz.log"

    env = dict(os.environ)
    if args.symbolizer and os.path.exists(args.symbolizer):
        env.setdefault("ASAN_SYMBOLIZER_PATH", args.symbolizer)
    cmd = [
        args.fuzzer, str(found), args.corpus,
        f"-max_total_time={args.seconds}",
        f"-dict={args.dict}",
        f"-artifact_prefix={artifacts}/",
        "-timeout=30",
        "-print_final_stats=1",
        "-print_coverage=1",
    ] + args.extra
    print(" ".join(cmd), flush=True)
    with open(log, "w") as out:
        status = subprocess.call(cmd, stdout=out, stderr=subprocess.STDOUT,
                                 env=env)
    text = log.read_text(errors="replace")
    lines = text.splitlines()

    for line in lines:
        if line.startswith("INFO: Seed:") or re.search(r"\b(INITED|DONE)\b", line) or \
                " DONE " in line or line.startswith("stat::"):
            print(line)
    funcs = {}
    pattern = re.compile(r"^(UN)?COVERED_FUNC: hits: \d+ edges: (\d+)/(\d+) "
                         r"(.+) (\S+):\d+$")
    for line in lines:
        m = pattern.match(line)
        if m and "/lib/Passes/" in m.group(5):
            key = (m.group(4), m.group(5))
            funcs[key] = (m.group(1) is None, int(m.group(2)), int(m.group(3)))
    if funcs:
        covered = sum(1 for c, _, _ in funcs.values() if c)
        edges = sum(e for _, e, _ in funcs.values())
        total = sum(t for _, _, t in funcs.values())
        print(f"lib/Passes: {covered} of {len(funcs)} functions and "
              f"{edges} of {total} edges covered")
    found_now = sum(1 for _ in found.iterdir())
    print(f"inputs found so far (kept in {found}): {found_now}")

    if status != 0:
        print("\n".join(l for l in lines if "COVERED_" not in l and
                        "UNCOVERED_PC" not in l)[-12000:])
        written = [l for l in lines if "Test unit written to" in l]
        print(f"pass fuzzer failed with status {status}; " +
              (written[-1] if written else f"see {log}"))
    sys.exit(status)


if __name__ == "__main__":
    main()
