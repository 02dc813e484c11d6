#!/usr/bin/env bash
# Builds jitlock (default preset) and runs the runtime demo with the layout
# dump. Extra arguments go to jitlock-demo, e.g. --threads 8 --iterations 50000.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh
cmake --preset default
cmake --build build/default --target jitlock-demo
exec build/default/tools/jitlock-demo/jitlock-demo --layout "$@"
