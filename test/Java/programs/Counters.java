// A counter on 8 threads through a synchronized method, a synchronized
// block, a static synchronized method (its class's Class object) and a
// block on X.class; each total must be exact.
public class Counters {
    static final int THREADS = 8, ITERATIONS = 10000;
    int viaMethod;
    long viaBlock;
    static int viaStatic, viaClass;
    final Object lock = new Object();

    // Each increment reads, sometimes yields (so that another thread runs
    // inside the critical section if the lock failed), then writes.
    static int next(int v) {
        if ((v & 31) == 0) Thread.yield();
        return v + 1;
    }

    synchronized void incMethod() { viaMethod = next(viaMethod); }
    static synchronized void incStatic() { viaStatic = next(viaStatic); }

    public static void main(String[] args) throws InterruptedException {
        Counters c = new Counters();
        Thread[] ts = new Thread[THREADS];
        for (int t = 0; t < THREADS; t++) {
            ts[t] = new Thread(() -> {
                for (int i = 0; i < ITERATIONS; i++) {
                    c.incMethod();
                    synchronized (c.lock) { c.viaBlock = next((int) c.viaBlock) + 1; }
                    incStatic();
                    synchronized (Counters.class) { viaClass = next(viaClass); }
                }
            });
        }
        for (Thread t : ts) t.start();
        for (Thread t : ts) t.join();
        System.out.println("method " + c.viaMethod + " (expected " + THREADS * ITERATIONS + ")");
        System.out.println("block " + c.viaBlock + " (expected " + 2L * THREADS * ITERATIONS + ")");
        System.out.println("static " + viaStatic + " class " + viaClass);
        boolean ok = c.viaMethod == THREADS * ITERATIONS && c.viaBlock == 2L * THREADS * ITERATIONS
                && viaStatic == THREADS * ITERATIONS && viaClass == THREADS * ITERATIONS;
        System.out.println(ok ? "counts exact" : "COUNTS WRONG");
    }
}
