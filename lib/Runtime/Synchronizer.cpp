//===- Synchronizer.cpp - The locking protocol ----------------------------===//
//
// THE PROTOCOL. This comment is the one statement of it; the LLVM lowering and
// the asmjit emitters implement the inline steps and cite them by label.
//
// Monitor enter, inline part (E1-E5), then enter() below for the rest:
//   E1  h = load header (relaxed: the CAS in E5 or M1 orders the acquire)
//   E2  if the lock stack is full: enter() (which inflates the oldest entry).
//       Before E3, whatever h holds: a thread that is not attached has a
//       lock stack that reads as full, and must reach enter(), which refuses
//       it, instead of taking a monitor in M1.
//   E3  if h has bit 1 set: 10 goes to M1-M2, 11 (the embedder's) to enter()
//   E4  if the top entry is obj: push obj; done. Recursion needs no atomic:
//       obj is fast-locked by this thread, which alone pushes and pops here.
//   E5  CAS header (h with bits 01) -> (h with bits 00), acquire: it is the
//       lock acquisition, so the critical section may not float above it.
//       On success push obj; on failure enter().
// Inflated enter, inline part:
//   M1  m = h - 0b10; o = load m.owner (relaxed). If o == self: M2. If o
//       is nonzero (anonymous owner, another owner, DEFLATER of A1):
//       enter(), with no CAS (a failing CAS would still take the owner's
//       cache line). If o == 0: CAS m.owner 0 -> self, acquire (the
//       acquisition); on failure enter().
//       The monitor's fields are reached through the relaxed header load:
//       the address dependency orders them after the inflater's release
//       CAS (consume ordering, which both targets give for free).
//   M2  o == self: m.recursions += 1, a plain (relaxed) load and store:
//       only the owner writes it.
//
// Monitor exit, inline part (X1-X4), then exit() below:
//   X1  if the top entry is not obj: go to N1.
//   X2  pop.
//   X3  if the new top entry is obj: recursive exit; done.
//   X4  h = load header; if h's bits are 00, CAS h -> (h with bits 01),
//       release: the critical section's writes must be visible to the next
//       acquirer. If the bits are not 00 or the CAS fails (a contender
//       inflated it, or a hash was installed), push obj back and call exit():
//       the slow path always sees the state from before the exit began.
// Inflated exit, inline part:
//   N1  h = load header; if h's bits are not 10: exit().
//   N2  m = h - 0b10; o = load m.owner (relaxed; only self stores self
//       there, and nobody else changes an owner word that holds self). If
//       o != self (anonymous: this thread still has to fix it; another
//       owner; a deflater): exit(). r = m.recursions; if r != 0:
//       m.recursions = r - 1, a plain (relaxed) store like M2's; done.
//       If r == 0: N3.
//   N3  store m.owner = 0, release: the critical section's writes go before
//       it. Then, with the exit barrier of Config.inflated_exit in between,
//       q = load m.entry_count (relaxed); if q != 0: exit_queued(), which
//       wakes a successor (XQ below); the monitor is already released.
//         store: no barrier at all. The StoreLoad order this exit does not
//                pay for is paid by the rare side: a thread joining the
//                entry queue (J2) runs membarrier(PRIVATE_EXPEDITED), which
//                puts a full fence into every running thread of the process.
//         fence: a full fence (the fallback where membarrier is missing;
//                J2 is then a full fence too).
//       Why no waiter is stranded: a joiner does J1 (entry_count += 1),
//       J2 (barrier), J3 (load m.owner; sleep only if it is a thread). The
//       barrier's fence lands in the exiter's instruction stream either
//       after its store of 0, which J3 then sees (or a later owner, whose
//       own exit comes later still), so the joiner competes instead of
//       sleeping; or before the store, and so also before its load, which
//       then sees the joiner's count. Either the joiner or the exiter sees
//       the other.
//       An entry count that stays nonzero needs no second barrier: any exit
//       after the first one's sees it.
//   XQ  exit_queued (wakeSuccessor), under m's queue lock: if the queue is
//       empty, or m.owner is not 0, done: another thread's N3 comes later
//       and sees the count, and a deflater (DEFLATER) aborts, since its A2
//       sees the count, and its abort runs XQ. Otherwise hand m to the
//       head (CAS m.owner 0 -> head) or wake the head to compete, as
//       described under "Parking and fairness". XQ never owns m itself.
// Joining the entry queue, in the runtime (enterQueued):
//   J1  under m's queue lock, unless m can be taken or its deflation
//       cancelled (A4): append self; m.entry_count += 1.
//   J2  the joiner's half of the exit barrier: membarrier (store), or a
//       full fence (fence).
//   J3  o = load m.owner. If o == 0, XQ (the head it wakes may be this
//       thread), as the exit that missed the count would have; if o is
//       DEFLATER, the abort runs XQ. Then sleep until woken: a later
//       owner's exit sees the count.
//
// Recovery from a stack overflow (StackRecovery.cpp):
//   XR  an overflow may abandon an inflated exit after N3's release and
//       before its exit_queued call (in code without a stack check, or in
//       the glue frame of the call): the monitor is free, so no hold of it
//       is left to release, and the queue's XQ is lost with the frames.
//       After releasing the abandoned holds, recovery runs a full fence
//       (the exit barrier N3 did not reach: a joiner's J1 count is seen, or
//       its J3 sees the release and runs XQ itself) and then XQ for every
//       registered monitor that is free with a nonzero entry count. It
//       cannot tell which monitors the abandoned frames released, and need
//       not: XQ is correct for any monitor at any time, as J3 and the
//       deflater's abort already run it on exits they cannot see. For a
//       monitor nobody owes an XQ, it wakes a head that competes and, at
//       worst, sleeps again (one more loss towards its handoff).
//
// Wait, notify and interrupt (WaitNotify.cpp):
//   W1  wait, under m's queue lock: store t.WaitingOn = m, then load t's
//       interrupt flag (both seq_cst). If it is set: clear it and return
//       JITLOCK_EINTERRUPTED, never having released m. Otherwise join the
//       wait set, then release m fully (its recursions saved).
//   W2  notify, under the queue lock: move the wait set's head (or all of
//       it) to the entry queue and clear each one's WaitingOn.
//   W3  the waiter sleeps until its Wakeup word changes or its deadline
//       passes; then, under the queue lock, if WaitingOn is still m, it
//       decides: interrupted if the flag is set (clearing it), timed out if
//       the deadline passed, else it sleeps on. Deciding, it counts itself
//       in m.contentions (A4), leaves the wait set, clears WaitingOn and
//       re-enters m. If WaitingOn is not m, a notify came first: it resets
//       an Interrupted Wakeup to Sleep and returns JITLOCK_OK once an exit
//       wakes it in the entry queue, the flag left as it is.
//   I1  interrupt: store the flag = 1, then o = load t.WaitingOn (both
//       seq_cst). With W1's store and load, either the waiter sees the flag
//       or the interrupter sees the monitor. o null: done.
//   I2  under o's queue lock: if t.WaitingOn is still o and the flag still
//       set, store t's Wakeup = Interrupted and, after the lock, wake it (W3
//       decides). If WaitingOn moved meanwhile, I1's load again.
//   No notification is lost: W2 moves only a waiter whose WaitingOn is m,
//   and clears it under the lock W3 decides under, so a notified waiter
//   never returns interrupted and none has to pass a notify on.
//
// Heavy mode (Config.locking_mode == JITLOCK_LOCKING_HEAVY), runtime enter:
//   H1  after E1-E3, if h's bits are 01: create a monitor owned by self
//       (recursions 0, displaced header h) and CAS header h -> monitor|10,
//       acq_rel: acquire as the lock acquisition, release to publish the
//       monitor's fields. On failure free it and start over at E1.
//   H2  every other state takes the paths above unchanged: a monitor is
//       entered (M1-M2), and an object that inline code fast-locked (E5) is
//       pushed, inflated or contended for as in lightweight mode. Inline
//       code lowered for either mode therefore shares objects with a heavy
//       runtime. Restore-locks acquires an elided object nobody holds by H1
//       too, so its holds live in monitors.
//
// Deflation, concurrent with the mutators (Deflation.cpp). A deflater sweeps
// the registry holding the operation lock (Safepoint.cpp), so that no
// safepoint or handshake runs meanwhile (inside its own safepoint it holds
// it already), and for each registered monitor m:
//   A1  CAS m.owner 0 -> DEFLATER, acquire. It fails for an owned and an
//       anonymous monitor: skip m. It may succeed on a free monitor that
//       threads are queued on, between an exit and its successor's wake-up.
//   A2  re-check: m.contentions == 0, the entry queue and the wait set
//       empty (their counts) and m.recursions == 0; otherwise abort. Only an
//       owner joins the wait set, and a notify moves waiters to the entry
//       queue only for an owner, both before the release that A1 acquired;
//       enterers are counted before they queue. So no queue changes unseen
//       from A1 on.
//   A3  CAS m.contentions 0 -> DEFLATED (INT32_MIN), acq_rel: the decision.
//       It fails once an enterer has counted itself (A4): abort. Once it
//       succeeds nobody takes m again: the owner stays DEFLATER, and every
//       later count reads negative.
//   Abort: CAS m.owner DEFLATER -> 0, release. If that fails an enterer
//       cancelled the deflation (A4) and owns m: the deflater takes back the
//       contention that enterer added for it, with a release: an A4 count
//       (acq_rel) that read the take-back would make it happen before the
//       cancel that the failed CAS read, so the take-back follows the
//       canceller's own count and never turns it negative. (Acquire on the
//       failed CAS would pair with nothing: the cancel is no release.) If
//       the CAS succeeds, then after a full fence, a nonzero entry count
//       means an exit's XQ may have found DEFLATER and left: the abort runs
//       XQ, as that exit would have.
// The enterer's side, in the runtime (enterMonitor):
//   A4  before it spins, queues or touches a DEFLATER owner, an enterer adds
//       one to m.contentions. A negative result: A3 has won. It takes the
//       one back, does A5 for its object itself (the deflater may be
//       descheduled right after A3) and starts over at E1. Otherwise no
//       deflation of m passes A3 until the enterer has acquired m and taken
//       the one back; and finding DEFLATER (a deflater between A1 and its
//       abort) it may cancel: CAS m.owner DEFLATER -> self, acquire, which
//       makes it the owner, then add one more contention, which keeps A3
//       failing until that deflater's abort sees its own CAS fail and takes
//       the one back. Without the extra one, an enterer that cancelled and
//       gave back its own count would let a late A3 deflate an owned m.
//   A5  restore the header: seal m's displaced header (bits 01 -> 00), so
//       that a hash install started meanwhile fails its CAS and re-reads
//       the object's header instead of writing a hash the restore would
//       lose; then CAS the header m|10 -> the displaced header with bits 01,
//       release, waiting out the embedder's 11. A sealed word never changes,
//       so the deflater and any helping enterer write the same header, and
//       the first CAS wins.
//   A6  unregister m (the sweep), then run a handshake with every thread
//       (jitlock_rt_handshake_all), and only then put m on the free list,
//       from which the next inflation reuses it. Inside a safepoint every
//       other thread is stopped or safe already: m is freed at once, and so
//       is what a cycle outside it swept and has not freed yet.
// Why the inline paths need no change: they CAS an owner word only 0 ->
// self (M1), store 0 only over self (N2 checked it, N3), and trust a
// recursion count only beside owner == self (M2, N2). DEFLATER is nonzero
// and never self, so M1 and N2 send it to the runtime, which runs A4; an M1
// CAS that wins before A1 makes A1 fail. What they cannot do is re-check the
// header after loading it, and A6 covers that: m may be reused for another
// object only once no thread holds its address from a header load made before
// A5. Inline code never polls between its header load and its CAS, and a
// handshake completes for a thread only at a poll or while it is safe (native
// or blocked), where it runs no inline code. In the runtime, a thread that
// blocks (parks) holding m's address is in m's queues or counted in
// m.contentions, which A2 and A3 refuse.
// Moving collectors (jitlock_rt_enumerate_roots). A collector moves objects
// only inside a safepoint, through the roots: lock stack slots and each
// monitor's object field, m.object. A thread that sleeps in the runtime for
// obj (parked in the entry queue, in the wait set, or notified) is safe, so
// obj may move meanwhile; the collector rewrites m.object, not the address
// the thread was called with, which then names a dead copy.
//   MC1 an enterer counted in m.contentions (A4) checks once, with no poll
//       since its header load, that obj's header names m (a caller no
//       handshake covers may have found m deflated and reused). From then
//       on m is obj's monitor wherever obj moves (no deflation passes A3,
//       so m is not reused), and once it owns m it keeps m without reading
//       the header at the old address: the enter returns owning m, whose
//       object is obj's new address, which the caller's own references hold
//       after the collection. A waiter re-enters m itself and needs nothing
//       more. Only an uncounted M1 that took m at once checks the header
//       after the acquisition (keepIfInstalled): it never slept.
// Readers that a handshake does not cover, because they may run on a thread
// that is not attached (an identity hash, a hash peek, the queries), check
// m.generation (MonitorRead in Synchronizer.h):
// even, and bumped when m is reused (odd meanwhile, a sequence lock); what
// they read of m is the object's if the header still names m and the
// generation did not move.
// Storage (MonitorStorage.h; ObjectHeader.h states the header rules). How a
// header of tag 10 names m, per Config.monitor_storage, and how inline code
// finds m from the header h it loaded (M1, N2):
//   pointer  h = m | 10; m = h - 10.
//   index    h = index << 2 | 10; m = thread.MonitorBase + index * stride:
//            monitors live in one region that never moves, and the base is
//            loaded from the thread.
//   table    h is the object's header with tag 10 (its hash installed before
//            inflation); m is the monitor of the thread's cache entry for
//            obj, and a miss calls the runtime, which looks m up in the side
//            table keyed by the hash and fills the cache.
// Inflation CASes the header, then (table) inserts the entry; A5 undoes it:
// pointer and index CAS the header from exactly the value that names m, so
// a helper that comes late fails; table removes m's entry and then restores
// the header under the table lock, only if the entry still names m, so a
// late helper cannot undo the object's next inflation, whose header looks
// the same. A1-A4 and A6 are about m alone and are the same for all three.
// Why each inline path stays safe against concurrent deflation: the m it
// found is either still the object's or deflated (owner DEFLATER, which M1
// and N2 send to the runtime), never another object's, because m is
// reused only after the A6 handshake and inline code never polls between
// its header load (or cache probe) and its CAS. Pointer and index derive m
// from the header itself. Table's cache may name a deflated m until the
// handshake, which empties every thread's cache before m can be reused; the
// runtime accepts a cache entry only for a monitor of obj that no deflation
// has won (A3), and looks the table up otherwise.
// Reserved locking (Config.locking_mode == JITLOCK_LOCKING_RESERVED;
// Reservation.cpp). The header's reservation field F (the layout's
// reserve_shift and reserve_bits) is read only while the lock bits are 01:
// 0 not reservable, all ones reservable, else the index of the thread it is
// reserved to. A thread's tag is 01 | its index in F, or ~0 once it may not
// reserve; "reserved to T" is (h & reserve_mask) == T.tag. The steps carry
// the names of verification/locking.pml (-DRESERVE=1):
//   R1  owner enter, after E1-E2: if h is reserved to self: push obj; done.
//       No atomic, and no header write: the lock stack alone says held.
//       Entries may be non-adjacent (A B A): R1 pushes without inflating.
//   R2  first lock: if h is 01 with F all ones and self's tag is not ~0:
//       CAS h -> (h with F = self's index), acquire, keeping every other
//       bit; on success push obj. A thread that may not reserve takes a
//       reservable object by E5 (in the runtime), F kept, so that its exit
//       makes it reservable again. The inline E5 of this mode expects
//       (h & reserve_mask) == 01 (F == 0) and sends every other header to
//       enter().
//   R3  revocation, by a contender that finds h reserved to another thread
//       r: a handshake with r (Safepoint.cpp, K1-K5; it runs whatever r
//       does, at r's poll or while r is parked, blocked or native), whose
//       operation, while h is still reserved to r (else it does nothing),
//       CASes h (a hash install may race; the CAS keeps the other bits):
//         R3a obj on r's lock stack, entries adjacent: -> 00 with F = 0,
//             fast-locked by r;
//         R3b on it, not adjacent (A B A): -> 00 with F = 0, then inflated
//             with an anonymous owner before r runs again (a fast lock must
//             be adjacent, or r's X4 would unlock obj at the inner exit
//             while the outer entry still holds it: the model's finding);
//             r fixes the owner at its next operation on obj;
//         R3c not on it: -> 01 with F = 0, never reserved again.
//       Then the contender starts over at E1 (E5, or inflation, as today).
//       The operation counts a revocation for r; at
//       Config.reserve_revoke_limit (0: none) it sets r's tag to ~0 and
//       revokes, by R3a-R3b, every object on r's lock stack still reserved
//       to r. A header reserved to an index whose thread detached (indices
//       are never reused; detach needs an empty lock stack) is unheld: the
//       contender CASes it to 01, F = 0, with no handshake; so does a thread
//       for an unheld header reserved to its own index once its tag is ~0.
//       A contender inside a handshake operation cannot request one: its
//       enter fails with JITLOCK_ESTATE.
//   R4  owner exit: X1-X3, then h = load header; if h is reserved to self:
//       done (no atomic). Else X4. An exit of obj below the top (the
//       unstructured exit) does the same check before it removes the entry.
//       The load comes after the pop and X3: a revocation that fast-locked
//       a twice-held obj must not send the inner exit to X4 (seeded bug 9).
//   revokeOwn: before the owner inflates its own reserved obj (wait, a full
//       lock stack, restore-locks moving a hold into a monitor), it CASes h ->
//       00 with F = 0 itself, with no handshake: nobody else writes a reserved
//       header's lock bits, and the CAS only loses to a hash install.
// A reserved header elsewhere: an identity hash is a CAS of the whole word
// that keeps F (the owner never writes a reserved header, so it loses
// nothing). Inflation never starts from a reserved header: every path that
// would take a 01 header (E5, H1, enterInflated, restore-locks' acquire)
// runs R3 or revokeOwn first, so a displaced header, and the header
// deflation's A5 writes back, has F 0 or all ones; deflation itself is
// unchanged. jitlock_rt_restore_locks revokes each listed object reserved to
// another thread (R3), or to the owner and not held (R3c), before it
// starts; one the owner holds reserved is a lock stack entry like a fast
// lock, and an inflation of it runs revokeOwn. Stack-overflow recovery
// releases holds through the normal exit, hence R4. Owner queries: a
// reserved header reads JITLOCK_STATE_RESERVED; its owner is the reserving
// thread if obj is on that thread's lock stack (holds: its entries), else
// none. jitlock_rt_holds_lock and jitlock_rt_lock_stack read lock stacks as
// always, and the GC roots are the lock stack slots and monitors as always:
// a reserved, unheld object is no root. The three monitor storages see no
// reserved header: pointer and index keep F in the displaced header, table
// in the header itself (tag 10), and both are 0 or all ones.
// The runtime's side, by file: this one has enter and exit, the entry queue
// with its parking and direct handoff (XQ), and N3; Inflation.cpp the
// inflations (contention with an anonymous owner, non-adjacent re-entry, a
// full lock stack, wait, H1) and the anonymous owner fix-up; Spin.cpp the
// spinning; WaitNotify.cpp wait, notify and interrupt; IdentityHash.cpp the
// identity hash; ThreadLocks.cpp the operations on all of a thread's locks;
// Reservation.cpp reserved locking's R2, R3 and revokeOwn.
//
// Parking and fairness: an enterer spins briefly, then joins the monitor's
// FIFO entry queue. The spin (Spin.cpp) adapts (AdaptiveSpin.h): each monitor
// keeps a budget, in rounds of 32 pauses, between a small floor and
// Config.spin_limit (0: no spin), that doubles after a spin that took the
// monitor and halves after one that ran out. Within it, probes of the owner
// word back off from 1 to MaxPausesBetweenProbes pauses apart. An enterer
// spins only while that can help: not while the owner is blocked or in
// native code (its thread state; an anonymous owner counts as running), nor
// while a safepoint or handshake wants the enterer; and no more threads spin
// at once than the process has CPUs but one (a global count against the CPU
// count taken once), so that the owner keeps a CPU to finish on. An enterer
// turned away by that count, or whose owner was handed the monitor and is
// still waking up, yields its CPU a few times instead, probing after each:
// an owner that needs a CPU gets one, and the enterer stays out of the
// queue, where every exit would have to wake someone and hand over. Spins
// cut short leave the budget alone. Whatever the spin did, barging and
// handoff are as follows. Joining the queue (J1-J3 above) makes the owner's
// N3 see a nonzero entry count so that its exit comes here (XQ). XQ wakes
// the queue's head to compete for the free monitor; a running thread may
// barge in first, which keeps the lock moving instead of convoying through
// sleeping threads. Once barging threads have beaten the head
// MaxLossesBeforeHandoff times, the next XQ makes the head the owner before
// waking it. So a parked thread waits for at most the
// threads queued ahead of it plus a bounded number of barging acquisitions
// each, whatever the scheduler does.
//
//===----------------------------------------------------------------------===//
#include "Synchronizer.h"

