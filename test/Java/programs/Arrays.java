// Arrays of every type, bounds checks, negative sizes, multi-dimensional
// arrays, array covariance, ArrayStoreException, checkcast and instanceof.
public class Arrays {
    interface Shape { int sides(); }
    static class Square implements Shape { public int sides() { return 4; } }
    static class Triangle implements Shape { public int sides() { return 3; } }

    public static void main(String[] args) {
        boolean[] z = new boolean[3];
        byte[] b = new byte[3];
        char[] c = new char[3];
        short[] s = new short[3];
        int[] i = new int[3];
        long[] l = new long[3];
        String[] str = new String[3];
        z[1] = true; b[1] = (byte) -3; c[1] = 'Z'; s[1] = (short) -30000; i[1] = -7; l[1] = -1L << 50; str[1] = "s";
        System.out.println(z[0] + " " + z[1] + " " + b[1] + " " + (int) c[0] + c[1] + " " + s[1] + " " + i[1] + " " + l[1] + " " + str[0] + str[1]);
        System.out.println(z.length + b.length + c.length + s.length + i.length + l.length + str.length);
        int[] filled = {5, 4, 3, 2, 1};
        int total = 0;
        for (int v : filled) total += v;
        System.out.println("total " + total);
        try {
            i[3] = 1;
        } catch (ArrayIndexOutOfBoundsException e) {
            System.out.println("AIOOBE: " + e.getMessage());
        }
        try {
            System.out.println(l[-1]);
        } catch (ArrayIndexOutOfBoundsException e) {
            System.out.println("AIOOBE: " + e.getMessage());
        }
        try {
            int[] neg = new int[filled[4] - 3];
            System.out.println(neg.length);
        } catch (NegativeArraySizeException e) {
            System.out.println("NegativeArraySizeException: " + e.getMessage());
        }
        int[] nul = null;
        try {
            System.out.println(nul.length);
        } catch (NullPointerException e) {
            System.out.println("NPE on arraylength");
        }
        try {
            nul[0] = 1;
        } catch (NullPointerException e) {
            System.out.println("NPE on iastore");
        }
        int[][] grid = new int[3][4];
        for (int r = 0; r < 3; r++)
            for (int k = 0; k < 4; k++) grid[r][k] = r * 10 + k;
        System.out.println(grid[2][3] + " " + grid.length + " " + grid[0].length);
        long[][][] cube = new long[2][3][];
        cube[1][2] = new long[] {9L, 8L};
        System.out.println(cube[1][2][1] + " " + (cube[0][0] == null) + " " + cube[1].length);
        int[][] ragged = {{1}, {2, 3}, {}};
        System.out.println(ragged[1][1] + ragged[2].length);
        Object[] objs = new String[2];
        try {
            objs[0] = "fine";
            objs[1] = Integer.valueOf(1);
        } catch (ArrayStoreException e) {
            System.out.println("ArrayStoreException: " + e.getMessage());
        }
        Shape[] shapes = {new Square(), new Triangle(), new Square()};
        int sides = 0;
        for (Shape sh : shapes) sides += sh.sides();
        System.out.println("sides " + sides);
        Object o = shapes[1];
        System.out.println((o instanceof Shape) + " " + (o instanceof Square) + " " + (o instanceof Triangle) + " " + (null instanceof Object) + " " + (shapes instanceof Object[]) + " " + (objs instanceof String[]));
        try {
            Square sq = (Square) o;
            System.out.println(sq);
        } catch (ClassCastException e) {
            System.out.println("ClassCastException caught");
        }
        Object n = null;
        Square fromNull = (Square) n;
        System.out.println("null casts: " + fromNull);
        int[] copy = filled.clone();
        copy[0] = 99;
        System.out.println(filled[0] + " " + copy[0] + " " + copy.length);
        System.out.println(new int[0].getClass().getName() + " " + str.getClass().getName() + " " + grid.getClass().getName());
        char[] word = {'j', 'a', 'v', 'a'};
        System.out.println(new String(word) + " " + new String(word).length());
    }
}
