// Compiled against nosuchmethod/Lib.java, run with v2/Lib.java, which lacks
// foo(): NoSuchMethodError when the call runs.
public class Main {
    public static void main(String[] args) {
        System.out.println("before");
        Lib.foo();
        System.out.println("after");
    }
}
