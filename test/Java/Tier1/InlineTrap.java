// Uncommon traps in inlined code (docs/java.md, "Speculation and
// deoptimization"). run() holds `this` and calls the small synchronized
// add() on `this`, inlined (its lock elided as a nested re-entry); add's
// branch never taken in tier 0 traps with two frames, outermost first: run
// at its invoke (bci 6, the invoke's arguments popped, one monitor held)
// and add at its branch (one monitor, elided); jitlock appends both. The
// interface call in measure() saw only Square: it is inlined behind a class
// check that traps (class_check) on the Circle, and measure is compiled
// again without that speculation; so is the virtual call in area(), though
// both subclasses of Base have instances (no single implementation). With
// --speculate=false nothing traps.
//
// RUN: rm -rf %t && mkdir -p %t && %javac -d %t %s
// RUN: jitlock-java --tier1-invocations=150 -Xlog:jit -Xlog:deopt \
// RUN:   --print-tier1=ir --print-tier1-filter=InlineTrap.run \
// RUN:   -cp %t InlineTrap 2>&1 | FileCheck %s
// RUN: jitlock-java --tier1-invocations=150 -Xlog:jit -Xlog:deopt \
// RUN:   --speculate=false -cp %t InlineTrap 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OFF
//
// CHECK: jit: ir of InlineTrap.run(I)I:
// CHECK: call i64 (...) @llvm.experimental.deoptimize.i64() [ "deopt"(i32 2, ptr inttoptr (i64 {{[0-9]+}} to ptr), i32 6, i32 5, i32 0, i32 1, ptr [[THIS:%[a-z0-9]+]], {{.*}}, ptr inttoptr (i64 {{[0-9]+}} to ptr), i32 4, i32 2, i32 2, i32 1, ptr [[THIS]], {{.*}}, i32 0, i32 1246514481, i32 2, ptr [[THIS]], i32 0, ptr [[THIS]], i32 1) ]
// CHECK: jit: compiled InlineTrap.run(I)I ({{[0-9]+}} bytes of bytecode) in {{[0-9.]+}} ms, with uncommon traps
// CHECK: jit: compiled InlineTrap.measure(LInlineTrap$Shape;)I ({{[0-9]+}} bytes of bytecode) in {{[0-9.]+}} ms, with uncommon traps
// CHECK: deopt: InlineTrap.add(I)I bci 4 reason unstable_if frames 2
// CHECK-NEXT: deopt:   frame InlineTrap.run(I)I bci 6 locals [{{.*}}] stack [] monitors 1
// CHECK-NEXT: deopt:   frame InlineTrap.add(I)I bci 4 locals [{{[0-9]+}}, 1000] stack [{{.*}}] monitors 1
// CHECK-NEXT: deopt:   restored [InlineTrap#0 held, InlineTrap#0 elided]
// CHECK-NEXT: deopt:   lock stack [InlineTrap#0, InlineTrap#0]
// CHECK: deopt: InlineTrap.measure(LInlineTrap$Shape;)I bci 1 reason class_check frames 1
// CHECK: jit: InlineTrap.measure(LInlineTrap$Shape;)I deoptimized; compiled again when hot
// CHECK: jit: compiled InlineTrap.measure(LInlineTrap$Shape;)I ({{[0-9]+}} bytes of bytecode) in {{[0-9.]+}} ms{{$}}
// CHECK: deopt: InlineTrap.area(LInlineTrap$Base;)I bci 1 reason class_check frames 1
// CHECK: jit: InlineTrap.area(LInlineTrap$Base;)I deoptimized; compiled again when hot
// CHECK: result 1354911 18900
//
// OFF-NOT: deopt:
// OFF:     result 1354911 18900
public class InlineTrap {
    interface Shape { int size(); }
    static final class Square implements Shape { public int size() { return 1; } }
    static final class Circle implements Shape { public int size() { return 2; } }
    abstract static class Base { abstract int area(); }
    static final class Sq extends Base { int area() { return 4; } }
    static final class Ci extends Base { int area() { return 3; } }

    int total;

    synchronized int add(int x) {
        if (x >= 1000) total -= x;
        else total += x;
        return total;
    }

    int run(int x) {
        int r;
        synchronized (this) {
            r = add(x) + 1;
        }
        return r;
    }

    static int measure(Shape s) { return s.size() * 3; }

    static int area(Base b) { return b.area() + 1; }

    public static void main(String[] args) {
        InlineTrap t = new InlineTrap();
        Shape square = new Square(), circle = new Circle();
        long sum = 0;
        for (int i = 0; i < 200; i++)
            sum += t.run(i) + measure(square);
        sum += t.run(1000) + measure(circle);
        for (int i = 0; i < 200; i++)
            sum += measure((i & 1) == 0 ? square : circle);
        Base sq = new Sq(), ci = new Ci();
        for (int i = 0; i < 200; i++)
            sum += area(sq);
        sum += area(ci);
        System.out.println("result " + sum + " " + t.total);
    }
}
