// Deep recursion throws StackOverflowError, which unwinds every frame and
// releases every lock they held (synchronized methods and blocks); the
// program catches it and goes on, and another thread can take every lock.
public class StackOverflow {
    static final Object a = new Object(), b = new Object();
    int depth;

    synchronized void deepSync() {
        depth++;
        deepSync();
    }

    static int deepBlock(int n) {
        synchronized (n % 2 == 0 ? a : b) {
            return deepBlock(n + 1) + 1;
        }
    }

    static long plain(long n) { return plain(n + 1) + 1; }

    static boolean lockable(Object o) throws InterruptedException {
        boolean[] got = new boolean[1];
        Thread t = new Thread(() -> { synchronized (o) { got[0] = true; } });
        t.setDaemon(true); // a lock never released must not hang the program
        t.start();
        t.join(10000);
        return got[0];
    }

    public static void main(String[] args) throws InterruptedException {
        StackOverflow s = new StackOverflow();
        for (int round = 0; round < 3; round++) {
            try {
                s.deepSync();
                System.out.println("no overflow?");
            } catch (StackOverflowError e) {
                System.out.println("round " + round + ": StackOverflowError from a synchronized method, deep: " + (s.depth > 1000));
            }
            s.depth = 0;
            System.out.println("receiver lockable by another thread: " + lockable(s));
            try {
                synchronized (a) {
                    deepBlock(0);
                }
            } catch (StackOverflowError e) {
                System.out.println("StackOverflowError through synchronized blocks");
            }
            System.out.println("a and b lockable: " + lockable(a) + " " + lockable(b));
        }
        try {
            plain(0);
        } catch (StackOverflowError e) {
            System.out.println("plain recursion: " + e.getClass().getName());
        }
        Thread t = new Thread(() -> {
            try {
                synchronized (b) { deepBlock(1); }
            } catch (StackOverflowError e) {
                System.out.println("caught on another thread too");
            }
        });
        t.start();
        t.join();
        synchronized (a) { synchronized (b) { System.out.println("locking again works"); } }
    }
}
