#!/usr/bin/env python3
"""Turns jitlock-bench JSON into a markdown table and a PNG plot.

    jitlock-bench --benchmark_repetitions=3 --benchmark_format=json > bench.json
    scripts/bench-report.py bench.json --png docs/benchmarks.png \\
        --update docs/benchmarks.md

Each benchmark's value is the median of its repetitions' ns_per_pair (the
iteration runs when the JSON has them, else the `median` aggregate). The
markdown has the machine, a shape x path table of ns per pair, the same as
ratios to the floor, the locking targets with met/missed, and every run's
spread. Without --update it goes to stdout (or --markdown FILE); with
--update it replaces the part of FILE between the markers

    <!-- bench-report:begin -->
    <!-- bench-report:end -->

The contended shapes (contended2, contended4, contended8; each always run
with repetitions) get a part of their own: per path, the median and the
interquartile range of ns_per_pair over the repetitions, the ratio to
pthread, the runs' parallelism and contention, and the contention targets.
--update puts it between

    <!-- bench-report:contention:begin -->
    <!-- bench-report:contention:end -->

With --baseline (the JSON of the build before a change, run alternately
with this one: scripts/bench-compare.sh) a part compares every benchmark
both have, before and after, against a 3% limit. --update puts it between

    <!-- bench-report:compare:begin -->
    <!-- bench-report:compare:end -->

The safepoint benchmarks (poll/*, ttsp/N, handshake/one|all/N) get a part of
their own: ns per loop iteration with and without a poll, and the median and
p99 latencies of safepoints and handshakes (each the median over the
repetitions, with their range), with the time-to-safepoint target. --update
puts it between

    <!-- bench-report:safepoints:begin -->
    <!-- bench-report:safepoints:end -->

Each part is written only when the JSON has its benchmarks, so a run of the
safepoint benchmarks alone (--benchmark_filter='^(poll|ttsp|handshake)/'),
or of the contended shapes alone, leaves the other results as they are; the
main part needs a full run (one with the floor).
Several JSON files (e.g. alternate runs) are merged into one set of
repetitions.

The plot has one bar group per shape, the paths side by side, and the floor
as a horizontal line.
"""

import argparse
import json
import statistics
import sys

from benchjson import canonical_name, ensure_matplotlib, fmt, replace_marked

CONTENDED = ["contended2", "contended4", "contended8"]
SHAPES = ["simple", "recursive", "serial", "inflated", "churn"] + CONTENDED
CONTENDED_PATHS = ["llvm", "asmjit", "runtime", "heavy", "pthread"]
# How much slower (after / before - 1) a change may make any benchmark in a
# --baseline comparison.
CHANGE_LIMIT = 0.03
PATHS = ["llvm", "asmjit", "runtime", "heavy", "pthread", "alloc"]
LOOPERS = [1, 2, 4, 8]
POLL_PATHS = ["none", "llvm", "unrolled"]
# Median time-to-safepoint for this many looping threads, in µs.
TTSP_TARGET = (2, 20.0)

# (label, numerator, denominator, limit, kind): "le" means
# numerator / denominator <= limit; "ge" means >= limit.
TARGETS = [
    ("simple/llvm <= 1.05x floor", "simple/llvm", "floor", 1.05, "le"),
    ("simple/asmjit <= 1.05x floor", "simple/asmjit", "floor", 1.05, "le"),
    ("recursive/llvm <= 1.15x floor", "recursive/llvm", "floor", 1.15, "le"),
    ("serial/llvm <= 2.1x floor", "serial/llvm", "floor", 2.1, "le"),
    ("inflated/llvm <= 1.2x floor", "inflated/llvm", "floor", 1.2, "le"),
    ("inflated/llvm <= 1.15x floor/cas-store", "inflated/llvm",
     "floor/cas-store", 1.15, "le"),
    ("inflated/asmjit <= 1.15x floor/cas-store", "inflated/asmjit",
     "floor/cas-store", 1.15, "le"),
    ("simple/runtime <= 1.5x floor", "simple/runtime", "floor", 1.5, "le"),
    ("churn/llvm >= 5x faster than churn/heavy", "churn/heavy", "churn/llvm",
     5.0, "ge"),
]
# The contention part's targets, in the same form.
CONTENTION_TARGETS = [
    (f"{c}/llvm <= {c}/pthread", f"{c}/llvm", f"{c}/pthread", 1.0, "le")
    for c in CONTENDED
] + [("contended2/llvm <= 0.5x contended2/pthread", "contended2/llvm",
      "contended2/pthread", 0.5, "le")]



