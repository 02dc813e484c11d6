#!/usr/bin/env python3
"""Writes the pass fuzzer's seed inputs into fuzz/corpus/.

Each IR module of the lit tests (test/**/*.ll, each split-file section of
its own) and of examples/*.ll becomes one input: five option bytes, which
pick the pipeline and its parameters (fuzz/RunInput.cpp), a newline, then
the module with its comment lines removed. The option bytes are printable
and drawn from a fixed seed, so that the seeds spread over the
configurations and rerunning the script rewrites the same files. A few
generator inputs (first option byte >= 0x80) are added too.

Inputs the fuzzer found are kept next to the seeds under names that do
not start with "seed-"; this script rewrites only the seed- files.

    python3 fuzz/seed-corpus.py
"""

import pathlib
import random
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"


def modules(path):
    """The IR modules of one test file: (section name, text) pairs."""
    text = path.read_text()
    parts = re.split(r"^;--- (\S+)\n", text, flags=re.M)
    if len(parts) == 1:
        yield "", text
        return
    for name, body in zip(parts[1::2], parts[2::2]):
        if name.endswith(".ll"):
            yield name[:-3], body


def strip_comments(text):
    lines = [l for l in text.splitlines() if not l.lstrip().startswith(";")]
    return "\n".join(lines).strip() + "\n"


def option_bytes(rng):
    return bytes(rng.randrange(0x20, 0x7F) for _ in range(5))


def main():
    CORPUS.mkdir(parents=True, exist_ok=True)
    for old in CORPUS.glob("seed-*"):
        old.unlink()
    rng = random.Random(20250101)
    sources = sorted((ROOT / "test").rglob("*.ll")) + sorted(
        (ROOT / "examples").glob("*.ll"))
    count = 0
    for path in sources:
        rel = path.relative_to(ROOT).with_suffix("")
        stem = "-".join(rel.parts[1:] if rel.parts[0] == "test" else rel.parts)
        for section, body in modules(path):
            ir = strip_comments(body)
            if not ir.strip():
                continue
            name = "seed-" + stem + ("-" + section if section else "")
            (CORPUS / name).write_bytes(option_bytes(rng) + b"\n" +
                                        ir.encode())
            count += 1
    for i in range(8):
        data = bytes([0x80 | rng.randrange(0x80)]) + bytes(
            rng.randrange(256) for _ in range(4 + 64))
        (CORPUS / f"seed-generated-{i}").write_bytes(data)
        count += 1
    print(f"wrote {count} seed inputs to {CORPUS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
