#!/usr/bin/env bash
# Runs two jitlock-bench builds alternately, ROUNDS times each (one
# repetition of every benchmark per run, interleaved at random), and
# compares them with bench-report.py --baseline: every benchmark's median
# after/before, with the ±3% verdict.
#
#   scripts/bench-compare.sh [--rounds N] [--filter REGEX] [--out DIR] BEFORE AFTER
#
# BEFORE and AFTER are jitlock-bench executables (e.g. a copy of the binary
# built before a change, and build/default/tools/jitlock-bench/jitlock-bench).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rounds=2
filter=""
out=""
usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}
while (($#)); do
  case $1 in
  --rounds) rounds=$2; shift 2 ;;
  --filter) filter=$2; shift 2 ;;
  --out) out=$2; shift 2 ;;
  -h | --help) usage ;;
  -*) echo "bench-compare: unknown option $1" >&2; usage ;;
  *) break ;;
  esac
done
(($# == 2)) || usage
before=$1
after=$2
for b in "$before" "$after"; do
  [[ -x $b ]] || { echo "bench-compare: '$b' is not an executable" >&2; exit 2; }
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "bench-compare: --rounds wants a positive number" >&2; exit 2; }
out=${out:-$(mktemp -d -t jitlock-bench-compare.XXXXXX)}
mkdir -p "$out"
args=(--benchmark_repetitions=1 --benchmark_enable_random_interleaving=true
      --benchmark_out_format=json)
[[ -z $filter ]] || args+=("--benchmark_filter=$filter")
for ((r = 1; r <= rounds; r++)); do
  for side in before after; do
    bin=$before
    [[ $side == before ]] || bin=$after
    echo "bench-compare: round $r of $rounds, $side" >&2
    "$bin" "${args[@]}" --benchmark_out="$out/$side-$r.json" >/dev/null
  done
done
python3 "$here/bench-report.py" "$out"/after-*.json \
  --baseline "$out"/before-*.json --markdown "$out/report.md"
echo "bench-compare: the JSON and report.md are in $out" >&2
sed -n '/before and after/,$p' "$out/report.md"
