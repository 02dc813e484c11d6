#!/usr/bin/env bash
# The mutation check (docs/robustness.md): builds the runtime once with each
# protocol step below removed (the JITLOCK_MUTATE cache variable of
# lib/Runtime/CMakeLists.txt sets the step's JITLOCK_MUTATE_<NAME> switch),
# runs the suites that guard the step, and reports the mutation KILLED (a
# suite failed or timed out) or SURVIVED. First it checks that those suites
# pass on the real runtime, since a kill means nothing otherwise.
#
#   bash scripts/mutate.sh [NAME...]     default: every mutation
#
# Exits 0 when every mutation was killed, 1 when one survived, 2 when the
# real runtime fails its suites or the build fails. The build directory is
# JITLOCK_MUTATION_BUILD (default build/mutation): a light configuration,
# without LLVM, in which a mutation recompiles only its one file.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${JITLOCK_MUTATION_BUILD:-$root/build/mutation}
# Per binary run: a mutation that makes a suite hang is killed by this.
run_timeout=${JITLOCK_MUTATION_TIMEOUT:-300}
log=$build/mutate-build.log
runlog=$build/mutate-run.log

all=(J2 ABORT_XQ A5_SEAL A6 HANDOFF MC1 XR R3 R4)
declare -A step=(
  [J2]="J2: the joiner's barrier (membarrier or fence)"
  [ABORT_XQ]="the deflater's XQ after an abort"
  [A5_SEAL]="A5's seal of the displaced header"
  [A6]="A6: the handshake before reuse"
  [HANDOFF]="XQ's direct handoff to a head that lost too often"
  [MC1]="MC1: a parked enterer keeps its monitor without the old header"
  [XR]="XR: recovery's XQ sweep of free monitors with threads queued"
  [R3]="R3: the revocation's handshake with the reserving thread"
  [R4]="R4: the reserved exit's header load after the pop and X3"
)
# The suites each mutation runs, in order, as binary[:gtest filter]; the
# first failure kills it. StepWindow first, where the step has a test there:
# it opens the step's window.
declare -A suites=(
  [J2]="RuntimeStepWindowTest:*JoinBarrier* RuntimeExitRaceTest"
  [ABORT_XQ]="RuntimeStepWindowTest:*AbortedDeflation* RuntimeDeflationTest RuntimeDeflationStressTest"
  [A5_SEAL]="RuntimeStepWindowTest:*Seal* RuntimeDeflationTest RuntimeHashTest"
  [A6]="RuntimeStepWindowTest:*Handshake* RuntimeDeflationTest RuntimeStorageTest"
  [HANDOFF]="RuntimeStepWindowTest:*Handoff* RuntimeHandoffTest"
  [MC1]="RuntimeMovingCollectorTest"
  [XR]="StackBangRecoveryTest"
  [R3]="RuntimeReservationTest:*WaitsForTheHoldersPoll*"
  [R4]="RuntimeReservationTest:*Stress*"
)
# Every suite runs under each monitor storage (JITLOCK_TEST_MONITORS).
storages=(pointer index table)

if (($# > 0)); then
  chosen=("$@")
else
  chosen=("${all[@]}")
fi
for name in "${chosen[@]}"; do
  if [[ -z ${step[$name]+set} ]]; then
    echo "mutate.sh: unknown mutation '$name' (known: ${all[*]})" >&2
    exit 2
  fi
done

targets=()
for name in "${chosen[@]}"; do
  for s in ${suites[$name]}; do
    targets+=("${s%%:*}")
  done
done
mapfile -t targets < <(printf '%s\n' "${targets[@]}" | sort -u)

# Configures the build for mutation `$1` (empty: none) and builds the suites.
build_for() {
  cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DJITLOCK_ENABLE_LLVM=OFF -DJITLOCK_BUILD_TOOLS=OFF \
    -DJITLOCK_BUILD_BENCHMARKS=OFF -DJITLOCK_INSTALL=OFF \
    -DJITLOCK_MUTATE="$1" >"$log" 2>&1 &&
    ninja -C "$build" -j"${JITLOCK_MUTATION_JOBS:-2}" "${targets[@]}" \
      >>"$log" 2>&1
}

# The unittests directory that builds suite binary `$1`.
suite_dir() {
  case $1 in
  StackBang*) echo StackBang ;;
  *) echo Runtime ;;
  esac
}

# Runs mutation `$1`'s suites, stopping at the first failure; prints which.
# Returns 0 when all passed.
run_suites() {
  local s bin filter storage rc
  for s in ${suites[$1]}; do
    bin=${s%%:*}
    filter=${s#"$bin"}
    filter=${filter#:}
    for storage in "${storages[@]}"; do
      rc=0
      JITLOCK_TEST_MONITORS=$storage timeout "$run_timeout" \
        "$build/unittests/$(suite_dir "$bin")/$bin" --gtest_brief=1 \
        ${filter:+--gtest_filter="$filter"} >"$runlog" 2>&1 || rc=$?
      if ((rc != 0)); then
        local why="failed"
        ((rc == 124)) && why="timed out after ${run_timeout} s"
        echo "$bin${filter:+ ($filter)} under $storage storage $why"
        # The failed tests, named for what they check.
        sed -n 's/^\[  FAILED  \] \([A-Za-z0-9_./]*\).*/\1/p' "$runlog" |
          sort -u | head -3 | sed 's/^/            /' || true
        return 1
      fi
    done
  done
  echo "all of: ${suites[$1]} (each under ${storages[*]} storage)"
  return 0
}

mkdir -p "$build"
start=$SECONDS
echo "mutate.sh: the real runtime first"
if ! build_for ""; then
  echo "mutate.sh: the build failed; see $log" >&2
  exit 2
fi
for name in "${chosen[@]}"; do
  if ! out=$(run_suites "$name"); then
    echo "mutate.sh: the real runtime fails the suites of $name: $out" >&2
    echo "mutate.sh: no mutation can be judged; see $runlog" >&2
    exit 2
  fi
done
echo "  passes every suite below ($((SECONDS - start)) s)"

survived=0
for name in "${chosen[@]}"; do
  t0=$SECONDS
  if ! build_for "$name"; then
    echo "mutate.sh: the build with $name failed; see $log" >&2
    build_for "" || true
    exit 2
  fi
  if out=$(run_suites "$name"); then
    verdict=SURVIVED
    survived=$((survived + 1))
  else
    verdict=KILLED
  fi
  printf '%-9s %-8s %s (%d s)\n' "$verdict" "$name" "${step[$name]}" \
    $((SECONDS - t0))
  printf '          %s\n' "$out"
done
# Leave the build directory holding the real runtime.
build_for "" || true
echo "mutate.sh: ${#chosen[@]} mutations, $((${#chosen[@]} - survived)) killed, $survived survived ($((SECONDS - start)) s)"
((survived == 0))
