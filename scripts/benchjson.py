"""What the benchmark scripts share: jitlock-bench's benchmark names without
the parts Google Benchmark appends, and the marked parts of a markdown file
that they rewrite."""

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
