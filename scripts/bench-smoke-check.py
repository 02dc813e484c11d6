#!/usr/bin/env python3
"""Smoke check of jitlock-bench's JSON output (the CTest `bench` label).

    bench-smoke-check.py --bench build/default/tools/jitlock-bench/jitlock-bench
    bench-smoke-check.py results.json          # or - for stdin

With --bench it runs every benchmark for a minimal time
(--benchmark_min_time=0.01 --benchmark_format=json, and two repetitions of
each contended shape instead of ten) and checks the output;
otherwise it checks JSON that jitlock-bench wrote. It checks that

  * every expected benchmark reported, without an error;
  * every ns_per_pair is finite and > 0;
  * every run ends with no monitor alive (monitors_alive == 0): above all
    churn, where the heavy path creates a monitor per object and the "GC"
    must drop them all;
  * churn/heavy and inflate-churn/<storage> really inflated every object,
    and the lightweight churn paths never inflated one;
  * the safepoint benchmarks (poll/*, ttsp/N, handshake/one|all/N) have
    their counters, finite and > 0: ns_per_iter for poll/*, the median and
    p99 latencies otherwise, with the median no larger than the p99;
  * deopt/restore/N has a finite positive ns_per_deopt, no monitor alive at
    the end, and no inflation while the N monitors fit the lock stack.
  * handoff/llvm and handoff/reserved are checked as the shapes, and
    revoke/held and revoke/unheld have their latencies, as above;
  * philosophers/<storage> has pairs_per_s and peak_rss_mib finite and > 0,
    and no monitor alive after the run; inflated-index/* and
    inflated-table/* are checked as the other shapes.

Exit status 0 when all hold, 1 otherwise.
"""

import argparse
import json
import math
import subprocess
import sys

from benchjson import canonical_name

SHAPE_PATHS = {
    "simple": ["llvm", "asmjit", "runtime", "heavy", "pthread", "reserved",
               "reserved-asmjit"],
    "recursive": ["llvm", "asmjit", "runtime", "heavy", "reserved",
                  "reserved-asmjit"],
    "serial": ["llvm", "asmjit", "runtime", "heavy", "reserved",
               "reserved-asmjit"],
    "inflated": ["llvm", "asmjit", "runtime"],
    # The inflated monitor under index and table monitor storage.
    "inflated-index": ["llvm", "asmjit", "runtime"],
    "inflated-table": ["llvm", "asmjit", "runtime"],
    "churn": ["llvm", "asmjit", "runtime", "heavy", "pthread", "alloc",
              "reserved", "reserved-asmjit"],
    "contended2": ["llvm", "asmjit", "runtime", "heavy", "pthread"],
    "contended4": ["llvm", "asmjit", "runtime", "heavy", "pthread"],
    "contended8": ["llvm", "asmjit", "runtime", "heavy", "pthread"],
    "elided": ["llvm", "llvm-noelide"],
}
LOCKING = ["floor", "floor/lockstack", "floor/cas-store"] + [
    f"{shape}/{path}" for shape, paths in SHAPE_PATHS.items() for path in paths
]
# Threads inflating heavy monitors at once, under each storage: checked as
# the shapes, and each pair must inflate as in churn/heavy.
INFLATE_CHURN = [f"inflate-churn/{storage}"
                 for storage in ("pointer", "index", "table")]
LOCKING += INFLATE_CHURN

# Safepoints: benchmark name -> the counters it must report.
LOOPERS = [1, 2, 4, 8]
SAFEPOINT_COUNTERS = {
    **{f"poll/{p}": ["ns_per_iter"] for p in ("none", "llvm", "unrolled")},
    **{f"ttsp/{n}": ["ttsp_median_us", "ttsp_p99_us",
                     "stop_release_median_us", "stop_release_p99_us"]
       for n in LOOPERS},
    **{f"handshake/{kind}/{n}": ["handshake_median_us", "handshake_p99_us"]
       for kind in ("one", "all") for n in LOOPERS},
}
# Concurrent deflation: deflation/<monitors>/<mutators>; the pause counters
# exist only with mutators.
DEFLATION_COUNTERS = {
    f"deflation/{monitors}/{mutators}":
        ["monitors_per_s", "cycle_median_us", "cycle_p99_us"]
        + (["pause_median_us", "pause_p99_us"] if mutators else [])
    for monitors, mutators in ((64, 2), (1024, 0), (1024, 1), (1024, 2),
                               (1024, 4), (16384, 0), (16384, 2))
}
SAFEPOINT_COUNTERS.update(DEFLATION_COUNTERS)
# Deopt with lock restoration: deopt/restore/<monitors>; nothing inflates
# while the lock stack holds every monitor.
DEOPT_MONITORS = [1, 4, 9]
DEOPT = [f"deopt/restore/{n}" for n in DEOPT_MONITORS]
# Many monitors under each storage, with the deflation thread on:
# philosophers/<storage>; every monitor deflated after the run.
PHILOSOPHERS_COUNTERS = {
    f"philosophers/{storage}": ["pairs_per_s", "peak_rss_mib"]
    for storage in ("pointer", "index", "table")
}
SAFEPOINT_COUNTERS.update(PHILOSOPHERS_COUNTERS)
# Lock reservation: handoff/<path> is checked as the shapes (every revocation
# is checked by the run itself); revoke/held|unheld has its latencies.
LOCKING += ["handoff/llvm", "handoff/reserved"]
SAFEPOINT_COUNTERS.update({
    f"revoke/{held}": ["revoke_median_ns", "revoke_p99_ns",
                       "enter_median_ns", "enter_p99_ns"]
    for held in ("held", "unheld")
})
EXPECTED = LOCKING + list(SAFEPOINT_COUNTERS) + DEOPT


