#!/usr/bin/env bash
# Installs the Debian 12 packages that jitlock builds and tests with.
#
# Idempotent: when every package is already installed it does no apt work at
# all, so it is cheap to run before every build (scripts/demo.sh and
# scripts/test.sh do). Needs root only when something is missing.
set -euo pipefail

packages=(
  cmake
  ninja-build
  clang-19
  clang-format-19    # scripts/check-format.sh (run by CI)
  libclang-rt-19-dev # the sanitizer runtimes (tsan, asan presets) and libFuzzer
  llvm-19-dev
  llvm-19-tools      # FileCheck and lit
  libasmjit-dev
  libgtest-dev
  libbenchmark-dev
  python3            # runs lit
  pkgconf            # the install test builds a C program with pkg-config
  python3-matplotlib # scripts/bench-report.py draws the benchmark plot
  valgrind           # callgrind instruction counts (docs/stack-banging.md)
  g++-aarch64-linux-gnu # cross-compiles the runtime for the AArch64 tests
  qemu-user          # runs them (qemu-aarch64)
  spin               # checks the locking protocol's model (verification/)
  openjdk-17-jdk-headless # javac and java for the Java tests (test/Java)
  # The arm64 builds of asmjit and GoogleTest (Debian multiarch; static
  # libraries under /usr/lib/aarch64-linux-gnu) for the AArch64 emitter
  # tests. The arm64 architecture is added to dpkg when they are missing.
  libasmjit-dev:arm64
  libgtest-dev:arm64
)

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "install-deps: not a Debian-based system; install the equivalents of:" >&2
  echo "  ${packages[*]}" >&2
  echo "install-deps: continuing; CMake names anything it cannot find." >&2
  exit 0
fi

# dpkg-query also knows removed packages, so ask for the status itself rather
# than trusting that the package is listed.
is_installed() {
  dpkg-query -W -f='${db:Status-Status}\n' "$1" 2>/dev/null |
    grep -qx installed
}

missing=()
for pkg in "${packages[@]}"; do
  is_installed "$pkg" || missing+=("$pkg")
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages are installed"
  exit 0
fi

# An :arm64 package needs dpkg to know the arm64 architecture (multiarch).
add_arm64=false
for pkg in "${missing[@]}"; do
  if [[ $pkg == *:arm64 ]] &&
    ! dpkg --print-foreign-architectures | grep -qx arm64 &&
    [[ $(dpkg --print-architecture) != arm64 ]]; then
    add_arm64=true
  fi
done

echo "install-deps: missing: ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then
  echo "install-deps: not root; run this, then retry:" >&2
  if $add_arm64; then
    echo "  sudo dpkg --add-architecture arm64" >&2
  fi
  echo "  sudo apt-get update && sudo DEBIAN_FRONTEND=noninteractive" \
    "apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 1
fi

if $add_arm64; then
  echo "install-deps: adding the arm64 architecture (dpkg multiarch)"
  dpkg --add-architecture arm64
fi
apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
  "${missing[@]}"
echo "install-deps: installed ${missing[*]}"
