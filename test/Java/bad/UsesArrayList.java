// java.util.ArrayList is not in the built-in library.
public class UsesArrayList {
    public static void main(String[] args) {
        java.util.ArrayList<String> l = new java.util.ArrayList<>();
        l.add("x");
        System.out.println(l.size());
    }
}
