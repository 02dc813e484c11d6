// --locking=reserved: objects are allocated reservable, the first thread to
// lock one reserves it, and a contender's revocation is a handshake with the
// reserving thread, which here is blocked in join, sleep or wait (each
// handshake-safe, or the run would hang) or has ended (no handshake).
//
// RUN: rm -rf %t && mkdir -p %t && %javac -d %t %s
// RUN: jitlock-java --locking=reserved -Xint -Xstats -cp %t Reserved 2>&1 \
// RUN:   | FileCheck %s --check-prefixes=OUT,STATS
// RUN: jitlock-java --locking=reserved -Xcomp -Xstats -cp %t Reserved 2>&1 \
// RUN:   | FileCheck %s --check-prefixes=OUT,STATS
// RUN: jitlock-java --locking=reserved --tier1-invocations=50 \
// RUN:   --tier1-backedges=100 --safepoint-every=200 -cp %t Reserved 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OUT
//
// Tier 1 lowers for the runtime's reserved layout (the field in its stamp)
// and inlines the owner's enter, a compare of the header with its tag.
// RUN: jitlock-java --locking=reserved -Xcomp --tier1-inline-size=0 \
// RUN:   --print-tier1=ir --print-tier1-filter=Reserved.increment \
// RUN:   -cp %t Reserved 2>&1 | FileCheck %s --check-prefix=IR
// The lightweight default reserves nothing.
// RUN: jitlock-java -Xint -Xstats -cp %t Reserved 2>&1 \
// RUN:   | FileCheck %s --check-prefixes=OUT,LIGHT
// RUN: not jitlock-java --locking=biased -cp %t Reserved 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD
//
// OUT: alone 100000
// OUT: join 101000
// OUT: sleep 2
// OUT: held 2
// OUT: detached 2
// OUT: wait 1
//
// STATS:      reservations {{[1-9][0-9]*$}}
// STATS:      revocations (held) {{[1-9][0-9]*$}}
// STATS-NEXT: revocations (not held) {{[1-9][0-9]*$}}
// STATS-NEXT: revocations (thread detached) {{[1-9][0-9]*$}}
//
// IR:     @jitlock_layout = {{.*}};reserve=
// IR:     define {{.*}} @java{{[0-9]+}}.Reserved.increment(
// IR:     %jitlock.reserved.to.self = icmp eq i64
//
// LIGHT-NOT: reservations
//
// BAD: jitlock-java: error: --locking must be lightweight or reserved, got 'biased'

public class Reserved {
    private int count;
    static volatile boolean started;

    void increment() {
        synchronized (this) {
            count++;
        }
    }

    public static void main(String[] args) throws Exception {
        // Reserved to main, which then enters it with no atomic instruction.
        Reserved r = new Reserved();
        for (int i = 0; i < 100000; i++)
            r.increment();
        System.out.println("alone " + r.count);

        // Revoked while main blocks in join, not holding it.
        Thread t = new Thread(() -> {
            for (int i = 0; i < 1000; i++)
                r.increment();
        });
        t.start();
        t.join();
        System.out.println("join " + r.count);

        // Revoked while main sleeps until the contender, once it has the
        // object, interrupts it.
        Reserved napped = new Reserved();
        napped.increment();
        Thread main = Thread.currentThread();
        Thread waker = new Thread(() -> {
            napped.increment();
            main.interrupt();
        });
        waker.start();
        try {
            Thread.sleep(Long.MAX_VALUE);
        } catch (InterruptedException e) {
            System.out.println("sleep " + napped.count);
        }
        waker.join();

        // Revoked while main sleeps holding it: it stays main's, fast-locked
        // (or in a monitor), and the contender gets it after main's exit.
        Reserved held = new Reserved();
        Thread contender = new Thread(() -> {
            started = true;
            held.increment();
        });
        synchronized (held) {
            held.count++;
            contender.start();
            while (!started)
                Thread.sleep(1);
            Thread.sleep(100);
        }
        contender.join();
        System.out.println("held " + held.count);

        // Reserved to a thread that has ended: the contender revokes it
        // without a handshake.
        Reserved orphan = new Reserved();
        Thread ended = new Thread(orphan::increment);
        ended.start();
        ended.join();
        orphan.increment();
        System.out.println("detached " + orphan.count);

        // Main's wait on its reserved object inflates it; the notifier
        // takes the monitor.
        Reserved waited = new Reserved();
        synchronized (waited) {
            Thread notifier = new Thread(() -> {
                synchronized (waited) {
                    waited.count++;
                    waited.notifyAll();
                }
            });
            notifier.start();
            while (waited.count == 0)
                waited.wait();
        }
        System.out.println("wait " + waited.count);
    }
}