def collect(doc):
    """name -> (median ns_per_pair, every repetition's), the median
    repetition's other counters (monitors_alive: the worst repetition's), and
    the iteration runs themselves."""
    runs, medians = {}, {}
    for run in doc.get("benchmarks", []):
        if run.get("error_occurred") or "ns_per_pair" not in run:
            continue
        name = canonical_name(run)
        kind = run.get("run_type", "iteration")
        if kind == "iteration":
            runs.setdefault(name, []).append(run)
        elif run.get("aggregate_name") == "median":
            medians[name] = run["ns_per_pair"]
    values, extra = {}, {}
    for name, rs in runs.items():
        ns = [r["ns_per_pair"] for r in rs]
        values[name] = (statistics.median(ns), ns)
        mid = sorted(rs, key=lambda r: r["ns_per_pair"])[(len(rs) - 1) // 2]
        e = {k: mid[k] for k in ("inflations_per_pair", "contended_per_pair",
                                 "parks_per_pair") if k in mid}
        alive = [r["monitors_alive"] for r in rs if "monitors_alive" in r]
        if alive:
            e["monitors_alive"] = max(alive)
        extra[name] = e
    for name, m in medians.items():
        values.setdefault(name, (m, [m]))
    return values, extra, runs


def parallelism(run):
    """CPU time over real time of a multi-threaded run: 1 when the threads
    took turns on one CPU, N when N of them ran in parallel throughout."""
    real = run.get("real_time")
    return run["cpu_time"] / real if real else float("nan")


def quartiles(xs):
    """(first quartile, median, third quartile) of `xs`."""
    if len(xs) == 1:
        return xs[0], xs[0], xs[0]
    q1, q2, q3 = statistics.quantiles(xs, n=4, method="inclusive")
    return q1, q2, q3


def target_table(targets, val, runs):
    """The markdown rows of `targets` (see TARGETS) against the medians."""
    out = ["| target | measured | met? |", "| --- | ---: | --- |"]
    for label, num, den, limit, kind in targets:
        a, b = val.get(num), val.get(den)
        if a is None or b is None or b == 0:
            out.append(f"| {label} | - | not measured |")
            continue
        ratio = a / b
        met = ratio <= limit if kind == "le" else ratio >= limit
        # Three decimals, so that a ratio just over a limit does not print
        # as the limit itself.
        shown = f"{ratio:.3f}x" if kind == "le" else f"{ratio:.2f}x faster"
        verdict = "met" if met else "**missed**"
        # A two-thread result says nothing about contention unless the
        # threads ran at the same time.
        if num.startswith("contended2/"):
            par = [statistics.median(parallelism(r) for r in runs[n])
                   for n in (num, den) if runs.get(n)]
            if par and min(par) < 1.5:
                verdict += (" (but the threads mostly took turns on one CPU, "
                            f"parallelism {min(par):.2f}: not a contention "
                            "result)")
        out.append(f"| {label} | {shown} | {verdict} |")
    out.append("")
    return out


def markdown_contention(doc, values, runs):
    """The contention part: contendedN per path with median and IQR, the
    ratios to pthread, how the contention went, and the targets."""
    val = {k: v[0] for k, v in values.items()}
    out = machine_lines(doc.get("context", {})) + [""]
    out += ["ns per pair per thread (real time), median over the repetitions "
           "with the interquartile range (first to third quartile) in "
           "parentheses, and the IQR as a share of the median (*spread*: "
           "how stable the figure is; lower is better).", ""]
    out.append("| path | " + " | ".join(CONTENDED) + " | spread ("
               + ", ".join(c.removeprefix("contended") for c in CONTENDED)
               + ") | reps |")
    out.append("| --- |" + " ---: |" * len(CONTENDED) + " ---: | ---: |")
    for p in CONTENDED_PATHS:
        cells, spreads, reps = [], [], []
        for c in CONTENDED:
            rs = runs.get(f"{c}/{p}")
            if not rs:
                cells.append("-")
                spreads.append("-")
                continue
            q1, med, q3 = quartiles([r["ns_per_pair"] for r in rs])
            cells.append(f"{fmt(med)} ({fmt(q1)}-{fmt(q3)})")
            spreads.append(f"{100 * (q3 - q1) / med:.0f}%" if med else "-")
            reps.append(len(rs))
        if not reps:
            continue
        out.append(f"| {p} | " + " | ".join(cells) + " | "
                   + ", ".join(spreads) + f" | {min(reps)} |")
    out.append("")

    out.append("The same as ratios to pthread's median (lower is better):")
    out.append("")
    out.append("| path | " + " | ".join(c + " / pthread" for c in CONTENDED)
               + " |")
    out.append("| --- |" + " ---: |" * len(CONTENDED))
    for p in CONTENDED_PATHS[:-1]:
        cells = []
        for c in CONTENDED:
            a, b = val.get(f"{c}/{p}"), val.get(f"{c}/pthread")
            cells.append(f"{a / b:.2f}x" if a and b else "-")
        if any(x != "-" for x in cells):
            out.append(f"| {p} | " + " | ".join(cells) + " |")
    out.append("")

    out.append("How the contention went, medians over the repetitions. "
               "*Parallelism* is CPU time over real time: 1.0 when the "
               "threads took turns on one CPU (no contention is possible "
               "then), up to the core count when they ran in parallel "
               "throughout. *Contended* is the share of enters that found "
               "another thread owning the lock, *parked* the share that "
               "parked (the runtime's counts; pthread has none).")
    out.append("")
    out.append("| benchmark | parallelism | contended | parked |")
    out.append("| --- | ---: | ---: | ---: |")
    for c in CONTENDED:
        for p in CONTENDED_PATHS:
            rs = runs.get(f"{c}/{p}")
            if not rs:
                continue

            def share(key):
                xs = [r[key] for r in rs if key in r]
                return (f"{100 * statistics.median(xs):.2g}%" if xs
                        else "-")

            par = statistics.median(parallelism(r) for r in rs)
            out.append(f"| {c}/{p} | {par:.2f} "
                       f"| {share('contended_per_pair')} "
                       f"| {share('parks_per_pair')} |")
    out.append("")
    out += target_table(CONTENTION_TARGETS, val, runs)

    return "\n".join(out) + "\n"


def relative_iqr(xs):
    """The interquartile range of `xs` as a share of their median."""
    q1, med, q3 = quartiles(xs)
    return (q3 - q1) / med if med else 0.0


def markdown_compare(doc, values, baseline):
    """Every benchmark in both runs, before and after: the medians, the
    change, and whether it is within CHANGE_LIMIT. A larger slowdown that
    is still inside the runs' own spread (the larger interquartile range of
    the two, as on the contended shapes) is reported as noise, not met."""
    out = machine_lines(doc.get("context", {})) + [""]
    out.append("Every benchmark before and after (ns per pair, median over "
               "the repetitions of each build, the two builds run "
               "alternately); the limit is "
               f"{100 * CHANGE_LIMIT:g}% slower. *Spread* is the larger "
               "interquartile range of the two as a share of the median.")
    out.append("")
    out.append("| benchmark | before | after | change | spread | verdict |")
    out.append("| --- | ---: | ---: | ---: | ---: | --- |")
    counts = {}
    for name in sorted(set(values) & set(baseline)):
        (a, after_ns), (b, before_ns) = values[name], baseline[name]
        if not b:
            continue
        change = a / b - 1
        noise = max(relative_iqr(after_ns), relative_iqr(before_ns))
        if change <= CHANGE_LIMIT:
            verdict = "met"
        elif change <= noise:
            verdict = "within the spread"
        else:
            verdict = "**slower**"
        counts[verdict] = counts.get(verdict, 0) + 1
        out.append(f"| {name} | {fmt(b, 3)} | {fmt(a, 3)} "
                   f"| {100 * change:+.1f}% | {100 * noise:.0f}% "
                   f"| {verdict} |")
    out.append("")
    out.append("Verdicts: " + ", ".join(f"{n} {v}" for v, n in
                                        sorted(counts.items())) + ".")
    out.append("")
    return "\n".join(out) + "\n"


def machine_lines(ctx, safepoints=False):
    cpu = ctx.get("jitlock_cpu_model", "unknown CPU")
    cores = ctx.get("jitlock_cores", ctx.get("num_cpus", "?"))
    mhz = ctx.get("mhz_per_cpu")
    lines = [
        f"* **Machine:** {cpu}, {cores} cores"
        + (f" ({mhz} MHz as reported)" if mhz else ""),
        f"* **Build:** jitlock {ctx.get('jitlock_build_type', '?')}, "
        f"{ctx.get('jitlock_compiler', '?')}, LLVM "
        f"{ctx.get('jitlock_llvm', '?')} (JIT), Google Benchmark library "
        f"{ctx.get('library_build_type', '?')} build",
        f"* **Run:** {ctx.get('date', '?')}; "
        + (f"{ctx.get('jitlock_poll_iterations_per_call', '?')} loop "
           "iterations per poll benchmark iteration; "
           if safepoints else
           f"{ctx.get('jitlock_pairs_per_iteration', '100')} pairs per "
           "iteration; ")
        + f"TLS offset {ctx.get('jitlock_tls_offset', '?')}"
        + ("" if safepoints else
           ", lock stack capacity "
           f"{ctx.get('jitlock_lock_stack_capacity', '?')}"),
    ]
    load = ctx.get("load_avg")
    if load:
        lines.append("* **Load average at the start:** "
                     + ", ".join(f"{x:.2f}" for x in load)
                     + " (1, 5, 15 minutes)")
    caches = ctx.get("caches")
    if caches:
        parts = []
        for c in caches:
            size = c.get("size", 0)
            unit = f"{size // 1024} KiB" if size < 1 << 20 else f"{size >> 20} MiB"
            parts.append(f"L{c.get('level')} {c.get('type', '')} {unit}".replace("  ", " "))
        lines.append("* **Caches:** " + ", ".join(parts))
    return lines


def markdown(doc, values, extra, runs):
    ctx = doc.get("context", {})
    val = {k: v[0] for k, v in values.items()}
    floor = val.get("floor")
    out = []
    out += machine_lines(ctx)
    out.append("")
    lockstack = val.get("floor/lockstack")
    out.append("ns per lock+unlock pair (median of the repetitions; "
               "lower is better). The floor: "
               f"**{fmt(floor)} ns**"
               + (f"; the floor plus a fast lock's lock-stack stores "
                  f"(`floor/lockstack`): {fmt(lockstack)} ns = "
                  f"{lockstack / floor:.3f}x the floor" if lockstack and floor
                  else "") + ".")
    out.append("")
    out.append("| shape | " + " | ".join(PATHS) + " |")
    out.append("| --- |" + " ---: |" * len(PATHS))
    for shape in SHAPES:
        cells = [fmt(val.get(f"{shape}/{p}")) for p in PATHS]
        out.append(f"| {shape} | " + " | ".join(cells) + " |")
    out.append("")
    out.append("The same as ratios to the floor (contendedN is per thread, "
               "in real time; the floor is single-threaded):")
    out.append("")
    out.append("| shape | " + " | ".join(p + " / floor" for p in PATHS) + " |")
    out.append("| --- |" + " ---: |" * len(PATHS))
    for shape in SHAPES:
        cells = []
        for p in PATHS:
            v = val.get(f"{shape}/{p}")
            cells.append(f"{v / floor:.2f}x" if v and floor else "-")
        out.append(f"| {shape} | " + " | ".join(cells) + " |")
    out.append("")

    alloc = val.get("churn/alloc")
    if alloc:
        out.append(f"Churn with the allocation taken out (churn/alloc = "
                   f"{fmt(alloc)} ns per object, the bump allocator and the "
                   "\"GC\" without a lock):")
        out.append("")
        out.append("| path | churn | churn - alloc |")
        out.append("| --- | ---: | ---: |")
        for p in PATHS[:-1]:
            v = val.get(f"churn/{p}")
            if v is not None:
                out.append(f"| {p} | {fmt(v)} | {fmt(v - alloc)} |")
        out.append("")

    out += target_table(TARGETS, val, runs)
    out.append("The contended shapes have a part of their own, with their "
               "spread and their targets.")
    out.append("")

    out.append("<details><summary>Every benchmark: median, min and max over "
               "the repetitions, and the other counters</summary>")
    out.append("")
    out.append("| benchmark | median | min | max | reps | inflations/pair "
               "| contended/pair | parks/pair | monitors alive |")
    out.append("| --- |" + " ---: |" * 8)
    order = ["floor", "floor/lockstack"] + [
        f"{s}/{p}" for s in SHAPES for p in PATHS]
    for name in order:
        if name not in values:
            continue
        med, reps = values[name]
        e = extra.get(name, {})
        def num(key):
            v = e.get(key)
            return "-" if v is None else f"{v:.3g}"

        out.append(
            f"| {name} | {fmt(med)} | {fmt(min(reps))} | {fmt(max(reps))} "
            f"| {len(reps)} | {num('inflations_per_pair')} "
            f"| {num('contended_per_pair')} | {num('parks_per_pair')} "
            f"| {num('monitors_alive')} |"
        )
    out.append("")
    out.append("</details>")
    return "\n".join(out) + "\n"


def collect_safepoints(doc):
    """name -> the iteration runs (one per repetition) of every safepoint
    benchmark that ran without an error."""
    runs = {}
    for run in doc.get("benchmarks", []):
        if run.get("error_occurred") or run.get("run_type",
                                                "iteration") != "iteration":
            continue
        name = canonical_name(run)
        if name.split("/")[0] in ("poll", "ttsp", "handshake"):
            runs.setdefault(name, []).append(run)
    return runs


def spread(runs, key, digits=2):
    """The median of `key` over the repetitions, with the range: "5.1" for
    one repetition, "5.1 (4.8-6.0)" for several; "-" when absent."""
    vals = [r[key] for r in runs or [] if key in r]
    if not vals:
        return "-"
    med = fmt(statistics.median(vals), digits)
    if len(vals) == 1:
        return med
    return (f"{med} ({fmt(min(vals), digits)}-"
            f"{fmt(max(vals), digits)})")


def median_of(runs, key):
    vals = [r[key] for r in runs or [] if key in r]
    return statistics.median(vals) if vals else None


def paired_differences(a_runs, b_runs, key):
    """a - b for each repetition both ran (taken in the same run, interleaved
    when --benchmark_enable_random_interleaving was on)."""
    b_by_rep = {r.get("repetition_index", 0): r[key] for r in b_runs}
    return [r[key] - b_by_rep[r.get("repetition_index", 0)] for r in a_runs
            if r.get("repetition_index", 0) in b_by_rep]


def oversubscription(n, cores):
    """How n looping threads and the synchronizer share the cores."""
    if not cores:
        return ""
    if n > cores:
        return f"oversubscribed: {n} looping threads on {cores} cores"
    if n == cores:
        return (f"{n} looping threads + the synchronizer on {cores} cores: "
                "one of them is always waiting for a core")
    return (f"{n} looping thread{'s' if n > 1 else ''} + the synchronizer: "
            "a core each")


def markdown_safepoints(doc, runs):
    ctx = doc.get("context", {})
    try:
        cores = int(ctx.get("jitlock_cores") or ctx.get("num_cpus") or 0)
    except ValueError:
        cores = 0
    out = machine_lines(ctx, safepoints=True)
    out.append("")
    out.append("Each figure is the median over the repetitions, the range "
               "over them in parentheses.")
    out.append("")

    polls = {p: runs.get(f"poll/{p}") for p in POLL_PATHS}
    if any(polls.values()):
        out.append("**Poll cost**: ns per loop iteration (CPU time; lower is "
                   "better). *Over poll/none* is the difference to poll/none "
                   "within each repetition, then the median.")
        out.append("")
        out.append("| kernel | ns per iteration | over poll/none | reps |")
        out.append("| --- | ---: | ---: | ---: |")
        none = polls["none"]
        for p in POLL_PATHS:
            rs = polls[p]
            if not rs:
                continue
            over = ""
            if p != "none" and none:
                diffs = paired_differences(rs, none, "ns_per_iter")
                if diffs:
                    over = f"{statistics.median(diffs):+.3f}"
                    if len(diffs) > 1:
                        over += (f" ({min(diffs):+.3f} to "
                                 f"{max(diffs):+.3f})")
            out.append(f"| poll/{p} | {spread(rs, 'ns_per_iter', 3)} | {over} "
                       f"| {len(rs)} |")
        out.append("")

    if any(runs.get(f"ttsp/{n}") for n in LOOPERS):
        out.append("**Time-to-safepoint** (TTSP: `jitlock_rt_safepoint_begin`"
                   " alone) and **stop+release** (from the call of begin "
                   "until every thread runs again after "
                   "`jitlock_rt_safepoint_end`), in µs, one safepoint per "
                   "sample:")
        out.append("")
        out.append("| looping threads | TTSP median | TTSP p99 | stop+release "
                   "median | stop+release p99 | samples per rep | cores |")
        out.append("| ---: |" + " ---: |" * 5 + " --- |")
        for n in LOOPERS:
            rs = runs.get(f"ttsp/{n}")
            if not rs:
                continue
            samples = statistics.median(r["iterations"] for r in rs)
            out.append(
                f"| {n} | {spread(rs, 'ttsp_median_us')} "
                f"| {spread(rs, 'ttsp_p99_us')} "
                f"| {spread(rs, 'stop_release_median_us')} "
                f"| {spread(rs, 'stop_release_p99_us')} | {samples:.0f} "
                f"| {oversubscription(n, cores)} |")
        out.append("")

    if any(runs.get(f"handshake/{k}/{n}") for k in ("one", "all")
           for n in LOOPERS):
        out.append("**Handshakes**: the latency of `jitlock_rt_handshake` "
                   "(one looping thread, each in turn) and "
                   "`jitlock_rt_handshake_all` (every looping thread), in "
                   "µs:")
        out.append("")
        out.append("| looping threads | one: median | one: p99 | all: median "
                   "| all: p99 |")
        out.append("| ---: |" + " ---: |" * 4)
        for n in LOOPERS:
            one, all_ = runs.get(f"handshake/one/{n}"), runs.get(
                f"handshake/all/{n}")
            if not one and not all_:
                continue
            out.append(
                f"| {n} | {spread(one, 'handshake_median_us')} "
                f"| {spread(one, 'handshake_p99_us')} "
                f"| {spread(all_, 'handshake_median_us')} "
                f"| {spread(all_, 'handshake_p99_us')} |")
        out.append("")

    n, limit = TTSP_TARGET
    ttsp = median_of(runs.get(f"ttsp/{n}"), "ttsp_median_us")
    if ttsp is not None:
        out.append("| target | measured | met? |")
        out.append("| --- | ---: | --- |")
        verdict = "met" if ttsp < limit else "**missed**"
        out.append(f"| median TTSP, {n} threads < {limit:g} µs "
                   f"| {fmt(ttsp)} µs | {verdict} |")
        out.append("")
    return "\n".join(out) + "\n"


def plot(doc, values, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    val = {k: v[0] for k, v in values.items()}
    floor = val.get("floor")
    colors = {
        "llvm": "#1f77b4",
        "asmjit": "#2ca02c",
        "runtime": "#9467bd",
        "heavy": "#d62728",
        "pthread": "#ff7f0e",
        "alloc": "#7f7f7f",
    }
    fig, ax = plt.subplots(figsize=(12, 5.5), dpi=110)
    # One bar width for all groups; each group is centred on its shape.
    width = 0.84 / len(PATHS)
    for si, shape in enumerate(SHAPES):
        present = [p for p in PATHS if f"{shape}/{p}" in val]
        for pi, p in enumerate(present):
            v = val[f"{shape}/{p}"]
            x = si + width * (pi + 0.5 - len(present) / 2)
            ax.bar(x, v, width * 0.92, color=colors[p],
                   label=p if p not in ax.get_legend_handles_labels()[1] else None)
            ax.text(x, v * 1.04, fmt(v), ha="center", va="bottom",
                    fontsize=7, rotation=90)
    if floor:
        ax.axhline(floor, color="black", linestyle="--", linewidth=1,
                   label=f"floor ({fmt(floor)} ns)")
    lockstack = val.get("floor/lockstack")
    if lockstack:
        ax.axhline(lockstack, color="black", linestyle=":", linewidth=1,
                   label=f"floor + lock-stack stores ({fmt(lockstack)} ns)")
    ax.set_yscale("log")
    ax.set_xticks(range(len(SHAPES)))
    ax.set_xticklabels(SHAPES)
    ax.set_ylabel("ns per lock+unlock pair (log scale)")
    top = max(val.values()) if val else 1
    ax.set_ylim(bottom=min(val.values()) / 2 if val else 0.1, top=top * 4)
    ctx = doc.get("context", {})
    ax.set_title(
        "jitlock-bench: median ns per pair, "
        f"{ctx.get('jitlock_cpu_model', '')}, "
        f"{ctx.get('jitlock_cores', '?')} cores, "
        f"{ctx.get('jitlock_build_type', '')}",
        fontsize=10,
    )
    ax.legend(ncol=4, fontsize=8, loc="upper left")
    ax.grid(axis="y", which="both", alpha=0.25)
    fig.tight_layout()
    fig.savefig(path)


def load(paths):
    """The documents in `paths`, merged: the first one's context, every
    one's benchmarks."""
    doc = None
    for path in paths:
        with open(path) as f:
            text = f.read()
        # Tolerate text before the JSON (e.g. stderr mixed into a log).
        d = json.loads(text[text.index("{"):])
        if doc is None:
            doc = d
        else:
            doc["benchmarks"] = doc.get("benchmarks", []) + d.get(
                "benchmarks", [])
    return doc


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json", nargs="+",
                    help="jitlock-bench --benchmark_format=json output")
    ap.add_argument("--baseline", nargs="+",
                    help="the same from the build before a change, run "
                    "alternately with it: every benchmark before and after")
    ap.add_argument("--markdown", help="write the markdown here (default stdout)")
    ap.add_argument("--update", help="replace the marked part of this file")
    ap.add_argument("--png", help="write the plot here")
    args = ap.parse_args()
    if args.png:
        ensure_matplotlib("bench-report", "the plot")

    doc = load(args.json)
    values, extra, runs = collect(doc)
    baseline = collect(load(args.baseline))[0] if args.baseline else None
    sp_runs = collect_safepoints(doc)
    if not values and not sp_runs:
        print("bench-report: no jitlock-bench results in the input",
              file=sys.stderr)
        return 1
    # (marker tag, markdown) for each part the input has results for.
    parts = []
    # The main part wants a full run, which always has the floor: a run of
    # a few shapes (e.g. the uncontended before/after runs) leaves it be.
    if "floor" in values:
        parts.append(("bench-report", markdown(doc, values, extra, runs)))
    if any(n.split("/")[0] in CONTENDED for n in runs):
        parts.append(("bench-report:contention",
                      markdown_contention(doc, values, runs)))
    if baseline:
        parts.append(("bench-report:compare",
                      markdown_compare(doc, values, baseline)))
    if sp_runs:
        parts.append(("bench-report:safepoints",
                      markdown_safepoints(doc, sp_runs)))
    if args.update:
        for tag, md in parts:
            err = replace_marked(args.update, tag, md)
            if err:
                print(f"bench-report: {err}", file=sys.stderr)
                return 1
    else:
        md = "\n".join(md for _, md in parts)
        if args.markdown:
            with open(args.markdown, "w") as f:
                f.write(md)
        else:
            sys.stdout.write(md)
    if args.png:
        if parts and parts[0][0] == "bench-report":
            plot(doc, values, args.png)
        else:
            print("bench-report: no locking results, no plot",
                  file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
