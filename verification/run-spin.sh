#!/usr/bin/env bash
# Checks the Spin model of the locking protocol (locking.pml next to this
# script) in one configuration: generates the verifier with spin -a,
# compiles it, runs it and reads its "errors: N" line. Exits 0 when every
# check of the configuration had the expected outcome.
#
#   run-spin.sh [options] CONFIG     check CONFIG
#   run-spin.sh --trail [options] CONFIG
#                                    replay the counterexample of the last
#                                    failed check of CONFIG (same --workdir),
#                                    without the steps on local variables
# Options:
#   --workdir DIR   where the verifiers are built (default: a new temporary
#                   directory, removed afterwards unless a check failed)
#   --spin PATH     the spin executable (default: spin)
#   --cc PATH       the C compiler for the verifier (default: $CC, else cc)
#   --shortest      a seeded bug's search goes on for the shortest
#                   counterexample (slower);
#                   by default it stops at the first
#
# Configurations (README.md says what each covers):
#   two-threads             2 threads: safety, then liveness
#   two-threads-fence       the same with the fence exit (EXIT_FENCE)
#   three-threads           3 threads: safety
#   three-threads-liveness  3 threads: liveness (minutes; not run by CTest)
#   interrupt               2 threads (a waiter, a notifier) and an
#                           interrupter: safety and liveness
#   heavy                   2 threads, the heavy locking mode: safety and
#                           liveness
#   reserve                 2 threads, the reserved locking mode: safety and
#                           liveness, with recursion, hash, wait and
#                           revocation; then non-adjacent re-entry (A B A)
#   reserve-concurrent      2 threads, reserved, and the concurrent
#                           deflation thread: safety
#   concurrent              2 threads and the concurrent deflation thread:
#                           safety
#   concurrent-fence        the same with the fence exit
#   concurrent-liveness     the same: liveness (many minutes; not run by CTest)
#   seeded-bugs             each seeded bug must be found: as a lost wake-up
#                           (1-3, 6, 7; 7 in the concurrent configuration)
#                           or as a broken assertion (4-5, concurrent; 8,
#                           interrupt; 9, reserve)
#
# A safety check looks for assertion violations (mutual exclusion, the
# hash, the final state, the runtime's own asserted facts) and invalid end
# states (a thread parked or blocked for good). A liveness check verifies
# the LTL formula `terminates` (every script ends) under weak fairness.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
model=$here/locking.pml
spin=spin
cc=${CC:-cc}
workdir=""
trail=false
shortest=false
config=""

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}

while (($#)); do
  case $1 in
  --workdir) workdir=$2; shift 2 ;;
  --spin) spin=$2; shift 2 ;;
  --cc) cc=$2; shift 2 ;;
  --trail) trail=true; shift ;;
  --shortest) shortest=true; shift ;;
  -h | --help) usage ;;
  -*) echo "run-spin: unknown option $1" >&2; usage ;;
  *) [[ -z $config ]] || usage; config=$1; shift ;;
  esac
done
[[ -n $config ]] || usage

# Each check: name|spin defines|safety or liveness|pass, or the bug's
# symptom: end (an invalid end state) or assert (an assertion violated)
case $config in
two-threads)
  checks=("two-threads|-DNTHREADS=2|safety|pass"
          "two-threads|-DNTHREADS=2|liveness|pass") ;;
two-threads-fence)
  checks=("two-fence|-DNTHREADS=2 -DEXIT_FENCE=1|safety|pass"
          "two-fence|-DNTHREADS=2 -DEXIT_FENCE=1|liveness|pass") ;;
three-threads)
  checks=("three-threads|-DNTHREADS=3|safety|pass") ;;
three-threads-liveness)
  checks=("three-threads|-DNTHREADS=3|liveness|pass") ;;
interrupt)
  checks=("interrupt|-DNTHREADS=2 -DINTERRUPT=1|safety|pass"
          "interrupt|-DNTHREADS=2 -DINTERRUPT=1|liveness|pass") ;;
reserve)
  checks=("reserve|-DNTHREADS=2 -DRESERVE=1|safety|pass"
          "reserve|-DNTHREADS=2 -DRESERVE=1|liveness|pass"
          "reserve-aba|-DNTHREADS=2 -DRESERVE=1 -DRESERVE_SCRIPT=2|safety|pass"
          "reserve-aba|-DNTHREADS=2 -DRESERVE=1 -DRESERVE_SCRIPT=2|liveness|pass") ;;
