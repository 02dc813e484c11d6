#!/usr/bin/env python3
"""Adds to a module that jitlock-lower lowered the constants a harness checks
before it runs anything (Lowered.h):

  @jitlock_lowered_layout      the "jitlock.lowered-layout" module flag
  @jitlock_lowered_thread      "tls" or "call", from "jitlock.lowered-thread"
  @jitlock_lowered_tls_offset  the tls-offset in that flag (0 for call)

The values are the flags the pass stamped, so they say what the code was
really compiled for. Reads the lowered module (text IR) on stdin and writes
it with the constants on stdout:

  opt ... -passes='jitlock-lower<...>' -S x.ll | stamp-lowered.py > y.ll
"""

import re
import sys


def module_flag(ir, name):
    match = re.search(r'!"%s", !"([^"\\]*)"' % re.escape(name), ir)
    if not match:
        sys.exit(f"stamp-lowered.py: no {name} module flag: was the module "
                 "lowered (and does it use monitors)?")
    return match.group(1)


def main():
    ir = sys.stdin.read()
    layout = module_flag(ir, "jitlock.lowered-layout")
    thread = module_flag(ir, "jitlock.lowered-thread")  # tls;tls-offset=N, call
    mode, _, rest = thread.partition(";")
    tls_offset = 0
    if mode == "tls":
        match = re.fullmatch(r"tls-offset=(-?[0-9]+)", rest)
        if not match:
            sys.exit(f"stamp-lowered.py: cannot read jitlock.lowered-thread '{thread}'")
        tls_offset = int(match.group(1))
    elif mode != "call":
        sys.exit(f"stamp-lowered.py: the harnesses run thread=tls and "
                 f"thread=call code, not '{thread}'")
    sys.stdout.write(ir)
    sys.stdout.write(f"""
; Added by stamp-lowered.py: what this module was lowered for.
@jitlock_lowered_layout = constant [{len(layout) + 1} x i8] c"{layout}\\00"
@jitlock_lowered_thread = constant [{len(mode) + 1} x i8] c"{mode}\\00"
@jitlock_lowered_tls_offset = constant i64 {tls_offset}
""")


if __name__ == "__main__":
    main()
