/*
 * locking.pml - jitlock's locking protocol as a Promela model for Spin.
 *
 * The protocol is stated once, at the top of lib/Runtime/Synchronizer.cpp,
 * with labels (E1-E5, M1-M2, X1-X4, N1-N3, XQ, J1-J3, H1-H2, A1-A6). Every step that
 * implements one of them carries its label in a comment, and each inline
 * names the C++ function it models (Synchronizer.cpp, WaitNotify.cpp,
 * Monitor.cpp, Parker.cpp, Deflation.cpp), so that model and code read side by side.
 * docs/model.md says what is modelled and what is abstracted away, and
 * README.md here why each step that does more than one access may do so.
 *
 * One object, OBJ, shared by NTHREADS mutator threads that each run a fixed
 * script of operations (THE SCRIPTS, at the end), and a thread that
 * deflates idle monitors: a VM thread inside safepoints, or (CONCURRENT=1)
 * the deflation thread, concurrently with the mutators, whose freed
 * monitors may be reused for another object. A Promela step is one atomic
 * access to shared memory (a load, a store, a CAS), plus what the thread
 * does with its own data meanwhile, or one critical section of a queue lock
 * around at most one access to a word used outside that lock.
 *
 * Memory is sequentially consistent except for the one reordering the
 * inflated exit allows: N3's release store of owner 0 goes into the
 * exiting thread's store buffer, and its load of the entry count may run
 * before the buffer drains (THE STORE BUFFER, below).
 *
 * Compile-time switches (spin -D...):
 *   NTHREADS=2|3     mutator threads, each with its own script
 *   EXIT_FENCE=1     Config.inflated_exit = fence: N3 drains the buffer at
 *                    its full fence and J2 is a fence; otherwise (store)
 *                    N3 has no fence and J2 is membarrier, which drains
 *                    every thread's buffer
 *   SEEDED_BUG=1     wait releases the monitor before joining the wait set
 *   SEEDED_BUG=2     a joiner skips J2 (no membarrier) with the store exit
 *   SEEDED_BUG=3     the parker sleeps without FUTEX_WAIT's check of the
 *                    word, so a wake-up that comes before the park is lost
 *   SEEDED_BUG=4     (CONCURRENT) A6 frees a deflated monitor without the
 *                    handshake, while a thread may still hold its address
 *   SEEDED_BUG=5     (CONCURRENT) an enterer that cancels a deflation (A4)
 *                    adds no contention of its own for the deflater
 *   SEEDED_BUG=6     a joiner skips J3's re-check of the owner word
 *   SEEDED_BUG=7     (CONCURRENT) abortDeflation does not wake the entry
 *                    queue's head when the entry count is nonzero
 *   SEEDED_BUG=8     (INTERRUPT) a waiter that a notify chose returns
 *                    interrupted when its flag is set, and drops the
 *                    notification (nobody passes it on)
 *   HEAVY=1          the heavy-monitor locking mode: enter() takes an
 *                    unlocked object by H1, inline code still by E5 (H2)
 *   CONCURRENT=1     deflation runs concurrently (Deflater) instead of
 *                    inside safepoints (VMThread)
 *   INTERRUPT=1      (NTHREADS=2) a waiter and a notifier, and an
 *                    Interrupter that interrupts the waiter once, at any
 *                    time (W1-W3, I1-I2)
 *   RESERVE_SCRIPT=2 (RESERVE) scripts with non-adjacent re-entry instead
 *   RESERVE=1        (NTHREADS=2) the reserved locking mode: OBJ is
 *                    reservable; the first locker reserves it (R2), its
 *                    owner enters and exits with no atomic (R1, R4), and
 *                    a contender revokes it by a handshake with the
 *                    reserving thread (R3)
 *   SEEDED_BUG=9     (RESERVE) the reserved exit reads the header on the
 *                    wrong side of the pop: before it, and decides X4 on
 *                    what it read, without X3's look at the popped stack
 *   MAX_LOSSES=n     MaxLossesBeforeHandoff (16 in the runtime)
 *   SPIN_TRIES=n     probes of the owner word before queueing (spin_limit)
 */

#ifndef NTHREADS
#define NTHREADS 2
#endif
#ifndef SEEDED_BUG
#define SEEDED_BUG 0
#endif
#ifndef EXIT_FENCE
#define EXIT_FENCE 0
#endif
#ifndef HEAVY
#define HEAVY 0
#endif
#ifndef CONCURRENT
#define CONCURRENT 0
#endif
#ifndef INTERRUPT
#define INTERRUPT 0
#endif
#ifndef RESERVE
#define RESERVE 0
#endif
#ifndef RESERVE_SCRIPT
#define RESERVE_SCRIPT 1
#endif
#ifndef SWEEPS
#define SWEEPS 2         /* the Deflater's sweeps (CONCURRENT) */
#endif
#ifndef MAX_LOSSES
#define MAX_LOSSES 1
#endif
#ifndef SPIN_TRIES
#define SPIN_TRIES 1
#endif

/* The operations of the scripts (THE SCRIPTS, at the end). */
#define END 0
#define ENTER 1        /* monitorenter OBJ */
#define EXIT 2         /* monitorexit OBJ */
#define ENTER_PRIV 3   /* monitorenter of the thread's own object */
#define EXIT_PRIV 4
#define WAIT_FLAG 5    /* while (!flag) wait(OBJ) */
#define TIMED_WAIT 6   /* one wait_timed(OBJ), which may time out */
#define NOTIFY 7       /* flag = true; notify(OBJ) */
#define NOTIFY_ALL 8   /* flag = true; notifyAll(OBJ) */
#define HASH 9         /* identityHash(OBJ) */
#define TIMED_WAIT_FLAG 10  /* while (!flag) wait_timed(OBJ) */
#define IWAIT 11       /* one wait(OBJ), which an interrupt may end */
#define IS_WAIT(o) ((o) == WAIT_FLAG || (o) == TIMED_WAIT || \
                    (o) == TIMED_WAIT_FLAG || (o) == IWAIT)
#define IS_FLAG_WAIT(o) ((o) == WAIT_FLAG || (o) == TIMED_WAIT_FLAG)
#define SCRIPT_LEN 8

/*---------------------------------------------------------------------------
 * The object header (ObjectHeader.h): lock bits [1:0], a hash bit, and the
 * monitor's index in place of its address while the lock bits are 10. The
 * embedder's 11 state is not modelled (loadStableHeader waits it out).
 *---------------------------------------------------------------------------*/
#define LOCKED 0
#define UNLOCKED 1
#define MONITOR 2
#define LOCKMASK 3
#define HASHBIT 4
#define LOCKBITS(v) ((v) & LOCKMASK)
#define WITHBITS(v, b) (((v) & ~LOCKMASK) | (b))
#define HASHED(v) (((v) & HASHBIT) != 0)
#define ENCODE_MON(i) (((i) << 3) | MONITOR)
#define MON_OF(v) ((v) >> 3)
/* The reservation field (reserve_shift 3, reserve_bits 3), meaningful while
 * the lock bits are not 10: 0 reservable and not reserved, 1 + t reserved
 * by thread t, NEVER revoked once (or never reservable). A reserved header
 * has the unlocked pattern 01. Without RESERVE the field stays 0. */
#define NEVER 7
#define RES(v) (((v) >> 3) & 7)
#define WITHRES(v, r) (((v) & 7) | ((r) << 3))
#define IS_RESERVED(v) (LOCKBITS(v) == UNLOCKED && RES(v) != 0 && \
                        RES(v) != NEVER)
#define RESERVED_TO(v, who) (LOCKBITS(v) == UNLOCKED && RES(v) == (who) + 1)

/*---------------------------------------------------------------------------
 * The monitor (Monitor.h). The owner word is 0, AnonymousOwner,
 * DeflaterMarker or a thread (even values from 8 up, as thread addresses
 * are aligned).
 *---------------------------------------------------------------------------*/
#define ANON 2
#define DEFLATER 4
#define ENC(i) (8 + 2 * (i))
/* The owner of another object that reuses a freed monitor (CONCURRENT). */
#define GHOST ENC(NTHREADS)
/* Monitor.Contentions once a deflation has won (A3): any negative value. */
#define DEFLATED (-100)

/* One monitor suffices while deflation runs inside a safepoint: OBJ has at
 * most one, and an inflation publishes one only while the header names
 * none. A concurrent deflater leaves a deflated monitor waiting for its
 * handshake while OBJ may inflate again, and may give a freed one to
 * another object, so it needs more. */
