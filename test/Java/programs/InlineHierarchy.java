// Tier 1 inlines a virtual call of Counter.add while Counter is the only
// class that implements it (with no check of the receiver's class); four
// threads keep running that code while one of them loads a subclass that
// overrides add, by making its first instance, and calls the same code with
// it. The frames running the old code deoptimize lazily; every call must run
// the receiver's own add: the totals say so.

public class InlineHierarchy {
    static class Counter {
        int n;

        synchronized Counter add(int k) {
            n += k;
            return this;
        }
    }

    static class Doubler extends Counter {
        @Override
        synchronized Counter add(int k) {
            n += 2 * k;
            return this;
        }
    }

    // More than tier 1's inline size: compiled on its own, with the two
    // calls of add inlined.
    static long work(Counter c, int rounds) {
        if (c == null || rounds < 0)
            throw new IllegalArgumentException("bad work " + rounds);
        long seen = 0;
        for (int i = 0; i < rounds; i++) {
            c.add(1).add(2);
            seen += 3;
        }
        return seen;
    }

    // Typed Object so that verifying the callers loads no Doubler: its
    // first instance loads it.
    static Object makeDoubler() {
        return new Doubler();
    }

    static final Counter shared = new Counter();
    static volatile Counter late;

    public static void main(String[] args) throws Exception {
        Thread[] threads = new Thread[4];
        long[] seen = new long[threads.length];
        for (int t = 0; t < threads.length; t++) {
            final int id = t;
            threads[t] = new Thread(() -> {
                for (int r = 0; r < 200; r++) {
                    seen[id] += work(shared, 50);
                    if (id == 0 && r == 100)
                        late = (Counter) makeDoubler();
                    Counter d = late;
                    if (d != null)
                        seen[id] += work(d, 10);
                }
            });
            threads[t].start();
        }
        for (Thread t : threads)
            t.join();
        long total = 0;
        for (long s : seen)
            total += s;
        System.out.println("shared " + shared.n);
        // The Doubler got 3 per call from work's point of view, 6 in fact.
        System.out.println("doubled " + (late.n == 2 * (total - shared.n)));
        System.out.println("class " + late.getClass().getName());
    }
}
