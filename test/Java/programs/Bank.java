// Transfers between accounts on 6 threads, each holding two nested locks
// taken in id order (no deadlock); auditors lock every account in order
// and check the total. The total never changes.
public class Bank {
    static final class Account {
        final int id;
        long balance;
        Account(int id, long balance) { this.id = id; this.balance = balance; }
    }

    static final int ACCOUNTS = 10, THREADS = 6, TRANSFERS = 5000;
    static final Account[] accounts = new Account[ACCOUNTS];
    static volatile boolean auditFailed;

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

    static long audit(int i) {
        if (i == ACCOUNTS) return 0;
        synchronized (accounts[i]) {
            return accounts[i].balance + audit(i + 1);
        }
    }

    public static void main(String[] args) throws InterruptedException {
        for (int i = 0; i < ACCOUNTS; i++) accounts[i] = new Account(i, 1000);
        Thread[] ts = new Thread[THREADS];
        for (int t = 0; t < THREADS; t++) {
            final int seed = t + 1;
            ts[t] = new Thread(() -> {
                int x = seed * 7919;
                for (int k = 0; k < TRANSFERS; k++) {
                    x = x * 1103515245 + 12345;
                    int a = (x >>> 8) % ACCOUNTS, b = (x >>> 16) % ACCOUNTS;
                    if (a == b) b = (b + 1) % ACCOUNTS;
                    transfer(accounts[a], accounts[b], (x >>> 20) % 50);
                    if (k % 500 == 0 && audit(0) != ACCOUNTS * 1000L) auditFailed = true;
                }
            }, "teller-" + t);
        }
        for (Thread t : ts) t.start();
        for (Thread t : ts) t.join();
        long total = 0;
        for (Account a : accounts) total += a.balance;
        System.out.println("total " + total + " (expected " + ACCOUNTS * 1000 + ")");
        System.out.println(auditFailed ? "AN AUDIT FAILED" : "every audit balanced");
    }
}
