#!/bin/bash
# scripts/install-deps.sh ($1) with every package missing, its commands (dpkg, id, apt-get, sudo) replaced by stand-ins
# on a PATH of their own that record how they were called: as root it runs apt-get itself; as a user, through sudo;
# as a user without sudo it runs nothing, names the packages, says that root or sudo is needed, and fails.
set -uo pipefail
script=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
check() { # $1: what, $2: 0 if it holds
  if [ "$2" = 0 ]; then echo "ok $1"; passed=$((passed + 1)); else echo "not ok $1"; failed=$((failed + 1)); fi
}
# $1: the uid id reports, $2: whether sudo is on the PATH; sets rc and leaves the output in $tmp/out, the calls in $tmp/log
run() {
  rm -rf "${tmp:?}/bin" "${tmp:?}/log" && mkdir "$tmp/bin" && touch "$tmp/log"
  printf '#!/bin/bash\nexit 1\n' >"$tmp/bin/dpkg"
  printf '#!/bin/bash\necho %s\n' "$1" >"$tmp/bin/id"
  printf '#!/bin/bash\necho "apt-get $*" >>"%s"\n' "$tmp/log" >"$tmp/bin/apt-get"
  [ "$2" = yes ] && printf '#!/bin/bash\necho "sudo $*" >>"%s"\n' "$tmp/log" >"$tmp/bin/sudo"
  chmod +x "$tmp"/bin/*
  PATH=$tmp/bin /bin/bash "$script" >"$tmp/out" 2>&1
  rc=$?
}

run 0 no
check "root: apt-get update and install of the missing packages" "$([ $rc = 0 ] && grep -q '^apt-get update' "$tmp/log" && grep -q '^apt-get install .* petsc-dev' "$tmp/log"; echo $?)"
run 1000 yes
check "a user with sudo: apt-get through sudo" "$([ $rc = 0 ] && grep -q '^sudo apt-get update' "$tmp/log" && grep -q '^sudo apt-get install .* petsc-dev' "$tmp/log" && ! grep -q '^apt-get' "$tmp/log"; echo $?)"
run 1000 no
check "a user without sudo: fails, runs nothing" "$([ $rc != 0 ] && [ ! -s "$tmp/log" ]; echo $?)"
check "a user without sudo: names the packages and root or sudo" "$(grep -q 'missing: petsc-dev libtrilinos-kokkos-dev' "$tmp/out" && grep -q 'needs root or sudo' "$tmp/out"; echo $?)"
cat "$tmp/out"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
