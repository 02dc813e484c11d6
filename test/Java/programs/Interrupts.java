// Thread.interrupt: a waiting thread gets InterruptedException (and holds
// the lock again in its handler), a sleeping one too, a joining one too;
// interrupted() clears the flag, isInterrupted() does not.
public class Interrupts {
    static final Object lock = new Object();
    static volatile boolean waiting;

    public static void main(String[] args) throws InterruptedException {
        Thread waiter = new Thread(() -> {
            synchronized (lock) {
                try {
                    waiting = true;
                    while (true) lock.wait();
                } catch (InterruptedException e) {
                    System.out.println("waiter: InterruptedException; still holds the lock: " + Thread.holdsLock(lock));
                    System.out.println("waiter: flag cleared: " + !Thread.currentThread().isInterrupted());
                }
            }
        }, "waiter");
        waiter.setDaemon(true); // an interrupt that is lost must not hang the program
        waiter.start();
        while (!waiting) Thread.sleep(1);
        synchronized (lock) { waiter.interrupt(); }
        waiter.join(10000);
        if (waiter.isAlive()) System.out.println("THE WAITER MISSED ITS INTERRUPT");

        Thread sleeper = new Thread(() -> {
            try {
                Thread.sleep(60000);
                System.out.println("sleeper: slept through");
            } catch (InterruptedException e) {
                System.out.println("sleeper: " + e.getMessage());
            }
        });
        sleeper.setDaemon(true);
        sleeper.start();
        sleeper.interrupt();
        sleeper.join(10000);

        Thread self = Thread.currentThread();
        self.interrupt();
        System.out.println("isInterrupted: " + self.isInterrupted() + " " + self.isInterrupted());
        System.out.println("interrupted: " + Thread.interrupted() + " then " + Thread.interrupted());
        self.interrupt();
        try {
            Thread.sleep(10);
        } catch (InterruptedException e) {
            System.out.println("sleep with the flag set throws at once");
        }
        Thread forever = new Thread(() -> {
            synchronized (lock) {
                try {
                    lock.wait(100000);
                } catch (InterruptedException e) {
                    System.out.println("timed waiter interrupted");
                }
            }
        });
        Thread joiner = new Thread(() -> {
            try {
                forever.join();
                System.out.println("joiner: joined");
            } catch (InterruptedException e) {
                System.out.println("joiner: interrupted while joining");
            }
        });
        forever.setDaemon(true);
        joiner.setDaemon(true);
        forever.start();
        joiner.start();
        Thread.sleep(20);
        joiner.interrupt();
        joiner.join(10000);
        forever.interrupt();
        forever.join(10000);
        System.out.println("alive after join: " + forever.isAlive() + " " + joiner.isAlive());
    }
}
