; bank.ll - money moves between accounts; the total never changes.
;
; What a frontend emits for
;
;   class Account { long balance = 1000; }
;   static final Account[] accounts = new Account[16];
;
;   static boolean transfer(Account from, Account to, long amount) {
;     Account first = addressOf(from) < addressOf(to) ? from : to;
;     Account second = first == from ? to : from;
;     synchronized (first) {
;       synchronized (second) {
;         if (from.balance < amount) return false;
;         from.balance -= amount;
;         to.balance += amount;
;         return true;
;       }
;     }
;   }
;
; Two locks at a time, always taken in address order, so no two transfers
; deadlock. Every 256 transfers a thread audits the bank: it locks all 16
; accounts, in the same order (twice the lock stack's 8 slots: the oldest
; entries inflate), and checks the total while holding them all.
;
; The invariant: the total is 16 * 1000 at the end and at every audit, and
; no balance is negative.
;
; Run: jitlock-run --threads 4 examples/bank.ll

%Account = type { i64, i64 }   ; header (1 = unlocked), balance

@accounts = global [16 x %Account] [
  %Account { i64 1, i64 1000 }, %Account { i64 1, i64 1000 }, %Account { i64 1, i64 1000 }, %Account { i64 1, i64 1000 },
  %Account { i64 1, i64 1000 }, %Account { i64 1, i64 1000 }, %Account { i64 1, i64 1000 }, %Account { i64 1, i64 1000 },
  %Account { i64 1, i64 1000 }, %Account { i64 1, i64 1000 }, %Account { i64 1, i64 1000 }, %Account { i64 1, i64 1000 },
  %Account { i64 1, i64 1000 }, %Account { i64 1, i64 1000 }, %Account { i64 1, i64 1000 }, %Account { i64 1, i64 1000 }
]

; Audits that saw a total other than 16000. Updated with an atomic add: it
; is not guarded by any monitor.
@audit_failures = global i64 0

; K, the transfers per thread; jitlock-run --iterations N overrides it.
@jitlock_example_iterations = global i64 50000

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

; Moves `amount` from `from` to `to` if `from` has it; returns 1 if it did.
define i64 @transfer(ptr %from, ptr %to, i64 %amount) {
entry:
  %from.is.first = icmp ult ptr %from, %to
  %first = select i1 %from.is.first, ptr %from, ptr %to
  %second = select i1 %from.is.first, ptr %to, ptr %from
  call void @jitlock.monitor.enter(ptr %first)
  call void @jitlock.monitor.enter(ptr %second)
  %from.balance.addr = getelementptr inbounds %Account, ptr %from, i32 0, i32 1
  %to.balance.addr = getelementptr inbounds %Account, ptr %to, i32 0, i32 1
  %from.balance = load i64, ptr %from.balance.addr
  %enough = icmp sge i64 %from.balance, %amount
  br i1 %enough, label %move, label %unlock

move:
  %from.balance.next = sub i64 %from.balance, %amount
  store i64 %from.balance.next, ptr %from.balance.addr
  %to.balance = load i64, ptr %to.balance.addr
  %to.balance.next = add i64 %to.balance, %amount
  store i64 %to.balance.next, ptr %to.balance.addr
  br label %unlock

unlock:
  %moved = phi i64 [ 0, %entry ], [ 1, %move ]
  call void @jitlock.monitor.exit(ptr %second)
  call void @jitlock.monitor.exit(ptr %first)
  ret i64 %moved
}

; Locks accounts[i], ..., accounts[15] one inside the other and returns
; their total as seen while all of them were held. A negative balance makes
; the total -1000000, which no audit accepts.
define i64 @audit_from(i64 %i) {
entry:
  %account = getelementptr inbounds [16 x %Account], ptr @accounts, i64 0, i64 %i
  call void @jitlock.monitor.enter(ptr %account)
  %balance.addr = getelementptr inbounds %Account, ptr %account, i32 0, i32 1
  %balance = load i64, ptr %balance.addr
  %negative = icmp slt i64 %balance, 0
  %counted = select i1 %negative, i64 -1000000, i64 %balance
  %next = add i64 %i, 1
  %last = icmp eq i64 %next, 16
  br i1 %last, label %unlock, label %rest

rest:
  %rest.total = call i64 @audit_from(i64 %next)
  br label %unlock

unlock:
  %others = phi i64 [ 0, %entry ], [ %rest.total, %rest ]
  %total = add i64 %counted, %others
  call void @jitlock.monitor.exit(ptr %account)
  ret i64 %total
}

; Each thread: K random transfers of 0-99 between two distinct accounts,
; and an audit every 256. Returns how many transfers moved money.
define i64 @jitlock_example_run(i64 %tid, i64 %nthreads) {
entry:
  %k = load i64, ptr @jitlock_example_iterations
  %seed0 = mul i64 %tid, 2654435761
  br label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %next ]
  %seed = phi i64 [ %seed0, %entry ], [ %seed.next, %next ]
  %moved = phi i64 [ 0, %entry ], [ %moved.next, %next ]
  %more = icmp slt i64 %i, %k
  br i1 %more, label %body, label %done

body:
  ; A 64-bit LCG (Knuth's MMIX constants); the high bits pick the accounts
  ; and the amount.
  %seed.mul = mul i64 %seed, 6364136223846793005
  %seed.next = add i64 %seed.mul, 1442695040888963407
  %r.from = lshr i64 %seed.next, 33
  %from.index = urem i64 %r.from, 16
  %r.to = lshr i64 %seed.next, 41
  %to.pick = urem i64 %r.to, 15
  ; to = (from + 1 + pick) % 16 is never from.
  %to.sum = add i64 %from.index, 1
  %to.sum2 = add i64 %to.sum, %to.pick
  %to.index = urem i64 %to.sum2, 16
  %r.amount = lshr i64 %seed.next, 50
  %amount = urem i64 %r.amount, 100
  %from = getelementptr inbounds [16 x %Account], ptr @accounts, i64 0, i64 %from.index
  %to = getelementptr inbounds [16 x %Account], ptr @accounts, i64 0, i64 %to.index
  %did = call i64 @transfer(ptr %from, ptr %to, i64 %amount)
  %moved.next = add i64 %moved, %did

  %phase = and i64 %i, 255
  %audit.now = icmp eq i64 %phase, 255
  br i1 %audit.now, label %audit, label %next

audit:
  %total = call i64 @audit_from(i64 0)
  %audit.ok = icmp eq i64 %total, 16000
  br i1 %audit.ok, label %next, label %audit.failed

audit.failed:
  %ignored = atomicrmw add ptr @audit_failures, i64 1 seq_cst
  br label %next

next:
  %i.next = add i64 %i, 1
  br label %loop

done:
  ret i64 %moved
}

; The total, audited.
define i64 @jitlock_example_result() {
entry:
  %total = call i64 @audit_from(i64 0)
  ret i64 %total
}

; 0 iff the final total is 16000 (and no balance is negative) and every
; audit agreed. 1: the final total is off; 2: some audit failed.
define i64 @jitlock_example_check(i64 %nthreads) {
entry:
  %total = call i64 @audit_from(i64 0)
  %total.bad = icmp ne i64 %total, 16000
  %failures = load atomic i64, ptr @audit_failures seq_cst, align 8
  %audits.bad = icmp ne i64 %failures, 0
  %b1 = zext i1 %total.bad to i64
  %b2 = select i1 %audits.bad, i64 2, i64 0
  %status = or i64 %b1, %b2
  ret i64 %status
}