#if CONCURRENT
#define NMON 3           /* OBJ's, and the two that may be deflated */
#define MAX_DEFLATED 2
#else
#define NMON 1
#endif

typedef Monitor {
  byte owner;            /* line 1: the owner word */
  byte rec;              /* line 1: Recursions, holds minus one */
  byte dhdr;             /* line 0: DisplacedHeader */
  bit live;              /* registered (newMonitor), not yet deflated */
  bit pending;           /* deflated, waiting for its handshake (A6) */
  bit ghost;             /* reused for another object (CONCURRENT) */
  short cont;            /* line 2: Contentions (A3, A4) */
  bit qlock;             /* line 2: QueueLock, a spin lock */
  byte entry[NTHREADS];  /* line 2: the FIFO entry queue, of thread ids */
  byte nentry;           /* line 1: EntryCount, written under the queue
                          * lock (append, unlink), read by exits without */
  byte waits[NTHREADS];  /* line 2: the FIFO wait set */
  byte nwait;
};
Monitor mon[NMON];
byte hdr = UNLOCKED;     /* OBJ's header word (reservable, if RESERVE) */

/*---------------------------------------------------------------------------
 * Each thread's QueueNode (Thread.h) and its futex (Parker.cpp).
 *---------------------------------------------------------------------------*/
#define SLEEP 0
#define GRANTED 1
#define COMPETE 2
#define INTERRUPTED 3    /* an interrupter found the thread in the wait set */
#define NOWHERE 0
#define ENTRYQ 1
#define WAITSET 2
byte wake[NTHREADS];     /* Node.Wakeup, the futex word */
bit sleeping[NTHREADS];  /* in FUTEX_WAIT on its own Wakeup word */
byte where[NTHREADS];    /* Node.Queue */
byte losses[NTHREADS];   /* Node.Losses, counted up to MAX_LOSSES */
bit handoff[NTHREADS];   /* Node.HandoffWanted */
/* The thread's interrupt flag (jitlock_thread::Interrupted). WaitingOn is
 * where[t] == WAITSET: with one monitor, "the wait set it names". */
bit intr[NTHREADS];

/*---------------------------------------------------------------------------
 * THE STORE BUFFER. N3's release store of owner 0 may stay in the exiting
 * thread's store buffer while the thread loads the entry count (x86-TSO; on
 * AArch64 a relaxed load may pass an stlr). Each thread has a buffer of one
 * entry: the monitor whose owner word it released (the buffered value is
 * always 0). While it is full, every other thread still reads the exiter as
 * the owner; the exiter itself reads its owner word only by the CAS of XQ,
 * which drains it first. The buffer drains as a step of its own: before the
 * count load (at the checker's choice, or at the fence with EXIT_FENCE),
 * after it, by a joiner's membarrier (J2: every thread's buffer at once),
 * and at the latest before the thread's next locked instruction or system
 * call, which the model places at the end of the release. No other store is
 * buffered: docs/model.md says why that loses no behaviour that matters.
 *---------------------------------------------------------------------------*/
bit sbFull[NTHREADS];    /* a store of owner 0 is buffered */
byte sbMon[NTHREADS];    /* to the owner word of this monitor */

/* The buffered store reaches memory. Nobody else writes an owner word that
 * holds a thread, so the exiter still owns it there. */
inline sbDrain(who) {
  if
  :: sbFull[who] ->
     assert(mon[sbMon[who]].owner == ENC(who));
     mon[sbMon[who]].owner = 0;
     sbFull[who] = 0;
     sbMon[who] = 0
  :: else -> skip
  fi
}
/* membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED): a full fence in every
 * running thread of the process, and in the caller. */
#if NTHREADS == 2
#define MEMBARRIER atomic { sbDrain(0); sbDrain(1) }
#else
#define MEMBARRIER atomic { sbDrain(0); sbDrain(1); sbDrain(2) }
#endif

/*---------------------------------------------------------------------------
 * Safepoints (Safepoint.cpp): a thread is safe at a poll between two
 * operations and while parked (blocked from T2 before the park to T1 after
 * it); everywhere else in monitor code it is unsafe.
 *---------------------------------------------------------------------------*/
bit safe[NTHREADS];
#if NTHREADS == 2
#define ALL_SAFE (safe[0] && safe[1])
#else
#define ALL_SAFE (safe[0] && safe[1] && safe[2])
#endif

/*---------------------------------------------------------------------------
 * The handshake of A6 (CONCURRENT): hs[t] is set by the deflater and
 * cleared once thread t was safe (at a poll, or parked): by the thread at
 * its poll, or by the requester while it is safe, which is the same here.
 *---------------------------------------------------------------------------*/
bit hs[NTHREADS];
byte deflated;           /* monitors the Deflater deflated */
bool ghosted;            /* a freed monitor was reused for another object */
#if NTHREADS == 2
#define HS_PENDING (hs[0] || hs[1])
#else
#define HS_PENDING (hs[0] || hs[1] || hs[2])
#endif

/*---------------------------------------------------------------------------
 * Ghost state for the properties. holds[t] counts the holds thread t has
 * finished taking and not yet begun to give back: two threads with holds
 * are two owners inside OBJ's critical section.
 *---------------------------------------------------------------------------*/
byte holds[NTHREADS];
bool flag;               /* WAIT_FLAG's condition; read and set holding OBJ */
bool hashGiven;          /* an identity hash of OBJ was handed out */
byte revokedHeld;        /* revocations of OBJ while its reserver held it */
/* Notifications a notify delivered (it moved a waiter) that no normal
 * return from wait has consumed yet, and who was moved. */
byte owed;
bit notified[NTHREADS];
byte finished;           /* threads at the end of their script */

/*---------------------------------------------------------------------------
 * Lock stacks (Thread.h) are local to each Mutator: only the thread itself
 * uses its lock stack in the protocol. Entries are OBJ or PRIV, an object
 * only its thread locks (whose fast lock and unlock always succeed, so only
 * its entry is modelled). The capacity, 8 in the runtime, is each script's.
 *---------------------------------------------------------------------------*/
#define OBJ 1
#define PRIV 2
#define LSMAX 3
#define LS_TOP (lsn > 0 -> ls[lsn - 1] : 0)
#define LS_FULL (lsn == capacity)
#define LS_HAS(i) (lsn > (i) && ls[i] == OBJ)
#define LS_CONTAINS (LS_HAS(0) || LS_HAS(1) || LS_HAS(2))
#define LS_COUNT ((LS_HAS(0) -> 1 : 0) + (LS_HAS(1) -> 1 : 0) + \
                  (LS_HAS(2) -> 1 : 0))

#if RESERVE
/* The revocation's handshake operation (R3) reads the reserving thread's
 * lock stack while that thread is stopped: these mirror each lock stack
 * for it. onls[t] counts OBJ's entries; lsSplit[t] says they are not all
 * adjacent, which only a reserved object's owner path (R1) allows. */
byte onls[NTHREADS];
bit lsSplit[NTHREADS];
#define MIRROR_PUSH(e) \
  if \
  :: (e) == OBJ && onls[t] > 0 && ls[lsn - 1] != OBJ -> lsSplit[t] = 1; \
     onls[t]++ \
  :: (e) == OBJ && !(onls[t] > 0 && ls[lsn - 1] != OBJ) -> onls[t]++ \
  :: else -> skip \
  fi
/* Pops leave OBJ's entries split only if two remain around another one,
 * which a stack of three cannot hold once one entry is gone. */
#define MIRROR_POP(e) \
  if \
  :: (e) == OBJ -> onls[t]--; lsSplit[t] = 0 \
  :: else -> lsSplit[t] = 0 \
  fi
#endif

inline lsPush(e) {
  assert(lsn < capacity);
#if RESERVE
  MIRROR_PUSH(e);
#endif
  ls[lsn] = e;
  lsn++
}
inline lsPop() {
  lsn--;
#if RESERVE
  MIRROR_POP(ls[lsn]);
#endif
  ls[lsn] = 0
}
/* LockStack::removeAll(OBJ), leaving the number removed in holdsN. */
inline lsRemoveAll() {
  holdsN = 0;
  i = 0;
  j = 0;
  do
  :: i < lsn ->
     if
     :: ls[i] == OBJ -> holdsN++
     :: else -> ls[j] = ls[i]; j++
     fi;
     i++
  :: else -> break
  od;
  lsn = j;
#if RESERVE
  onls[t] = 0;
  lsSplit[t] = 0;
#endif
  do
  :: j < LSMAX -> ls[j] = 0; j++
  :: else -> break
  od;
  i = 0;
  j = 0
}

