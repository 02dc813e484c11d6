#!/usr/bin/env bash
# Configures, builds and tests every preset: the sanitizer builds and the
# debug build (JITLOCK_ASSERT on) first and the default build last, so that the last thing printed is CTest's summary
# of the main suite (and the time each preset took). Stops at the first
# failing step.
#
# The sanitizer presets build everything but the benchmarks and the AArch64
# cross build, and run the suites their test preset selects by label
# (CMakePresets.json: sanitizer-tests). The debug preset builds the same at
# -O1 -g without NDEBUG and runs the runtime, stress and deflation suites.
#
# JITLOCK_TEST_PRESETS overrides the list, e.g. JITLOCK_TEST_PRESETS=default.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

read -r -a presets <<<"${JITLOCK_TEST_PRESETS:-tsan asan debug default}"
if ((${#presets[@]} == 0)); then
  echo "test.sh: JITLOCK_TEST_PRESETS names no preset" >&2
  exit 2
fi

bash scripts/install-deps.sh

preset=""
trap 'echo "test.sh: FAILED in preset ${preset:-<none>}: ${BASH_COMMAND}" >&2' ERR

timings=()
for preset in "${presets[@]}"; do
  echo "==== jitlock: preset '${preset}': configure, build, test ===="
  start=${SECONDS}
  cmake --preset "${preset}"
  cmake --build --preset "${preset}"
  built=${SECONDS}
  ctest --preset "${preset}"
  timings+=("${preset}: $((SECONDS - start)) s (configure and build $((built - start)) s, tests $((SECONDS - built)) s)")
done
echo "==== jitlock: time per preset ===="
printf '  %s\n' "${timings[@]}"
