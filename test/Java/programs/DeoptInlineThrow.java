// Uncommon traps in inlined callees whose continuation in tier 0 throws
// (docs/java.md, "Speculation and deoptimization"): check() is inlined
// into the synchronized guarded(), itself inlined into run(), which holds
// `this` (guarded's monitor is an elided nested re-entry). Its never-seen
// side traps with three frames; tier 0 then throws from check's frame, and
// the exception completes guarded's invoke, which catches it (caught), or
// run's, whose region releases `this` before the exception leaves the
// compiled method (escaped). Every monitor must be released once.
public class DeoptInlineThrow {
    int total;

    static int check(int x) {
        if (x >= 1000) throw new IllegalArgumentException();
        return x + 1;
    }

    synchronized int guarded(int x) {
        try {
            return check(x) * 2;
        } catch (IllegalArgumentException e) {
            return -x;
        }
    }

    int caught(int x) {
        synchronized (this) {
            return guarded(x) + 1;
        }
    }

    int escaped(int x) {
        synchronized (this) {
            total += x;
            return check(x) + total;
        }
    }

    public static void main(String[] args) {
        DeoptInlineThrow d = new DeoptInlineThrow();
        long sum = 0;
        for (int round = 0; round < 2; round++) {
            for (int i = 0; i < 400; i++)
                sum += d.caught(i) + d.escaped(i);
            sum += d.caught(1000 + round);
            try {
                sum += d.escaped(1000 + round);
            } catch (IllegalArgumentException e) {
                sum -= 7;
            }
            System.out.println("round " + round + ": sum " + sum + ", total " + d.total
                    + ", holds " + Thread.holdsLock(d));
        }
    }
}
