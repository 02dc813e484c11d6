#!/usr/bin/env bash
# Runs the benchmark suite of bench/java on jitlock-java and on the JDK's
# HotSpot, alternating, and reports the medians, the ratios and a chart
# (docs/java.md, "Side by side with HotSpot").
#
#   scripts/java-vs-hotspot.sh [--rounds N] [--ops N] [--warmup N]
#       [--timed N] [--build DIR] [--out DIR] [--java PATH] [--no-xint]
#
# The same class files (compiled once here with javac --release 17) run in
# each configuration:
#   jitlock-tiered   jitlock-java, tier 0 then tier 1 for hot methods
#   jitlock-reserved the same with --locking=reserved (lock reservation)
#   jitlock-xint     jitlock-java -Xint (reference: the interpreter alone)
#   hotspot          java with its defaults (C2's lock elision on)
#   hotspot-noelim   java -XX:-EliminateLocks (every lock really taken)
#   hotspot-biased   java -XX:+UseBiasedLocking, when the JDK still has the
#                    flag (JDK 15..17 deprecate it and turn it off by default)
# Each round runs every configuration once, starting with a different one
# each round; each run times --timed rounds of every kernel (after --warmup
# untimed ones) and prints their median, and the report takes the median of
# those over the rounds. OUT (default BUILD/java-vs-hotspot) gets the raw output of
# every run, meta.json, results.json, results.csv, results.md and
# java-vs-hotspot.png. When jitlock-java is not built yet it is built with
# cmake (the default preset).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

rounds=5
ops=1000000
warmup=3
timed=3
build=$root/build/default
out=
java=${JAVA:-java}
xint=1
usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
  exit "${1:-2}"
}
number() {
  [[ $2 =~ ^[0-9]+$ ]] || { echo "java-vs-hotspot: $1 wants a number, not '$2'" >&2; exit 2; }
}
while (($#)); do
  case $1 in
    --rounds) number "$1" "${2:-}"; rounds=$2; shift 2 ;;
    --ops) number "$1" "${2:-}"; ops=$2; shift 2 ;;
    --warmup) number "$1" "${2:-}"; warmup=$2; shift 2 ;;
    --timed) number "$1" "${2:-}"; timed=$2; shift 2 ;;
    --build) build=${2:?--build wants a directory}; shift 2 ;;
    --out) out=${2:?--out wants a directory}; shift 2 ;;
    --java) java=${2:?--java wants a path}; shift 2 ;;
    --no-xint) xint=0; shift ;;
    -h|--help) usage 0 ;;
    *) echo "java-vs-hotspot: unknown option $1" >&2; usage ;;
  esac
done
((rounds >= 1)) || { echo "java-vs-hotspot: --rounds must be at least 1" >&2; exit 2; }
((ops >= 4096)) || { echo "java-vs-hotspot: --ops must be at least 4096" >&2; exit 2; }
((timed >= 1)) || { echo "java-vs-hotspot: --timed must be at least 1" >&2; exit 2; }
out=${out:-$build/java-vs-hotspot}
# The javac beside the java that runs HotSpot, else the one on the PATH.
javac=""
if java_path=$(command -v "$java"); then
  javac=$(dirname "$java_path")/javac
fi
[[ -x $javac ]] || javac=$(command -v javac || true)
if ! command -v "$java" >/dev/null || [[ -z $javac ]]; then
  echo "java-vs-hotspot: needs a JDK (java and javac; e.g. openjdk-17-jdk-headless)" >&2
  exit 2
fi

jvm=$build/tools/jitlock-java/jitlock-java
if [[ ! -x $jvm ]]; then
  echo "java-vs-hotspot: building jitlock-java in $build" >&2
  if [[ ! -f $build/CMakeCache.txt ]]; then
    if [[ $build == "$root/build/default" ]]; then
      (cd "$root" && cmake --preset default >/dev/null)
    else
      cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    fi
  fi
  cmake --build "$build" --target jitlock-java -- -j2
fi

rm -rf "$out"
mkdir -p "$out"
"$javac" --release 17 -nowarn -encoding UTF-8 -d "$out/classes" \
  "$root/bench/java/JitlockBench.java"
suite=(-cp "$out/classes" JitlockBench --ops "$ops" --warmup "$warmup" --timed "$timed")

