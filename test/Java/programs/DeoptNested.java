// Uncommon traps (docs/java.md, "Speculation and deoptimization") with ten
// monitors in the frame, more than the lock stack holds: in deep, nested
// synchronized blocks on five shared objects (one entered twice) and four
// fresh ones; in deepLocal, on ten objects that never escape, whose locks
// tier 1 elides and the trap must take. After the trap the interpreter must
// hold each of them, in order, and release each once.
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

    static int deepLocal(int x) {
        Object a = new Object(), b = new Object(), c = new Object(), d = new Object(),
                e = new Object(), f = new Object(), g = new Object(), h = new Object(),
                i = new Object(), j = new Object();
        int r = x;
        synchronized (a) { synchronized (b) { synchronized (c) { synchronized (d) {
            synchronized (e) { synchronized (f) { synchronized (g) { synchronized (h) {
                synchronized (i) { synchronized (j) {
                    if (x >= 1000) r = -x;
                    else r = x + 1;
                } }
            } } } }
        } } } }
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
                sum += deep(i) + deepLocal(i);
            int r = deep(1000 + round);
            sum += deepLocal(1000 + round);
            System.out.println("round " + round + ": sum " + sum + ", inside " + r
                    + ", after " + held());
        }
    }
}
