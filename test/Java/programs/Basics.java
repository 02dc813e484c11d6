// Strings, concatenation, StringBuilder, printing every supported type,
// Integer/Long/Math/System helpers and boxing.
public class Basics {
    static String describe(Object o) {
        return o == null ? "null" : o.getClass().getName() + ":" + o;
    }

    public static void main(String[] args) {
        System.out.println("Hello, world!");
        int i = 42;
        long l = 1L << 40;
        char c = 'x';
        boolean b = true;
        byte by = (byte) 200;
        short sh = (short) 70000;
        String s = null;
        System.out.println("i=" + i + " l=" + l + " c=" + c + " b=" + b + " by=" + by + " sh=" + sh + " s=" + s);
        System.out.println(i);
        System.out.println(l);
        System.out.println(c);
        System.out.println(b);
        System.out.println(by);
        System.out.println(sh);
        System.out.println(new char[] {'a', 'b', 'c'});
        System.out.print("no newline ");
        System.out.print(7);
        System.out.print(' ');
        System.out.print(8L);
        System.out.print(false);
        System.out.println();
        StringBuilder sb = new StringBuilder("sb:");
        for (int k = 0; k < 5; k++) sb.append(k).append(',');
        sb.append(true).append('!').append(99L).append((Object) null).append("end");
        System.out.println(sb + " len " + sb.length() + " at 3 " + sb.charAt(3));
        System.out.println(new StringBuilder("abc").reverse());
        String hello = "hello";
        System.out.println(hello.length() + " " + hello.charAt(1) + " " + hello.hashCode() + " " + "".hashCode());
        System.out.println(hello.equals("hel" + "lo") + " " + hello.equals(new StringBuilder("hello").toString()) + " " + hello.equals(null) + " " + hello.equals("world"));
        System.out.println(hello.substring(1, 3) + hello.substring(2) + hello.indexOf('l') + hello.indexOf("lo") + hello.concat("!") + hello.isEmpty() + hello.startsWith("he") + hello.endsWith("x") + hello.compareTo("help"));
        System.out.println(String.valueOf(5) + String.valueOf(6L) + String.valueOf(true) + String.valueOf('z') + String.valueOf((Object) null) + String.valueOf(new char[] {'o', 'k'}));
        System.out.println(Integer.toString(-17) + " " + Long.toString(Long.MAX_VALUE) + " " + Integer.parseInt("-2147483648") + " " + Long.parseLong("123456789012") + " " + Integer.MAX_VALUE + " " + Integer.MIN_VALUE + " " + Long.MIN_VALUE);
        System.out.println(Integer.toHexString(-1) + " " + Integer.toBinaryString(10) + " " + Long.toHexString(255L));
        try {
            Integer.parseInt("12x");
        } catch (NumberFormatException e) {
            System.out.println("NumberFormatException: " + e.getMessage());
        }
        System.out.println(Math.abs(-5) + " " + Math.abs(Integer.MIN_VALUE) + " " + Math.min(3, 4) + " " + Math.max(3, 4) + " " + Math.min(-1L, 1L) + " " + Math.max(-1L, 1L) + " " + Math.abs(-9L));
        Integer boxed = 127, boxed2 = 127, big = 1000, big2 = 1000;
        System.out.println((boxed == boxed2) + " " + big.equals(big2) + " " + (boxed + big) + " " + boxed.hashCode() + " " + Long.valueOf(5).hashCode());
        Long lb = 77L;
        long unboxed = lb;
        Boolean bb = true;
        Character cc = 'q';
        System.out.println(unboxed + " " + bb + " " + cc + " " + describe(lb) + " " + describe(bb) + " " + describe(cc) + " " + describe(null));
        int[] src = {1, 2, 3, 4, 5};
        int[] dst = new int[7];
        System.arraycopy(src, 1, dst, 2, 3);
        StringBuilder arr = new StringBuilder();
        for (int v : dst) arr.append(v);
        System.out.println(arr);
        System.arraycopy(src, 0, src, 1, 4);
        System.out.println(src[0] + "" + src[1] + src[2] + src[3] + src[4]);
        long t0 = System.nanoTime(), t1 = System.nanoTime();
        System.out.println("nanoTime monotonic: " + (t1 >= t0) + ", millis positive: " + (System.currentTimeMillis() > 0));
        Object o = new Object();
        System.out.println("identity hash stable: " + (System.identityHashCode(o) == o.hashCode()) + " " + (o.hashCode() == o.hashCode()) + " equals self: " + o.equals(o));
        System.out.println(java.util.Objects.requireNonNull("present") + " " + java.util.Objects.equals(null, null) + " " + java.util.Objects.hashCode(null));
        System.out.println("args: " + args.length);
    }
}
