// Uncommon traps in inlined callees while other threads contend on the
// objects the trapping frame holds, with the deflation thread running
// (docs/java.md, "Speculation and deoptimization"): four threads move
// amounts between accounts under the bank's lock and the account's; the
// inlined synchronized Account.apply traps on an amount tier 0 never saw,
// which each thread moves now and then (a thread may trap in code another
// thread's trap already invalidated). After the restore the trapping thread
// must own each monitor of its frames, the others wait for them, and the
// totals come out the same as in the interpreter.
public class DeoptInlineContended {
    static final class Account {
        int balance;

        synchronized void apply(int x) {
            if (x >= 1000) balance -= x;
            else balance += x;
        }
    }

    static final Object BANK = new Object();
    static final Account[] ACCOUNTS = new Account[3];

    static void move(Account a, int x) {
        synchronized (BANK) {
            synchronized (a) {
                a.apply(x);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        for (int k = 0; k < ACCOUNTS.length; k++)
            ACCOUNTS[k] = new Account();
        Thread[] threads = new Thread[4];
        for (int t = 0; t < threads.length; t++) {
            final int id = t;
            threads[t] = new Thread(() -> {
                for (int i = 0; i < 3000; i++) {
                    Account a = ACCOUNTS[(i + id) % ACCOUNTS.length];
                    if (i % 1000 == 999 - id) move(a, 1000 + i);
                    else move(a, i % 100);
                }
            });
        }
        for (Thread t : threads) t.start();
        for (Thread t : threads) t.join();
        long total = 0;
        for (Account a : ACCOUNTS) total += a.balance;
        System.out.println("total " + total);
    }
}
