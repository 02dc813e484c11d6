// invokedynamic: lambdas and method references (static, bound, unbound,
// constructor) as Runnables, threads and user functional interfaces, with
// captured values, boxing and unboxing; string concatenation with
// constants.
import java.util.function.*;

public class Lambdas {
    @FunctionalInterface
    interface IntOp { int apply(int a, int b); }

    @FunctionalInterface
    interface Maker<T> { T make(String s); }

    interface LongFn { long go(long x, int y, String z); }

    static int twice(int x) { return 2 * x; }

    final String tag = "tag";
    String tagged(String s) { return tag + ":" + s; }

    static final class Box {
        final String v;
        Box(String v) { this.v = v; }
        public String toString() { return "Box(" + v + ")"; }
    }

    public static void main(String[] args) throws InterruptedException {
        int base = 10;
        long big = 1L << 33;
        String word = "w";
        IntOp add = (a, b) -> a + b + base;
        IntOp mul = (a, b) -> a * b;
        System.out.println(add.apply(1, 2) + " " + mul.apply(6, 7));
        LongFn lf = (x, y, z) -> x + y + big + z.length();
        System.out.println(lf.go(5L, 6, word));
        Function<Integer, Integer> f = Lambdas::twice;
        Supplier<String> sup = () -> word + base;
        BiFunction<Integer, Integer, Integer> bi = (x, y) -> x * 10 + y;
        System.out.println(f.apply(21) + " " + sup.get() + " " + bi.apply(3, 4));
        Lambdas self = new Lambdas();
        Function<String, String> bound = self::tagged;
        Function<Lambdas, String> unbound = l -> l.tag;
        Maker<Box> ctor = Box::new;
        System.out.println(bound.apply("x") + " " + unbound.apply(self) + " " + ctor.make("b"));
        IntUnaryOperator inc = v -> v + 1;
        IntBinaryOperator max = Math::max;
        IntPredicate even = v -> v % 2 == 0;
        IntSupplier answer = () -> 42;
        Predicate<String> empty = String::isEmpty;
        Consumer<String> printer = System.out::println;
        printer.accept("consumer " + inc.applyAsInt(1) + " " + max.applyAsInt(3, 9) + " " + even.test(4) + " " + answer.getAsInt() + " " + empty.test(""));
        int[] counter = new int[1];
        Runnable r = () -> { synchronized (counter) { counter[0]++; } };
        Thread[] ts = new Thread[6];
        for (int i = 0; i < ts.length; i++) {
            ts[i] = new Thread(() -> { for (int k = 0; k < 1000; k++) r.run(); });
            ts[i].start();
        }
        for (Thread t : ts) t.join();
        System.out.println("lambda threads counted " + counter[0]);
        char c = 'c';
        boolean flag = true;
        Object nul = null;
        System.out.println("concat: " + c + flag + nul + 1 + big + " \u0001 \u0002 done");
    }
}
