// Tier 1 inlines small exact and class-checked calls before the jitlock
// passes run, so jitlock-elide sees through them: an inlined synchronized
// callee on an object its caller holds is a nested re-entry (elided), and
// the StringBuffer shape, buffer.append(a).append(b) with a synchronized
// append, becomes adjacent regions on one object (coarsened into one).
// The output is the same with inlining off and in tier 0.
//
// RUN: rm -rf %t && mkdir -p %t && %javac -d %t %s
// RUN: jitlock-java -Xcomp --print-tier1=remarks \
// RUN:   --print-tier1-filter=Inline.chain -cp %t Inline 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CHAIN
// RUN: jitlock-java -Xcomp --print-tier1=remarks \
// RUN:   --print-tier1-filter=Inline.nested -cp %t Inline 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NESTED
// RUN: jitlock-java -Xcomp --print-tier1=remarks \
// RUN:   --print-tier1-filter=Inline.lockedChain -cp %t Inline 2>&1 \
// RUN:   | FileCheck %s --check-prefix=LOCKED
// RUN: jitlock-java -Xcomp --print-tier1=remarks \
// RUN:   --print-tier1-filter=Inline.virtualChain -cp %t Inline 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNCHECKED
// RUN: jitlock-java -Xcomp --tier1-inline-size=0 --print-tier1=remarks \
// RUN:   --print-tier1-filter=Inline.chain -cp %t Inline 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OFF
// RUN: jitlock-java -Xint -cp %t Inline | FileCheck %s --check-prefix=OUT
//
// Both appends inlined: their regions on the buffer merge (the next
// iteration's stays apart: the loop's test and poll are between them).
// CHAIN-LABEL: jit: remarks of Inline.chain(LInline$Buf;I)J:
// CHAIN-NEXT:  monitor regions of %obj in 'java{{[0-9]+}}.Inline.chain' coarsened: the exit and the next enter merged
// CHAIN-NEXT:  monitor enter in 'java{{[0-9]+}}.Inline.chain' lowered to an inline fast path
// CHAIN-NEXT:  monitor exit in 'java{{[0-9]+}}.Inline.chain' lowered to an inline fast path
// CHAIN:       total 1000 499500 499000
//
// The private synchronized helper's enter on `this`, inside the
// synchronized caller's: elided.
// NESTED-LABEL: jit: remarks of Inline.nested(LInline$Buf;I)V:
// NESTED:       nested monitor enter of %obj in 'java{{[0-9]+}}.Inline.nested' elided: the function already holds it around this pair
//
// The chain inside synchronized (b): the appends' regions merge into one,
// a nested re-entry, elided; the block's own lock stays, alone.
// LOCKED-LABEL: jit: remarks of Inline.lockedChain(LInline$Buf;I)J:
// LOCKED-NEXT:  monitor regions of %obj in 'java{{[0-9]+}}.Inline.lockedChain' coarsened: the exit and the next enter merged
// LOCKED-NEXT:  nested monitor enter of %obj in 'java{{[0-9]+}}.Inline.lockedChain' elided: the function already holds it around this pair
// LOCKED-NEXT:  monitor enter in 'java{{[0-9]+}}.Inline.lockedChain' lowered to an inline fast path
// LOCKED-NEXT:  monitor exit in 'java{{[0-9]+}}.Inline.lockedChain' lowered to an inline fast path
// LOCKED-NOT:   monitor enter in
// LOCKED:       locked 2000
//
// A virtual call with one implementation instantiated: inlined with no
// check of the receiver's class (lazy deoptimization keeps it right). The
// check of the code's invalidation after the first call (its inlined enter
// may block and run a handshake) traps with the monitors virtualChain holds,
// so the two inlined regions (their enters now in virtualChain itself) stay
// apart.
// UNCHECKED-LABEL: jit: remarks of Inline.virtualChain(LInline$Node;I)I:
// UNCHECKED-NOT:   coarsened
// UNCHECKED-COUNT-2: monitor enter in 'java{{[0-9]+}}.Inline.virtualChain' lowered to an inline fast path
// UNCHECKED-NOT:   monitor enter in
//
// Without inlining, nothing to coarsen or elide.
// OFF-LABEL: jit: remarks of Inline.chain(LInline$Buf;I)J:
// OFF-NOT:   coarsened
// OFF-NOT:   elided
// OFF:       total 1000 499500 499000
//
// OUT: total 1000 499500 499000
// OUT: nested 2000 1000
// OUT: virtual 2000
// OUT: locked 2000

public class Inline {
    static final class Buf {
        private int count;
        private long sum;

        synchronized Buf append(int x) {
            count++;
            sum += x;
            return this;
        }

        synchronized void addTwice(int x) {
            add(x);
            add(x);
        }

        private synchronized void add(int x) {
            count++;
            sum += x;
        }
    }

    static class Node {
        int hits;

        synchronized Node touch() {
            hits++;
            return this;
        }
    }

    // Each has its loop, and more than 35 bytes of bytecode: it is not
    // inlined into main and gets compiled on its own.
    static long chain(Buf b, int n) {
        if (b == null)
            throw new IllegalArgumentException("no buffer");
        for (int i = 0; i < n; i++)
            b.append(i).append(-i);
        return b.count;
    }

    static long lockedChain(Buf b, int n) {
        if (b == null)
            throw new IllegalArgumentException("no buffer");
        for (int i = 0; i < n; i++) {
            synchronized (b) {
                b.append(i).append(-i);
            }
        }
        return b.count;
    }

    static void nested(Buf b, int n) {
        if (b == null || n < 0)
            throw new IllegalArgumentException("no buffer, or n < 0: " + n);
        for (int i = 0; i < n; i++)
            b.addTwice(1);
    }

    static int virtualChain(Node n, int times) {
        if (n == null)
            throw new IllegalArgumentException("no node");
        for (int i = 0; i < times; i++)
            n.touch().touch();
        return n.hits;
    }

    public static void main(String[] args) {
        Buf b = new Buf();
        chain(b, 500);
        System.out.println("total " + b.count + " " + (b.sum + 499500) + " "
                           + (b.count * 499));
        Buf c = new Buf();
        nested(c, 1000);
        System.out.println("nested " + c.count + " " + c.sum / 2);
        Node n = new Node();
        virtualChain(n, 1000);
        System.out.println("virtual " + n.hits);
        System.out.println("locked " + lockedChain(new Buf(), 1000));
    }
}
