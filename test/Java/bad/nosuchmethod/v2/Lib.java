public class Lib {
    public static void bar() {}
}
