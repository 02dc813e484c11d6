//===- IRPrinter.cpp - A jitlock-fuzz program as LLVM IR ------------------===//
//
// What a frontend would emit for the program: one function per Function,
// every one of them taking the current thread as a "jitlock.thread"
// parameter (so that the module lowers in arg mode too; the other modes
// ignore it), plus the example convention's run and check.
//
// Exceptions are C++ ones (a long, thrown with __cxa_throw): a call that
// may throw inside a region or a try is an invoke whose landing pad
// releases, innermost first, the regions opened since the innermost try of
// the function, then either resumes or branches to that try's handler.
// Loop indices live in allocas of the entry block, so that the printer
// needs no phis and every optimization level has something to do.
//
//===----------------------------------------------------------------------===//
#include "Program.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <sstream>

namespace jitlock::fuzz {

namespace {

/// The statuses a runtime call may return without counting as an error.
constexpr int StatusOk = 0, StatusTimedOut = 4;

class FunctionPrinter {
public:
  FunctionPrinter(const Program &P, unsigned Fn,
                  const std::vector<bool> &MayThrow, Fault Inject)
      : P(P), Fn(Fn), MayThrow(MayThrow), Inject(Inject) {}

  std::string print() {
    const Function &F = P.Functions[Fn];
    std::ostringstream Head;
    Head << "define void @f" << Fn
         << "(ptr \"jitlock.thread\" %self, i64 %tid, i64 %depth)";
    if (Fn == P.Entry)
      Head << " noinline"; // run() has no thread parameter (arg mode)
    if (F.StackBang)
      Head << " \"jitlock-stack-bang\"";
    if (usesEH())
      Head << " personality ptr @__gxx_personality_v0";
    Head << " {\nentry:\n";
    Head << "  %sum.slot = getelementptr inbounds [" << MaxThreads
         << " x i64], ptr @thread_sums, i64 0, i64 %tid\n";
    block(F.Body);
    Body << "  ret void\n}\n";
    return Head.str() + Allocas.str() + Body.str();
  }

private:
  enum class ScopeKind { Region, Try };
  struct Scope {
    ScopeKind Kind;
    unsigned Obj;   ///< Region
    unsigned Label; ///< Try: its handler is %catch.<Label>
  };

  bool usesEH() const {
    bool Uses = false;
    std::vector<const std::vector<Stmt> *> Work{&P.Functions[Fn].Body};
    while (!Work.empty()) {
      const std::vector<Stmt> *B = Work.back();
      Work.pop_back();
      for (const Stmt &S : *B) {
        Uses |= S.Kind == StmtKind::Throw || S.Kind == StmtKind::Try ||
                (S.Kind == StmtKind::Call && MayThrow[S.Callee]) ||
                (S.Kind == StmtKind::Recurse && MayThrow[Fn]);
        Work.push_back(&S.Body);
      }
    }
    return Uses;
  }

  std::string fresh(const char *Prefix) {
    return std::string(Prefix) + "." + std::to_string(Next++);
  }
  std::string object(unsigned O) const {
    return "getelementptr inbounds ([" + std::to_string(P.Objects) +
           " x %Obj], ptr @objects, i64 0, i64 " + std::to_string(O) + ")";
  }
  std::string counter(unsigned O, unsigned Field) const {
    return "getelementptr inbounds ([" + std::to_string(P.Objects) +
           " x %Obj], ptr @objects, i64 0, i64 " + std::to_string(O) +
           ", i32 1, i64 " + std::to_string(Field) + ")";
  }

  /// The operand's value, as an IR value name or constant.
  std::string operand(const Operand &V) {
    switch (V.Var) {
    case Operand::Tid:
      return "%tid";
    case Operand::Depth:
      return "%depth";
    case Operand::Loop: {
      std::string N = "%" + fresh("iv");
      Body << "  " << N << " = load i64, ptr %i." << LoopIds[V.LoopLevel]
           << "\n";
      return N;
    }
    }
    return "0";
  }

  std::string condition(const Condition &C) {
    std::string V = operand(C.Var);
    std::string Sum = "%" + fresh("c"), Rem = "%" + fresh("c"),
                Cmp = "%" + fresh("c");
    Body << "  " << Sum << " = add i64 " << V << ", " << C.Add << "\n";
    Body << "  " << Rem << " = urem i64 " << Sum << ", " << C.Mod << "\n";
    Body << "  " << Cmp << " = icmp eq i64 " << Rem << ", 0\n";
    return Cmp;
  }

