// A bounded buffer with wait/notifyAll: 3 producers and 3 consumers; every
// item produced is consumed exactly once (checked by sums and counts), and
// the buffer never over- or underflows.
public class BoundedBuffer {
    private final int[] items = new int[4];
    private int head, count;
    private boolean broken;

    synchronized void put(int v) throws InterruptedException {
        while (count == items.length) wait();
        if (count < 0 || count >= items.length) broken = true;
        items[(head + count) % items.length] = v;
        count++;
        notifyAll();
    }

    synchronized int take() throws InterruptedException {
        while (count == 0) wait();
        int v = items[head];
        head = (head + 1) % items.length;
        count--;
        notifyAll();
        return v;
    }

    public static void main(String[] args) throws InterruptedException {
        final int producers = 3, consumers = 3, perProducer = 3000;
        BoundedBuffer buf = new BoundedBuffer();
        long[] consumed = new long[consumers];
        int[] taken = new int[consumers];
        Thread[] ts = new Thread[producers + consumers];
        for (int p = 0; p < producers; p++) {
            final int base = p * perProducer;
            ts[p] = new Thread(() -> {
                try {
                    for (int i = 1; i <= perProducer; i++) buf.put(base + i);
                } catch (InterruptedException e) {
                    System.out.println("producer interrupted");
                }
            });
        }
        final int perConsumer = producers * perProducer / consumers;
        for (int c = 0; c < consumers; c++) {
            final int me = c;
            ts[producers + c] = new Thread(() -> {
                try {
                    for (int i = 0; i < perConsumer; i++) {
                        consumed[me] += buf.take();
                        taken[me]++;
                    }
                } catch (InterruptedException e) {
                    System.out.println("consumer interrupted");
                }
            });
        }
        for (Thread t : ts) t.start();
        for (Thread t : ts) t.join();
        long sum = 0;
        int n = 0;
        for (int c = 0; c < consumers; c++) { sum += consumed[c]; n += taken[c]; }
        long expected = (long) producers * perProducer * (producers * perProducer + 1) / 2;
        System.out.println("consumed " + n + " items, sum " + sum + " (expected " + expected + ")");
        System.out.println("left in buffer " + buf.count + (buf.broken ? ", OVERFLOW SEEN" : ", never overflowed"));
    }
}
