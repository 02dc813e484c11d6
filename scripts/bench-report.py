#!/usr/bin/env python3
"""Turns jitlock-bench JSON into a markdown table and a PNG plot.

    jitlock-bench --benchmark_repetitions=3 --benchmark_format=json > bench.json
    scripts/bench-report.py bench.json --png docs/benchmarks.png \\
        --update docs/benchmarks.md

Each benchmark's value is the median of its repetitions' ns_per_pair (the
iteration runs when the JSON has them, else the `median` aggregate). The
markdown has the machine, a shape x path table of ns per pair, the same as
ratios to the floor, the targets of issue 6 with met/missed, and every run's
spread. Without --update it goes to stdout (or --markdown FILE); with
--update it replaces the part of FILE between the markers

    <!-- bench-report:begin -->
    <!-- bench-report:end -->

The plot has one bar group per shape, the paths side by side, and the floor
as a horizontal line.
"""

import argparse
import json
import math
import os
import statistics
import sys

from benchjson import canonical_name

SHAPES = ["simple", "recursive", "serial", "inflated", "churn", "contended2"]
PATHS = ["llvm", "asmjit", "runtime", "heavy", "pthread", "alloc"]
BEGIN = "<!-- bench-report:begin -->"
END = "<!-- bench-report:end -->"

# (label, numerator, denominator, limit, kind): "le" means
# numerator / denominator <= limit; "ge" means >= limit.
TARGETS = [
    ("simple/llvm <= 1.05x floor", "simple/llvm", "floor", 1.05, "le"),
    ("simple/asmjit <= 1.05x floor", "simple/asmjit", "floor", 1.05, "le"),
    ("recursive/llvm <= 1.15x floor", "recursive/llvm", "floor", 1.15, "le"),
    ("serial/llvm <= 2.1x floor", "serial/llvm", "floor", 2.1, "le"),
    ("inflated/llvm <= 1.2x floor", "inflated/llvm", "floor", 1.2, "le"),
    ("simple/runtime <= 1.5x floor", "simple/runtime", "floor", 1.5, "le"),
    ("churn/llvm >= 5x faster than churn/heavy", "churn/heavy", "churn/llvm",
     5.0, "ge"),
    ("contended2/llvm <= contended2/pthread", "contended2/llvm",
     "contended2/pthread", 1.0, "le"),
]



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
    """CPU time over real time of a two-thread run: 1 when the threads took
    turns on one CPU, 2 when they ran in parallel throughout."""
    real = run.get("real_time")
    return run["cpu_time"] / real if real else float("nan")


def fmt(x, digits=2):
    if x is None or not math.isfinite(x):
        return "-"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.{digits}f}"


def machine_lines(ctx):
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
        f"{ctx.get('jitlock_pairs_per_iteration', '100')} pairs per "
        f"iteration; TLS offset {ctx.get('jitlock_tls_offset', '?')}, "
        f"lock stack capacity {ctx.get('jitlock_lock_stack_capacity', '?')}",
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
    out.append("The same as ratios to the floor (contended2 is per thread, "
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

    out.append("| target | measured | met? |")
    out.append("| --- | ---: | --- |")
    for label, num, den, limit, kind in TARGETS:
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

    c2 = [p for p in PATHS if f"contended2/{p}" in runs]
    if c2:
        out.append("contended2, every repetition. *Parallelism* is CPU time "
                   "over real time: 1.0 when the two threads took turns on "
                   "one CPU (no contention is possible then), 2.0 when they "
                   "ran in parallel throughout. *Contended* is the share of "
                   "enters that found the other thread owning the lock "
                   "(the runtime's count; pthread has none).")
        out.append("")
        out.append("| path | ns per pair (parallelism, contended) |")
        out.append("| --- | --- |")
        for p in c2:
            cells = []
            for r in sorted(runs[f"contended2/{p}"],
                            key=lambda r: r["ns_per_pair"]):
                c = r.get("contended_per_pair")
                cells.append(f"{fmt(r['ns_per_pair'])} ({parallelism(r):.2f}"
                             + ("" if c is None else f", {100 * c:.2g}%")
                             + ")")
            out.append(f"| {p} | " + ", ".join(cells) + " |")
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


def ensure_matplotlib():
    """Re-runs the script with a Python that has matplotlib, if need be."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        # E.g. a pyenv python3 first in PATH: Debian's python3-matplotlib is
        # installed for /usr/bin/python3.
        if sys.executable != "/usr/bin/python3" and os.path.exists(
                "/usr/bin/python3"):
            print("bench-report: no matplotlib here; re-running with "
                  "/usr/bin/python3", file=sys.stderr)
            os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
        raise SystemExit("bench-report: the plot needs matplotlib "
                         "(Debian: apt-get install python3-matplotlib)")


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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json", help="jitlock-bench --benchmark_format=json output")
    ap.add_argument("--markdown", help="write the markdown here (default stdout)")
    ap.add_argument("--update", help="replace the marked part of this file")
    ap.add_argument("--png", help="write the plot here")
    args = ap.parse_args()
    if args.png:
        ensure_matplotlib()

    with open(args.json) as f:
        text = f.read()
    # Tolerate text before the JSON (e.g. stderr mixed into a log).
    doc = json.loads(text[text.index("{"):])
    values, extra, runs = collect(doc)
    if not values:
        print("bench-report: no ns_per_pair in the input", file=sys.stderr)
        return 1
    md = markdown(doc, values, extra, runs)
    if args.update:
        with open(args.update) as f:
            old = f.read()
        if BEGIN not in old or END not in old:
            print(f"bench-report: {args.update} has no {BEGIN} ... {END}",
                  file=sys.stderr)
            return 1
        head, rest = old.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        with open(args.update, "w") as f:
            f.write(head + BEGIN + "\n" + md + END + tail)
    elif args.markdown:
        with open(args.markdown, "w") as f:
            f.write(md)
    else:
        sys.stdout.write(md)
    if args.png:
        plot(doc, values, args.png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