  void addToChecksum(const std::string &Value) {
    std::string Old = "%" + fresh("sum"), New = "%" + fresh("sum");
    Body << "  " << Old << " = load i64, ptr %sum.slot\n";
    Body << "  " << New << " = add i64 " << Old << ", " << Value << "\n";
    Body << "  store i64 " << New << ", ptr %sum.slot\n";
  }

  /// Exits of the regions opened since the innermost try (all of them with
  /// `ThroughTries`), innermost first.
  void releaseRegions(bool ThroughTries) {
    for (auto It = Scopes.rbegin(); It != Scopes.rend(); ++It) {
      if (It->Kind == ScopeKind::Try) {
        if (!ThroughTries)
          return;
        continue;
      }
      Body << "  call void @jitlock.monitor.exit(ptr " << object(It->Obj)
           << ")\n";
    }
  }

  /// Emits the call `Callee(Args)`: an invoke with a landing pad when it may
  /// throw inside a region or a try of this function.
  void callMayThrow(const std::string &Callee, const std::string &Args,
                    bool Throws, bool NoReturn) {
    if (!Throws || Scopes.empty()) {
      Body << "  call void " << Callee << "(" << Args << ")\n";
      if (NoReturn)
        Body << "  unreachable\n";
      return;
    }
    std::string Cont = fresh("cont"), Pad = fresh("lpad");
    Body << "  invoke void " << Callee << "(" << Args << ") to label %" << Cont
         << " unwind label %" << Pad << "\n";
    Body << Pad << ":\n";
    const Scope *Try = nullptr;
    for (auto It = Scopes.rbegin(); It != Scopes.rend() && !Try; ++It)
      if (It->Kind == ScopeKind::Try)
        Try = &*It;
    std::string LP = "%" + fresh("lp");
    Body << "  " << LP << " = landingpad { ptr, i32 } "
         << (Try ? "catch ptr @_ZTIl" : "cleanup") << "\n";
    releaseRegions(/*ThroughTries=*/false);
    if (Try) {
      std::string Exn = "%" + fresh("exn");
      Body << "  " << Exn << " = extractvalue { ptr, i32 } " << LP << ", 0\n";
      Body << "  store ptr " << Exn << ", ptr %exn." << Try->Label << "\n";
      Body << "  br label %catch." << Try->Label << "\n";
    } else {
      Body << "  resume { ptr, i32 } " << LP << "\n";
    }
    Body << Cont << ":\n";
    if (NoReturn)
      Body << "  unreachable\n";
  }

  /// `if (Cond)` around what `Then` emits, which ends its block itself.
  template <typename Emit> void guarded(const Condition &C, Emit Then) {
    std::string Cmp = condition(C);
    std::string Yes = fresh("then"), No = fresh("endif");
    Body << "  br i1 " << Cmp << ", label %" << Yes << ", label %" << No
         << "\n";
    Body << Yes << ":\n";
    Then();
    Body << No << ":\n";
  }

  void runtimeCall(const std::string &Call, bool TimeoutOk) {
    std::string Rc = "%" + fresh("rc"), Ok = "%" + fresh("ok"),
                Good = fresh("good"), Bad = fresh("bad");
    Body << "  " << Rc << " = " << Call << "\n";
    if (TimeoutOk) {
      std::string Zero = "%" + fresh("ok"), Late = "%" + fresh("ok");
      Body << "  " << Zero << " = icmp eq i32 " << Rc << ", " << StatusOk
           << "\n";
      Body << "  " << Late << " = icmp eq i32 " << Rc << ", " << StatusTimedOut
           << "\n";
      Body << "  " << Ok << " = or i1 " << Zero << ", " << Late << "\n";
    } else {
      Body << "  " << Ok << " = icmp eq i32 " << Rc << ", " << StatusOk << "\n";
    }
    Body << "  br i1 " << Ok << ", label %" << Good << ", label %" << Bad
         << "\n";
    Body << Bad << ":\n";
    Body << "  %" << fresh("e") << " = atomicrmw add ptr @errors, i64 1 "
         << "seq_cst\n";
    Body << "  br label %" << Good << "\n";
    Body << Good << ":\n";
  }

