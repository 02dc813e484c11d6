#!/usr/bin/env python3
"""The jitlock-java benchmark suite's (bench/java) checker and report.

    java-bench-report.py smoke -- VM [VM options] -cp CLASSES JitlockBench ...
    java-bench-report.py report RAWDIR [--json F] [--csv F] [--png F]
                                       [--markdown F]

`smoke` runs the command once (the CTest tests java-bench-smoke*) and wants
exit status 0, a positive ns_per_op from every kernel, no FAIL line and
nothing else on stdout. It times nothing.

`report` reads what scripts/java-vs-hotspot.sh wrote in RAWDIR: meta.json
(the machine, the commands, the VM configurations in run order) and one
round-R.CONFIG.out per round and configuration (the suite's stdout). Per
kernel and configuration it takes the median ns_per_op over the rounds, and
prints a markdown table of them, the ratios of jitlock-java (tiered, and
reserved when it ran) to each HotSpot configuration, and the targets with
met/missed (on the tiered configuration). --json and --csv write the
raw values (every round), --png a bar chart of the medians.

A round that printed FAIL, or no number for a kernel, or ended with a
nonzero status, is reported as such and left out of the medians.
"""

import argparse
import csv
import json
import os
import re
import statistics
import subprocess
import sys

from benchjson import ensure_matplotlib, fmt

KERNELS = ["counter", "recursive", "nested", "inflated", "sbchain", "churn",
           "contended-2", "contended-4", "contended-8", "prodcons"]
LINE = re.compile(r"^(\S+) ns_per_op (\d+\.\d+)$")
FAIL = re.compile(r"^(\S+) FAIL (.*)$")

# (kernels, jitlock-java configuration, HotSpot configuration, limit): the
# jitlock-java median over the HotSpot one must be at most `limit`.
TARGETS = [
    (["counter", "recursive", "nested", "inflated"], "jitlock-tiered",
     "hotspot-noelim", 1.0),
    (["sbchain", "churn"], "jitlock-tiered", "hotspot", 1.0),
    (["contended-2", "contended-4", "contended-8"], "jitlock-tiered",
     "hotspot", 1.0),
]

LABELS = {
    "jitlock-tiered": "jitlock-java (tiered)",
    "jitlock-reserved": "jitlock-java (reserved)",
    "jitlock-xint": "jitlock-java -Xint",
    "hotspot": "HotSpot (defaults)",
    "hotspot-noelim": "HotSpot -XX:-EliminateLocks",
    "hotspot-biased": "HotSpot -XX:+UseBiasedLocking",
}


def parse(text):
    """({kernel: ns_per_op}, {kernel: why failed}, [unparseable lines])."""
    values, fails, other = {}, {}, []
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            values[m.group(1)] = float(m.group(2))
            continue
        m = FAIL.match(line)
        if m:
            fails[m.group(1)] = m.group(2)
            continue
        if line.strip():
            other.append(line)
    return values, fails, other


def smoke(cmd):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=100)
    except subprocess.TimeoutExpired:
        print("java-bench smoke: the suite did not finish in 100 s")
        return 1
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    values, fails, other = parse(p.stdout)
    problems = [f"{k}: FAIL {why}" for k, why in fails.items()]
    problems += [f"{k}: no ns_per_op" for k in KERNELS
                 if k not in values and k not in fails]
    problems += [f"{k}: ns_per_op {v} is not positive"
                 for k, v in values.items() if not v > 0]
    problems += [f"unknown kernel {k}" for k in values if k not in KERNELS]
    problems += [f"unexpected output: {line}" for line in other]
    if p.returncode != 0:
        problems.append(f"exit status {p.returncode}")
    for why in problems:
        print(f"java-bench smoke: {why}")
    if not problems:
        print(f"java-bench smoke: all {len(KERNELS)} kernels ran and "
              "checked their results")
    return 1 if problems else 0


