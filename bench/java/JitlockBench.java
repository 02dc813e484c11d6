// The monitor kernels of the jitlock-java benchmark suite, written in the
// subset jitlock-java runs (docs/java.md) so that the same class files run on
// jitlock-java and on HotSpot (scripts/java-vs-hotspot.sh).
//
//   java JitlockBench [--ops N] [--warmup W] [--timed T] [--only NAME[,...]]
//
// Each kernel runs W untimed rounds (so that both VMs compile its methods),
// then T rounds (default 1) each timed with System.nanoTime, and prints one
// line with the median of the T:
//
//   NAME ns_per_op 12.345
//
// An "op" is one monitor acquisition the program asks for (one synchronized
// call or block), one object allocated and locked, or one item handed from the
// producer to the consumer. Every round checks its own result (counts, sums,
// that no lock is still held); a wrong one prints "NAME FAIL why" instead of a
// number and the exit status is 1, so a broken lock can't produce a fast
// number. No floating point (outside the subset): ns per op is computed in
// thousandths with long arithmetic.
public final class JitlockBench {
    /// One kernel: setUp (untimed) then run (timed) per round; run returns
    /// null when the result is right, else why it is wrong.
    abstract static class Kernel {
        final String name;
        final long ops;

        Kernel(String name, long ops) {
            this.name = name;
            this.ops = ops;
        }

        void setUp() {}

        abstract String run();
    }

    static int failures;
    // Objects stored here escape, so HotSpot's escape analysis can't remove
    // their locks; the lock elision a kernel measures is the one it asks for.
    static Object published;
    static final Object[] RING = new Object[1024];

    // --- a synchronized counter ---------------------------------------------

    static final class Counter {
        private long count;

        synchronized void increment() { count++; }

        synchronized long get() { return count; }
    }

    static String checkReleased(Object lock) {
        return Thread.holdsLock(lock) ? "lock still held after the loop" : null;
    }

    static String expectCount(String what, long got, long want) {
        if (got == want) return null;
        return what + " is " + got + ", expected " + want;
    }

    static final class CounterKernel extends Kernel {
        CounterKernel(long ops) { super("counter", ops); }

        String run() {
            Counter c = new Counter();
            published = c;
            for (long i = 0; i < ops; i++) c.increment();
            String bad = checkReleased(c);
            return bad != null ? bad : expectCount("count", c.get(), ops);
        }
    }

    // --- a recursive synchronized method -------------------------------------

    static final class Recursive {
        private long calls;

        // Every level re-enters the monitor its caller holds.
        synchronized int descend(int depth) {
            calls++;
            return depth == 0 ? 0 : 1 + descend(depth - 1);
        }
    }

    static final int RECURSION_DEPTH = 4; // levels below the outermost call

    static final class RecursiveKernel extends Kernel {
        RecursiveKernel(long ops) {
            super("recursive", ops / (RECURSION_DEPTH + 1) * (RECURSION_DEPTH + 1));
        }

        String run() {
            Recursive r = new Recursive();
            published = r;
            long outer = ops / (RECURSION_DEPTH + 1), depths = 0;
            for (long i = 0; i < outer; i++) depths += r.descend(RECURSION_DEPTH);
            String bad = checkReleased(r);
            if (bad == null) bad = expectCount("depth sum", depths, outer * RECURSION_DEPTH);
            return bad != null ? bad : expectCount("calls", r.calls, ops);
        }
    }

    // --- two different objects, nested ---------------------------------------

    static final class Cell {
        long value;
    }

    static final class NestedKernel extends Kernel {
        NestedKernel(long ops) { super("nested", ops); }

        String run() {
            Cell outer = new Cell(), inner = new Cell();
            RING[0] = outer;
            RING[1] = inner;
            // An op is the pair: two acquisitions, outer then inner.
            for (long i = 0; i < ops; i++) {
                synchronized (outer) {
                    synchronized (inner) {
                        outer.value++;
                        inner.value += 2;
                    }
                }
            }
            String bad = checkReleased(outer);
            if (bad == null) bad = checkReleased(inner);
            if (bad == null) bad = expectCount("outer", outer.value, ops);
            return bad != null ? bad : expectCount("inner", inner.value, 2 * ops);
        }
    }

