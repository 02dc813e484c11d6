public class Lib {
    public static void foo() {}
}
