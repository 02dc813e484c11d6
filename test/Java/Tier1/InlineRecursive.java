// Recursive inlining (--tier1-recursive-inline, default one level): the
// compiled descend() inlines its own recursive call once, so the inlined
// level's re-entry of `this` is nested in the compiled level's region and
// elided. A trap in the inlined level (its branch never taken in tier 0)
// deoptimizes two frames of the same method, outermost first, each with
// one monitor: the compiled level's held lock and the inlined level's
// elided one, both put back on the lock stack. With no recursive inlining
// the trap is in a compiled level of its own: one frame.
//
// RUN: rm -rf %t && mkdir -p %t && %javac -d %t %s
// RUN: jitlock-java --tier1-invocations=150 -Xlog:jit -Xlog:deopt \
// RUN:   -cp %t InlineRecursive 2>&1 | FileCheck %s
// RUN: jitlock-java --tier1-invocations=150 -Xlog:deopt \
// RUN:   --tier1-recursive-inline=0 -cp %t InlineRecursive 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OFF
//
// CHECK: jit: compiled InlineRecursive.descend(II)I ({{[0-9]+}} bytes of bytecode) in {{[0-9.]+}} ms, with uncommon traps
// CHECK: deopt: InlineRecursive.descend(II)I bci 12 reason unstable_if frames 2
// CHECK-NEXT: deopt:   frame InlineRecursive.descend(II)I bci 46 locals [{{[0-9]+}}, 3, 2] stack [1] monitors 1
// CHECK-NEXT: deopt:   frame InlineRecursive.descend(II)I bci 12 locals [{{[0-9]+}}, 2, 2] stack [2, 2] monitors 1
// CHECK-NEXT: deopt:   restored [InlineRecursive#0 held, InlineRecursive#0 elided]
// CHECK-NEXT: deopt:   lock stack [InlineRecursive#0, InlineRecursive#0]
// CHECK: result 2202 1602 false
//
// OFF: deopt: InlineRecursive.descend(II)I bci 12 reason unstable_if frames 1
// OFF-NEXT: deopt:   frame InlineRecursive.descend(II)I bci 12 locals [{{[0-9]+}}, 2, 2] stack [2, 2] monitors 1
// OFF: result 2202 1602 false
public class InlineRecursive {
    private long calls;

    synchronized int descend(int depth, int trapAt) {
        calls++;
        if (depth == trapAt) {
            // Never taken in tier 0: compiled as an uncommon trap.
            return 1000 + (Thread.holdsLock(this) ? 1 : 0);
        }
        return depth == 0 ? 0 : 1 + descend(depth - 1, trapAt);
    }

    public static void main(String[] args) {
        InlineRecursive r = new InlineRecursive();
        long sum = 0;
        for (int i = 0; i < 400; i++)
            sum += r.descend(3, -1);
        // Depth 3 is a compiled level, depth 2 its inlined recursion.
        sum += r.descend(3, 2);
        System.out.println("result " + sum + " " + r.calls + " "
                           + Thread.holdsLock(r));
    }
}
