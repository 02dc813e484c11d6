// Methods whose monitors are not structured stay in tier 0, which throws
// IllegalMonitorStateException where the JVM does: the lowered exit of a
// monitor the thread does not hold would be a fatal misuse of the runtime.
// javac never writes such code; the RUN lines patch it in.
//
// RUN: rm -rf %t && mkdir -p %t && %javac -d %t %s
// returnsHolding: its normal path's monitorexit becomes a pop.
// exitsOther: its normal path exits `other` (aload_1) instead of the lock.
// RUN: %python -c "import sys; p = sys.argv[1]; d = open(p, 'rb').read(); \
// RUN:   assert d.count(b'\x2b\xc3\xa7') == 1 and d.count(b'\x2c\xc3\xa7') == 1; \
// RUN:   d = d.replace(b'\x2b\xc3\xa7', b'\x2b\x57\xa7').replace(b'\x2c\xc3\xa7', b'\x2b\xc3\xa7'); \
// RUN:   open(p, 'wb').write(d)" %t/Unstructured.class
// RUN: jitlock-java -Xcomp -Xlog:jit -cp %t Unstructured 2>&1 | FileCheck %s
// RUN: jitlock-java -Xint -cp %t Unstructured | FileCheck %s --check-prefix=OUT
//
// CHECK-DAG: jit: not compiled Unstructured.returnsHolding(Ljava/lang/Object;)V: bytecode {{[0-9]+}} ({{[a-z]+}}): {{.*}}(unstructured locking); it stays in tier 0
// CHECK-DAG: jit: not compiled Unstructured.exitsOther(Ljava/lang/Object;Ljava/lang/Object;)V: bytecode 13 (monitorexit): monitorexit of an object other than the one this method entered last (unstructured locking); it stays in tier 0
// CHECK-DAG: jit: compiled Unstructured.main
// CHECK: returned holding the lock: 1
// CHECK: IllegalMonitorStateException: current thread is not owner
// CHECK: done 2
// OUT: returned holding the lock: 1
// OUT: IllegalMonitorStateException: current thread is not owner
// OUT: done 2

public class Unstructured {
    static int count;

    static void returnsHolding(Object lock) {
        synchronized (lock) {
            count++;
        }
    }

    static void exitsOther(Object lock, Object other) {
        synchronized (lock) {
            count++;
        }
    }

    public static void main(String[] args) {
        returnsHolding(new Object());
        System.out.println("returned holding the lock: " + count);
        try {
            exitsOther(new Object(), new Object());
        } catch (IllegalMonitorStateException e) {
            System.out.println("IllegalMonitorStateException: " + e.getMessage());
        }
        System.out.println("done " + count);
    }
}
