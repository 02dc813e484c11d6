// A class without main(String[]).
public class NoMain {
    public static void helper() {}
}
