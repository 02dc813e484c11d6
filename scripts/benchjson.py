"""What the benchmark scripts share: jitlock-bench's benchmark names without
the parts Google Benchmark appends, the marked parts of a markdown file that
they rewrite, how they print a number, and finding matplotlib."""

import math
import os
import re
import sys

# Name parts Google Benchmark appends (UseRealTime, Threads, flags).
_SUFFIX = re.compile(
    r"^(real_time|process_time|manual_time|threads:\d+|min_time:[\d.]+"
    r"|iterations:\d+|repeats:\d+)$"
)


def canonical_name(run):
    """`contended2/llvm/real_time/threads:2` -> `contended2/llvm`."""
    name = run.get("run_name") or run["name"]
    return "/".join(p for p in name.split("/") if not _SUFFIX.match(p))


def markers(tag):
    """The comments around the part of a file that `tag` rewrites."""
    return f"<!-- {tag}:begin -->", f"<!-- {tag}:end -->"


def replace_marked(path, tag, text):
    """Replaces the part of `path` between `tag`'s markers with `text`.
    Returns an error message, or None."""
    begin, end = markers(tag)
    with open(path) as f:
        old = f.read()
    if begin not in old or end not in old:
        return f"{path} has no {begin} ... {end}"
    head, rest = old.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(path, "w") as f:
        f.write(head + begin + "\n" + text + end + tail)
    return None


def fmt(x, digits=2):
    """A number for a table: fewer decimals the larger it is; "-" for none."""
    if x is None or not math.isfinite(x):
        return "-"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.{digits}f}"


def ensure_matplotlib(tool, what):
    """Re-runs the script with a Python that has matplotlib, if need be;
    else exits saying that `what` (the plot) needs it."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        # E.g. a pyenv python3 first in PATH: Debian's python3-matplotlib is
        # installed for /usr/bin/python3.
        if sys.executable != "/usr/bin/python3" and os.path.exists(
                "/usr/bin/python3"):
            print(f"{tool}: no matplotlib here; re-running with "
                  "/usr/bin/python3", file=sys.stderr)
            os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
        raise SystemExit(f"{tool}: {what} needs matplotlib "
                         "(Debian: apt-get install python3-matplotlib)")
