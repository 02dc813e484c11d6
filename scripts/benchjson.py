"""What bench-report.py and bench-smoke-check.py both read in
jitlock-bench's JSON: benchmark names without the parts Google Benchmark
appends."""

import re

# Name parts Google Benchmark appends (UseRealTime, Threads, flags).
_SUFFIX = re.compile(
    r"^(real_time|process_time|manual_time|threads:\d+|min_time:[\d.]+"
    r"|iterations:\d+|repeats:\d+)$"
)


def canonical_name(run):
    """`contended2/llvm/real_time/threads:2` -> `contended2/llvm`."""
    name = run.get("run_name") or run["name"]
    return "/".join(p for p in name.split("/") if not _SUFFIX.match(p))
