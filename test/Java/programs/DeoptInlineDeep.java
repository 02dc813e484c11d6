// An uncommon trap three inlined calls deep with ten monitors in the
// physical frame, more than the lock stack holds (docs/java.md,
// "Speculation and deoptimization"): deep() holds shared objects and two
// fresh ones (whose locks tier 1 elides), and calls the static synchronized
// A.f, which calls B.g, which calls C.h (each holding its class), whose
// branch traps. The record has four frames; the restore must take the
// elided locks, and the interpreter must release every monitor once, each
// frame its own.
public class DeoptInlineDeep {
    static final Object[] SHARED = new Object[5];

    static final class A {
        static synchronized int f(int x) { return B.g(x) + 1; }
    }

    static final class B {
        static synchronized int g(int x) { return C.h(x) + 2; }
    }

    static final class C {
        static synchronized int h(int x) {
            if (x >= 1000) return -held();
            return x + 3;
        }
    }

    static int deep(int x) {
        Object a = new Object(), b = new Object();
        int r;
        synchronized (SHARED[0]) {
            synchronized (a) {
                synchronized (SHARED[1]) {
                    synchronized (b) {
                        synchronized (SHARED[2]) {
                            synchronized (SHARED[3]) {
                                synchronized (SHARED[4]) {
                                    r = A.f(x);
                                }
                            }
                        }
                    }
                }
            }
        }
        return r;
    }

    static int held() {
        int n = 0;
        for (Object o : SHARED)
            if (Thread.holdsLock(o)) n++;
        if (Thread.holdsLock(A.class)) n++;
        if (Thread.holdsLock(B.class)) n++;
        if (Thread.holdsLock(C.class)) n++;
        return n;
    }

    public static void main(String[] args) {
        for (int k = 0; k < SHARED.length; k++)
            SHARED[k] = new Object();
        long sum = 0;
        for (int round = 0; round < 2; round++) {
            for (int i = 0; i < 400; i++)
                sum += deep(i);
            int r = deep(1000 + round);
            System.out.println("round " + round + ": sum " + sum + ", inside " + r
                    + ", after " + held());
        }
    }
}
