// An interrupt racing a notify (JLS 17.2.4). Two threads wait; the main
// thread, holding the lock, notifies once and interrupts the first one, in
// either order. The interrupted thread either returns normally with its flag
// still set (then the notify chose it, and the other still waits) or throws
// with its flag clear (then the notify must have gone to the other thread:
// no notification is lost to an interrupt).
public class InterruptNotify {
    static final Object lock = new Object();
    static int waiting;
    // 0: still waiting or not started; 1: returned normally; 2: threw.
    static int outcomeA, outcomeB;
    static boolean flagAfterA;
    static int failures;

    static void fail(int round, String what) {
        if (failures++ < 10) System.out.println("round " + round + ": " + what);
    }

    public static void main(String[] args) throws InterruptedException {
        int rounds = 300, normalA = 0, threwA = 0;
        for (int round = 0; round < rounds; round++) {
            synchronized (lock) { waiting = 0; outcomeA = outcomeB = 0; }
            Thread a = new Thread(() -> {
                synchronized (lock) {
                    waiting++;
                    try {
                        lock.wait();
                        outcomeA = 1;
                        flagAfterA = Thread.currentThread().isInterrupted();
                    } catch (InterruptedException e) {
                        outcomeA = 2;
                        flagAfterA = Thread.currentThread().isInterrupted();
                    }
                }
            });
            Thread b = new Thread(() -> {
                synchronized (lock) {
                    waiting++;
                    try {
                        lock.wait();
                        outcomeB = 1;
                    } catch (InterruptedException e) {
                        outcomeB = 2;
                    }
                }
            });
            a.setDaemon(true); // a lost wake-up must not hang the program
            b.setDaemon(true);
            a.start();
            b.start();
            // Both are in the wait set once both counted under the lock.
            while (true) {
                synchronized (lock) { if (waiting == 2) break; }
                Thread.sleep(1);
            }
            synchronized (lock) {
                if (round % 2 == 0) { lock.notify(); a.interrupt(); }
                else { a.interrupt(); lock.notify(); }
            }
            a.join(10000);
            if (a.isAlive()) { fail(round, "the interrupted waiter never returned"); break; }
            if (outcomeA == 1) {
                normalA++;
                if (!flagAfterA) fail(round, "returned normally with the interrupt flag clear");
                synchronized (lock) {
                    if (outcomeB != 0) fail(round, "one notify woke both waiters");
                    lock.notify();
                }
            } else {
                threwA++;
                if (flagAfterA) fail(round, "threw with the interrupt flag still set");
            }
            b.join(10000);
            if (b.isAlive()) { fail(round, "a notification was lost to the interrupt"); break; }
            if (outcomeB != 1) fail(round, "the other waiter did not return normally");
        }
        System.out.println("rounds: " + (normalA + threwA) + " of " + rounds);
        System.out.println(failures == 0 ? "every round kept the rules" : "FAILURES: " + failures);
    }
}
