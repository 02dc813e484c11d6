// A serializable lambda needs LambdaMetafactory.altMetafactory.
public class UsesSerializableLambda {
    public static void main(String[] args) {
        Runnable r = (Runnable & java.io.Serializable) () -> System.out.println("hi");
        r.run();
    }
}
