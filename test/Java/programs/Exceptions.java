// try/catch/finally, user exceptions, exceptions out of a synchronized
// block and a synchronized method (the lock is released: another thread
// takes it), IllegalMonitorStateException and synchronized (null).
public class Exceptions {
    static class MyException extends RuntimeException {
        final int code;
        MyException(String m, int code) { super(m); this.code = code; }
    }

    static class Checked extends Exception {
        Checked(String m) { super(m); }
    }

    static class Quiet extends Exception {
        @Override public String getMessage() { return "overridden message"; }
    }

    static final Object lock = new Object();
    static int entered;

    static void throwInBlock() {
        synchronized (lock) {
            entered++;
            throw new MyException("from a synchronized block", 1);
        }
    }

    static synchronized void throwInMethod() throws Checked {
        entered++;
        throw new Checked("from a synchronized method");
    }

    static String finallyOrder() {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 3; i++) {
            try {
                try {
                    sb.append("t").append(i);
                    if (i == 1) throw new IllegalStateException("one");
                    if (i == 2) continue;
                } finally {
                    sb.append("f");
                }
                sb.append("n");
            } catch (IllegalStateException e) {
                sb.append("c:").append(e.getMessage());
            }
        }
        return sb.toString();
    }

    @SuppressWarnings("finally")
    static int finallyWins() {
        try {
            return 1;
        } finally {
            return 2;
        }
    }

    static boolean otherThreadCanLock(Object o) throws InterruptedException {
        boolean[] got = new boolean[1];
        Thread t = new Thread(() -> { synchronized (o) { got[0] = true; } });
        t.setDaemon(true); // a lock never released must not hang the program
        t.start();
        t.join(10000);
        return got[0];
    }

    public static void main(String[] args) throws Exception {
        try {
            throwInBlock();
        } catch (MyException e) {
            System.out.println("caught " + e.getMessage() + " code " + e.code + " " + e);
        }
        System.out.println("block lock free for others: " + otherThreadCanLock(lock));
        try {
            throwInMethod();
        } catch (Checked e) {
            System.out.println("caught " + e);
        }
        System.out.println("method lock free for others: " + otherThreadCanLock(Exceptions.class));
        System.out.println(finallyOrder() + " " + finallyWins());
        Object o = new Object();
        try {
            o.notify();
        } catch (IllegalMonitorStateException e) {
            System.out.println("notify without the lock: " + e.getClass().getName());
        }
        try {
            o.notifyAll();
        } catch (IllegalMonitorStateException e) {
            System.out.println("notifyAll without the lock: " + e.getClass().getName());
        }
        try {
            o.wait();
        } catch (IllegalMonitorStateException e) {
            System.out.println("wait without the lock: " + e.getClass().getName());
        }
        try {
            o.wait(10);
        } catch (IllegalMonitorStateException e) {
            System.out.println("timed wait without the lock: " + e.getClass().getName());
        }
        synchronized (o) {
            o.notify();
            o.wait(1);
            System.out.println("timed wait with the lock returned");
        }
        Object nothing = null;
        try {
            synchronized (nothing) {
                System.out.println("unreachable");
            }
        } catch (NullPointerException e) {
            System.out.println("synchronized (null): NullPointerException");
        }
        String s = null;
        try {
            s.length();
        } catch (NullPointerException e) {
            System.out.println("null receiver: NullPointerException");
        }
        try {
            throw new Quiet();
        } catch (Exception e) {
            System.out.println(e + " | " + e.getMessage());
        }
        Throwable chained = new RuntimeException("outer", new Error("inner"));
        System.out.println(chained.getMessage() + " <- " + chained.getCause().getMessage());
        System.out.println(new IllegalStateException(new ArithmeticException("root")).getMessage());
        Exception[] all = {new Exception(), new RuntimeException("r"), new IllegalArgumentException("a"),
            new IllegalStateException("s"), new InterruptedException("i"), new ClassCastException("c"),
            new ArrayIndexOutOfBoundsException("x"), new NegativeArraySizeException("n"),
            new ArithmeticException("m"), new NullPointerException("p"), new IllegalMonitorStateException("ims")};
        for (Exception e : all) System.out.println(e);
        Error[] errors = {new Error("e"), new StackOverflowError("so"), new OutOfMemoryError("oom")};
        for (Error e : errors) System.out.println(e + " " + (e instanceof Throwable));
        try {
            try {
                throw new MyException("first", 7);
            } finally {
                System.out.println("finally ran before the handler");
            }
        } catch (RuntimeException e) {
            System.out.println("then caught " + e.getMessage());
        }
    }
}