reserve-concurrent)
  checks=("reserve-conc|-DNTHREADS=2 -DRESERVE=1 -DCONCURRENT=1|safety|pass") ;;
heavy)
  checks=("heavy|-DNTHREADS=2 -DHEAVY=1|safety|pass"
          "heavy|-DNTHREADS=2 -DHEAVY=1|liveness|pass") ;;
concurrent)
  checks=("concurrent|-DNTHREADS=2 -DCONCURRENT=1|safety|pass") ;;
concurrent-fence)
  checks=("concurrent-fence|-DNTHREADS=2 -DCONCURRENT=1 -DEXIT_FENCE=1|safety|pass") ;;
concurrent-liveness)
  checks=("concurrent|-DNTHREADS=2 -DCONCURRENT=1|liveness|pass") ;;
seeded-bugs)
  checks=("seeded-bug-1|-DNTHREADS=2 -DSEEDED_BUG=1|safety|end"
          "seeded-bug-2|-DNTHREADS=2 -DSEEDED_BUG=2|safety|end"
          "seeded-bug-3|-DNTHREADS=2 -DSEEDED_BUG=3|safety|end"
          "seeded-bug-4|-DNTHREADS=2 -DCONCURRENT=1 -DSEEDED_BUG=4|safety|assert"
          "seeded-bug-5|-DNTHREADS=2 -DCONCURRENT=1 -DSEEDED_BUG=5|safety|assert"
          "seeded-bug-6|-DNTHREADS=2 -DSEEDED_BUG=6|safety|end"
          "seeded-bug-7|-DNTHREADS=2 -DCONCURRENT=1 -DSEEDED_BUG=7|safety|end"
          "seeded-bug-8|-DNTHREADS=2 -DINTERRUPT=1 -DSEEDED_BUG=8|safety|assert"
          "seeded-bug-9|-DNTHREADS=2 -DRESERVE=1 -DSEEDED_BUG=9|safety|assert") ;;
*) echo "run-spin: unknown configuration '$config'" >&2; usage ;;
esac

command -v "$spin" >/dev/null 2>&1 || {
  echo "run-spin: '$spin' not found; install the Debian package 'spin'" >&2
  exit 2
}
command -v "$cc" >/dev/null 2>&1 || {
  echo "run-spin: C compiler '$cc' not found" >&2
  exit 2
}