#include "ExitBarrier.h"
#include "MonitorStorage.h"
#include "ObjectHeader.h"
#include "Parker.h"
#include "Reservation.h"
#include "Safepoint.h"

#include <sched.h>

namespace jitlock {

using namespace header;

uint64_t loadStableHeader(const void *Obj) {
  // The embedder's 11 state is transient (e.g. a GC mark); wait it out.
  for (unsigned Spins = 0;; ++Spins) {
    uint64_t H = headerOf(Obj).load(std::memory_order_acquire);
    if (!isEmbedderOwned(H))
      return H;
    if (Spins < 64)
      spinPause();
    else
      sched_yield();
  }
}

//===----------------------------------------------------------------------===//
// Finding the monitor a header names
//===----------------------------------------------------------------------===//

/// Backs off while another thread is between the header and the table
/// entry (table storage: an inflater, or a deflater's A5).
static void waitForEntry(unsigned &Round) {
  if (++Round < 64)
    spinPause();
  else
    sched_yield();
}

Monitor *awaitMonitorOfHeader(const void *Obj, uint64_t &H) {
  for (unsigned Round = 0;;) {
    waitForEntry(Round);
    H = loadStableHeader(Obj);
    if (!hasMonitor(H))
      return nullptr;
    if (Monitor *M = storage::monitorFor(Obj, H))
      return M;
  }
}

Monitor *monitorNamedBy(const void *Obj, uint64_t H) {
  // The gap closes without this caller: the inflater or deflater in it
  // polls only after its second step. A query that gave up instead would
  // report an owned object as unowned.
  for (unsigned Round = 0;;) {
    if (Monitor *M = storage::monitorFor(Obj, H))
      return M;
    waitForEntry(Round);
    if (headerOf(Obj).load(std::memory_order_acquire) != H)
      return nullptr;
  }
}

//===----------------------------------------------------------------------===//
// Monitor enter and exit
//===----------------------------------------------------------------------===//

bool takeFreeMonitor(jitlock_thread &T, Monitor &M) {
  return M.tryTakeOwner(T);
}

/// How many times a queue head may lose the monitor to barging threads
/// before exits must hand it over directly. A loss is an exit that finds the
/// head still waking up from the previous exit's wake-up, or a woken head
/// that finds the monitor taken.
static constexpr uint32_t MaxLossesBeforeHandoff = 16;

/// Publishes that `T` sleeps on `M` (odd epoch), for the deadlock finder,
/// which counts it as blocked while its node is in `M`'s entry queue.
void markBlocked(jitlock_thread &T, Monitor *M) {
  T.BlockedOn.store(M, std::memory_order_relaxed);
  T.BlockEpoch.store(T.BlockEpoch.load(std::memory_order_relaxed) + 1,
                     std::memory_order_release);
}
void markUnblocked(jitlock_thread &T) {
  T.BlockEpoch.store(T.BlockEpoch.load(std::memory_order_relaxed) + 1,
                     std::memory_order_release);
  T.BlockedOn.store(nullptr, std::memory_order_relaxed);
}

/// Takes `M` for `T`, whose `Node` is in its entry queue, and leaves the
/// queue; queue lock held.
static bool takeFromQueue(jitlock_thread &T, Monitor &M, QueueNode &Node) {
  if (!takeFreeMonitor(T, M))
    return false;
  M.unlink(Node);
  return true;
}

/// Sleeps in `M`'s entry queue, where `T.Node` already is, until `T` owns
/// `M`: handed over directly, or won after an exit woke it to compete.
void waitInEntryQueue(jitlock_thread &T, Monitor &M) {
  QueueNode &Node = T.Node;
  for (;;) {
    uint32_t Wake;
    while ((Wake = Node.Wakeup.load(std::memory_order_acquire)) ==
           QueueNode::Sleep) {
      bump(T.Stats.Parks);
      parkBlocked(T, Node.Wakeup, QueueNode::Sleep, 0);
    }
    if (Wake == QueueNode::Granted)
      break; // The exiting owner unlinked us and made us the owner.
    if (JoinHook Hook = JoinTestHook.load(std::memory_order_relaxed))
      Hook(JoinStage::Woken, M);
    // Compete. Under the queue lock, so that an exit cannot free the monitor
    // and wake us between a lost race and going back to sleep.
    M.QueueLock.lock();
    // An exit may have granted it to us since we read Compete.
    if (Node.Wakeup.load(std::memory_order_acquire) == QueueNode::Granted) {
      M.QueueLock.unlock();
      break;
    }
    if (takeFromQueue(T, M, Node)) {
      M.QueueLock.unlock();
      break;
    }
    Node.Wakeup.store(QueueNode::Sleep, std::memory_order_relaxed);
    Node.HandoffWanted = ++Node.Losses >= MaxLossesBeforeHandoff;
    M.QueueLock.unlock();
  }
}

/// takeFreeMonitor, or, finding a deflater's marker, cancel its deflation
/// by taking the owner word from it (A4). Only while `T` is counted in
/// `M.Contentions`, which keeps the deflation from winning.
bool takeOrCancelDeflation(jitlock_thread &T, Monitor &M) {
  if (takeFreeMonitor(T, M))
    return true;
  if (!M.tryCancelDeflation(T))
    return false;
  // One for the deflater to take back once its abort notices (A4).
  M.addCancelContention();
  return true;
}

std::atomic<JoinHook> JoinTestHook{nullptr};

/// Joins `M`'s entry queue and sleeps until `T` owns `M`; `T` is counted in
/// `M.Contentions`.
static void enterQueued(jitlock_thread &T, Monitor &M) {
  QueueNode &Node = T.Node;
  // J1.
  M.QueueLock.lock();
  if (takeOrCancelDeflation(T, M)) {
    M.QueueLock.unlock();
    return;
  }
  if (JoinHook Hook = JoinTestHook.load(std::memory_order_relaxed))
    Hook(JoinStage::FoundOwned, M);
  Node.Thread = &T;
  Node.Wakeup.store(QueueNode::Sleep, std::memory_order_relaxed);
  Node.Losses = 0;
  Node.HandoffWanted = false;
  M.append(QueueNode::EntryQueue, Node);
  M.QueueLock.unlock();
  // Blocked from the moment it is queued, as the deadlock finder sees it.
  markBlocked(T, &M);
  joinBarrier(); // J2
  // J3: an exit that released before the barrier may have missed our count
  // and woken nobody. Run its XQ (the head woken may be this thread), so
  // that the queue stays first in line.
  if (M.ownerRaw() == 0)
    wakeSuccessor(M);
  waitInEntryQueue(T, M);
  markUnblocked(T);
}

/// `T` has just taken `M`, found through `Obj`'s header. Keeps it if the
/// header still names it. For a caller that a handshake covers it always
/// does (A6); the check keeps a caller that none covers, such as a VM
/// thread restoring locks for a thread it stopped by other means, from
/// keeping a monitor that was reused for another object meanwhile.
static bool keepIfInstalled(jitlock_thread &T, Monitor &M, void *Obj) {
  if (storage::names(Obj, M))
    return true;
  releaseMonitor(M);
  return false;
}

bool takeInstalledMonitor(jitlock_thread &T, Monitor &M, void *Obj) {
  return takeFreeMonitor(T, M) && keepIfInstalled(T, M, Obj);
}

/// Spins, then queues, until `T` owns `M`, in which `T` is counted in
/// `M.Contentions` (A4), and takes the count back.
void enterCounted(jitlock_thread &T, Monitor &M) {
  // Most critical sections end sooner than a park would: spin first.
  if (!takeOrCancelDeflation(T, M) && !spinToEnter(T, M))
    enterQueued(T, M);
  M.removeContention();
}

/// The contended part of enterMonitor, counted in `M.Contentions` (A4):
/// spin, then queue, until `T` owns `M`. False when a deflation of `M` has
/// won (`Obj`'s header is restored then), or `M` is no longer `Obj`'s: the
/// caller starts over. True when `T` owns `M`, whose object may have moved
/// meanwhile (MC1).
static bool enterContended(jitlock_thread &T, Monitor &M, void *Obj) {
  if (M.addContention() < 0) {
    M.undoContention();
    restoreHeader(M, Obj); // A5, in case the deflater is not there yet.
    return false;
  }
  // MC1: counted, M stays Obj's monitor wherever a collector moves Obj.
  if (!storage::names(Obj, M)) {
    M.removeContention();
    return false;
  }
  if (!M.isDeflating())
    bump(T.Stats.ContendedEnters);
  enterCounted(T, M);
  return true;
}

bool enterMonitor(jitlock_thread &T, Monitor &M, void *Obj) {
  // M1, widened to a monitor that is free while threads are queued.
  if (!takeFreeMonitor(T, M)) {
    uintptr_t Holder = M.ownerRaw();
    // Re-entry of an object a contender inflated: fix the owner first.
    if (Holder == owner::AnonymousOwner && LockStack(T).contains(Obj)) {
      inflateOwned(T, Obj)->incRecursions();
      return true;
    }
    // M2. Only `T` makes itself the owner, so `M` is still Obj's.
    if (Holder == owner::encode(&T)) {
      M.incRecursions();
      return true;
    }
    // MC1: `T` may have slept while `Obj` moved to M.Object, leaving a dead
    // copy at `Obj` whose header must not be read.
    if (!enterContended(T, M, Obj))
      return false;
#ifdef JITLOCK_MUTATE_MC1 // scripts/mutate.sh
    if (!keepIfInstalled(T, M, Obj))
      return false;
#endif
  } else if (!keepIfInstalled(T, M, Obj)) {
    return false;
  }
  bump(T.Stats.MonitorEnters);
  return true;
}

Monitor *enterInflated(jitlock_thread &T, void *Obj) {
  for (;;) {
    uint64_t H = loadStableHeader(Obj);
    if (Monitor *M = monitorOfHeader(Obj, H)) {
      if (enterMonitor(T, *M, Obj))
        return M;
      continue; // Deflated: the header no longer names M.
    }
    Inflated Result;
    Monitor *M = nullptr;
    if (reservation::isReserved(H)) { // R3 before H1 takes the header.
      if (reservation::revoke(T, Obj, H) != JITLOCK_OK)
        sched_yield();
      continue;
    }
    if (isUnlocked(H)) {
      Result = inflateUnlocked(T, Obj, H, M);
      if (Result == Inflated::Installed)
        return M;
    } else {
      // Fast-locked by another thread (`T` holds nothing of Obj).
      Result = inflateAnonymous(T, Obj, H);
    }
    // Index storage with a full region: this caller cannot fail, so it
    // waits for monitors to become idle.
    if (Result == Inflated::OutOfMonitors)
      sched_yield();
  }
}

/// N3 in the runtime: the release store, the exit barrier, the count.
static bool releaseFindsQueued(Monitor &M) {
  M.releaseOwner();
  exitBarrier();
  return M.entryCount() != 0;
}

/// XQ: wakes `M`'s queue head, or hands `M` to it, unless `M` has an owner
/// again (whose own N3 sees the count) or nobody is queued. Called by an
/// exit that released `M` and found threads queued, by a joiner that found
/// `M` free after its barrier (J3), and by a deflater that aborted (the
/// exit may have found its marker and left).
void wakeSuccessor(Monitor &M) {
  M.QueueLock.lock();
  QueueNode *Heir = M.EntryHead;
  if (!Heir || M.ownerRaw() != 0) {
    M.QueueLock.unlock();
    return;
  }
  // Still competing from an earlier wake-up: someone barged in meanwhile.
  if (Heir->Wakeup.load(std::memory_order_relaxed) == QueueNode::Compete)
    Heir->HandoffWanted = ++Heir->Losses >= MaxLossesBeforeHandoff;
  // The head lost too often: make it the owner before it even wakes
  // (acq_rel: it takes over from the last owner's release). Otherwise, or
  // if a barging thread got in first, wake it to compete: a running thread
  // may take the monitor meanwhile, which avoids a convoy of handoffs to
  // sleeping threads, and the head stays counted for that owner's exit.
  uint32_t Wake = QueueNode::Compete;
#ifdef JITLOCK_MUTATE_HANDOFF // scripts/mutate.sh
  Heir->HandoffWanted = false;
#endif
  if (Heir->HandoffWanted && M.tryHandOff(*Heir->Thread)) {
    M.unlink(*Heir);
    Wake = QueueNode::Granted;
  }
  // Stored under the queue lock: a head that lost a race resets it to
  // Sleep under the same lock, so this wake-up cannot be overwritten unseen.
  Heir->Wakeup.store(Wake, std::memory_order_release);
  M.QueueLock.unlock();
  // A granted heir may return and reuse its node as soon as it sees the
  // store, so the wake-up is the last thing that touches it.
  wakeAll(Heir->Wakeup);
}

/// Releases a monitor whose last hold `Self` gives up.
void releaseMonitor(Monitor &M) {
  if (releaseFindsQueued(M))
    wakeSuccessor(M);
}

void exitQueued(jitlock_thread &T, void *Obj) {
  bump(T.Stats.SlowPathCalls);
  // No poll since the inline release: the monitor the header named then is
  // not reused yet (A6). A header that names no monitor now was deflated,
  // which needs an empty queue; one that names another monitor, after a
  // deflation and a new inflation, gets at worst a spurious wake-up.
  uint64_t H = loadStableHeader(Obj);
  if (Monitor *M = monitorOfHeader(Obj, H))
    if (M->entryCount() != 0)
      wakeSuccessor(*M);
}

void exitMonitor(Monitor &M, jitlock_thread &Owner) {
  uint64_t R = M.recursions();
  if (R != 0) {
    M.setRecursions(R - 1);
    return;
  }
  releaseMonitor(M);
}

void unlockUnlisted(jitlock_thread &T, void *Obj) {
  auto Header = headerOf(Obj);
  for (;;) {
    uint64_t H = loadStableHeader(Obj);
    if (isFastLocked(H)) {
      if (Header.compare_exchange_strong(H, withLockBits(H, UnlockedValue),
                                         std::memory_order_release,
                                         std::memory_order_relaxed))
        return;
      continue;
    }
    // A contender inflated it with an anonymous owner, which is `T`.
    exitMonitor(*inflateOwned(T, Obj), T);
    return;
  }
}

// Inlined into the C entry point below, where the interpreter's common case
// (E5 or E4) then costs one call.
/// The misuse of an inflation that found the index region full.
int outOfMonitors(jitlock_thread &T, void *Obj, Caller From) {
  return misuse(JITLOCK_ENOMEM, &T, Obj,
                "no monitor left: the index storage's monitor_capacity "
                "monitors are all in use, even after a deflation",
                From);
}

[[gnu::always_inline]] static inline int enter(jitlock_thread &T, void *Obj,
                                               Caller From = Caller::Api) {
  bump(T.Stats.SlowPathCalls);
  LockStack LS(T);
  auto Header = headerOf(Obj);
  for (;;) {
    uint64_t H = loadStableHeader(Obj); // E1
    if (LS.isFull()) {                  // E2: make room, then start over.
      if (!inflateOwned(T, LS.at(0)))
        return outOfMonitors(T, LS.at(0), From);
      continue;
    }
    if (hasMonitor(H)) { // E3
      Monitor *M = monitorOfHeader(Obj, H);
      if (M && enterMonitor(T, *M, Obj)) {
        if constexpr (AssertionsEnabled)
          M->validate(T);
        return JITLOCK_OK;
      }
      continue; // Deflated: the header no longer names the monitor.
    }
    if (Config.locking_mode == JITLOCK_LOCKING_HEAVY && isUnlocked(H)) {
      Monitor *M;
      Inflated Result = inflateUnlocked(T, Obj, H, M); // H1
      if (Result == Inflated::Installed)
        return JITLOCK_OK;
      if (Result == Inflated::OutOfMonitors)
        return outOfMonitors(T, Obj, From);
      continue;
    }
    if (isFastLocked(H)) {
      if (LS.top() == Obj) { // E4
        LS.push(Obj);
        bump(T.Stats.RecursiveLocks);
        return JITLOCK_OK;
      }
      if (LS.contains(Obj)) {
        // Non-adjacent re-entry (A B A): the lock stack cannot express it.
        Monitor *M = inflateOwned(T, Obj);
        if (!M)
          return outOfMonitors(T, Obj, From);
        M->incRecursions();
        return JITLOCK_OK;
      }
      // Another thread holds it, and we cannot know which: inflate with an
      // anonymous owner and enter the monitor (next iteration).
      if (inflateAnonymous(T, Obj, H) == Inflated::OutOfMonitors)
        return outOfMonitors(T, Obj, From);
      continue;
    }
    // Unlocked (01): the only lock bits a reserved or reservable header
    // has, so the reservation steps come last, where they cost the other
    // modes one test on E5's path alone.
    if (reservation::enabled()) {
      int Status = JITLOCK_OK;
      switch (reservation::enter(T, Obj, H, Status)) {
      case reservation::EnterStep::Entered: // R1, R2
        return JITLOCK_OK;
      case reservation::EnterStep::StartOver: // R3
        continue;
      case reservation::EnterStep::Failed:
        return Status;
      case reservation::EnterStep::Lightweight:
        break;
      }
    }
    // E5.
    if (Header.compare_exchange_strong(H, withLockBits(H, LockedValue),
                                       std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
      LS.push(Obj);
      bump(T.Stats.FastLocks);
      return JITLOCK_OK;
    }
  }
}

[[gnu::always_inline]] static inline int exit(jitlock_thread &T, void *Obj,
                                              Caller From = Caller::Api) {
  bump(T.Stats.SlowPathCalls);
  LockStack LS(T);
  auto Header = headerOf(Obj);
  // X1-X4, as the inline path does them.
  if (LS.top() == Obj) {
#ifdef JITLOCK_MUTATE_R4 // scripts/mutate.sh: the model's seeded bug 9
    uint64_t Early = Header.load(std::memory_order_relaxed);
    LS.pop(Obj);
    if (reservation::exitReserved(T, Early))
      return JITLOCK_OK;
#else
    LS.pop(Obj);
    if (LS.top() == Obj)
      return JITLOCK_OK;
#endif
    uint64_t H = Header.load(std::memory_order_relaxed);
    if (reservation::exitReserved(T, H)) // R4, after the pop and X3.
      return JITLOCK_OK;
    if (isFastLocked(H) &&
        Header.compare_exchange_strong(H, withLockBits(H, UnlockedValue),
                                       std::memory_order_release,
                                       std::memory_order_relaxed))
      return JITLOCK_OK;
    LS.push(Obj);
  }

  // Not on top: an unstructured exit (lock A; lock B; unlock A), or a
  // contender inflated it since this thread fast-locked it.
  if (int I = LS.find(Obj); I >= 0) {
    if (LS.count(Obj) > 1) {
      LS.removeAt(unsigned(I));
      return JITLOCK_OK;
    }
    for (;;) {
      uint64_t H = loadStableHeader(Obj);
      if (reservation::exitReserved(T, H)) { // R4
        LS.removeAt(unsigned(I));
        return JITLOCK_OK;
      }
      if (!isFastLocked(H))
        break;
      LS.removeAt(unsigned(I));
      if (Header.compare_exchange_strong(H, withLockBits(H, UnlockedValue),
                                         std::memory_order_release,
                                         std::memory_order_relaxed))
        return JITLOCK_OK;
      LS.insertAt(unsigned(I), Obj);
    }
  }

  Monitor *M = monitorOwnedBy(T, Obj, loadStableHeader(Obj));
  if (!M)
    return misuse(JITLOCK_ENOT_OWNER, &T, Obj, "monitor exit by a non-owner",
                  From);
  if constexpr (AssertionsEnabled)
    M->validate(T);
  exitMonitor(*M, T);
  return JITLOCK_OK;
}

int exitObject(jitlock_thread &T, void *Obj) { return exit(T, Obj); }

} // namespace jitlock

// The C entry points of the two hottest operations: interpreters call these
// for every lock, and inline fast paths the _slow pair on their slow paths.
// The pairs differ only in what misuse does (Config.h, Caller).
int jitlock_rt_monitor_enter(jitlock_thread *Self, void *Obj) {
  if (int Err = jitlock::checkCaller(Self, Obj, "monitor enter"))
    return Err;
  return jitlock::enter(*Self, Obj);
}

int jitlock_rt_monitor_exit(jitlock_thread *Self, void *Obj) {
  if (int Err = jitlock::checkCaller(Self, Obj, "monitor exit"))
    return Err;
  return jitlock::exit(*Self, Obj);
}

int jitlock_rt_monitor_enter_slow(jitlock_thread *Self, void *Obj) {
  if (int Err = jitlock::checkCaller(Self, Obj, "monitor enter",
                                     jitlock::Caller::CompiledCode))
    return Err;
  return jitlock::enter(*Self, Obj, jitlock::Caller::CompiledCode);
}

int jitlock_rt_monitor_exit_slow(jitlock_thread *Self, void *Obj) {
  if (int Err = jitlock::checkCaller(Self, Obj, "monitor exit",
                                     jitlock::Caller::CompiledCode))
    return Err;
  return jitlock::exit(*Self, Obj, jitlock::Caller::CompiledCode);
}

int jitlock_rt_monitor_exit_queued_slow(jitlock_thread *Self, void *Obj) {
  if (int Err = jitlock::checkCaller(Self, Obj, "monitor exit",
                                     jitlock::Caller::CompiledCode))
    return Err;
  jitlock::exitQueued(*Self, Obj);
  return JITLOCK_OK;
}