/*===========================================================================
 * The queues (Monitor::append, Monitor::unlink), under the queue lock.
 *===========================================================================*/
inline qAppend(which, who) {
  if
  :: which == ENTRYQ ->
     mon[m].entry[mon[m].nentry] = who;
     mon[m].nentry++
  :: else ->
     mon[m].waits[mon[m].nwait] = who;
     mon[m].nwait++
  fi;
  where[who] = which
}
inline qRemove(which, who) {
  i = 0;
  if
  :: which == ENTRYQ ->
     do
     :: i < mon[m].nentry && mon[m].entry[i] != who -> i++
     :: else -> break
     od;
     assert(i < mon[m].nentry);
     do
     :: i + 1 < mon[m].nentry -> mon[m].entry[i] = mon[m].entry[i + 1]; i++
     :: else -> break
     od;
     mon[m].nentry--;
     mon[m].entry[mon[m].nentry] = 0
  :: else ->
     do
     :: i < mon[m].nwait && mon[m].waits[i] != who -> i++
     :: else -> break
     od;
     assert(i < mon[m].nwait);
     do
     :: i + 1 < mon[m].nwait -> mon[m].waits[i] = mon[m].waits[i + 1]; i++
     :: else -> break
     od;
     mon[m].nwait--;
     mon[m].waits[mon[m].nwait] = 0
  fi;
  where[who] = NOWHERE;
  i = 0
}
/* SpinLock::lock. Always the first statement of its atomic block, so that
 * the block waits, as a whole, for the lock. */
inline qLock() {
  mon[m].qlock == 0 -> mon[m].qlock = 1
}
inline qUnlock() {
  mon[m].qlock = 0
}
/* HandoffWanted = ++Losses >= MaxLossesBeforeHandoff, counting up to it. */
inline countLoss(who) {
  losses[who] = (losses[who] < MAX_LOSSES -> losses[who] + 1 : MAX_LOSSES);
  handoff[who] = (losses[who] >= MAX_LOSSES)
}
/* The node's set-up (Thread, Wakeup, Losses, HandoffWanted) and append. */
inline joinQueue(which) {
  wake[t] = SLEEP;
  losses[t] = 0;
  handoff[t] = 0;
  qAppend(which, t)
}

/*===========================================================================
 * The parker: parkBlocked (Safepoint.cpp) around parkWhile (Parker.cpp).
 *
 * parkWhile(Wakeup, Sleep, deadline) is FUTEX_WAIT: the kernel sleeps only
 * if the word still holds Sleep, atomically with respect to FUTEX_WAKE. A
 * wake-up stored and signalled between the caller's check of the word and
 * its park is therefore not lost: the park returns at once. wakeAll
 * (FUTEX_WAKE) ends the sleep of a thread in FUTEX_WAIT on the word and does
 * nothing otherwise: a futex keeps no permit. Spurious returns are not
 * modelled: every caller loops on its own condition, so one changes nothing.
 *===========================================================================*/
inline park(isTimed) {
#if SEEDED_BUG == 3
  /* SEEDED BUG: sleep until woken, whatever the word holds by now. */
  atomic { safe[t] = 1; sleeping[t] = 1 }
#else
  atomic {                           /* T2, then FUTEX_WAIT's check */
    safe[t] = 1;
    if
    :: wake[t] == SLEEP -> sleeping[t] = 1
    :: else -> skip
    fi
  }
#endif
  if
  :: atomic { !sleeping[t] -> safe[t] = 0; inTime = true }   /* T1 */
  :: isTimed ->                      /* the deadline passes */
     atomic { sleeping[t] = 0; safe[t] = 0; inTime = false }
  fi
}
inline wakeAll(who) {
  sleeping[who] = 0
}

/*===========================================================================
 * Inflation.
 *
 * newMonitor registers a monitor before the header CAS publishes it, and
 * discardMonitor frees it again when the CAS fails. Until it is published
 * only a registry scan can see it, and the one scan here, deflation, skips
 * it at A1 (its owner word is never 0). So allocation, initialisation and
 * the CAS are one step. It takes a monitor off the free list: neither
 * registered, nor waiting for its handshake, nor reused for another object.
 *===========================================================================*/
inline publishMonitor(expected, ownerWord, recursions) {
  /* newMonitor, then CAS header expected -> monitor|10 (acq_rel) */
  if
  :: hdr == expected ->
     m = 0;
     do
     :: m < NMON && (mon[m].live || mon[m].pending || mon[m].ghost) -> m++
     :: else -> break
     od;
     assert(m < NMON);
     mon[m].live = 1;
     mon[m].owner = ownerWord;
     mon[m].rec = recursions;
     mon[m].cont = 0;
     mon[m].dhdr = WITHBITS(expected, UNLOCKED);
     hdr = ENCODE_MON(m);
     cas = true
  :: else ->
     h = hdr;                        /* what the failed CAS read */
     cas = false
  fi
}

/*===========================================================================
 * Reservation (RESERVE): revokeReservation and its handshake operation.
 *===========================================================================*/
#if RESERVE
/* The handshake operation of R3, run while thread r is stopped (at a poll,
 * parked, or past the end of its script, as a detached thread): OBJ's
 * header, if still reserved by r, becomes fast-locked by r when OBJ is on
 * r's lock stack, else unlocked; either way never reserved again. A CAS in
 * the runtime, since a hash install may change the other bits meanwhile;
 * one step here. */
inline revokeOp(r) {
  if
  :: RESERVED_TO(hdr, r) && onls[r] > 0 && lsSplit[r] ->
     /* Held around another object (A B A, which R1 allows): fast-locked it
      * would break the lock stack's adjacency, so it is inflated with an
      * anonymous owner, as a contender inflates a fast-locked object; r
      * fixes the owner where it next finds it (exit, re-entry, wait). */
     publishMonitor(hdr, ANON, 0);
     assert(cas);
     cas = false;
     mon[m].dhdr = WITHRES(mon[m].dhdr, NEVER);
     revokedHeld++
  :: RESERVED_TO(hdr, r) && onls[r] > 0 && !lsSplit[r] ->
     hdr = WITHRES(WITHBITS(hdr, LOCKED), NEVER);
     revokedHeld++
  :: RESERVED_TO(hdr, r) && onls[r] == 0 ->
     hdr = WITHRES(hdr, NEVER)
  :: else -> skip                    /* revoked already, by someone else */
  fi;
  /* A held object is fast-locked by its holder afterwards. */
  assert(onls[r] == 0 || LOCKBITS(hdr) != UNLOCKED)
}

/* R3: a contender found OBJ reserved by thread r. It waits, safe itself,
 * until r is stopped, and runs the operation for it: what a handshake with
 * one thread is (Safepoint.cpp). Then it starts over at E1. */
inline revoke(r) {
  atomic { sbDrain(t); safe[t] = 1 }
  atomic { safe[r] -> revokeOp(r) }
  safe[t] = 0
}

/* The owner ends its own reservation before it inflates (wait, a full lock
 * stack, non-adjacent re-entry): no handshake, as nobody else writes a
 * reserved header's lock bits. OBJ is on its lock stack. */
inline revokeOwn() {
  atomic {
    if
    :: RESERVED_TO(hdr, t) -> hdr = WITHRES(WITHBITS(hdr, LOCKED), NEVER)
    :: else -> skip
    fi
  }
}
#endif

/* inflateOwned(T, OBJ): OBJ is on this thread's lock stack. Leaves the
 * monitor, owned by this thread now, in m. */
inline inflateOwned() {
#if RESERVE
  revokeOwn();
#endif
  h = hdr;                           /* loadStableHeader */
  do
  :: LOCKBITS(h) == MONITOR ->
     /* A contender inflated it with an anonymous owner: that owner is us. */
     m = MON_OF(h);
     atomic {                        /* setRecursions, by the owner */
       lsRemoveAll();
       mon[m].rec = (holdsN > 0 -> holdsN - 1 : 0);
       holdsN = 0
     }
     atomic {                        /* the exchange: nobody else writes */
       assert(mon[m].owner == ANON); /* an anonymous owner word */
       mon[m].owner = ENC(t)
     }
     break
  :: else ->
     atomic {
       holdsN = LS_COUNT;
       r = (holdsN > 0 -> holdsN - 1 : 0);
       publishMonitor(h, ENC(t), r);
       if
       :: cas -> lsRemoveAll()
       :: else -> skip
       fi;
       holdsN = 0;
       r = 0
     }
     if
     :: cas -> cas = false; break
     :: else -> skip
     fi
  od
}

