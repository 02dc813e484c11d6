// Single inheritance, interfaces with default and static methods, abstract
// classes, static and instance fields, constructors and static
// initializers in order, nested, inner, local and anonymous classes, enums.
public class Classes {
    static StringBuilder log = new StringBuilder();

    interface Greeter {
        String name();
        default String greet() { return "hello " + name(); }
        static Greeter of(String n) { return () -> n; }
    }

    interface Loud extends Greeter {
        default String greet() { return "LOUD " + Greeter.super.greet(); }
    }

    static abstract class Animal implements Greeter {
        static int created;
        protected final String name;
        static { log.append("[Animal clinit]"); }
        Animal(String name) { this.name = name; created++; log.append("[Animal " + name + "]"); }
        public String name() { return name; }
        abstract String sound();
        public String toString() { return getClass().getName() + "(" + name + " says " + sound() + ")"; }
    }

    static class Dog extends Animal {
        static { log.append("[Dog clinit]"); }
        Dog(String n) { super(n); log.append("[Dog]"); }
        String sound() { return "woof"; }
    }

    static class Puppy extends Dog {
        Puppy() { this("pup"); }
        Puppy(String n) { super(n + "py"); }
        @Override String sound() { return "yip (" + super.sound() + ")"; }
        public String greet() { return "puppy greets: " + super.greet(); }
    }

    class Inner {
        int value() { return base * 2; }
    }

    int base = 21;

    enum Color {
        RED, GREEN("g"), BLUE;
        final String code;
        Color() { this("-"); }
        Color(String c) { code = c; }
    }

    static String colorName(Color c) {
        switch (c) {
            case RED: return "red";
            case GREEN: return "green";
            default: return "other";
        }
    }

    static class Point {
        final int x, y;
        Point(int x, int y) { this.x = x; this.y = y; }
        @Override public boolean equals(Object o) {
            if (!(o instanceof Point)) return false;
            Point p = (Point) o;
            return p.x == x && p.y == y;
        }
        @Override public int hashCode() { return 31 * x + y; }
        @Override public String toString() { return "(" + x + "," + y + ")"; }
    }

    static int counter = init("counter");
    static final String CONST = "constant";
    static int init(String what) { log.append("[init " + what + "]"); return 5; }

    public static void main(String[] args) {
        System.out.println(log);
        log.setLength(0);
        Animal a = new Puppy();
        System.out.println(log);
        System.out.println(a + " / " + a.greet() + " / created " + Animal.created);
        Animal d = new Dog("rex");
        System.out.println(d + " / " + d.greet() + " / created " + Animal.created);
        Greeter g = Greeter.of("lambda");
        System.out.println(g.greet() + " " + g.name());
        Greeter anon = new Greeter() {
            int calls;
            public String name() { return "anon" + (++calls); }
        };
        System.out.println(anon.greet() + " " + anon.greet());
        Classes outer = new Classes();
        Classes.Inner in = outer.new Inner();
        System.out.println("inner " + in.value());
        int captured = 3;
        class Local {
            int triple() { return captured * 3; }
        }
        System.out.println("local " + new Local().triple());
        for (Color c : Color.values())
            System.out.print(c + ":" + c.ordinal() + ":" + c.code + ":" + colorName(c) + " ");
        System.out.println();
        System.out.println(Color.valueOf("BLUE") + " " + Color.GREEN.name() + " " + Color.RED.compareTo(Color.BLUE) + " " + (Color.valueOf("RED") == Color.RED));
        try {
            Color.valueOf("PURPLE");
        } catch (IllegalArgumentException e) {
            System.out.println("IllegalArgumentException: " + e.getMessage());
        }
        Point p = new Point(1, 2), q = new Point(1, 2);
        System.out.println(p + " " + p.equals(q) + " " + (p == q) + " " + (p.hashCode() == q.hashCode()) + " " + p.equals("x"));
        System.out.println(counter + " " + CONST + " " + a.getClass().getName() + " " + anon.getClass().getName() + " " + in.getClass().getName() + " " + Color.RED.getClass().getName());
        System.out.println(Dog.class.getName() + " " + (a.getClass() == Puppy.class) + " " + (Dog.class == d.getClass()) + " " + Greeter.class.getName());
        Object o = new Object();
        String s = o.toString();
        System.out.println("Object.toString: " + s.startsWith("java.lang.Object@"));
    }
}