    // --- an inflated monitor ------------------------------------------------

    static final class InflatedKernel extends Kernel {
        Cell lock;

        InflatedKernel(long ops) { super("inflated", ops); }

        // wait(1) inflates the monitor in both VMs (a wait needs the full
        // monitor); it stays inflated for the timed loop unless a VM deflates
        // it, which each VM's idle-monitor policy decides.
        void setUp() {
            lock = new Cell();
            published = lock;
            synchronized (lock) {
                try {
                    lock.wait(1);
                } catch (InterruptedException e) {
                    throw new IllegalStateException("interrupted");
                }
            }
        }

        String run() {
            Cell l = lock;
            for (long i = 0; i < ops; i++) {
                synchronized (l) {
                    l.value++;
                }
            }
            String bad = checkReleased(l);
            return bad != null ? bad : expectCount("count", l.value, ops);
        }
    }

    // --- a StringBuffer-like class, chained calls on a thread-local object ---

    /// StringBuffer's shape: every method synchronized, append returns this.
    static final class SyncBuffer {
        private char[] chars = new char[16];
        private int length;

        synchronized SyncBuffer append(char c) {
            if (length == chars.length) {
                char[] bigger = new char[length * 2];
                System.arraycopy(chars, 0, bigger, 0, length);
                chars = bigger;
            }
            chars[length++] = c;
            return this;
        }

        synchronized int length() { return length; }

        synchronized long checksumAndClear() {
            long sum = 0;
            for (int i = 0; i < length; i++) sum = sum * 31 + chars[i];
            length = 0;
            return sum;
        }
    }

    static final int CHAIN = 4; // appends per statement
    static final int STATEMENTS = 256; // statements per buffer

    /// One buffer's life: STATEMENTS chained statements, cleared every 4,
    /// the sum of the checksums. The buffer never leaves this method (a
    /// method of its own, so that HotSpot compiles it from its entry, not
    /// on-stack-replaced, and its escape analysis sees the allocation): C2
    /// may remove every lock of it, and does by default once it inlines the
    /// appends.
    static long chainOneBuffer() {
        SyncBuffer sb = new SyncBuffer();
        long sum = 0;
        for (int i = 0; i < STATEMENTS; i++) {
            sb.append('a').append('b').append('c').append('d');
            if ((i & 3) == 3) sum += sb.checksumAndClear();
        }
        return Thread.holdsLock(sb) || sb.length() != 0 ? -1 : sum;
    }

    static final class ChainKernel extends Kernel {
        ChainKernel(long ops) {
            super("sbchain", ops / (CHAIN * STATEMENTS) * (CHAIN * STATEMENTS));
        }

        String run() {
            long buffers = ops / (CHAIN * STATEMENTS), sum = 0;
            for (long i = 0; i < buffers; i++) sum += chainOneBuffer();
            // Between clears, 4 statements of "abcd": the checksum of 16 chars.
            long block = 0;
            for (int k = 0; k < 4 * CHAIN; k++) block = block * 31 + ('a' + k % CHAIN);
            return expectCount("checksum", sum, block * (STATEMENTS / 4) * buffers);
        }
    }

    // --- allocate-and-lock churn ----------------------------------------------

    static final class ChurnKernel extends Kernel {
        ChurnKernel(long ops) { super("churn", ops); }

        String run() {
            long sum = 0;
            for (long i = 0; i < ops; i++) {
                Cell c = new Cell();
                synchronized (c) {
                    c.value = i;
                }
                // Published, so the lock is not removed as a thread-local one.
                RING[(int) (i & (RING.length - 1))] = c;
                sum += c.value;
            }
            for (int k = 0; k < RING.length; k++)
                if (RING[k] != null && Thread.holdsLock(RING[k]))
                    return "a churned object is still locked";
            return expectCount("sum", sum, ops * (ops - 1) / 2);
        }
    }