def positive(value):
    return (isinstance(value, (int, float)) and math.isfinite(value)
            and value > 0)


def check_safepoint_run(name, run):
    problems = []
    for counter in SAFEPOINT_COUNTERS[name]:
        if not positive(run.get(counter)):
            problems.append(f"{name}: {counter} is {run.get(counter)!r}")
    for counter in SAFEPOINT_COUNTERS[name]:
        if counter.endswith(("_median_us", "_median_ns")):
            p99 = counter.replace("_median_", "_p99_")
            med, high = run.get(counter), run.get(p99)
            if positive(med) and positive(high) and med > high:
                problems.append(f"{name}: {counter} {med} > {p99} {high}")
    return problems


def check_deopt_run(name, run):
    problems = []
    if not positive(run.get("ns_per_deopt")):
        problems.append(f"{name}: ns_per_deopt is {run.get('ns_per_deopt')!r}")
    if run.get("monitors_alive") != 0:
        problems.append(f"{name}: {run.get('monitors_alive')!r} monitors "
                        "alive after the run")
    monitors = int(name.rsplit("/", 1)[1])
    inflations = run.get("inflations_per_deopt")
    if monitors <= 8 and inflations:
        problems.append(f"{name}: inflations_per_deopt is {inflations!r}: "
                        "the lock stack holds every restored monitor")
    return problems


def check(doc):
    problems = []
    seen = {}
    for run in doc.get("benchmarks", []):
        if run.get("run_type", "iteration") != "iteration":
            continue
        seen.setdefault(canonical_name(run), []).append(run)

    for name in EXPECTED:
        runs = seen.get(name)
        if not runs:
            problems.append(f"{name}: did not report")
            continue
        for run in runs:
            if run.get("error_occurred"):
                problems.append(f"{name}: error: {run.get('error_message')}")
                continue
            if ((name in DEFLATION_COUNTERS or name in PHILOSOPHERS_COUNTERS)
                    and run.get("monitors_alive") != 0):
                problems.append(f"{name}: {run.get('monitors_alive')!r} "
                                "monitors alive after the run")
            if name in SAFEPOINT_COUNTERS:
                problems += check_safepoint_run(name, run)
                continue
            if name in DEOPT:
                problems += check_deopt_run(name, run)
                continue
            ns = run.get("ns_per_pair")
            if not positive(ns):
                problems.append(f"{name}: ns_per_pair is {ns!r}")
            alive = run.get("monitors_alive")
            if alive is None:
                problems.append(f"{name}: no monitors_alive counter")
            elif alive != 0:
                problems.append(f"{name}: {alive:g} monitors alive at the end")
            inflations = run.get("inflations_per_pair")
            if ((name == "churn/heavy" or name in INFLATE_CHURN)
                    and not (inflations and inflations >= 0.99)):
                problems.append(
                    f"{name}: inflations_per_pair is {inflations!r}: the heavy "
                    "path must inflate every object"
                )
            if name in ("churn/llvm", "churn/asmjit", "churn/runtime",
                        "churn/reserved", "churn/reserved-asmjit") and inflations:
                problems.append(
                    f"{name}: inflations_per_pair is {inflations!r}: "
                    "lightweight locking must not inflate single-threaded"
                )
    for name in sorted(set(seen) - set(EXPECTED)):
        problems.append(f"{name}: unexpected benchmark")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json", nargs="?", help="jitlock-bench JSON output, or -")
    ap.add_argument("--bench", help="run this jitlock-bench binary first")
    ap.add_argument("--min-time", default="0.01", help="--benchmark_min_time")
    ap.add_argument("--contended-repetitions", default="2",
                    help="--jitlock-contended-repetitions")
    args = ap.parse_args()

    if args.bench:
        cmd = [
            args.bench,
            f"--benchmark_min_time={args.min_time}",
            f"--jitlock-contended-repetitions={args.contended_repetitions}",
            "--benchmark_format=json",
        ]
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
        if proc.returncode != 0:
            print(f"FAIL: {' '.join(cmd)} exited with {proc.returncode}")
            return 1
        text = proc.stdout
    elif args.json in (None, "-"):
        text = sys.stdin.read()
    else:
        with open(args.json) as f:
            text = f.read()

    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        print(f"FAIL: the output is not JSON: {e}")
        return 1
    problems = check(doc)
    for p in problems:
        print(f"FAIL: {p}")
    if problems:
        return 1
    print(f"OK: {len(EXPECTED)} benchmarks; every ns_per_pair finite and "
          "positive, no monitor alive at the end; every safepoint counter "
          "finite and positive")
    return 0


if __name__ == "__main__":
    sys.exit(main())
