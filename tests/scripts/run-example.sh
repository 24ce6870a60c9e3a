#!/bin/bash
# scripts/run-example.sh ($1) in a tree of its own whose install-deps.sh, cmake and example are stand-ins that record
# how they were called: it says each phase (dependencies, configuration, build, run) in one line on stderr, in that
# order, before the phase runs; stdout carries the example's output alone; the arguments after the command reach the
# example after the default ones.
set -uo pipefail
script=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
check() { # $1: what, $2: 0 if it holds
  if [ "$2" = 0 ]; then echo "ok $1"; passed=$((passed + 1)); else echo "not ok $1"; failed=$((failed + 1)); fi
}
mkdir -p "$tmp/root/scripts" "$tmp/root/build/examples" "$tmp/bin"
cp "$script" "$tmp/root/scripts/run-example.sh"
log=$tmp/log
# each stand-in writes its call to the log and a mark to stderr, so the phase lines can be checked to come before it
printf '#!/bin/bash\necho "install-deps" >>"%s"\necho "[install-deps ran]" >&2\n' "$log" >"$tmp/root/scripts/install-deps.sh"
printf '#!/bin/bash\necho "cmake $*" >>"%s"\necho "[cmake ran]" >&2\necho "cmake chatter"\n' "$log" >"$tmp/bin/cmake"
printf '#!/bin/bash\necho "ex1 $*" >>"%s"\necho "EXAMPLE OUTPUT"\n' "$log" >"$tmp/root/build/examples/ex1"
chmod +x "$tmp/bin/cmake" "$tmp/root/build/examples/ex1"
PATH=$tmp/bin:$PATH bash "$tmp/root/scripts/run-example.sh" -m 8 -n 8 >"$tmp/out" 2>"$tmp/err"
rc=$?
check "exits 0" "$([ $rc = 0 ]; echo $?)"
check "stdout is the example's output alone" "$([ "$(cat "$tmp/out")" = "EXAMPLE OUTPUT" ]; echo $?)"
phases=$(grep -n '^run-example.sh: ' "$tmp/err")
check "four phase lines on stderr" "$([ "$(echo "$phases" | wc -l)" = 4 ]; echo $?)"
order=$(tr '\n' '|' <"$tmp/err")
check "each phase said before it runs: dependencies, configuration, build, run" \
  "$(echo "$order" | grep -Eq '^run-example.sh: checking the dependencies[^|]*\|\[install-deps ran\]\|run-example.sh: configuring[^|]*\|\[cmake ran\]\|run-example.sh: building[^|]*\|\[cmake ran\]\|run-example.sh: running [^|]*ex1 [^|]*\|$'; echo $?)"
check "configures, then builds ex1" "$(grep -q '^cmake -S .* -B ' "$log" && grep -q '^cmake --build .* --target ex1' "$log"; echo $?)"
check "the arguments reach the example after the default ones" "$(grep -Eq '^ex1 -m 512 -n 512 .*-log_view -m 8 -n 8$' "$log"; echo $?)"
cat "$tmp/err"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
