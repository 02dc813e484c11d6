// Volatile fields: a flag publishes plain writes made before it (the
// readers spin on it), a volatile long is never torn, and a Dekker-style
// handshake with volatile flags never lets both threads in.
public class Volatiles {
    static int data1, data2;
    static volatile boolean ready;
    static volatile long wide;
    static volatile boolean wantA, wantB;
    static volatile int turn;
    static int inside, maxInside, sharedCounter;

    static void dekker(boolean isA, int rounds) {
        for (int i = 0; i < rounds; i++) {
            if (isA) {
                wantA = true;
                while (wantB) {
                    if (turn != 0) {
                        wantA = false;
                        while (turn != 0) Thread.onSpinWait();
                        wantA = true;
                    }
                }
            } else {
                wantB = true;
                while (wantA) {
                    if (turn != 1) {
                        wantB = false;
                        while (turn != 1) Thread.onSpinWait();
                        wantB = true;
                    }
                }
            }
            inside++;
            if (inside > maxInside) maxInside = inside;
            sharedCounter++;
            inside--;
            turn = isA ? 1 : 0;
            if (isA) wantA = false; else wantB = false;
        }
    }

    public static void main(String[] args) throws InterruptedException {
        Thread[] readers = new Thread[3];
        boolean[] ok = new boolean[readers.length];
        for (int i = 0; i < readers.length; i++) {
            final int me = i;
            readers[i] = new Thread(() -> {
                while (!ready) { }
                ok[me] = data1 == 42 && data2 == 43;
            });
            readers[i].start();
        }
        Thread.sleep(5);
        data1 = 42;
        data2 = 43;
        ready = true;
        for (Thread t : readers) t.join();
        System.out.println("readers saw the published data: " + ok[0] + " " + ok[1] + " " + ok[2]);

        boolean[] torn = new boolean[1];
        Thread writer = new Thread(() -> {
            for (int i = 0; i < 20000; i++) wide = (i % 2 == 0) ? -1L : 0L;
        });
        Thread reader = new Thread(() -> {
            for (int i = 0; i < 20000; i++) {
                long v = wide;
                if (v != -1L && v != 0L) torn[0] = true;
            }
        });
        writer.start();
        reader.start();
        writer.join();
        reader.join();
        System.out.println("volatile long torn: " + torn[0]);

        Thread a = new Thread(() -> dekker(true, 5000));
        Thread b = new Thread(() -> dekker(false, 5000));
        a.start();
        b.start();
        a.join();
        b.join();
        System.out.println("Dekker: at most " + maxInside + " inside, counter " + sharedCounter);
    }
}
