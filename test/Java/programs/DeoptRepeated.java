// A method whose speculation fails again and again (docs/java.md,
// "Speculation and deoptimization"): each round takes a branch side no
// earlier round took, so each compilation traps once more, until
// --tier1-max-traps sends the method to tier 0 for good; the results are
// the same throughout. Each trap is inside a synchronized block on a local
// object, whose lock jitlock-elide elides: the trap must restore it, or
// tier 0's monitorexit throws IllegalMonitorStateException.
public class DeoptRepeated {
    static int pick(int x, int round) {
        int r = x;
        Object box = new Object();
        synchronized (box) {
            if (round >= 1) r += 1;
            if (round >= 2) r += 10;
            if (round >= 3) r += 100;
            if (round >= 4) r += 1000;
            if (round >= 5) r += 10000;
            if (round >= 6) r += 100000;
        }
        return r;
    }

    public static void main(String[] args) {
        for (int round = 0; round < 7; round++) {
            long sum = 0;
            for (int i = 0; i < 400; i++)
                sum += pick(i, round);
            System.out.println("round " + round + ": " + sum);
        }
    }
}
