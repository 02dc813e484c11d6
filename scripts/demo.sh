#!/usr/bin/env bash
# Builds jitlock (default preset), then JIT-compiles two examples with the
# jitlock LLVM passes and runs each on 4 threads with jitlock-run:
# examples/bank.ll (address-ordered transfers and audits; the total must be
# conserved) and examples/prodcons.ll (a bounded queue with wait/notifyAll;
# every item consumed once). jitlock-run checks the invariant, prints the lock
# statistics, and exits non-zero when the invariant fails. Extra arguments go
# to both runs, e.g. --threads 8 --iterations 100000 --no-inline.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh
cmake --preset default
cmake --build build/default --target jitlock-run
run=build/default/tools/jitlock-run/jitlock-run
"$run" --layout --threads 4 examples/bank.ll "$@"
echo
"$run" --threads 4 examples/prodcons.ll "$@"
