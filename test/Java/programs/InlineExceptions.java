// Exceptions out of inlined synchronized callees: a private synchronized
// helper re-entered from a synchronized caller (a nested re-entry tier 1
// elides once inlined) throws, and a chained synchronized append throws in
// its second call. Each time the lock must be released exactly as often as
// it was taken: other threads then take it, and the holder counts match.

public class InlineExceptions {
    static final class Box {
        int value;
        int failures;

        synchronized void update(int v) {
            try {
                check(v);
            } catch (IllegalStateException e) {
                failures++;
            }
        }

        private synchronized void check(int v) {
            if (v % 7 == 0)
                throw new IllegalStateException("multiple of 7: " + v);
            value += v;
        }

        synchronized Box append(int v) {
            if (v < 0)
                throw new IllegalArgumentException("negative " + v);
            value += v;
            return this;
        }
    }

    static int chain(Box b, int i) {
        try {
            b.append(i).append(i % 5 == 0 ? -1 : 1);
            return 0;
        } catch (IllegalArgumentException e) {
            return 1;
        }
    }

    static void run(Box b, int from) {
        for (int i = from; i < from + 700; i++) {
            b.update(i);
            chain(b, i);
        }
    }

    public static void main(String[] args) throws Exception {
        Box b = new Box();
        Thread[] threads = new Thread[4];
        for (int t = 0; t < threads.length; t++) {
            final int from = t * 700;
            threads[t] = new Thread(() -> run(b, from));
            threads[t].start();
        }
        for (Thread t : threads)
            t.join();
        // The lock is free: another thread takes and releases it.
        Thread probe = new Thread(() -> {
            synchronized (b) {
                System.out.println("probe holds " + Thread.holdsLock(b));
            }
        });
        probe.start();
        probe.join();
        System.out.println("failures " + b.failures);
        System.out.println("value " + b.value);
        System.out.println("main holds " + Thread.holdsLock(b));
    }
}