/* takeFreeMonitor: CAS owner 0 -> self (acquire). */
inline takeFree() {
  atomic {
    if
    :: mon[m].owner == 0 ->
       mon[m].owner = ENC(t);
       taken = true
    :: else -> taken = false
    fi
  }
}

/*===========================================================================
 * Releasing a monitor: N3, then XQ (releaseFindsQueued, wakeSuccessor,
 * releaseMonitor, exitQueued).
 *===========================================================================*/

/* N3: store owner 0 (release), the exit barrier, load the entry count.
 * Leaves in queued whether the count was nonzero. The store goes to memory
 * at once (as if the buffer drained before the load) or into the buffer. */
inline n3() {
#if EXIT_FENCE
  atomic { mon[m].owner = 0 }        /* N3: the store, then the full fence */
#else
  if
  :: atomic { mon[m].owner = 0 }     /* N3: the store, drained at once */
  :: atomic {                        /* N3: the store, buffered */
       assert(!sbFull[t]);
       sbFull[t] = 1;
       sbMon[t] = m
     }
  fi;
#endif
  queued = (mon[m].nentry != 0)      /* N3: load the entry count */
}

/* XQ, wakeSuccessor, under the queue lock: unless nobody is queued on
 * monitor m or m has an owner again (whose N3 sees the count; a deflater's
 * marker, whose abort runs XQ), wakes the head to compete, or hands m to a
 * head that lost too often (CAS owner 0 -> head). XQ never owns m. Called
 * by an exit that found the count nonzero, by a joiner's J3 and by a
 * deflater's abort. */
inline wakeSuccessor() {
  atomic {
    qLock();
    if
    :: mon[m].nentry > 0 && mon[m].owner == 0 ->
       heir = mon[m].entry[0];
       grant = COMPETE
    :: else -> qUnlock()
    fi
  }
  if
  :: grant != 0 ->
     atomic {
       if
       :: wake[heir] == COMPETE ->   /* a barger won */
          countLoss(heir)
       :: else -> skip
       fi;
       if
       :: handoff[heir] && mon[m].owner == 0 ->   /* CAS owner 0 -> heir */
          qRemove(ENTRYQ, heir);
          mon[m].owner = ENC(heir);
          grant = GRANTED
       :: else -> skip               /* compete */
       fi;
       wake[heir] = grant;           /* the wake-up, under the queue lock */
       qUnlock()
     }
     wakeAll(heir);                  /* the last touch of the heir's node */
     heir = 0;
     grant = 0
  :: else -> skip
  fi
}

/* XQ from a thread's release: the queue lock's locked instruction drains
 * the thread's store buffer first. */
inline releaseXQ() {
  atomic { sbDrain(t) }
  wakeSuccessor()
}

/* The end of a release: the buffer drains at the latest here, before the
 * thread's next locked instruction or system call. */
inline releaseEnd() {
  atomic { sbDrain(t) }
}

inline releaseMonitor() {
  n3();
  if
  :: queued -> queued = false; releaseXQ()
  :: else -> skip
  fi;
  releaseEnd()
}


/*===========================================================================
 * Parking in the entry queue: waitInEntryQueue, enterQueued.
 *===========================================================================*/
inline waitInEntryQueue() {
  do
  :: wk = wake[t];
     do
     :: wk == SLEEP -> park(false); wk = wake[t]
     :: else -> break
     od;
     if
     :: wk == GRANTED -> break       /* handed over, and unlinked */
     :: else ->
        /* Compete, under the queue lock, so that an exit cannot free the
         * monitor and wake us between a lost race and going back to
         * sleep. */
        atomic {
          qLock();
          if
          :: wake[t] == GRANTED -> qUnlock(); wk = GRANTED
          :: else -> takeFree()
          fi
        }
        if
        :: wk == GRANTED -> break
        :: wk != GRANTED && taken ->
           atomic { qRemove(ENTRYQ, t); qUnlock() }   /* takeFromQueue */
           break
        :: else ->
           atomic {                  /* lost: back to sleep */
             wake[t] = SLEEP;
             countLoss(t);
             qUnlock()
           }
        fi
     fi
  od;
  atomic {
    wk = 0;
    taken = false;
    inTime = false;
    losses[t] = 0;
    handoff[t] = 0;
    wake[t] = SLEEP
  }
}

/* The second half of takeOrCancelDeflation, after takeFree failed: finding
 * a deflater's marker, take the owner word from it, which cancels the
 * deflation, and add one contention for the deflater's abort to take back
 * (A4). The caller is counted in cont, which keeps A3 failing meanwhile. */
inline cancelDeflation() {
  atomic {                           /* A4: CAS owner DEFLATER -> self */
    if
    :: mon[m].owner == DEFLATER -> mon[m].owner = ENC(t); taken = true; cancelled = true
    :: else -> skip
    fi
  }
#if SEEDED_BUG == 5
  /* SEEDED BUG: no contention for the deflater. Its abort takes back the
   * canceller's own, and a late A3 can deflate the monitor it owns. */
  cancelled = false
#else
  if
  :: cancelled -> cancelled = false; mon[m].cont++
  :: else -> skip
  fi
#endif
}
inline takeOrCancel() {
  takeFree();
  if
  :: !taken -> cancelDeflation()
  :: else -> skip
  fi
}

/* enterQueued: joins m's entry queue (J1-J3) and sleeps until it owns m.
 * The caller is counted in cont (A4), so m is not deflated meanwhile; a
 * deflater's marker is cancelled, never queued behind. */
inline enterQueued() {
  atomic { qLock(); takeFree() }     /* J1, under the queue lock */
  if
  :: !taken -> cancelDeflation()
  :: else -> skip
  fi;
  if
  :: taken -> qUnlock()
  :: else ->
     atomic { joinQueue(ENTRYQ); qUnlock() }   /* J1: append, count + 1 */
#if SEEDED_BUG == 2
     /* SEEDED BUG: no J2. An exit whose store of 0 is still buffered
      * loaded the count before J1, and J3 reads the exiter as the owner. */
#elif EXIT_FENCE
     /* J2: a full fence. It drains this thread's own buffer, which is
      * empty here: every release drains it before the thread goes on. */
     assert(!sbFull[t]);
#else
     MEMBARRIER;                     /* J2 */
#endif
#if SEEDED_BUG == 6
     /* SEEDED BUG: no J3. A thread that released before J2 and loaded the
      * count before J1 wakes nobody. */
     skip
#else
     w = mon[m].owner;               /* J3 */
     if
     :: w == 0 -> wakeSuccessor()    /* XQ, as the exit that missed us would */
     :: else -> skip                 /* w's exit sees the count */
     fi;
     w = 0;
#endif
     waitInEntryQueue()
  fi;
  taken = false
}

/* restoreHeader (A5), by the deflater or by an enterer that found the
 * deflation won (the deflater may be descheduled right after A3). */
inline restoreHeader(k) {
  atomic {                           /* A5: seal the displaced header */
    if
    :: LOCKBITS(mon[k].dhdr) == UNLOCKED -> mon[k].dhdr = WITHBITS(mon[k].dhdr, LOCKED)
    :: else -> skip
    fi
  }
  atomic {                           /* A5: CAS header m|10 -> displaced|01 */
    if
    :: hdr == ENCODE_MON(k) -> hdr = WITHBITS(mon[k].dhdr, UNLOCKED)
    :: else -> skip                  /* restored by the other one */
    fi
  }
}

/*===========================================================================
 * Entering: enterMonitor, keepIfInstalled, and enter() (E1-E5 again, with
 * inflation). enter() serves the inline enter's slow path and, with
 * wantMonitor, enterInflated: a timed-out waiter's re-entry.
 *===========================================================================*/