def load(rawdir):
    with open(os.path.join(rawdir, "meta.json")) as f:
        meta = json.load(f)
    rounds = []  # (round, config, kernel, ns_per_op or None, note)
    for r in range(1, meta["rounds"] + 1):
        for cfg in meta["configs"]:
            path = os.path.join(rawdir, f"round-{r}.{cfg['name']}.out")
            if not os.path.exists(path):
                continue
            with open(path) as f:
                values, fails, _ = parse(f.read())
            status_path = path[:-len(".out")] + ".status"
            status = "0"
            if os.path.exists(status_path):
                with open(status_path) as f:
                    status = f.read().strip()
            for k in KERNELS:
                if k in fails:
                    rounds.append((r, cfg["name"], k, None,
                                   "FAIL " + fails[k]))
                elif k in values:
                    rounds.append((r, cfg["name"], k, values[k], ""))
                else:
                    rounds.append((r, cfg["name"], k, None,
                                   f"no result (exit status {status})"))
    return meta, rounds


def medians(meta, rounds):
    med = {}
    for cfg in meta["configs"]:
        for k in KERNELS:
            xs = [v for (_, c, kk, v, _) in rounds
                  if c == cfg["name"] and kk == k and v is not None]
            if xs:
                med[(cfg["name"], k)] = (statistics.median(xs), min(xs),
                                         max(xs), len(xs))
    return med


def markdown(meta, rounds, med):
    names = [c["name"] for c in meta["configs"]]
    out = [
        f"* **Machine:** {meta.get('cpu', '?')}, `nproc` = "
        f"{meta.get('nproc', '?')}; load average at the start "
        f"{meta.get('load_start', '?')}, at the end "
        f"{meta.get('load_end', '?')} (1, 5, 15 minutes)",
        f"* **JDK:** {meta.get('jdk', '?')}; "
        f"{meta.get('biased_locking', '')}",
        f"* **jitlock-java:** {meta.get('jitlock_java', '?')}",
        f"* **Run:** {meta.get('date', '?')}; {meta['rounds']} round(s), the "
        "configurations alternating within each round; suite arguments "
        f"`{meta.get('suite_args', '')}`",
        "",
        "Median ns per op over the rounds (each round's number is the median"
        " of its timed repetitions; lower is better):",
        "",
        "| kernel | " + " | ".join(LABELS.get(n, n) for n in names) + " |",
        "| --- |" + " ---: |" * len(names),
    ]
    for k in KERNELS:
        cells = [fmt(med[(n, k)][0]) if (n, k) in med else "-"
                 for n in names]
        out.append(f"| {k} | " + " | ".join(cells) + " |")
    hot = [n for n in names if n.startswith("hotspot")]
    # The reserved configuration's ratios are information: the targets
    # below are the tiered (lightweight) configuration's.
    for ours in ("jitlock-tiered", "jitlock-reserved"):
        if ours not in names or not hot:
            continue
        out += ["", f"{LABELS[ours]} / HotSpot (below 1: jitlock-java "
                "is faster):", "",
                "| kernel | " + " | ".join(LABELS.get(n, n) for n in hot)
                + " |",
                "| --- |" + " ---: |" * len(hot)]
        for k in KERNELS:
            cells = []
            for n in hot:
                a, b = med.get((ours, k)), med.get((n, k))
                cells.append(f"{a[0] / b[0]:.2f}x" if a and b else "-")
            out.append(f"| {k} | " + " | ".join(cells) + " |")
    out += ["", "| target | ratio | |", "| --- | ---: | --- |"]
    for kernels, ours, theirs, limit in TARGETS:
        for k in kernels:
            a, b = med.get((ours, k)), med.get((theirs, k))
            label = (f"{k}: {LABELS.get(ours, ours)} <= {limit:.1f}x "
                     f"{LABELS.get(theirs, theirs)}")
            if a and b:
                r = a[0] / b[0]
                out.append(f"| {label} | {r:.2f}x | "
                           f"{'met' if r <= limit else 'missed'} |")
            else:
                out.append(f"| {label} | - | no result |")
    if meta["rounds"] > 1:
        out += ["", "The spread over the rounds (min..max ns per op):", "",
                "| kernel | " + " | ".join(LABELS.get(n, n) for n in names)
                + " |",
                "| --- |" + " ---: |" * len(names)]
        for k in KERNELS:
            cells = [f"{fmt(med[(n, k)][1])}..{fmt(med[(n, k)][2])}"
                     if (n, k) in med else "-" for n in names]
            out.append(f"| {k} | " + " | ".join(cells) + " |")
    bad = [f"round {r} {c} {k}: {note}" for (r, c, k, v, note) in rounds
           if v is None]
    if bad:
        out += ["", "Rounds without a number: " + "; ".join(bad) + "."]
    return "\n".join(out) + "\n"


