// Float arithmetic is outside jitlock-java's subset: refused before running.
public class Floats {
    public static void main(String[] args) {
        float f = args.length + 0.5f;
        System.out.println(f * 2);
    }
}