inline enterMonitor() {
  entered = false;
  gaveUp = false;
  takeFree();                        /* M1, widened to the queued bit */
  if
  :: !taken ->
     w = mon[m].owner;
     if
     :: w == ANON && LS_CONTAINS ->
        /* Re-entry of an object a contender inflated: fix the owner. */
        inflateOwned();
        mon[m].rec++;
        entered = true;
        gaveUp = true
     :: w == ENC(t) ->       /* M2 */
        mon[m].rec++;
        entered = true;
        gaveUp = true
     :: else ->
        /* enterContended, counted in cont (A4): fetch_add, whose old
         * value is negative once a deflation has won (A3). */
        atomic { mon[m].cont++; gaveUp = (mon[m].cont <= 0) }
        if
        :: gaveUp ->
           mon[m].cont--;
           restoreHeader(m)          /* A5, then start over */
        :: else ->
           takeOrCancel();           /* a bounded spin */
           i = 0;
           do
           :: i < SPIN_TRIES && !taken -> i++; takeOrCancel()
           :: else -> break
           od;
           i = 0;
           if
           :: !taken -> enterQueued()
           :: else -> taken = false
           fi;
           mon[m].cont--             /* the count back, release */
        fi
     fi;
     w = 0
  :: else -> skip
  fi;
  taken = false;
  if
  :: !gaveUp ->
     /* keepIfInstalled: keep m if OBJ's header still names it. */
     if
     :: hdr == ENCODE_MON(m) -> entered = true
     :: else -> releaseMonitor(); entered = false
     fi
  :: else -> gaveUp = false
  fi
}

inline slowEnter() {
  do
  :: h = hdr;                        /* E1 */
     if
     :: LS_FULL && !wantMonitor ->   /* E2: make room, then start over */
        assert(ls[0] == OBJ);
        inflateOwned()
     :: else ->
        if
        :: LOCKBITS(h) == MONITOR -> /* E3 */
           m = MON_OF(h);
           enterMonitor();
           if
           :: entered -> entered = false; break
           :: else -> skip           /* being deflated: start over */
           fi
#if RESERVE
        :: RESERVED_TO(h, t) ->      /* R1 */
           assert(!wantMonitor);
           lsPush(OBJ);
           break
        :: IS_RESERVED(h) && !RESERVED_TO(h, t) ->
           revoke(RES(h) - 1)        /* R3, then start over */
        :: LOCKBITS(h) == UNLOCKED && RES(h) == 0 && !wantMonitor ->
           atomic {                  /* R2: CAS (h, 01) -> (h, 01, self) */
             if
             :: hdr == h -> hdr = WITHRES(h, t + 1); lsPush(OBJ); cas = true
             :: else -> cas = false
             fi
           }
           if
           :: cas -> cas = false; break
           :: else -> skip
           fi
#endif
        :: LOCKBITS(h) == UNLOCKED && !IS_RESERVED(h) &&
           (HEAVY || wantMonitor) ->
           atomic {                  /* H1: inflateUnlocked */
             publishMonitor(h, ENC(t), 0)
           }
           if
           :: cas -> cas = false; break
           :: else -> skip
           fi
        :: LOCKBITS(h) == LOCKED && LS_TOP == OBJ ->      /* E4 */
           lsPush(OBJ);
           break
        :: LOCKBITS(h) == LOCKED && LS_TOP != OBJ && LS_CONTAINS ->
           inflateOwned();           /* non-adjacent re-entry (A B A) */
           mon[m].rec++;
           break
        :: LOCKBITS(h) == LOCKED && !LS_CONTAINS ->
           /* Another thread holds it: inflateAnonymous, then enter the
            * monitor (next iteration). */
           atomic { publishMonitor(h, ANON, 0) }
           cas = false
        :: LOCKBITS(h) == UNLOCKED && !(HEAVY || wantMonitor) &&
           (!RESERVE || RES(h) == NEVER) ->
           atomic {                  /* E5 */
             if
             :: hdr == h -> hdr = WITHBITS(h, LOCKED); lsPush(OBJ); cas = true
             :: else -> cas = false
             fi
           }
           if
           :: cas -> cas = false; break
           :: else -> skip
           fi
        fi
     fi
  od;
  wantMonitor = false
}

/* monitorenter, the inline part (E1-E5, M1-M2). slow: call enter(). */
inline enterInline() {
  h = hdr;                           /* E1 */
  if
  :: LS_FULL -> slow = true          /* E2 */
  :: else ->
     if
     :: LOCKBITS(h) == MONITOR ->    /* E3 */
        m = MON_OF(h);
        w = mon[m].owner;            /* M1 */
        if
        :: w == ENC(t) ->            /* M2 */
           mon[m].rec++
        :: w == 0 ->
           atomic {                  /* M1: CAS owner 0 -> self, acquire */
             if
             :: mon[m].owner == 0 -> mon[m].owner = ENC(t)
             :: else -> slow = true
             fi
           }
        :: else -> slow = true
        fi;
        w = 0
#if RESERVE
     :: RESERVED_TO(h, t) -> lsPush(OBJ)                  /* R1 */
     :: IS_RESERVED(h) && !RESERVED_TO(h, t) -> slow = true   /* R3 */
     :: LOCKBITS(h) == UNLOCKED && RES(h) == 0 ->
        atomic {                     /* R2: CAS (h, 01) -> (h, 01, self) */
          if
          :: hdr == h -> hdr = WITHRES(h, t + 1); lsPush(OBJ)
          :: else -> slow = true
          fi
        }
#endif
     :: else ->
        if
        :: LS_TOP == OBJ -> lsPush(OBJ)                   /* E4 */
        :: else ->
           atomic {                  /* E5: CAS (h, 01) -> (h, 00), acquire */
             if
             :: hdr == WITHBITS(h, UNLOCKED) && !IS_RESERVED(hdr) ->
                hdr = WITHBITS(h, LOCKED);
                lsPush(OBJ)
             :: else -> slow = true
             fi
           }
        fi
     fi
  fi
}

/*===========================================================================
 * Exiting: the inline part (X1-X4, N1-N3), then exit(), which ends in
 * monitorOwnedBy and exitMonitor (run by the Mutator as common phases).
 *===========================================================================*/

/* The X4 CAS: h -> (h, 01) if h is fast-locked, release. */
inline unlockFast() {
  atomic {
    if
    :: LOCKBITS(h) == LOCKED && hdr == h ->
       hdr = WITHBITS(h, UNLOCKED);
       cas = true
    :: else -> cas = false
    fi
  }
}

/* jitlock_rt_monitor_exit_queued_slow: the inline N3 found the count
 * nonzero. No poll since, so the monitor the header named is not reused
 * (A6); the header names it still, or another one after a deflation and a
 * new inflation, or none. */
inline exitQueued() {
  h = hdr;                           /* loadStableHeader */
  if
  :: LOCKBITS(h) == MONITOR ->
     m = MON_OF(h);
     queued = (mon[m].nentry != 0);
     if
     :: queued -> queued = false; releaseXQ()
     :: else -> skip
     fi
  :: else -> skip
  fi
}

/* monitorexit, the inline part. exitSlow: call exit(). */
inline exitInline() {
  if
#if SEEDED_BUG == 9
  :: LS_TOP == OBJ ->
     /* SEEDED BUG: the header is read before the pop, and what it says
      * decides: revoked, so the lightweight exit, with no look at what
      * the pop left on the lock stack (X3). */
     h = hdr;
     lsPop();
     if
     :: RESERVED_TO(h, t) -> skip
     :: else ->
        unlockFast();
        if
        :: cas -> cas = false
        :: else -> lsPush(OBJ); exitSlow = true
        fi
     fi
#else
  :: LS_TOP == OBJ ->                /* X1 */
     lsPop();                        /* X2 */
     if
     :: LS_TOP == OBJ -> skip        /* X3: a recursive exit */
     :: else ->
        h = hdr;                     /* X4 */
#if RESERVE
        if
        :: RESERVED_TO(h, t) -> skip /* R4: still reserved, nothing to do */
        :: else ->
#endif
           unlockFast();
           if
           :: cas -> cas = false
           :: else -> lsPush(OBJ); exitSlow = true
           fi
#if RESERVE
        fi
#endif
     fi
#endif
  :: else ->
     h = hdr;                        /* N1 */
     if
     :: LOCKBITS(h) != MONITOR -> exitSlow = true
     :: else ->
        m = MON_OF(h);
        atomic {                     /* N2: the owner word, then rec */
          if
          :: mon[m].owner != ENC(t) -> exitSlow = true
          :: else ->
             r = mon[m].rec;
             if
             :: r != 0 -> mon[m].rec = r - 1
             :: else -> cas = true   /* N3 next */
             fi
          fi;
          r = 0
        }
        if
        :: cas ->
           cas = false;
           n3();                     /* N3 */
           if
           :: queued -> queued = false; exitQueued()
           :: else -> skip
           fi;
           releaseEnd()
        :: else -> skip
        fi
     fi
  fi
}

/* exit(T, OBJ) up to monitorOwnedBy. The scripts exit in LIFO order, so OBJ
 * is on top of the lock stack or not on it. exited: done without a monitor;
 * otherwise needOwner is set for monitorOwnedBy and exitMonitor. */
