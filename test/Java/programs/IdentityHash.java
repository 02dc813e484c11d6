// Identity hash codes stay the same across fast locking, inflation (by
// contention and by wait) and deflation (the safepoint mode deflates idle
// monitors while this runs).
public class IdentityHash {
    public static void main(String[] args) throws InterruptedException {
        Object[] objs = new Object[64];
        int[] before = new int[objs.length];
        for (int i = 0; i < objs.length; i++) {
            objs[i] = new Object();
            if (i % 2 == 0) before[i] = objs[i].hashCode();
        }
        // Inflate them: contention from 4 threads, and a wait on each.
        Thread[] ts = new Thread[4];
        for (int t = 0; t < ts.length; t++) {
            ts[t] = new Thread(() -> {
                for (int round = 0; round < 200; round++)
                    for (Object o : objs)
                        synchronized (o) {
                            if (round % 50 == 0) {
                                try { o.wait(0, 1); } catch (InterruptedException e) { }
                            }
                        }
            });
            ts[t].start();
        }
        for (Thread t : ts) t.join();
        for (int i = 1; i < objs.length; i += 2) before[i] = System.identityHashCode(objs[i]);
        boolean stable = true;
        for (int round = 0; round < 20; round++) {
            for (int i = 0; i < objs.length; i++) {
                synchronized (objs[i]) {
                    if (objs[i].hashCode() != before[i]) stable = false;
                }
                if (System.identityHashCode(objs[i]) != before[i]) stable = false;
            }
            Thread.sleep(1);
        }
        System.out.println("identity hashes stable: " + stable);
        int distinct = 0;
        for (int i = 0; i < objs.length; i++) {
            boolean unique = true;
            for (int j = 0; j < i; j++) if (before[j] == before[i]) unique = false;
            if (unique) distinct++;
        }
        System.out.println("mostly distinct: " + (distinct > objs.length / 2));
    }
}
