// Tiered compilation really compiles: a method called often enough is
// compiled at its Nth call, a loop's method at its Nth backward branch (for
// its next call), a method called once stays in tier 0, and -Xint compiles
// nothing. The program's output is the same in every mode.
//
// RUN: rm -rf %t && mkdir -p %t && %javac -d %t %s
// RUN: jitlock-java -Xlog:jit --tier1-invocations=50 --tier1-backedges=500 \
// RUN:   -cp %t Tiered 2>&1 | FileCheck %s --check-prefix=TIERED
// RUN: jitlock-java -Xlog:jit -Xint -cp %t Tiered 2>&1 \
// RUN:   | FileCheck %s --check-prefix=INT
// RUN: jitlock-java -Xlog:jit -Xcomp --tier1-inline-size=0 -cp %t Tiered 2>&1 \
// RUN:   | FileCheck %s --check-prefix=COMP
//
// TIERED: jit: tiered: a method is compiled by tier 1 at its 50th call or 500th backward branch
// TIERED-NOT: compiled Tiered.once
// TIERED-DAG: jit: compiled Tiered.square(I)I ({{[0-9]+}} bytes of bytecode) in {{[0-9.]+}} ms
// TIERED-DAG: jit: compiled Tiered.loop(I)J ({{[0-9]+}} bytes of bytecode) in {{[0-9.]+}} ms
// TIERED-DAG: jit: compiled Tiered.locked(LTiered;)V
// TIERED-NOT: compiled Tiered.once
// TIERED:     result 41541750 60 once
//
// INT:     jit: -Xint: every method runs in tier 0
// INT-NOT: compiled
// INT:     result 41541750 60 once
//
// COMP:     jit: -Xcomp: every method is compiled by tier 1 before its first call
// COMP:     jit: compiled Tiered.main([Ljava/lang/String;)V
// COMP:     jit: compiled Tiered.once()Ljava/lang/String;
// COMP:     result 41541750 60 once

public class Tiered {
    private int hits;

    static int square(int x) {
        return x * x;
    }

    static long loop(int n) {
        long sum = 0;
        for (int i = 0; i < n; i++)
            sum += i;
        return sum;
    }

    static synchronized void locked(Tiered t) {
        t.hits++;
    }

    static String once() {
        return "once";
    }

    public static void main(String[] args) {
        int total = 0;
        for (int i = 0; i < 500; i++)
            total += square(i);
        Tiered t = new Tiered();
        for (int i = 0; i < 60; i++)
            locked(t);
        long l = loop(1000) + loop(10);
        System.out.println("result " + (total + l - 45 - 499500) + " " + t.hits
                           + " " + once());
    }
}
