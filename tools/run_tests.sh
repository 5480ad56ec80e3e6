#!/usr/bin/env bash
# Run test programs in parallel and report them one line each.
#
#   tools/run_tests.sh JOBS LOGDIR < LIST
#
# LIST has one program per line, "NAME<TAB>SHELL COMMAND". Each command runs with its standard
# output and error in LOGDIR/NAME.log; JOBS of them at a time (xargs -P), the slowest of the
# previous run (LOGDIR/times) first so that the long ones do not finish last. One line per
# program as it ends (name, passed/failed, seconds); then the whole log of every failing program,
# and the closing line "programs: N passed, M failed". Exit status 0 when every program passed.
set -u

# one program: its line, its status in LOGDIR/NAME.rc and its time in LOGDIR/NAME.time
if [ "${1:-}" = "--one" ]; then
  logdir=$2 name=${3%%$'\t'*} cmd=${3#*$'\t'}
  start=$(date +%s.%N)
  bash -c "$cmd" >"$logdir/$name.log" 2>&1 </dev/null
  rc=$?
  secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.3f", b - a}')
  echo "$rc" >"$logdir/$name.rc"
  echo "$secs" >"$logdir/$name.time"
  printf '%-28s %-6s %7.1f s\n' "$name" "$([ "$rc" = 0 ] && echo passed || echo FAILED)" "$secs"
  exit 0
fi

jobs=${1:?JOBS} logdir=${2:?LOGDIR}
mkdir -p "$logdir"
list=$(cat)
[ -n "$list" ] || { echo "run_tests.sh: no program to run" >&2; exit 2; }
names=$(printf '%s\n' "$list" | cut -f1)
for n in $names; do rm -f "$logdir/$n.rc" "$logdir/$n.log" "$logdir/$n.time"; done

# the previous times (NAME SECONDS), longest first; a program without one goes first
order=$(printf '%s\n' "$list" | while IFS= read -r line; do
  n=${line%%$'\t'*}
  t=$(awk -v n="$n" '$1 == n {print $2}' "$logdir/times" 2>/dev/null)
  printf '%s\t%s\n' "${t:-1e9}" "$line"
done | sort -t$'\t' -k1,1 -g -r | cut -f2-)

start=$(date +%s.%N)
printf '%s\n' "$order" | xargs -d '\n' -P "$jobs" -n 1 "$0" --one "$logdir"

pass=0 fail=0 failed=""
: >"$logdir/times.new"
for n in $names; do
  if [ "$(cat "$logdir/$n.rc" 2>/dev/null)" = 0 ]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1)) failed="$failed $n"
  fi
  [ -f "$logdir/$n.time" ] && echo "$n $(cat "$logdir/$n.time")" >>"$logdir/times.new"
done
mv "$logdir/times.new" "$logdir/times"
for n in $failed; do
  echo
  echo "==== $n (log: $logdir/$n.log)"
  cat "$logdir/$n.log" 2>/dev/null || echo "(no log: the program did not start)"
done
[ -z "$failed" ] || echo "failed programs:$failed"
awk -v a="$start" -v b="$(date +%s.%N)" -v j="$jobs" 'BEGIN {printf "wall time %.0f s, %d jobs at a time\n", b - a, j}'
echo "programs: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
