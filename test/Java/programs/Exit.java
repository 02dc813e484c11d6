// STATUS: 3
// System.exit ends the program at once with its status, other threads
// still running.
public class Exit {
    public static void main(String[] args) {
        Thread spinner = new Thread(() -> { while (true) Thread.onSpinWait(); });
        spinner.start();
        System.out.println("exiting with 3");
        synchronized (Exit.class) {
            System.exit(3);
        }
        System.out.println("unreachable");
    }
}
