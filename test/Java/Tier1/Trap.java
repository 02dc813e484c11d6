// Uncommon traps (docs/java.md, "Speculation and deoptimization"): a branch
// side tier 0 never took is compiled as llvm.experimental.deoptimize with the
// frame's state, jitlock appends the frame's one monitor (ELIDED: the object
// never escapes), and the trap resumes in tier 0 holding it. With
// --speculate=false, or with too few executions, there is no trap. The
// profile shows the branch's counts and a call site's receiver classes.
//
// RUN: rm -rf %t && mkdir -p %t && %javac -d %t %s
// RUN: jitlock-java --tier1-invocations=150 -Xlog:jit -Xlog:deopt \
// RUN:   --print-tier1=ir --print-tier1-filter=work --print-profile=Trap. \
// RUN:   -cp %t Trap 2>&1 | FileCheck %s
// RUN: jitlock-java --tier1-invocations=150 -Xlog:jit -Xlog:deopt \
// RUN:   --speculate=false -cp %t Trap 2>&1 | FileCheck %s --check-prefix=OFF
// RUN: jitlock-java --tier1-invocations=150 -Xlog:jit -Xlog:deopt \
// RUN:   --tier1-trap-min-count=1000 -cp %t Trap 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OFF
//
// CHECK: jit: profile of Trap.work(I)I:
// CHECK-NEXT: bci 16 branch: taken 149, not taken 0
// CHECK: call i64 (...) @llvm.experimental.deoptimize.i64() [ "deopt"(i32 1, ptr inttoptr (i64 {{[0-9]+}} to ptr), i32 16, i32 4, i32 2, i32 1, {{.*}}, i32 0, i32 1246514481, i32 1, ptr [[OBJ:%[0-9]+]], i32 1) ]
// CHECK: jit: compiled Trap.work(I)I ({{[0-9]+}} bytes of bytecode) in {{[0-9.]+}} ms, with uncommon traps
// CHECK: jit: profile of Trap.callShape(LTrap$Shape;)I:
// CHECK-NEXT: bci 1 receivers: Trap$Square, Trap$Circle; megamorphic 0
// CHECK: deopt: Trap.work(I)I bci 16 reason unstable_if frames 1
// CHECK-NEXT: deopt:   frame Trap.work(I)I bci 16 locals [1000, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}] stack [1000, 1000] monitors 1
// CHECK-NEXT: deopt:   restored [java.lang.Object#0 elided]
// CHECK-NEXT: deopt:   lock stack [java.lang.Object#0]
// CHECK-NEXT: deopt:   monitor java.lang.Object#0 owner self
// CHECK: jit: Trap.work(I)I deoptimized; compiled again when hot
// CHECK: result 19100 301
//
// OFF:     jit: compiled Trap.work(I)I
// OFF-NOT: with uncommon traps
// OFF-NOT: deopt:
// OFF:     result 19100 301
public class Trap {
    interface Shape { int size(); }
    static final class Square implements Shape { public int size() { return 1; } }
    static final class Circle implements Shape { public int size() { return 2; } }

    static int work(int x) {
        Object lock = new Object();
        synchronized (lock) {
            if (x >= 1000) return -x;
        }
        return x + 1;
    }

    static int callShape(Shape s) { return s.size(); }

    public static void main(String[] args) {
        int total = 0, sizes = 0;
        Shape[] shapes = { new Square(), new Circle() };
        for (int i = 0; i < 200; i++) {
            total += work(i);
            sizes += callShape(shapes[i & 1]);
        }
        System.out.println("result " + (total + work(1000)) + " " + (sizes + 1));
    }
}
