// The Java demo of scripts/demo.sh, on N threads (default 4). Bank: each
// thread transfers between accounts holding both locks, taken in id order;
// the total must be conserved. Queue: N/2 producers and N/2 consumers share
// a bounded queue with wait/notifyAll; every item must be consumed once.
// Exits with status 1 when an invariant fails.
public class BankAndQueue {
    static final class Account {
        final int id;
        long balance;
        Account(int id, long balance) { this.id = id; this.balance = balance; }
    }

    static final class Queue {
        private final int[] items = new int[8];
        private int head, count;

        synchronized void put(int v) throws InterruptedException {
            while (count == items.length) wait();
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
    }

    static final int ACCOUNTS = 16, TRANSFERS = 20000, ITEMS = 20000;
    static final Account[] accounts = new Account[ACCOUNTS];
    static long consumedSum, consumedCount;

    static void transfer(Account from, Account to, long amount) {
        Account first = from.id < to.id ? from : to;
        Account second = from.id < to.id ? to : from;
        synchronized (first) {
            synchronized (second) {
                from.balance -= amount;
                to.balance += amount;
            }
        }
    }

    public static void main(String[] args) throws InterruptedException {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        for (int i = 0; i < ACCOUNTS; i++) accounts[i] = new Account(i, 1000);
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int seed = t * 7919 + 1;
            ts[t] = new Thread(() -> {
                int x = seed;
                for (int i = 0; i < TRANSFERS; i++) {
                    x = x * 1103515245 + 12345;
                    int a = (x >>> 8) % ACCOUNTS, b = (x >>> 16) % ACCOUNTS;
                    if (a != b) transfer(accounts[a], accounts[b], (x >>> 4) % 50);
                }
            });
            ts[t].start();
        }
        for (Thread t : ts) t.join();
        long total = 0;
        for (Account a : accounts) total += a.balance;
        boolean bankOk = total == 1000L * ACCOUNTS;
        System.out.println("bank:  " + threads + " threads x " + TRANSFERS + " transfers, total " + total
                + " (expected " + 1000L * ACCOUNTS + ") " + (bankOk ? "OK" : "FAILED"));

        Queue q = new Queue();
        int pairs = Math.max(1, threads / 2), perProducer = ITEMS / pairs;
        Thread[] ps = new Thread[2 * pairs];
        for (int p = 0; p < pairs; p++) {
            final int base = p * perProducer;
            ps[2 * p] = new Thread(() -> {
                try {
                    for (int i = 1; i <= perProducer; i++) q.put(base + i);
                } catch (InterruptedException e) { throw new RuntimeException(e); }
            });
            ps[2 * p + 1] = new Thread(() -> {
                long sum = 0;
                try {
                    for (int i = 0; i < perProducer; i++) sum += q.take();
                } catch (InterruptedException e) { throw new RuntimeException(e); }
                synchronized (BankAndQueue.class) { consumedSum += sum; consumedCount += perProducer; }
            });
        }
        for (Thread t : ps) t.start();
        for (Thread t : ps) t.join();
        long n = (long) pairs * perProducer, expectedSum = n * (n + 1) / 2;
        boolean queueOk = consumedSum == expectedSum && consumedCount == n;
        System.out.println("queue: " + pairs + " producers, " + pairs + " consumers, " + consumedCount
                + " items, sum " + consumedSum + " (expected " + expectedSum + ") " + (queueOk ? "OK" : "FAILED"));
        if (!bankOk || !queueOk) System.exit(1);
    }
}
