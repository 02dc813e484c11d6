// An uncommon trap (docs/java.md, "Speculation and deoptimization") with ten
// monitors in the frame: nested synchronized blocks on five shared objects
// (one entered twice) and four that never escape (their locks elided by
// tier 1), more than the lock stack holds. After the trap the interpreter
// must hold each of them, in order, and release each once.
public class DeoptNested {
    static final Object[] SHARED = new Object[5];

    static int deep(int x) {
        Object a = new Object(), b = new Object(), c = new Object(), d = new Object();
        int r;
        synchronized (SHARED[0]) {
            synchronized (a) {
                synchronized (SHARED[1]) {
                    synchronized (b) {
                        synchronized (SHARED[2]) {
                            synchronized (c) {
                                synchronized (SHARED[3]) {
                                    synchronized (d) {
                                        synchronized (SHARED[4]) {
                                            synchronized (SHARED[0]) {
                                                if (x >= 1000) r = -held();
                                                else r = x + 1;
                                            }
                                        }
                                    }
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