    // --- a counter contended by N threads --------------------------------------

    /// Holds started threads until the timed part begins, so that thread
    /// start-up is not timed and the threads really overlap (started one by
    /// one, the first could finish before the last one runs).
    static final class StartGate {
        private int arrived;
        private boolean open;

        synchronized void arriveAndAwait() throws InterruptedException {
            arrived++;
            notifyAll();
            while (!open) wait();
        }

        synchronized void awaitArrivals(int n) throws InterruptedException {
            while (arrived < n) wait();
        }

        synchronized void open() {
            open = true;
            notifyAll();
        }
    }

    static final class Incrementer extends Thread {
        final Counter counter;
        final long times;
        final StartGate gate;
        boolean interrupted;

        Incrementer(Counter counter, long times, StartGate gate) {
            this.counter = counter;
            this.times = times;
            this.gate = gate;
        }

        public void run() {
            try {
                gate.arriveAndAwait();
            } catch (InterruptedException e) {
                interrupted = true;
                return;
            }
            for (long i = 0; i < times; i++) counter.increment();
        }
    }

    static String joinAll(Thread[] ts) {
        try {
            for (int t = 0; t < ts.length; t++) ts[t].join();
        } catch (InterruptedException e) {
            return "interrupted";
        }
        return null;
    }

    static final class ContendedKernel extends Kernel {
        final int threads;
        Counter counter;
        Incrementer[] workers;
        StartGate gate;

        ContendedKernel(int threads, long ops) {
            super("contended-" + threads, ops / threads * threads);
            this.threads = threads;
        }

        void setUp() {
            counter = new Counter();
            published = counter;
            gate = new StartGate();
            workers = new Incrementer[threads];
            for (int t = 0; t < threads; t++)
                workers[t] = new Incrementer(counter, ops / threads, gate);
            for (int t = 0; t < threads; t++) workers[t].start();
            try {
                gate.awaitArrivals(threads);
            } catch (InterruptedException e) {
                throw new IllegalStateException("interrupted");
            }
        }

        String run() {
            gate.open();
            String bad = joinAll(workers);
            for (int t = 0; bad == null && t < threads; t++)
                if (workers[t].interrupted) bad = "a worker was interrupted";
            return bad != null ? bad : expectCount("count", counter.get(), ops);
        }
    }

    // --- a producer and a consumer with wait/notify ----------------------------

    static final class Channel {
        private final long[] items = new long[8];
        private int head, count;

        synchronized void put(long v) throws InterruptedException {
            while (count == items.length) wait();
            items[(head + count) & 7] = v;
            count++;
            if (count == 1) notify(); // the consumer waits only when empty
        }

        synchronized long take() throws InterruptedException {
            while (count == 0) wait();
            long v = items[head];
            head = (head + 1) & 7;
            count--;
            if (count == items.length - 1) notify(); // the producer: only when full
            return v;
        }
    }

    static final class Producer extends Thread {
        final Channel channel;
        final long items;
        final StartGate gate;
        boolean interrupted;

        Producer(Channel channel, long items, StartGate gate) {
            this.channel = channel;
            this.items = items;
            this.gate = gate;
        }

