#!/usr/bin/env bash
# Fails, naming the files, when a tracked C or C++ file differs from what
# clang-format-19 makes of it with the repository's .clang-format (LLVM
# style). `bash scripts/check-format.sh --fix` rewrites them instead.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

clang_format=${CLANG_FORMAT:-clang-format-19}
if ! command -v "$clang_format" >/dev/null 2>&1; then
  echo "check-format: $clang_format not found; run scripts/install-deps.sh" >&2
  exit 2
fi

mapfile -t files < <(git ls-files -- '*.c' '*.cpp' '*.h')
if [[ ${1:-} == --fix ]]; then
  "$clang_format" -i "${files[@]}"
  exit 0
fi

unformatted=()
for f in "${files[@]}"; do
  "$clang_format" --dry-run --Werror "$f" >/dev/null 2>&1 || unformatted+=("$f")
done
if ((${#unformatted[@]})); then
  echo "check-format: ${#unformatted[@]} file(s) differ from clang-format:" >&2
  printf '  %s\n' "${unformatted[@]}" >&2
  echo "check-format: run 'bash scripts/check-format.sh --fix'" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