inline slowExit() {
  if
  :: LS_TOP == OBJ ->                /* X1-X4, as the inline path does them */
     lsPop();
     if
     :: LS_TOP == OBJ -> exited = true
     :: else ->
        h = hdr;
#if RESERVE
        if
        :: RESERVED_TO(h, t) -> exited = true               /* R4 */
        :: else ->
#endif
           unlockFast();
           if
           :: cas -> cas = false; exited = true
           :: else -> lsPush(OBJ)
           fi
#if RESERVE
        fi
#endif
     fi
  :: else -> skip
  fi;
  if
  :: !exited && LS_CONTAINS ->
     /* On the lock stack, and the header did not say 00: a hash install,
      * or a contender inflated it since we fast-locked it. */
     assert(LS_TOP == OBJ && (LS_COUNT == 1 || RESERVE));
     do
     :: h = hdr;                     /* loadStableHeader */
        if
        :: LOCKBITS(h) != LOCKED -> break
        :: else ->
           lsPop();                  /* removeAt */
           unlockFast();
           if
           :: cas -> cas = false; exited = true; break
           :: else -> lsPush(OBJ)    /* insertAt */
           fi
        fi
     od
  :: else -> skip
  fi;
  if
  :: !exited -> needOwner = true; h = hdr    /* loadStableHeader */
  :: else -> exited = false
  fi
}

/* monitorOwnedBy(T, OBJ, h) and ownedMonitorForWait: the monitor of OBJ
 * if this thread owns it, fixing an anonymous owner first. notify leaves a
 * fast-locked object alone (ownsIt false): it has no waiters. */
inline ownedMonitor() {
  if
  :: LOCKBITS(h) == LOCKED || RESERVED_TO(h, t) ->
     assert(LS_CONTAINS && (IS_WAIT(op) || op == NOTIFY || op == NOTIFY_ALL));
     ownsIt = IS_WAIT(op);
     fixIt = ownsIt
  :: LOCKBITS(h) == MONITOR ->
     m = MON_OF(h);
     w = mon[m].owner;
     if
     :: w == ENC(t) -> ownsIt = true
     :: w == ANON && LS_CONTAINS -> ownsIt = true; fixIt = true
     :: else -> assert(false)        /* the scripts never misuse */
     fi;
     w = 0
  :: else -> assert(false)
  fi;
  if
  :: fixIt -> fixIt = false; inflateOwned()
  :: else -> skip
  fi
}

/* exitMonitor: the owner gives up one hold. */
inline exitMonitor() {
  atomic {                           /* only the owner writes rec */
    r = mon[m].rec;
    if
    :: r != 0 -> mon[m].rec = r - 1
    :: else -> doRelease = true
    fi;
    r = 0
  }
}

/*===========================================================================
 * wait and notify.
 *===========================================================================*/

/* wait(T, OBJ, timed), after ownedMonitorForWait: join the wait set and
 * release. Then waitPark. */
inline waitJoin() {
  savedHolds = holds[t];
  holds[t] = 0;
#if SEEDED_BUG == 1
  /* SEEDED BUG: release first, then join the wait set. */
  atomic { saved = mon[m].rec; mon[m].rec = 0 }
  releaseMonitor();
  atomic { qLock(); joinQueue(WAITSET); qUnlock() }
#else
  atomic {                           /* W1: join the wait set... */
    qLock();
    if
    :: intr[t] ->                    /* ...unless interrupted already */
       intr[t] = 0;
       interrupted = true;
       holds[t] = savedHolds
    :: else -> joinQueue(WAITSET)
    fi;
    qUnlock();
    saved = mon[m].rec;              /* ...then release fully */
    if
    :: !interrupted -> mon[m].rec = 0
    :: else -> skip
    fi
  }
  if
  :: !interrupted -> doRelease = true
  :: else -> skip
  fi
#endif
}

/* W3 under the queue lock: still in the wait set (WaitingOn is m), it
 * decides: interrupted if the flag is set, timed out once the deadline
 * passed. Notified meanwhile, it resets an interrupter's Wakeup. */
inline waitDecide(expired) {
  atomic {
    qLock();
    if
    :: where[t] == WAITSET && intr[t] ->
       intr[t] = 0;
       qRemove(WAITSET, t);
       interrupted = true
    :: where[t] == WAITSET && !intr[t] && expired ->
       qRemove(WAITSET, t);
       timedOut = true
    :: else -> skip
    fi;
    if
    :: !interrupted && !timedOut && wake[t] == INTERRUPTED -> wake[t] = SLEEP
    :: else -> skip
    fi;
    qUnlock()
  }
}

/* Sleeps in the wait set until a notify moved us to the entry queue and an
 * exit woke us, or (timed) the deadline passed while still in the wait
 * set: then timedOut, and wantMonitor for enter() (enterInflated). */
inline waitPark() {
  timed = (op == TIMED_WAIT || op == TIMED_WAIT_FLAG);
  wk = wake[t];
  do
  :: wk == SLEEP ->
     park(timed);
     if
     :: !inTime ->
        waitDecide(true);
        if
        :: timedOut || interrupted -> break
        :: else -> timed = false     /* notified: the monitor is on its way */
        fi
     :: else -> skip
     fi;
     wk = wake[t]
  :: wk == INTERRUPTED ->
     waitDecide(false);
     if
     :: interrupted -> break
     :: else -> skip
     fi;
     wk = wake[t]
  :: else -> break
  od;
  wk = 0;
  inTime = false;
  timed = false;
  if
  :: timedOut -> timedOut = false; slow = true; wantMonitor = true
  :: interrupted -> slow = true; wantMonitor = true
  :: else ->
     waitInEntryQueue();
#if SEEDED_BUG == 8
     /* SEEDED BUG: the interrupt wins over the notify that chose this
      * waiter, which is not passed on. */
     atomic {
       if
       :: intr[t] -> intr[t] = 0; interrupted = true
       :: else -> skip
       fi
     }
#endif
     skip
  fi
}

/* notify(T, OBJ, all) on the monitor m this thread owns. */
inline notifyQueues() {
  atomic {
    qLock();
    do
    :: mon[m].nwait > 0 ->
       heir = mon[m].waits[0];
       qRemove(WAITSET, heir);       /* W2 (WaitingOn cleared) */
       qAppend(ENTRYQ, heir);
#if INTERRUPT
       notified[heir] = 1;
       owed++;
#endif
       heir = 0;
       if
       :: op == NOTIFY -> break
       :: else -> skip
       fi
    :: else -> break
    od;
    qUnlock()                        /* this thread's exit sees the count */
  }
}

/*===========================================================================
 * identityHash(T, OBJ).
 *===========================================================================*/
inline hashOp() {
  do
  :: h = hdr;
     if
     :: LOCKBITS(h) == MONITOR ->    /* the hash lives in the monitor */
        m = MON_OF(h);
        d = mon[m].dhdr;
        do
        :: HASHED(d) -> cas = true; break
        :: !HASHED(d) && LOCKBITS(d) != UNLOCKED -> break   /* sealed (A5) */
        :: !HASHED(d) && LOCKBITS(d) == UNLOCKED ->
           atomic {
             if
             :: mon[m].dhdr == d -> mon[m].dhdr = d | HASHBIT; cas = true
             :: else -> d = mon[m].dhdr
             fi
           }
           if
           :: cas -> break
           :: else -> skip
           fi
        od;
        d = 0
     :: else ->
        atomic {
          if
          :: HASHED(h) -> cas = true
          :: else ->                 /* CAS h -> h with a hash, in place */
             if
             :: hdr == h -> hdr = h | HASHBIT; cas = true
             :: else -> cas = false
             fi
          fi
        }
     fi;
     if
     :: cas -> break
     :: else -> skip
     fi
  od;
  atomic { cas = false; hashGiven = true }
}

#if !CONCURRENT
/*===========================================================================
 * The VM thread: jitlock_rt_deflate_idle, inside a safepoint.
 *===========================================================================*/

/* deflateIfIdle(m), then the sweep. Inside a safepoint no thread holds a
 * queue lock (holders are unsafe) or is counted without being queued, and
 * every other thread is stopped or safe, so A6 frees m at once. */
