// Static initializers run once even when 8 threads race to initialize the
// class (JVMS 5.5: the others wait until it is done and then see its
// writes); a failing initializer gives ExceptionInInitializerError first
// and NoClassDefFoundError after.
public class StaticInit {
    static volatile int runs;

    static class Slow {
        static final int[] table;
        static {
            runs++;
            int[] t = new int[1000];
            for (int i = 0; i < t.length; i++) t[i] = i * i;
            try { Thread.sleep(20); } catch (InterruptedException e) { }
            table = t;
        }
        static int get(int i) { return table[i]; }
    }

    static class Broken {
        static int value = compute();
        static int compute() { throw new IllegalStateException("init failed"); }
    }

    static class Parent {
        static String order = "";
        static { order += "P"; }
    }

    static class Child extends Parent {
        static { order += "C"; }
        static void touch() { }
    }

    public static void main(String[] args) throws InterruptedException {
        Thread[] ts = new Thread[8];
        int[] seen = new int[ts.length];
        for (int t = 0; t < ts.length; t++) {
            final int me = t;
            ts[t] = new Thread(() -> seen[me] = Slow.get(999));
        }
        for (Thread t : ts) t.start();
        for (Thread t : ts) t.join();
        boolean allSaw = true;
        for (int v : seen) allSaw &= v == 999 * 999;
        System.out.println("initializer runs: " + runs + ", every thread saw the table: " + allSaw);
        try {
            System.out.println(Broken.value);
        } catch (ExceptionInInitializerError e) {
            System.out.println("first use: ExceptionInInitializerError, cause " + e.getCause());
        }
        try {
            System.out.println(Broken.value);
        } catch (NoClassDefFoundError e) {
            System.out.println("second use: NoClassDefFoundError");
        }
        Child.touch();
        System.out.println("superclass first: " + Parent.order);
    }
}