  void block(const std::vector<Stmt> &B) {
    for (const Stmt &S : B)
      stmt(S);
  }

  void stmt(const Stmt &S) {
    switch (S.Kind) {
    case StmtKind::Update: {
      std::string V = operand(S.Var), Scaled = "%" + fresh("v"),
                  Value = "%" + fresh("v"), Old = "%" + fresh("old"),
                  New = "%" + fresh("new");
      Body << "  " << Scaled << " = mul i64 " << V << ", " << S.Mul << "\n";
      Body << "  " << Value << " = add i64 " << Scaled << ", "
           << S.Const + (Reentered && Inject == Fault::WrongUpdate) << "\n";
      Body << "  " << Old << " = load i64, ptr " << counter(S.Obj, S.Field)
           << "\n";
      Body << "  " << New << " = add i64 " << Old << ", " << Value << "\n";
      Body << "  store i64 " << New << ", ptr " << counter(S.Obj, S.Field)
           << "\n";
      std::string Salted = "%" + fresh("v");
      Body << "  " << Salted << " = mul i64 " << Value << ", "
           << 2 * uint64_t(S.Id) + 1 << "\n";
      addToChecksum(Salted);
      return;
    }
    case StmtKind::Region: {
      bool Reentry =
          std::any_of(Scopes.begin(), Scopes.end(), [&](const Scope &Sc) {
            return Sc.Kind == ScopeKind::Region && Sc.Obj == S.Obj;
          });
      Body << "  call void @jitlock.monitor.enter(ptr " << object(S.Obj)
           << ")\n";
      Scopes.push_back({ScopeKind::Region, S.Obj, 0});
      Reentered += Reentry;
      block(S.Body);
      Reentered -= Reentry;
      Scopes.pop_back();
      if (!(Reentry && Inject == Fault::MissingExit))
        Body << "  call void @jitlock.monitor.exit(ptr " << object(S.Obj)
             << ")\n";
      if (Reentry && Inject == Fault::ExtraExit)
        Body << "  call void @jitlock.monitor.exit(ptr " << object(S.Obj)
             << ") ; the injected fault\n";
      return;
    }
    case StmtKind::Loop: {
      unsigned Id = Next++;
      Allocas << "  %i." << Id << " = alloca i64\n";
      std::string Head = "loop." + std::to_string(Id),
                  In = "body." + std::to_string(Id),
                  Done = "done." + std::to_string(Id);
      Body << "  store i64 0, ptr %i." << Id << "\n";
      Body << "  br label %" << Head << "\n" << Head << ":\n";
      std::string IV = "%" + fresh("iv"), More = "%" + fresh("more");
      Body << "  " << IV << " = load i64, ptr %i." << Id << "\n";
      Body << "  " << More << " = icmp ult i64 " << IV << ", " << S.Count
           << "\n";
      Body << "  br i1 " << More << ", label %" << In << ", label %" << Done
           << "\n"
           << In << ":\n";
      LoopIds.push_back(Id);
      block(S.Body);
      LoopIds.pop_back();
      std::string Cur = "%" + fresh("iv"), Inc = "%" + fresh("iv");
      Body << "  " << Cur << " = load i64, ptr %i." << Id << "\n";
      Body << "  " << Inc << " = add i64 " << Cur << ", 1\n";
      Body << "  store i64 " << Inc << ", ptr %i." << Id << "\n";
      Body << "  br label %" << Head << "\n" << Done << ":\n";
      return;
    }
    case StmtKind::If: {
      std::string Cmp = condition(S.Cond);
      std::string Yes = fresh("then"), No = fresh("endif");
      Body << "  br i1 " << Cmp << ", label %" << Yes << ", label %" << No
           << "\n"
           << Yes << ":\n";
      block(S.Body);
      Body << "  br label %" << No << "\n" << No << ":\n";
      return;
    }
    case StmtKind::Call:
      addToChecksum(std::to_string(S.Id));
      callMayThrow("@f" + std::to_string(S.Callee),
                   "ptr %self, i64 %tid, i64 " +
                       std::to_string(P.Functions[S.Callee].Depth),
                   MayThrow[S.Callee], /*NoReturn=*/false);
      return;
    case StmtKind::Recurse: {
      std::string More = "%" + fresh("deeper"), Yes = fresh("recurse"),
                  No = fresh("endrec"), Less = "%" + fresh("depth");
      Body << "  " << More << " = icmp sgt i64 %depth, 0\n";
      Body << "  br i1 " << More << ", label %" << Yes << ", label %" << No
           << "\n"
           << Yes << ":\n";
      addToChecksum(std::to_string(S.Id));
      Body << "  " << Less << " = sub i64 %depth, 1\n";
      callMayThrow("@f" + std::to_string(Fn),
                   "ptr %self, i64 %tid, i64 " + Less, MayThrow[Fn],
                   /*NoReturn=*/false);
      Body << "  br label %" << No << "\n" << No << ":\n";
      return;
    }
    case StmtKind::Wait: {
      std::string T = "%" + fresh("t");
      Body << "  " << T << " = call ptr @jitlock.thread()\n";
      runtimeCall("call i32 @jitlock_rt_wait_timed(ptr " + T + ", ptr " +
                      object(S.Obj) + ", i64 " +
                      std::to_string(S.Const * 1000) + ")",
                  /*TimeoutOk=*/true);
      return;
    }
    case StmtKind::Notify: {
      std::string T = "%" + fresh("t");
      Body << "  " << T << " = call ptr @jitlock.thread()\n";
      runtimeCall(std::string("call i32 @jitlock_rt_notify") +
                      (S.All ? "_all" : "") + "(ptr " + T + ", ptr " +
                      object(S.Obj) + ")",
                  /*TimeoutOk=*/false);
      return;
    }
    case StmtKind::Poll:
      Body << "  call void @jitlock.safepoint.poll()\n";
      return;
    case StmtKind::Return:
      guarded(S.Cond, [&] {
        releaseRegions(/*ThroughTries=*/true);
        Body << "  ret void\n";
      });
      return;
    case StmtKind::Throw:
      guarded(S.Cond, [&] {
        std::string Exn = "%" + fresh("x");
        Body << "  " << Exn << " = call ptr @__cxa_allocate_exception(i64 8)\n";
        Body << "  store i64 " << S.Const << ", ptr " << Exn << "\n";
        callMayThrow("@__cxa_throw", "ptr " + Exn + ", ptr @_ZTIl, ptr null",
                     /*Throws=*/true, /*NoReturn=*/true);
      });
      return;
    case StmtKind::Try: {
      unsigned Label = Next++;
      Allocas << "  %exn." << Label << " = alloca ptr\n";
      Scopes.push_back({ScopeKind::Try, 0, Label});
      block(S.Body);
      Scopes.pop_back();
      std::string After = "after." + std::to_string(Label);
      Body << "  br label %" << After << "\n";
      Body << "catch." << Label << ":\n";
      std::string Exn = "%" + fresh("exn");
      Body << "  " << Exn << " = load ptr, ptr %exn." << Label << "\n";
      Body << "  %" << fresh("caught") << " = call ptr @__cxa_begin_catch(ptr "
           << Exn << ")\n";
      Body << "  call void @__cxa_end_catch()\n";
      addToChecksum(std::to_string(7 * uint64_t(S.Id) + 3));
      Body << "  br label %" << After << "\n" << After << ":\n";
      return;
    }
    }
  }

