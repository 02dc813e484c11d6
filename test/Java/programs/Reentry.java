// Re-entry: a recursive synchronized method, non-adjacent re-entry
// (A B A), nesting deeper than the lock stack, and wait inside nested
// locks of the same object.
public class Reentry {
    static int depth;

    synchronized int recurse(int n) { return n == 0 ? 0 : 1 + recurse(n - 1); }

    static int nonAdjacent(Object a, Object b, int rounds) {
        int n = 0;
        for (int i = 0; i < rounds; i++) {
            synchronized (a) {
                synchronized (b) {
                    synchronized (a) {
                        synchronized (b) { n++; }
                    }
                }
            }
        }
        return n;
    }

    static int nest(Object[] locks, int i) {
        if (i == locks.length) return 0;
        synchronized (locks[i]) {
            synchronized (locks[(i * 7) % locks.length]) {
                return 1 + nest(locks, i + 1);
            }
        }
    }

    public static void main(String[] args) throws InterruptedException {
        Reentry r = new Reentry();
        System.out.println("recursive synchronized depth " + r.recurse(500));
        Object a = new Object(), b = new Object();
        int[] total = new int[1];
        Thread[] ts = new Thread[4];
        for (int t = 0; t < ts.length; t++) {
            final boolean flip = t % 2 == 0;
            ts[t] = new Thread(() -> {
                int n = flip ? nonAdjacent(a, b, 2000) : 0;
                synchronized (total) { total[0] += n; }
            });
            ts[t].start();
        }
        for (Thread t : ts) t.join();
        System.out.println("non-adjacent re-entries " + total[0]);
        Object[] locks = new Object[20];
        for (int i = 0; i < locks.length; i++) locks[i] = new Object();
        System.out.println("nested locks " + nest(locks, 0));
        Object m = new Object();
        Thread waiter = new Thread(() -> {
            synchronized (m) {
                synchronized (m) {
                    try {
                        depth = 2;
                        m.notifyAll();
                        while (depth != 3) m.wait();
                        System.out.println("woke with the lock held twice again");
                    } catch (InterruptedException e) {
                        System.out.println("interrupted");
                    }
                }
            }
        });
        synchronized (m) {
            waiter.start();
            while (depth != 2) m.wait();
            depth = 3;
            m.notifyAll();
        }
        waiter.join();
        synchronized (m) { System.out.println("relocked after the waiter left"); }
    }
}
