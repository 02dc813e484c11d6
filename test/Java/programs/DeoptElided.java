// Uncommon traps (docs/java.md, "Speculation and deoptimization"): java-deopt
// runs this with thresholds low enough that tier 1 compiles each method
// after tier 0 saw only one side of its branch, and the other side then
// traps: inside a synchronized region on an object that never escapes (tier
// 1 elides that lock; the trap must restore it, or the interpreter's
// monitorexit throws), in a plain method, and in a synchronized method
// (whose return must release the monitor the trap left it holding).
public class DeoptElided {
    int total;

    static int local(int x) {
        Object lock = new Object();
        int r;
        synchronized (lock) {
            if (x >= 1000) r = -x;
            else r = x + 1;
        }
        return r;
    }

    static int plain(int x) {
        if (x >= 1000) return x * 2;
        return x + 1;
    }

    synchronized int sync(int x) {
        int r = x;
        if (x >= 1000) r = -x;
        total += r;
        return r;
    }

    public static void main(String[] args) {
        DeoptElided t = new DeoptElided();
        long sum = 0;
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < 400; i++)
                sum += local(i) + plain(i) + t.sync(i);
            sum += local(1000 + round) + plain(1000 + round) + t.sync(1000 + round);
            System.out.println("round " + round + ": sum " + sum + ", total " + t.total
                    + ", holds " + Thread.holdsLock(t));
        }
    }
}