  const Program &P;
  unsigned Fn;
  const std::vector<bool> &MayThrow;
  Fault Inject;
  /// Re-entered regions open around the statement being printed.
  unsigned Reentered = 0;
  std::ostringstream Allocas, Body;
  std::vector<Scope> Scopes;
  std::vector<unsigned> LoopIds;
  unsigned Next = 0;
};

/// A constant array of i64 in IR syntax.
std::string array(const std::vector<uint64_t> &Values) {
  std::ostringstream OS;
  OS << "[" << Values.size() << " x i64] [";
  for (size_t I = 0; I != Values.size(); ++I)
    OS << (I ? ", " : "") << "i64 " << int64_t(Values[I]);
  OS << "]";
  return OS.str();
}

bool usesExceptions(const std::vector<Stmt> &Body) {
  for (const Stmt &S : Body)
    if (S.Kind == StmtKind::Throw || S.Kind == StmtKind::Try ||
        usesExceptions(S.Body))
      return true;
  return false;
}

} // namespace

std::string printIR(const Program &P, Fault Inject) {
  const unsigned Counters = P.Objects * P.Fields;
  std::ostringstream OS;
  ProgramSize Size = measure(P);
  OS << "; A jitlock-fuzz program (seed " << P.Seed << "): " << Size.Functions
     << " function(s), " << Size.Stmts << " statement(s), " << P.Objects
     << " object(s) of " << P.Fields << " counter(s), entry @f" << P.Entry
     << " run " << P.Repeat << " time(s) per thread.\n";
  OS << "; jitlock_example_check(n) compares the counters and each thread's "
        "checksum\n; with what the generator's model computed for n "
        "threads (n <= "
     << MaxThreads << ").\n\n";

  OS << "%Obj = type { i64, [" << P.Fields << " x i64] }\n";
  OS << "@objects = global [" << P.Objects << " x %Obj] [";
  for (unsigned O = 0; O != P.Objects; ++O)
    OS << (O ? ", " : "") << "%Obj { i64 1, [" << P.Fields
       << " x i64] zeroinitializer }";
  OS << "]\n";
  OS << "@thread_sums = global [" << MaxThreads << " x i64] zeroinitializer\n";
  OS << "@errors = global i64 0\n";

  // What each thread adds, by thread index.
  OS << "@expect_counters = constant [" << MaxThreads << " x [" << Counters
     << " x i64]] [";
  std::vector<uint64_t> Sums;
  for (unsigned T = 0; T != MaxThreads; ++T) {
    ThreadEffect E = simulate(P, T);
    OS << (T ? ", " : "") << array(E.Counters);
    Sums.push_back(E.Checksum);
  }
  OS << "]\n";
  OS << "@expect_sums = constant " << array(Sums) << "\n\n";

  bool EH = false;
  for (const Function &F : P.Functions)
    EH |= !F.Removed && usesExceptions(F.Body);
  OS << "declare void @jitlock.monitor.enter(ptr)\n"
        "declare void @jitlock.monitor.exit(ptr)\n"
        "declare void @jitlock.safepoint.poll()\n"
        "declare ptr @jitlock.thread()\n"
        "declare ptr @jitlock_rt_current()\n"
        "declare i32 @jitlock_rt_wait_timed(ptr, ptr, i64)\n"
        "declare i32 @jitlock_rt_notify(ptr, ptr)\n"
        "declare i32 @jitlock_rt_notify_all(ptr, ptr)\n";
  if (EH)
    OS << "declare ptr @__cxa_allocate_exception(i64)\n"
          "declare void @__cxa_throw(ptr, ptr, ptr)\n"
          "declare ptr @__cxa_begin_catch(ptr)\n"
          "declare void @__cxa_end_catch()\n"
          "declare i32 @__gxx_personality_v0(...)\n"
          "@_ZTIl = external constant ptr\n";
  OS << "\n";

  std::vector<bool> Throws;
  for (unsigned I = 0; I != P.Functions.size(); ++I)
    Throws.push_back(!P.Functions[I].Removed && mayThrow(P, I));
  for (unsigned I = 0; I != P.Functions.size(); ++I)
    if (!P.Functions[I].Removed)
      OS << FunctionPrinter(P, I, Throws, Inject).print() << "\n";

  OS << "define i64 @jitlock_example_run(i64 %tid, i64 %n) {\n"
        "entry:\n"
        "  %self = call ptr @jitlock_rt_current()\n"
        "  br label %loop\n"
        "loop:\n"
        "  %i = phi i64 [ 0, %entry ], [ %i.next, %body ]\n"
        "  %more = icmp ult i64 %i, "
     << P.Repeat
     << "\n"
        "  br i1 %more, label %body, label %done\n"
        "body:\n"
        "  call void @f"
     << P.Entry << "(ptr %self, i64 %tid, i64 " << P.Functions[P.Entry].Depth
     << ")\n"
        "  %i.next = add i64 %i, 1\n"
        "  br label %loop\n"
        "done:\n"
        "  %slot = getelementptr inbounds ["
     << MaxThreads
     << " x i64], ptr @thread_sums, i64 0, i64 %tid\n"
        "  %sum = load i64, ptr %slot\n"
        "  ret i64 %sum\n"
        "}\n\n";

  // Bits: 1 a counter, 2 a thread's checksum, 4 a runtime call failed,
  // 8 more threads than the expectations cover.
  OS << "define i64 @jitlock_example_check(i64 %n) {\n"
        "entry:\n"
        "  %too.many = icmp ugt i64 %n, "
     << MaxThreads
     << "\n"
        "  br i1 %too.many, label %unsupported, label %counters\n"
        "unsupported:\n"
        "  ret i64 8\n"
        "counters:\n"
        "  br label %c.loop\n"
        "c.loop:\n"
        "  %c = phi i64 [ 0, %counters ], [ %c.next, %c.compare ]\n"
        "  %bad.c = phi i64 [ 0, %counters ], [ %bad.c.next, %c.compare ]\n"
        "  %c.more = icmp ult i64 %c, "
     << Counters
     << "\n"
        "  br i1 %c.more, label %t.start, label %sums\n"
        "t.start:\n"
        "  br label %t.loop\n"
        "t.loop:\n"
        "  %t = phi i64 [ 0, %t.start ], [ %t.next, %t.add ]\n"
        "  %want = phi i64 [ 0, %t.start ], [ %want.next, %t.add ]\n"
        "  %t.more = icmp ult i64 %t, %n\n"
        "  br i1 %t.more, label %t.add, label %c.compare\n"
        "t.add:\n"
        "  %e.addr = getelementptr inbounds ["
     << MaxThreads << " x [" << Counters
     << " x i64]], ptr @expect_counters, i64 0, i64 %t, i64 %c\n"
        "  %e = load i64, ptr %e.addr\n"
        "  %want.next = add i64 %want, %e\n"
        "  %t.next = add i64 %t, 1\n"
        "  br label %t.loop\n"
        "c.compare:\n"
        "  %obj = udiv i64 %c, "
     << P.Fields << "\n  %field = urem i64 %c, " << P.Fields
     << "\n"
        "  %have.addr = getelementptr inbounds ["
     << P.Objects
     << " x %Obj], ptr @objects, i64 0, i64 %obj, i32 1, i64 %field\n"
        "  %have = load i64, ptr %have.addr\n"
        "  %differs = icmp ne i64 %have, %want\n"
        "  %bit = zext i1 %differs to i64\n"
        "  %bad.c.next = or i64 %bad.c, %bit\n"
        "  %c.next = add i64 %c, 1\n"
        "  br label %c.loop\n"
        "sums:\n"
        "  br label %s.loop\n"
        "s.loop:\n"
        "  %s = phi i64 [ 0, %sums ], [ %s.next, %s.compare ]\n"
        "  %bad.s = phi i64 [ 0, %sums ], [ %bad.s.next, %s.compare ]\n"
        "  %s.more = icmp ult i64 %s, %n\n"
        "  br i1 %s.more, label %s.compare, label %check.errors\n"
        "s.compare:\n"
        "  %sum.addr = getelementptr inbounds ["
     << MaxThreads
     << " x i64], ptr @thread_sums, i64 0, i64 %s\n"
        "  %sum.want.addr = getelementptr inbounds ["
     << MaxThreads
     << " x i64], ptr @expect_sums, i64 0, i64 %s\n"
        "  %sum = load i64, ptr %sum.addr\n"
        "  %sum.want = load i64, ptr %sum.want.addr\n"
        "  %sum.differs = icmp ne i64 %sum, %sum.want\n"
        "  %sum.bit = select i1 %sum.differs, i64 2, i64 0\n"
        "  %bad.s.next = or i64 %bad.s, %sum.bit\n"
        "  %s.next = add i64 %s, 1\n"
        "  br label %s.loop\n"
        "check.errors:\n"
        "  %errors = load atomic i64, ptr @errors seq_cst, align 8\n"
        "  %failed = icmp ne i64 %errors, 0\n"
        "  %error.bit = select i1 %failed, i64 4, i64 0\n"
        "  %r1 = or i64 %bad.c, %bad.s\n"
        "  %r2 = or i64 %r1, %error.bit\n"
        "  ret i64 %r2\n"
        "}\n";
  return OS.str();
}

} // namespace jitlock::fuzz