        public void run() {
            try {
                gate.arriveAndAwait();
                for (long i = 1; i <= items; i++) channel.put(i);
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
    }

    static final class ProducerConsumerKernel extends Kernel {
        Channel channel;
        Producer producer;
        StartGate gate;

        ProducerConsumerKernel(long ops) { super("prodcons", ops); }

        void setUp() {
            channel = new Channel();
            published = channel;
            gate = new StartGate();
            producer = new Producer(channel, ops, gate);
            producer.start();
            try {
                gate.awaitArrivals(1);
            } catch (InterruptedException e) {
                throw new IllegalStateException("interrupted");
            }
        }

        String run() {
            gate.open();
            long sum = 0;
            try {
                for (long i = 0; i < ops; i++) sum += channel.take();
            } catch (InterruptedException e) {
                return "interrupted";
            }
            String bad = joinAll(new Thread[] {producer});
            if (bad == null && producer.interrupted) bad = "producer interrupted";
            return bad != null ? bad : expectCount("sum", sum, ops * (ops + 1) / 2);
        }
    }

    // --- the driver -------------------------------------------------------------

    /// nanos / ops with three decimals, e.g. "12.345".
    static String perOp(long nanos, long ops) {
        long thousandths = nanos * 1000 / ops;
        long frac = thousandths % 1000;
        String digits = frac < 10 ? "00" + frac : frac < 100 ? "0" + frac : "" + frac;
        return thousandths / 1000 + "." + digits;
    }

    /// Whether NAME is one of ONLY's comma-separated names (null: all).
    static boolean selected(String only, String name) {
        if (only == null) return true;
        int from = 0;
        for (int i = 0; i <= only.length(); i++) {
            if (i < only.length() && only.charAt(i) != ',') continue;
            if (only.substring(from, i).equals(name)) return true;
            from = i + 1;
        }
        return false;
    }

    /// W untimed rounds, then T timed ones; prints the median of the T.
    static void measure(Kernel k, int warmup, int timed) {
        for (int r = 0; r < warmup; r++) {
            k.setUp();
            String bad = k.run();
            if (bad != null) {
                fail(k.name, "warm-up round " + r + ": " + bad);
                return;
            }
        }
        long[] nanos = new long[timed];
        for (int r = 0; r < timed; r++) {
            k.setUp();
            long start = System.nanoTime();
            String bad = k.run();
            long t = System.nanoTime() - start;
            if (bad != null) {
                fail(k.name, "timed round " + r + ": " + bad);
                return;
            }
            if (t <= 0) {
                fail(k.name, "the clock did not advance");
                return;
            }
            // Insertion sort: a handful of rounds.
            int i = r;
            for (; i > 0 && nanos[i - 1] > t; i--) nanos[i] = nanos[i - 1];
            nanos[i] = t;
        }
        System.out.println(k.name + " ns_per_op " + perOp(nanos[timed / 2], k.ops));
    }

    static void fail(String name, String why) {
        System.out.println(name + " FAIL " + why);
        failures++;
    }

    static void usage(String why) {
        System.err.println("JitlockBench: " + why);
        System.err.println("usage: JitlockBench [--ops N] [--warmup W] [--timed T] [--only NAME[,NAME...]]");
        System.exit(2);
    }

    public static void main(String[] args) {
        long ops = 1000000;
        int warmup = 3, timed = 1;
        String only = null;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (i + 1 >= args.length) usage("missing value after " + a);
            String v = args[++i];
            try {
                if (a.equals("--ops")) ops = Long.parseLong(v);
                else if (a.equals("--warmup")) warmup = Integer.parseInt(v);
                else if (a.equals("--timed")) timed = Integer.parseInt(v);
                else if (a.equals("--only")) only = v;
                else usage("unknown option " + a);
            } catch (NumberFormatException e) {
                usage("not a number: " + v);
            }
        }
        if (ops < 4096 || warmup < 0 || timed < 1)
            usage("--ops must be at least 4096, --warmup at least 0 and --timed at least 1");

        // Per-kernel op counts, scaled so that each kernel takes a similar time.
        Kernel[] kernels = {
            new CounterKernel(ops),
            new RecursiveKernel(ops),
            new NestedKernel(ops),
            new InflatedKernel(ops),
            new ChainKernel(ops),
            new ChurnKernel(ops / 2),
            new ContendedKernel(2, ops / 4),
            new ContendedKernel(4, ops / 4),
            new ContendedKernel(8, ops / 4),
            new ProducerConsumerKernel(ops / 64),
        };
        boolean any = false;
        for (Kernel k : kernels) {
            if (!selected(only, k.name)) continue;
            any = true;
            measure(k, warmup, timed);
        }
        if (!any) usage("no kernel named in --only " + only);
        if (failures > 0) System.exit(1);
    }
}