inline deflateInSafepoint() {
  if
  :: mon[m].owner == 0 ->            /* A1: CAS owner 0 -> DEFLATER */
     mon[m].owner = DEFLATER;
     assert(mon[m].qlock == 0);
     if
     :: mon[m].nentry > 0 || mon[m].nwait > 0 || mon[m].rec != 0 ||
        mon[m].cont != 0 ->          /* A2 */
        mon[m].owner = 0
     :: else ->
        mon[m].cont = DEFLATED;                           /* A3 */
        mon[m].dhdr = WITHBITS(mon[m].dhdr, LOCKED);      /* A5: seal */
        assert(hdr == ENCODE_MON(m));                     /* A5: CAS */
        hdr = WITHBITS(mon[m].dhdr, UNLOCKED);
        mon[m].live = 0                                   /* A6 */
     fi
  :: else -> skip
  fi
}

/* Whether A1-A6 would deflate mon[0] now. A sweep that deflates nothing
 * changes nothing (inside a safepoint nobody sees DEFLATER come and go), so
 * only sweeps that deflate are steps: otherwise the VM thread, always able
 * to sweep, would hide every deadlock of the mutators. */
#define IDLE (mon[0].live && mon[0].owner == 0 && mon[0].nentry == 0 && \
              mon[0].nwait == 0 && mon[0].rec == 0 && mon[0].cont == 0)

active proctype VMThread() {
  byte m;
end:
  do
  :: atomic {
       /* A safepoint: every mutator is stopped at a poll or parked, so the
        * whole sweep is one step. */
       ALL_SAFE && IDLE ->
       /* Stopped threads have drained their buffers (a system call). */
       assert(!sbFull[0] && !sbFull[1]);
#if NTHREADS == 3
       assert(!sbFull[2]);
#endif
       m = 0;
       deflateInSafepoint();
       assert(!mon[0].live);
       m = 0
     }
  od
}
#else
/*===========================================================================
 * The deflation thread (Deflation.cpp), concurrent with the mutators.
 *===========================================================================*/

/* deflateIfIdle(k): A1-A3 and A5, or abortDeflation. ok: deflated. */
inline deflateIfIdle(k) {
  /* A1's pre-check: a monitor threads are queued on is left alone. The
   * registry's own fields (live, ghost) are the sweep's, under its lock. */
  ok = (mon[k].live && !mon[k].ghost && deflated < MAX_DEFLATED &&
        mon[k].nentry == 0);
  if
  :: ok ->
     atomic {                        /* A1: CAS owner 0 -> DEFLATER */
       if
       :: mon[k].owner == 0 -> mon[k].owner = DEFLATER
       :: else -> ok = false
       fi
     }
  :: else -> skip
  fi;
  if
  :: ok ->
     /* A2. One step: from A1 on these only move towards an abort (a
      * timed-out waiter leaving the wait set), or change for an enterer
      * that cancelled and is counted, which A3's CAS sees. */
     ok = (mon[k].nentry == 0 && mon[k].nwait == 0 && mon[k].rec == 0 &&
           mon[k].cont == 0);
     if
     :: ok ->
        atomic {                     /* A3: CAS cont 0 -> DEFLATED */
          if
          :: mon[k].cont == 0 -> mon[k].cont = DEFLATED
          :: else -> ok = false
          fi
        }
     :: else -> skip
     fi;
     if
     :: ok -> deflated++; restoreHeader(k)                /* A5 */
     :: else ->
        atomic {                     /* abortDeflation: CAS DEFLATER -> 0 */
          if
          :: mon[k].owner == DEFLATER -> mon[k].owner = 0; ok = true
          :: else -> mon[k].cont--   /* an enterer cancelled it (A4) */
          fi
        }
#if SEEDED_BUG == 7
        /* SEEDED BUG: the abort leaves the queue alone. An exit whose XQ
         * found the marker left its duty to it. */
        ok = false
#endif
        if
        :: ok ->                     /* the full fence, then the count */
           ok = false;
           if
           :: mon[k].nentry != 0 -> m = k; wakeSuccessor()
           :: else -> skip
           fi
        :: else -> skip
        fi
     fi
  :: else -> skip
  fi
}

#if NTHREADS == 2
#define HANDSHAKE_ALL atomic { hs[0] = 1; hs[1] = 1 }
#else
#define HANDSHAKE_ALL atomic { hs[0] = 1; hs[1] = 1; hs[2] = 1 }
#endif

/* SWEEPS sweeps that deflate at most MAX_DEFLATED monitors in all (bounded,
 * since a deflater that can always move would hide every deadlock of the
 * mutators from the end-state check, and to bound the monitors needed). A6:
 * the sweep unregisters what it deflated; one handshake with every thread;
 * then the free list, from which OBJ's next inflation or, at the checker's
 * choice and once, another object (GHOST, which enters and exits it)
 * reuses it. */
active proctype Deflater() {
  byte k, sweeps, heir, grant;
  byte m, i;                         /* the abort's XQ (wakeSuccessor) */
  bool ok, any;
end:
  do
  :: sweeps < SWEEPS ->
     sweeps++;
     k = 0;
     do
     :: k < NMON ->
        deflateIfIdle(k);
        if
        :: ok -> atomic { mon[k].live = 0; mon[k].pending = 1; any = true }
        :: else -> skip
        fi;
        ok = false;
        k++
     :: else -> break
     od;
     if
     :: any ->
        any = false;
#if SEEDED_BUG != 4
        HANDSHAKE_ALL;               /* A6: the handshake */
        do
        :: atomic { hs[0] && safe[0] -> hs[0] = 0 }
        :: atomic { hs[1] && safe[1] -> hs[1] = 0 }
#if NTHREADS == 3
        :: atomic { hs[2] && safe[2] -> hs[2] = 0 }
#endif
        :: !HS_PENDING -> break
        od;
#endif
        k = 0;
        do
        :: k < NMON ->
           if
           :: mon[k].pending ->
              mon[k].pending = 0;    /* freeMonitors: on the free list */
              if
              :: skip
              :: atomic {
                   !mon[k].live && !mon[k].pending && !ghosted ->
                   ghosted = true;
                   mon[k].ghost = 1; /* newMonitor for another object */
                   mon[k].owner = GHOST;
                   mon[k].rec = 0;
                   mon[k].cont = 0
                 }
                 atomic {            /* whose owner exits it */
                   if
                   :: mon[k].owner == GHOST -> mon[k].owner = 0
                   :: else -> skip
                   fi
                 }
              fi
           :: else -> skip
           fi;
           k++
        :: else -> break
        od;
        k = 0
     :: else -> skip
     fi
  :: else -> break
  od
}
#endif

/*===========================================================================
 * The properties checked in every state.
 *===========================================================================*/
#if NTHREADS == 2
#define MUTEX (holds[0] == 0 || holds[1] == 0)
#else
#define MUTEX ((holds[0] == 0 || holds[1] == 0) && \
               (holds[0] == 0 || holds[2] == 0) && \
               (holds[1] == 0 || holds[2] == 0))
#endif
/* An identity hash once handed out stays the object's. */
#define HASH_KEPT (!hashGiven || \
                   (LOCKBITS(hdr) == MONITOR -> HASHED(mon[MON_OF(hdr)].dhdr) \
                                             : HASHED(hdr)))
/* Once every script has ended, OBJ is free: unlocked, or an idle monitor
 * (perhaps marked by a deflater that is about to give up or win). */
#define OBJ_MON mon[MON_OF(hdr)]
#define FREE_AT_END (finished < NTHREADS || LOCKBITS(hdr) == UNLOCKED || \
                     (LOCKBITS(hdr) == MONITOR && \
                      (OBJ_MON.owner == 0 || OBJ_MON.owner == DEFLATER) && \
                      OBJ_MON.rec == 0 && OBJ_MON.nentry == 0 && \
                      OBJ_MON.nwait == 0))

/* Every notification a notify delivered was consumed by a normal return:
 * none was lost to an interrupt. */
#if INTERRUPT
#define NOTIFY_KEPT (finished < NTHREADS || owed == 0)
#else
#define NOTIFY_KEPT true
#endif

/* A reserved header's lock bits belong to the reserving thread alone: no
 * other thread has OBJ on its lock stack while it says reserved. */
#if RESERVE
#define RESERVED_ALONE (!IS_RESERVED(hdr) || \
                        ((RES(hdr) == 1 || onls[0] == 0) && \
                         (RES(hdr) == 2 || onls[1] == 0)))
#else
#define RESERVED_ALONE true
#endif

active proctype Invariants() {
end:
  atomic {
    !(MUTEX && HASH_KEPT && FREE_AT_END && NOTIFY_KEPT && RESERVED_ALONE) ->
    assert(MUTEX);
    assert(HASH_KEPT);
    assert(FREE_AT_END);
    assert(NOTIFY_KEPT);
    assert(RESERVED_ALONE)
  }
}

