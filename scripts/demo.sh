#!/usr/bin/env bash
# Builds jitlock (default preset). First the Java demo: compiles
# examples/java/BankAndQueue.java with javac and runs it with jitlock-java on 4
# threads (bank transfers whose total must be conserved, then a bounded queue
# whose items must each be consumed once), printing the result, the tiers used
# (a count of -Xlog:jit's lines) and the lock statistics (-Xstats). Then
# JIT-compiles two examples with the
# jitlock LLVM passes and runs each on 4 threads with jitlock-run:
# examples/bank.ll (address-ordered transfers and audits; the total must be
# conserved) and examples/prodcons.ll (a bounded queue with wait/notifyAll;
# every item consumed once). jitlock-run checks the invariant, prints the lock
# statistics, and exits non-zero when the invariant fails. Extra arguments go
# to both runs, e.g. --threads 8 --iterations 100000 --no-inline.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh
cmake --preset default >/dev/null
cmake --build build/default --target jitlock-run jitlock-java

classes=build/default/examples/java
mkdir -p "$classes"
javac --release 17 -nowarn -d "$classes" examples/java/BankAndQueue.java
log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "== jitlock-java: examples/java/BankAndQueue.java on 4 threads (tiered)"
status=0
build/default/tools/jitlock-java/jitlock-java -Xlog:jit -Xstats -cp "$classes" \
  BankAndQueue 4 2>"$log" || status=$?
compiled=$(grep -c '^jitlock-java: jit: compiled ' "$log" || true)
interpreted=$(grep -c '^jitlock-java: jit: not compiled ' "$log" || true)
echo "tiers: $compiled methods compiled by tier 1, $interpreted kept in tier 0" \
  "after a failed compile; the rest ran in tier 0 (the interpreter)"
grep -v '^jitlock-java: jit: ' "$log" || true
if [ "$status" -ne 0 ]; then
  echo "the Java demo's invariant failed (exit $status)" >&2
  exit 1
fi
echo
run=build/default/tools/jitlock-run/jitlock-run
"$run" --layout --threads 4 examples/bank.ll "$@"
echo
"$run" --threads 4 examples/prodcons.ll "$@"
