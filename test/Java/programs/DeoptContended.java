// Uncommon traps (docs/java.md, "Speculation and deoptimization") while
// other threads contend for the monitors the trapping frame holds, with the
// runtime's deflation thread running: each thread takes two shared locks
// and a synchronized method around a read-yield-write increment. In the
// first phase no thread takes the rare side of the branch, so tier 1
// compiles it as a trap; in the second every thread takes it now and then,
// and traps while the others wait for A and B. A lock lost in a trap shows
// as a lost increment, or an IllegalMonitorStateException.
public class DeoptContended {
    static final int THREADS = 6, ITERATIONS = 2000;
    static final long SEED = 20261128L;
    static final Object A = new Object(), B = new Object();
    static int count, rare;
    int viaMethod;

    static int next(int v, int i) {
        if ((i & 63) == 0) Thread.yield();
        return v + 1;
    }

    synchronized void bump(int i) { viaMethod = next(viaMethod, i); }

    // A's inner enter is a nested re-entry, which jitlock-elide elides: a
    // trap inside it must restore it, or tier 0's exit of it releases A
    // while this thread still counts under it.
    static void step(DeoptContended c, int t, int i, int work, int every) {
        Object a = A;
        synchronized (a) {
            synchronized (B) {
                synchronized (a) {
                    if (every != 0 && (i + 7 * t) % every == every - 1) {
                        rare = next(rare, i);
                        c.bump(i);
                    }
                }
                count = next(count, i + work);
            }
        }
        c.bump(i);
    }

    static void phase(DeoptContended c, int every) throws InterruptedException {
        Thread[] ts = new Thread[THREADS];
        for (int t = 0; t < THREADS; t++) {
            final int id = t;
            ts[t] = new Thread(() -> {
                long s = SEED + id + every;
                for (int i = 0; i < ITERATIONS; i++) {
                    s = s * 6364136223846793005L + 1442695040888963407L;
                    step(c, id, i, (int) (s >>> 60), every);
                }
            });
        }
        for (Thread t : ts) t.start();
        for (Thread t : ts) t.join();
    }

    public static void main(String[] args) throws InterruptedException {
        System.out.println("seed " + SEED);
        DeoptContended c = new DeoptContended();
        phase(c, 0);
        phase(c, 500);
        int wantRare = 0;
        for (int t = 0; t < THREADS; t++)
            for (int i = 0; i < ITERATIONS; i++)
                if ((i + 7 * t) % 500 == 499) wantRare++;
        System.out.println("count " + count + " (want " + 2 * THREADS * ITERATIONS + ")");
        System.out.println("rare " + rare + " (want " + wantRare + ")");
        System.out.println("method " + c.viaMethod + " (want "
                + (2 * THREADS * ITERATIONS + wantRare) + ")");
    }
}