#if INTERRUPT
/*===========================================================================
 * jitlock_rt_interrupt (interrupt in WaitNotify.cpp), by a thread of its
 * own, once, for the waiter (thread 0), at any time: before, during or
 * after its wait.
 *===========================================================================*/
inline interruptThread(w) {
  intr[w] = 1;                       /* I1 */
  atomic {                           /* I2 (I1's WaitingOn load folded in:
                                      * with one monitor it is m, and a
                                      * waiter not in the wait set sees the
                                      * flag at W1 or W3) */
    qLock();
    if
    :: where[w] == WAITSET && intr[w] && wake[w] == SLEEP ->
       wake[w] = INTERRUPTED;
       poke = true
    :: else -> skip
    fi;
    qUnlock()
  }
  if
  :: poke -> wakeAll(w); poke = false
  :: else -> skip
  fi
}

active proctype Interrupter() {
  byte m;                            /* the one monitor, mon[0] */
  bool poke;
  interruptThread(0)
}
#endif

/*===========================================================================
 * THE SCRIPTS. A Mutator runs its script one operation at a time and is at
 * a poll (safe) between two. An operation runs in phases: its own part,
 * then exit()'s lock stack part, monitorOwnedBy, exitMonitor, the release,
 * the wait, enter(), as it needs them; each phase has one copy here.
 *===========================================================================*/

hidden byte script[NTHREADS * SCRIPT_LEN];
hidden byte capacities[NTHREADS];

proctype Mutator(byte t) {
  byte step, op, capacity;
  byte ls[LSMAX], lsn;               /* the lock stack */
  byte h, m, w, r, d, wk, heir, grant, holdsN, saved, savedHolds, i, j;
  bool cas, taken, entered, gaveUp, cancelled, queued, exited, ownsIt;
  bool fixIt, inTime, timed, timedOut, interrupted;
  bool slow, wantMonitor, exitSlow, needOwner, doRelease, waiting;

  capacity = capacities[t];
endPoll:
  do
  :: atomic {
       script[t * SCRIPT_LEN + step] != END ->
       op = script[t * SCRIPT_LEN + step];
       safe[t] = 0;
       if
       :: op == EXIT -> holds[t]--   /* giving it back from here on */
       :: IS_FLAG_WAIT(op) && flag -> op = END  /* no need to wait */
       :: else -> skip
       fi
     }
     if
     /* Compiled code runs the inline part first; an interpreter calls
      * jitlock_rt_monitor_enter/exit, which are enter() and exit(). */
     :: op == ENTER -> enterInline()
     :: op == ENTER -> slow = true
     :: op == EXIT -> exitInline()
     :: op == EXIT -> exitSlow = true
     :: op == ENTER_PRIV -> lsPush(PRIV)
     :: op == EXIT_PRIV -> assert(LS_TOP == PRIV); lsPop()
     :: IS_WAIT(op) || op == NOTIFY || op == NOTIFY_ALL ->
        needOwner = true;
        h = hdr                      /* ownedMonitorForWait, notify */
     :: op == HASH -> hashOp()
     :: op == END -> skip
     fi;
     if
     :: exitSlow -> exitSlow = false; slowExit()
     :: else -> skip
     fi;
     if
     :: needOwner -> needOwner = false; ownedMonitor()
     :: else -> skip
     fi;
     if
     :: op == EXIT && ownsIt -> exitMonitor()
     :: op == NOTIFY || op == NOTIFY_ALL ->
        flag = true;
        if
        :: ownsIt -> notifyQueues()
        :: else -> skip
        fi
     :: IS_WAIT(op) -> waiting = true; waitJoin()
     :: else -> skip
     fi;
     ownsIt = false;
     if
     :: doRelease -> doRelease = false; releaseMonitor()
     :: else -> skip
     fi;
     if
     :: waiting && !interrupted -> waitPark()
     :: else -> skip
     fi;
     if
     :: slow -> slow = false; slowEnter()
     :: else -> skip
     fi;
     if
     :: waiting ->
        atomic { mon[m].rec = saved; holds[t] = savedHolds }
        waiting = false;
        saved = 0;
        savedHolds = 0
     :: else -> skip
     fi;
     atomic {
       if
       :: op == ENTER -> holds[t]++
       :: else -> skip
       fi;
       if
       :: op == IWAIT && !interrupted ->  /* no spurious return */
          assert(notified[t]);
          notified[t] = 0;
          owed--                     /* a notification consumed */
       :: op == IWAIT && interrupted -> notified[t] = 0
       :: else -> skip
       fi;
       interrupted = false;
       if
       :: !IS_FLAG_WAIT(op) -> step++   /* else check the flag again */
       :: else -> skip
       fi;
       if
       :: script[t * SCRIPT_LEN + step] == END ->
          assert(lsn == 0);          /* every lock given back */
          finished++
       :: else -> skip
       fi;
       op = 0;
       h = 0;
       m = 0;
       safe[t] = 1
     }
  od
}

inline setScript(who, cap, s0, s1, s2, s3, s4, s5, s6) {
  capacities[who] = cap;
  script[who * SCRIPT_LEN + 0] = s0;
  script[who * SCRIPT_LEN + 1] = s1;
  script[who * SCRIPT_LEN + 2] = s2;
  script[who * SCRIPT_LEN + 3] = s3;
  script[who * SCRIPT_LEN + 4] = s4;
  script[who * SCRIPT_LEN + 5] = s5;
  script[who * SCRIPT_LEN + 6] = s6;
  script[who * SCRIPT_LEN + 7] = END
}

init {
  atomic {
#if INTERRUPT
    /* A waiter that holds OBJ twice and is interrupted once (Interrupter),
     * whenever: before its wait, in the wait set, once notified, after.
     * A notify that chose it must be consumed by a normal return; an
     * interrupted wait re-enters with both holds. */
    setScript(0, 2, ENTER, ENTER, IWAIT, EXIT, EXIT, END, END);
    /* The notify, and an enter after it that may find OBJ deflated. */
    setScript(1, 2, ENTER, NOTIFY, EXIT, ENTER, EXIT, END, END);
#elif RESERVE && RESERVE_SCRIPT == 2
    /* Non-adjacent re-entry of a reserved object (A B A, which R1 pushes
     * without inflating), revoked at any point of it. */
    setScript(0, 3, ENTER, ENTER_PRIV, ENTER, EXIT, EXIT_PRIV, EXIT, END);
    setScript(1, 2, ENTER, EXIT, HASH, ENTER, EXIT, END, END);
#elif RESERVE
    /* The first enter reserves OBJ; a recursive pair with no atomic; then
     * a wait, which ends the reservation if nobody revoked it before. */
    setScript(0, 2, ENTER, ENTER, EXIT, EXIT, ENTER, WAIT_FLAG, EXIT);
    /* A hash on the reserved header, then the contender's revocation
     * (while thread 0 holds OBJ once or twice, or not at all), the notify
     * and a second enter. */
    setScript(1, 2, HASH, ENTER, NOTIFY, EXIT, ENTER, EXIT, END);
#elif NTHREADS == 2
    /* The waiter: recursion on the lock stack, a full lock stack (E2),
     * then a wait that saves two recursions. */
    setScript(0, 2, ENTER, ENTER, ENTER, WAIT_FLAG, EXIT, EXIT, EXIT);
    /* A timed wait nobody notifies, the notify, and a second enter that
     * may find OBJ deflated meanwhile. */
    setScript(1, 3, ENTER, TIMED_WAIT, NOTIFY, EXIT, ENTER, EXIT, END);
#else
    /* The waiter: its timed waits inflate its fast lock (held twice),
     * time out, or are notified. */
    setScript(0, 3, ENTER, ENTER, TIMED_WAIT_FLAG, EXIT, EXIT, END, END);
    /* The notifier wakes every waiter. */
    setScript(1, 3, ENTER, NOTIFY_ALL, EXIT, END, END, END, END);
    /* A hash, perhaps while another thread has OBJ fast-locked, then
     * non-adjacent re-entry (A B A). */
    setScript(2, 3, HASH, ENTER, ENTER_PRIV, ENTER, EXIT, EXIT_PRIV, EXIT);
#endif
    safe[0] = 1;
    safe[1] = 1;
#if NTHREADS == 3
    safe[2] = 1;
#endif
    run Mutator(0);
    run Mutator(1);
#if NTHREADS == 3
    run Mutator(2);
#endif
  }
}

/* Liveness: every script ends; no thread stays parked or spins for good. */
ltl terminates { <> (finished == NTHREADS) }
