#!/usr/bin/env python3
"""Writes one function that locks N distinct objects (2N monitor
operations), for the cost of the structured-locking check: groups of four
nested synchronized blocks, each group with a branch inside, all inside one
loop. With --extra-exit, the loop body ends with one exit too many, of the
first object.

    many-monitors.py N [--extra-exit] > out.ll
"""
import sys


def main():
    objects = int(sys.argv[1])
    extra_exit = "--extra-exit" in sys.argv[2:]
    out = sys.stdout
    out.write("declare void @jitlock.monitor.enter(ptr)\n")
    out.write("declare void @jitlock.monitor.exit(ptr)\n")
    out.write("declare void @work()\n\n")
    out.write("define void @many(ptr %objs, i1 %c, i64 %n) {\n")
    out.write("entry:\n  br label %loop\n")
    out.write("loop:\n  %i = phi i64 [ 0, %entry ], [ %i.next, %latch ]\n")
    for k in range(objects):
        out.write(f"  %o{k} = getelementptr i64, ptr %objs, i64 {k}\n")
    group = 4
    for start in range(0, objects, group):
        members = range(start, min(start + group, objects))
        for k in members:
            out.write(f"  call void @jitlock.monitor.enter(ptr %o{k})\n")
        out.write(f"  br i1 %c, label %then{start}, label %join{start}\n")
        out.write(f"then{start}:\n  call void @work()\n")
        out.write(f"  br label %join{start}\n")
        out.write(f"join{start}:\n")
        for k in reversed(members):
            out.write(f"  call void @jitlock.monitor.exit(ptr %o{k})\n")
    if extra_exit:
        out.write("  call void @jitlock.monitor.exit(ptr %o0), !extra !0\n")
    out.write("  br label %latch\n")
    out.write("latch:\n  %i.next = add i64 %i, 1\n")
    out.write("  %more = icmp ult i64 %i.next, %n\n")
    out.write("  br i1 %more, label %loop, label %out\n")
    out.write("out:\n  ret void\n}\n")
    if extra_exit:
        out.write("\n!0 = !{}\n")


if __name__ == "__main__":
    main()
