// Thread basics: both constructors, a subclass with run(), names,
// currentThread, setName, join(long), isAlive, daemon threads (which the
// VM does not wait for at exit), sleep and notify/wait hand-offs.
public class Threads {
    static class Worker extends Thread {
        final int[] out;
        Worker(int[] out) { this.out = out; }
        @Override public void run() {
            out[0] = 7;
            setName("renamed-worker");
        }
    }

    public static void main(String[] args) throws InterruptedException {
        Thread main = Thread.currentThread();
        System.out.println("main thread: " + main.getName() + " alive " + main.isAlive());
        int[] out = new int[1];
        Worker w = new Worker(out);
        String before = w.getName();
        w.start();
        w.join();
        System.out.println("subclass ran: " + out[0] + ", default name had the Thread- prefix: " + before.startsWith("Thread-") + ", now " + w.getName());
        String[] name = new String[1];
        Thread named = new Thread(() -> name[0] = Thread.currentThread().getName(), "custom");
        named.start();
        named.join();
        System.out.println("named thread saw itself as " + name[0] + ", alive after join: " + named.isAlive());
        Thread plain = new Thread();
        plain.start();
        plain.join();
        System.out.println("a thread without a target ends at once");
        Object gate = new Object();
        boolean[] released = new boolean[1];
        Thread slow = new Thread(() -> {
            synchronized (gate) {
                while (!released[0]) {
                    try { gate.wait(); } catch (InterruptedException e) { return; }
                }
            }
        });
        slow.start();
        slow.join(20);
        System.out.println("join(20) returned with the thread still alive: " + slow.isAlive());
        synchronized (gate) {
            released[0] = true;
            gate.notify();
        }
        slow.join();
        System.out.println("after the notify it ended: " + !slow.isAlive());
        Thread daemon = new Thread(() -> {
            while (true) {
                try { Thread.sleep(1000); } catch (InterruptedException e) { }
            }
        });
        daemon.setDaemon(true);
        daemon.start();
        System.out.println("daemon: " + daemon.isDaemon() + ", main: " + main.isDaemon());
        try {
            daemon.start();
        } catch (IllegalThreadStateException e) {
            System.out.println("second start: IllegalThreadStateException");
        }
        long t0 = System.currentTimeMillis();
        Thread.sleep(30);
        System.out.println("slept at least 25 ms: " + (System.currentTimeMillis() - t0 >= 25));
        // Timeouts of Long.MAX_VALUE milliseconds are legal (and long).
        Thread longWaiter = new Thread(() -> {
            synchronized (gate) {
                try {
                    released[0] = false;
                    gate.notifyAll();
                    while (!released[0]) gate.wait(Long.MAX_VALUE);
                    System.out.println("long waiter notified");
                } catch (InterruptedException e) {
                    System.out.println("long waiter interrupted");
                }
            }
        });
        synchronized (gate) {
            longWaiter.start();
            while (released[0]) gate.wait();
            released[0] = true;
            gate.notifyAll();
        }
        longWaiter.join(Long.MAX_VALUE);
        main.setName("main-renamed");
        System.out.println("main renamed: " + Thread.currentThread().getName());
    }
}
