// Patched by run-java-tests.py --bad-input into type-confused and
// underflowing bytecode: synchronized on an int, and monitorenter on an
// empty operand stack.
public class Confused {
    static Object lock = new Object();

    public static void main(String[] args) {
        synchronized (lock) {
            System.out.println("locked");
        }
    }
}
