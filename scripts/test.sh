#!/usr/bin/env bash
# Configures, builds and tests every preset: the sanitizer builds first and
# the default build last, so that the last thing printed is CTest's summary
# of the main suite. Stops at the first failing step.
#
# JITLOCK_TEST_PRESETS overrides the list, e.g. JITLOCK_TEST_PRESETS=default.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

read -r -a presets <<<"${JITLOCK_TEST_PRESETS:-tsan asan default}"
if ((${#presets[@]} == 0)); then
  echo "test.sh: JITLOCK_TEST_PRESETS names no preset" >&2
  exit 2
fi

bash scripts/install-deps.sh

preset=""
trap 'echo "test.sh: FAILED in preset ${preset:-<none>}: ${BASH_COMMAND}" >&2' ERR

for preset in "${presets[@]}"; do
  echo "==== jitlock: preset '${preset}': configure, build, test ===="
  cmake --preset "${preset}"
  cmake --build --preset "${preset}"
  ctest --preset "${preset}"
done
