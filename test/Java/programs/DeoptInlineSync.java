// Uncommon traps in inlined callees (docs/java.md, "Speculation and
// deoptimization"): run() holds `this` and calls the small synchronized
// add() on `this`, which tier 1 inlines and whose lock jitlock-elide elides
// as a nested re-entry. The branch tier 0 never saw taken inside add()
// traps: the trap's state has two frames (run at its invoke, add at the
// branch), run's monitor held and add's elided; the restore must take add's
// as a second hold of `this`, which add's return then releases, and run's
// region releases the first.
public class DeoptInlineSync {
    int total;

    synchronized int add(int x) {
        if (x >= 1000) total -= x;
        else total += x;
        return total;
    }

    int run(int x) {
        int r;
        synchronized (this) {
            r = add(x) + 1;
        }
        return r;
    }

    public static void main(String[] args) {
        DeoptInlineSync d = new DeoptInlineSync();
        long sum = 0;
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < 400; i++)
                sum += d.run(i);
            sum += d.run(1000 + round);
            System.out.println("round " + round + ": sum " + sum + ", total " + d.total
                    + ", holds " + Thread.holdsLock(d));
        }
    }
}