if $trail; then
  [[ -n $workdir ]] || { echo "run-spin: --trail needs --workdir" >&2; exit 2; }
  found=false
  for check in "${checks[@]}"; do
    IFS='|' read -r name defines mode _ <<<"$check"
    dir=$workdir/$name-$mode
    [[ -f $dir/locking.pml.trail ]] || continue
    found=true
    echo "== $name ($mode): the counterexample"
    # Each step that reads or writes shared state, with the thread (T<i> is
    # Mutator(i)) and the line of locking.pml; the start of each operation
    # is named. Steps on a thread's own variables are left out. Mutator(0)
    # runs after the active processes (the Interrupter too, if any) and init.
    first=3
    [[ $defines != *INTERRUPT=1* ]] || first=4
    (cd "$dir" && "$spin" $defines -t -p -l locking.pml) |
      awk -v first="$first" -v names="ENTER EXIT ENTER_PRIV EXIT_PRIV WAIT_FLAG TIMED_WAIT NOTIFY NOTIFY_ALL HASH TIMED_WAIT_FLAG IWAIT" '
        BEGIN { split(names, opname, " ") }
        # A step: "N: proc P (Name:1) locking.pml:L (state S) [statement]".
        match($0, /^ *[0-9]+:[ \t]+proc +[0-9]+ \([A-Za-z]+/) {
          step = $1; sub(/:$/, "", step)
          pid = $3; proc = $4; sub(/^\(/, "", proc); sub(/:.*/, "", proc)
          who = proc == "Mutator" ? "T" (pid - first) : proc
          line = $5; sub(/.*:/, "", line)
          stmt = $0; sub(/^[^[]*\[/, "", stmt); sub(/\]$/, "", stmt)
          if (proc != "init" &&
              stmt ~ /hdr|mon\[|wake\[|sleeping\[|where\[|losses\[|handoff\[|holds\[|flag|hashGiven|sbFull\[|sbDrain|intr\[|owed|notified\[/)
            printf "%5d  %-8s line %-5d %s\n", step, who, line, stmt
          next
        }
        # A local that changed: "Mutator(P):op = K" names the operation.
        match($0, /Mutator\([0-9]+\):op = [1-9][0-9]*$/) {
          p = $0; sub(/.*Mutator\(/, "", p); sub(/\).*/, "", p)
          k = $0; sub(/.*= /, "", k)
          if (k != current[p]) printf "%5d  %-8s begins %s\n", step, "T" (p - first), opname[k]
          current[p] = k
        }
        /Mutator\([0-9]+\):op = 0$/ { p = $0; sub(/.*Mutator\(/, "", p); sub(/\).*/, "", p); current[p] = 0 }'
  done
  $found && exit 0
  echo "run-spin: no counterexample of '$config' in $workdir" >&2
  exit 1
fi

own_workdir=false
if [[ -z $workdir ]]; then
  workdir=$(mktemp -d -t jitlock-model.XXXXXX)
  own_workdir=true
fi
mkdir -p "$workdir"

failed=0
for check in "${checks[@]}"; do
  IFS='|' read -r name defines mode expect <<<"$check"
  dir=$workdir/$name-$mode
  rm -rf "$dir"
  mkdir -p "$dir"
  cp "$model" "$dir/locking.pml"
  # The verifier: exhaustive (no bitstate, no compression), within 4 GB.
  ccflags=(-O0 -w -DMEMLIM=4096)
  panflags=(-m100000)
  if [[ $mode == safety && $expect != pass ]] && $shortest; then
    # Search on for the shortest counterexample: the one --trail shows.
    ccflags+=(-DNOCLAIM -DREACH)
    panflags+=(-i)
  elif [[ $mode == safety ]]; then
    ccflags+=(-DNOCLAIM)
  else
    ccflags+=(-DNFAIR=3)
    panflags+=(-a -f -N terminates)
  fi
  # A bug whose symptom is a broken assertion is looked for as one: with
  # -E, invalid end states it may cause too do not end the search.
  [[ $expect != assert ]] || panflags+=(-E)
  start=$(date +%s%N)
  (cd "$dir" && "$spin" $defines -a locking.pml >spin.log 2>&1) || {
    echo "run-spin: $name ($mode): spin -a failed:" >&2
    cat "$dir/spin.log" >&2
    exit 2
  }
  (cd "$dir" && "$cc" "${ccflags[@]}" -o pan pan.c) || {
    echo "run-spin: $name ($mode): compiling pan.c failed" >&2
    exit 2
  }
  (cd "$dir" && ./pan "${panflags[@]}" >pan.log 2>&1) || true
  ms=$((($(date +%s%N) - start) / 1000000))
  log=$dir/pan.log

  errors=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' "$log" | tail -1)
  states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$log" | tail -1)
  if [[ -z $errors ]]; then
    verdict="FAILED (no 'errors:' line from pan)"
  elif [[ $expect == pass && $errors == 0 ]] &&
    grep -qE 'Search not completed|max search depth too small|MEMLIM' "$log"; then
    verdict="FAILED (the search was not exhaustive)"
  elif [[ $expect == pass && $errors == 0 ]]; then
    verdict="ok"
  elif [[ $expect == end && $errors != 0 ]] &&
    grep -q 'invalid end state' "$log"; then
    verdict="ok (found: $(grep -m1 -o 'invalid end state' "$log"))"
  elif [[ $expect == assert && $errors != 0 ]] &&
    grep -q 'assertion violated' "$log"; then
    verdict="ok (found: $(grep -m1 -o 'assertion violated.*' "$log"))"
  elif [[ $expect == end ]]; then
    verdict="FAILED (the seeded bug was not found as a lost wake-up)"
  elif [[ $expect == assert ]]; then
    verdict="FAILED (the seeded bug was not found as a broken assertion)"
  else
    verdict="FAILED ($(grep -m1 -E '^pan:[0-9]+:' "$log" || echo "$errors errors"))"
  fi
  printf 'model: %-13s %-9s %10s states  %3d.%d s  errors: %s  %s\n' \
    "$name" "$mode" "${states:-?}" $((ms / 1000)) $((ms % 1000 / 100)) \
    "${errors:-?}" "$verdict"
  if [[ $verdict != ok* ]]; then
    failed=1
    echo "  pan's report: $log"
    [[ $expect != pass ]] || echo "  the counterexample: $0 --trail --workdir $workdir $config"
  fi
done

if ((failed)); then
  exit 1
fi
if $own_workdir; then
  rm -rf "$workdir"
fi
