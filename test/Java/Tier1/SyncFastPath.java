// The inline fast path of a synchronized block in tier 1's machine code:
// monitorenter's lock cmpxchg and the block's body with no call between them
// (the enter slow path is out of line), then monitorexit's release.
//
// RUN: rm -rf %t && mkdir -p %t && %javac -d %t %s
// RUN: jitlock-java -Xcomp --tier1-inline-size=0 --print-tier1=asm \
// RUN:   --print-tier1-filter=SyncFastPath.increment -cp %t SyncFastPath \
// RUN:   2>&1 | FileCheck %s --check-prefix=ASM
// RUN: jitlock-java -Xcomp --tier1-inline-size=0 --print-tier1=ir \
// RUN:   --print-tier1-filter=SyncFastPath.increment -cp %t SyncFastPath \
// RUN:   2>&1 | FileCheck %s --check-prefix=IR
//
// ASM-LABEL: jitlock-java: jit: asm of SyncFastPath.increment()V:
// ASM:       java{{[0-9]+}}.SyncFastPath.increment:
// The watermark check: a compare with the thread's watermark (TLS).
// ASM:       cmpq %fs:{{-?[0-9]+}}, %rsp
// ASM-NOT:   call
// ASM:       lock{{[[:space:]]+}}cmpxchgq
// ASM-NOT:   call
// ASM:       incl
// ASM-NOT:   call
// ASM:       lock{{[[:space:]]+}}cmpxchgq
// ASM:       jitlock_rt_monitor_enter_slow
// ASM:       .size java{{[0-9]+}}.SyncFastPath.increment
// ASM:       100000
//
// In the lowered IR no jitlock.* call is left; the runtime is called on the
// slow paths only.
// IR-LABEL: jitlock-java: jit: ir of SyncFastPath.increment()V:
// IR-NOT:   call void @jitlock.monitor
// IR:       define {{.*}}i64 @java{{[0-9]+}}.SyncFastPath.increment(
// IR:       cmpxchg
// IR:       @jitlock_rt_monitor_enter_slow
// IR:       100000

public class SyncFastPath {
    private int count;

    void increment() {
        synchronized (this) {
            count++;
        }
    }

    public static void main(String[] args) {
        SyncFastPath c = new SyncFastPath();
        for (int i = 0; i < 100000; i++)
            c.increment();
        System.out.println(c.count);
    }
}