def plot(meta, med, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [c["name"] for c in meta["configs"]]
    colors = {
        "jitlock-tiered": "#1f77b4",
        "jitlock-reserved": "#9467bd",
        "jitlock-xint": "#aec7e8",
        "hotspot": "#ff7f0e",
        "hotspot-noelim": "#d62728",
        "hotspot-biased": "#2ca02c",
    }
    fig, ax = plt.subplots(figsize=(12, 5.5), dpi=110)
    width = 0.84 / len(names)
    for ki, k in enumerate(KERNELS):
        for ni, n in enumerate(names):
            if (n, k) not in med:
                continue
            v = med[(n, k)][0]
            x = ki + width * (ni + 0.5 - len(names) / 2)
            ax.bar(x, v, width * 0.92, color=colors.get(n, "#7f7f7f"),
                   label=LABELS.get(n, n) if ki == 0 else None)
            ax.text(x, v * 1.05, fmt(v), ha="center", va="bottom",
                    fontsize=6, rotation=90)
    ax.set_yscale("log")
    ax.set_xticks(range(len(KERNELS)))
    ax.set_xticklabels(KERNELS, fontsize=8)
    ax.set_ylabel("median ns per op (log scale)")
    vals = [v[0] for v in med.values()]
    if vals:
        ax.set_ylim(bottom=min(vals) / 2, top=max(vals) * 6)
    ax.set_title(f"JitlockBench on jitlock-java and HotSpot: "
                 f"{meta.get('cpu', '')}, {meta.get('nproc', '?')} cores, "
                 f"{meta['rounds']} round(s)", fontsize=10)
    ax.legend(ncol=3, fontsize=8, loc="upper left")
    ax.grid(axis="y", which="both", alpha=0.25)
    fig.tight_layout()
    fig.savefig(path)


def report(args):
    if args.png:
        ensure_matplotlib("java-bench-report", "the chart")
    meta, rounds = load(args.rawdir)
    med = medians(meta, rounds)
    if not med:
        print("java-bench-report: no results in " + args.rawdir,
              file=sys.stderr)
        return 1
    md = markdown(meta, rounds, med)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(md)
    sys.stdout.write(md)
    if args.json:
        doc = {"meta": meta,
               "runs": [{"round": r, "config": c, "kernel": k,
                         "ns_per_op": v, "note": note}
                        for (r, c, k, v, note) in rounds],
               "medians": [{"config": c, "kernel": k, "ns_per_op": v[0],
                            "min": v[1], "max": v[2], "rounds": v[3]}
                           for (c, k), v in med.items()]}
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["round", "config", "kernel", "ns_per_op", "note"])
            for (r, c, k, v, note) in rounds:
                w.writerow([r, c, k, "" if v is None else v, note])
    if args.png:
        plot(meta, med, args.png)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    s = sub.add_parser("smoke", help="run the suite once and check it")
    s.add_argument("cmd", nargs="+", help="the command (after --)")
    r = sub.add_parser("report", help="medians, ratios, chart")
    r.add_argument("rawdir")
    r.add_argument("--json")
    r.add_argument("--csv")
    r.add_argument("--png")
    r.add_argument("--markdown")
    args = ap.parse_args()
    if args.command == "smoke":
        return smoke(args.cmd)
    return report(args)


if __name__ == "__main__":
    sys.exit(main())
