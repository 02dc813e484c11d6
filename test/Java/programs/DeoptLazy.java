// Lazy deoptimization (docs/deopt.md, "Lazy deoptimization"): tier 1
// inlines Shape.area into run with no class check while Shape is the only
// class that implements it. Four threads run that code, each inside two
// synchronized regions (its own object's and a local one's, which
// jitlock-elide elides), and meet in the middle of each run at a gate. In
// the last round the main thread makes the first Square, which overrides
// area, while they wait there: the code is invalidated, and each frame
// deoptimizes when the gate returns into it, so the next call of area, right
// after the gate, and the rest of its loop call Square.area. A frame that
// kept running the stale code would add Shape's areas instead: the sums say
// so.
public class DeoptLazy {
    static final int THREADS = 4, ROUNDS = 80, N = 64;

    static class Shape {
        int area(int k) {
            return k + 1;
        }
    }

    static class Square extends Shape {
        @Override
        int area(int k) {
            return 3 * k;
        }
    }

    static final Object GATE = new Object();
    static int arrived, opened; // under GATE
    static Shape next;          // under GATE

    // Waits until the main thread opens round r; the round's shape.
    static Shape await(int r) throws InterruptedException {
        synchronized (GATE) {
            arrived++;
            GATE.notifyAll();
            while (opened < r)
                GATE.wait();
            return next;
        }
    }

    static long run(Shape s, Object mine, int r) throws InterruptedException {
        long sum = 0;
        Object box = new Object();
        synchronized (mine) {
            synchronized (box) {
                for (int i = 0; i < N; i++) {
                    sum += s.area(i);
                    if (i == N / 2) {
                        s = await(r);
                        sum += s.area(-i);
                    }
                }
            }
        }
        return sum;
    }

    // Typed Object so that verifying main loads no Square: its first
    // instance loads it.
    static Object makeSquare() {
        return new Square();
    }

    public static void main(String[] args) throws Exception {
        Shape shape = new Shape();
        long[] last = new long[THREADS], total = new long[THREADS];
        Thread[] threads = new Thread[THREADS];
        for (int t = 0; t < THREADS; t++) {
            final int id = t;
            threads[t] = new Thread(() -> {
                Object mine = new Object();
                try {
                    for (int r = 1; r <= ROUNDS + 1; r++) {
                        last[id] = run(shape, mine, r);
                        total[id] += last[id];
                    }
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            });
            threads[t].start();
        }
        for (int r = 1; r <= ROUNDS + 1; r++) {
            synchronized (GATE) {
                while (arrived < THREADS * r)
                    GATE.wait();
                next = r <= ROUNDS ? new Shape() : (Shape) makeSquare();
                opened = r;
                GATE.notifyAll();
            }
        }
        for (Thread t : threads)
            t.join();
        for (int t = 0; t < THREADS; t++)
            System.out.println("thread " + t + ": last " + last[t] + ", total "
                               + total[t]);
        System.out.println("last shape " + next.getClass().getName());
    }
}
