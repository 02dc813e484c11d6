// String.repeat is not in the built-in library, though String is.
public class UsesStringRepeat {
    public static void main(String[] args) {
        System.out.println("ab".repeat(3));
    }
}
