// VM-ARGS: --heap=8m
// NO-JAVA: the heap limit is a jitlock-java option
// Allocation past --heap throws OutOfMemoryError, which the program
// catches; the locks it held while allocating are released normally.
public class OutOfMemory {
    static Object[] keep = new Object[100000];

    public static void main(String[] args) {
        Object lock = new Object();
        int n = 0;
        try {
            synchronized (lock) {
                while (true) keep[n++] = new long[64 * 1024];
            }
        } catch (OutOfMemoryError e) {
            System.out.println("OutOfMemoryError: " + e.getMessage() + " after more than 4 arrays: " + (n > 4));
        }
        keep = null;
        synchronized (lock) {
            System.out.println("lock free again");
        }
    }
}
