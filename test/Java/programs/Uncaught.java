// STATUS: 1
// STDERR: Exception in thread "main" java.lang.IllegalStateException: main gives up
// An uncaught exception ends its thread with HotSpot's message on stderr;
// the program goes on. In main, the status is 1 once the other threads
// are done.
public class Uncaught {
    static class Custom extends RuntimeException {
        Custom(String m) { super(m); }
    }

    public static void main(String[] args) throws InterruptedException {
        Object lock = new Object();
        Thread t = new Thread(() -> {
            synchronized (lock) {
                throw new Custom("worker fails holding a lock");
            }
        }, "worker");
        t.start();
        t.join();
        synchronized (lock) {
            System.out.println("the worker's lock was released");
        }
        Thread late = new Thread(() -> {
            try { Thread.sleep(50); } catch (InterruptedException e) { }
            System.out.println("a late thread finishes after main threw");
        });
        late.start();
        System.out.println("main throws now");
        throw new IllegalStateException("main gives up");
    }
}
