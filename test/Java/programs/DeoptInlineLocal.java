// Uncommon traps in inlined callees inside regions on objects that never
// escape (docs/java.md, "Speculation and deoptimization"): tier 1 elides
// those locks, so the trap's record lists them as elided and the restore
// must take them before the interpreter runs the frames. In viaStatic the
// trap is in the inlined static step() inside the caller's region (frames:
// viaStatic with one monitor, step with none); in viaSync it is in the
// inlined synchronized Cell.add() on a fresh Cell the caller also holds
// (one elided monitor in each frame, the second a nested re-entry).
public class DeoptInlineLocal {
    static final class Cell {
        int value;

        synchronized int add(int x) {
            if (x >= 1000) value -= x;
            else value += x;
            return value;
        }
    }

    static int step(int x) {
        if (x >= 1000) return -x;
        return x + 1;
    }

    static int viaStatic(int x) {
        Object lock = new Object();
        int r;
        synchronized (lock) {
            r = step(x) * 2;
        }
        return r;
    }

    static int viaSync(int x) {
        Cell c = new Cell();
        int r;
        synchronized (c) {
            r = c.add(x) + c.value;
        }
        return r;
    }

    public static void main(String[] args) {
        long sum = 0;
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < 400; i++)
                sum += viaStatic(i) + viaSync(i);
            sum += viaStatic(1000 + round) + viaSync(1000 + round);
            System.out.println("round " + round + ": sum " + sum);
        }
    }
}
