// Java arithmetic: wrap-around, division by zero, MIN_VALUE / -1, shifts,
// conversions, comparisons and switches.
public class Arith {
    static int idiv(int a, int b) { return a / b; }
    static int irem(int a, int b) { return a % b; }
    static long ldiv(long a, long b) { return a / b; }
    static long lrem(long a, long b) { return a % b; }

    static String sw(int k) {
        switch (k) {
            case 0: return "zero";
            case 1: return "one";
            case 2: return "two";
            case 3: return "three";
            default: return "many";
        }
    }

    static String sparse(int k) {
        switch (k) {
            case -100: return "minus hundred";
            case 7: return "seven";
            case 1000000: return "million";
            default: return "other";
        }
    }

    static int strSwitch(String s) {
        switch (s) {
            case "alpha": return 1;
            case "beta": return 2;
            case "Aa": return 3;
            case "BB": return 4; // same hashCode as "Aa"
            default: return 0;
        }
    }

    public static void main(String[] args) {
        int max = Integer.MAX_VALUE, min = Integer.MIN_VALUE;
        System.out.println((max + 1) + " " + (min - 1) + " " + (max * 2) + " " + (-min) + " " + (min / -1) + " " + (min % -1));
        long lmax = Long.MAX_VALUE, lmin = Long.MIN_VALUE;
        System.out.println((lmax + 1) + " " + (lmin - 1) + " " + (lmax * 3) + " " + (-lmin) + " " + ldiv(lmin, -1) + " " + lrem(lmin, -1));
        System.out.println(idiv(min, -1) + " " + irem(min, -1) + " " + idiv(-7, 2) + " " + irem(-7, 2) + " " + irem(7, -2) + " " + ldiv(-7, 2) + " " + lrem(-7, 2));
        try {
            System.out.println(idiv(1, 0));
        } catch (ArithmeticException e) {
            System.out.println("ArithmeticException: " + e.getMessage());
        }
        try {
            System.out.println(irem(1, 0));
        } catch (ArithmeticException e) {
            System.out.println("irem: " + e.getMessage());
        }
        try {
            System.out.println(ldiv(1, 0));
        } catch (ArithmeticException e) {
            System.out.println("ldiv: " + e.getMessage());
        }
        try {
            System.out.println(lrem(1, 0));
        } catch (ArithmeticException e) {
            System.out.println("lrem: " + e.getMessage());
        }
        int x = 0b1011;
        System.out.println((x << 3) + " " + (x << 35) + " " + (-x >> 1) + " " + (-x >>> 28) + " " + (1L << 65) + " " + (-1L >>> 60) + " " + (-16L >> 2));
        System.out.println((x & 6) + " " + (x | 4) + " " + (x ^ 15) + " " + (~x) + " " + (5L & 3L) + " " + (5L | 8L) + " " + (5L ^ 1L));
        long big = 0x1_0000_0001L;
        System.out.println((int) big + " " + (byte) 0x1ff + " " + (char) -1 + 0 + " " + (int) (char) -1 + " " + (short) 0x18000 + " " + (long) min);
        System.out.println((3 < 4) + " " + (4L > 5L) + " " + (-1L < 1L) + " " + (lmin < lmax) + " " + Long.compare(3, 3) + " " + Integer.compare(-5, 5));
        int i = 10;
        i += 5; i -= 3; i *= 4; i /= 5; i %= 7; i <<= 2; i >>= 1; i >>>= 1; i ^= 3; i |= 8; i &= 13;
        long l = 10; l += 1000000000000L; l *= 3; l -= 1;
        System.out.println(i + " " + l + " " + (i++) + " " + (++i) + " " + (i--) + " " + (--i));
        short s = 10; s += 100000; byte bt = 10; bt *= 30; char ch = 'a'; ch += 2;
        System.out.println(s + " " + bt + " " + ch + " " + (ch + 1) + " " + (char) (ch + 1));
        for (int k = -1; k <= 4; k++) System.out.print(sw(k) + " ");
        System.out.println();
        System.out.println(sparse(-100) + " " + sparse(7) + " " + sparse(1000000) + " " + sparse(8));
        System.out.println(strSwitch("alpha") + " " + strSwitch("beta") + " " + strSwitch("Aa") + " " + strSwitch("BB") + " " + strSwitch("gamma"));
        long sum = 0;
        for (int k = 0; k < 100000; k++) sum += k * (long) k;
        System.out.println("sum of squares " + sum);
        int h = 0;
        for (int k = 0; k < 1000; k++) h = 31 * h + k;
        System.out.println("hash " + h);
        System.out.println(0 == -0 ? "zero" : "nonzero");
        boolean t = true, f = false;
        System.out.println((t & f) + " " + (t | f) + " " + (t ^ f) + " " + (!t) + " " + (t && !f) + " " + (f || t));
    }
}