names=(jitlock-tiered jitlock-reserved)
cmds=("$jvm --heap=2g" "$jvm --heap=2g --locking=reserved")
if ((xint)); then
  names+=(jitlock-xint)
  cmds+=("$jvm -Xint --heap=2g")
fi
names+=(hotspot hotspot-noelim)
cmds+=("$java" "$java -XX:-EliminateLocks")
# JEP 374: JDK 15 deprecates biased locking and turns it off by default; JDK
# 18 removes the flag. Run it only where the flag still turns it on.
if "$java" -XX:+UseBiasedLocking -XX:+PrintFlagsFinal -version 2>/dev/null |
    grep -Eq 'UseBiasedLocking +=  *true'; then
  names+=(hotspot-biased)
  cmds+=("$java -XX:+UseBiasedLocking")
  biased="biased locking is $("$java" -XX:+PrintFlagsFinal -version 2>/dev/null |
    awk '/ UseBiasedLocking /{print $4 == "true" ? "on" : "off"}') by default on this JDK (JEP 374), also run with -XX:+UseBiasedLocking"
else
  biased="this JDK has no biased locking to turn on (JEP 374; -XX:+UseBiasedLocking not run)"
fi
echo "java-vs-hotspot: $biased" >&2

# The model name, with family and model (a VM may show only "AMD EPYC").
cpu_model() {
  cpu_field() { grep -m1 "^$1[[:space:]]*:" /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'; }
  printf '%s (family %s, model %s%s)' "$(cpu_field 'model name')" "$(cpu_field 'cpu family')" \
    "$(cpu_field model)" "$(grep -qw hypervisor /proc/cpuinfo && echo ', virtual machine')"
}
load() { cut -d' ' -f1-3 /proc/loadavg | sed 's/ /, /g'; }
load_start=$(load)
start=$(date -u '+%Y-%m-%d %H:%M UTC')
n=${#names[@]}
for ((r = 1; r <= rounds; r++)); do
  for ((i = 0; i < n; i++)); do
    c=$(((i + r - 1) % n))
    name=${names[c]}
    echo "java-vs-hotspot: round $r/$rounds: $name" >&2
    status=0
    # shellcheck disable=SC2086 # cmds[] are words on purpose
    timeout 900 ${cmds[c]} "${suite[@]}" >"$out/round-$r.$name.out" \
      2>"$out/round-$r.$name.err" || status=$?
    echo "$status" >"$out/round-$r.$name.status"
    grep -h FAIL "$out/round-$r.$name.out" >&2 || true
  done
done

configs_json=$(for ((c = 0; c < n; c++)); do
  printf '%s\t%s %s\n' "${names[c]}" "${cmds[c]}" "${suite[*]}"; done)
NAMES_CMDS=$configs_json ROUNDS=$rounds DATE=$start LOAD_START=$load_start \
LOAD_END=$(load) NPROC=$(nproc) \
CPU=$(cpu_model) \
JDK=$("$java" -version 2>&1 | sed -n 2p) \
JITLOCK_JAVA="commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')" \
SUITE_ARGS="--ops $ops --warmup $warmup --timed $timed" BIASED=$biased \
python3 - "$out/meta.json" <<'EOF'
import json, os, sys
env = os.environ
configs = []
for line in env["NAMES_CMDS"].splitlines():
    name, cmd = line.split("\t", 1)
    configs.append({"name": name, "command": cmd})
meta = {"rounds": int(env["ROUNDS"]), "date": env["DATE"],
        "load_start": env["LOAD_START"], "load_end": env["LOAD_END"],
        "nproc": env["NPROC"], "cpu": env["CPU"], "jdk": env["JDK"],
        "jitlock_java": env["JITLOCK_JAVA"], "suite_args": env["SUITE_ARGS"],
        "biased_locking": env["BIASED"], "configs": configs}
with open(sys.argv[1], "w") as f:
    json.dump(meta, f, indent=1)
EOF

python3 "$root/scripts/java-bench-report.py" report "$out" \
  --json "$out/results.json" --csv "$out/results.csv" \
  --markdown "$out/results.md" --png "$out/java-vs-hotspot.png"
echo "java-vs-hotspot: results in $out (results.md, .json, .csv, java-vs-hotspot.png)" >&2
