#!/bin/bash
# Compiles every C and C++ source of the repository (plugin, tests, benchmarks, example) against newer stacks than
# Debian 12's, taken from Debian unstable's packages: PETSc 3.2x with Open MPI 5's headers, and Kokkos 4.x (Trilinos
# 16's Kokkos and Kokkos-Kernels, C++17) or Kokkos 5.x (standalone, C++20, OpenMP). The packages are downloaded and
# unpacked under $CACHE (default /tmp/gpustream-compat), never installed: their libraries need a newer C library, so
# this checks that the code compiles, not that it runs. Needs network access to the Debian mirror this machine's apt
# uses (scripts/debian-mirror.sh); not part of CI
# (unstable moves). Any error, or any warning in the repository's own files (-Wall), fails the check.
#   bash scripts/compat-check.sh            # both Kokkos versions
#   KOKKOS="4" bash scripts/compat-check.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${CACHE:-/tmp/gpustream-compat}
mkdir -p "$cache/lists/partial" "$cache/archives/partial" "$cache/debs"
source "$root/scripts/debian-mirror.sh"
echo "deb $mirror sid main" >"$cache/sources.list"
apt_opts=(-o "Dir::Etc::sourcelist=$cache/sources.list" -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$cache/lists" -o "Dir::Cache=$cache"
  -o Debug::NoLocking=1)
apt-get "${apt_opts[@]}" update -qq
# the newest PETSc of unstable (its package names carry the version)
petsc=$(apt-cache "${apt_opts[@]}" search --names-only '^libpetsc-real3\.[0-9]+-dev$' | sed -E 's/^libpetsc-real(3\.[0-9]+)-dev.*/\1/' | sort -V | tail -1)
[ -n "$petsc" ] || { echo "no libpetsc-real3.x-dev in Debian unstable"; exit 1; }
pkgs="libpetsc-real$petsc-dev libpetsc$petsc-dev-common libopenmpi-dev libtrilinos-kokkos-dev libtrilinos-kokkos-kernels-dev libkokkos-dev"
rm -f "$cache"/debs/*.deb
# shellcheck disable=SC2086 # one word a package
if ! (cd "$cache/debs" && apt-get "${apt_opts[@]}" download $pkgs >"$cache/download.log" 2>&1); then
  cat "$cache/download.log"
  exit 1
fi
unpack() { rm -rf "${cache:?}/$1" && mkdir -p "$cache/$1" && for p in $2; do dpkg -x "$cache"/debs/"$p"_*.deb "$cache/$1"; done; }
unpack petsc "libpetsc-real$petsc-dev libpetsc$petsc-dev-common libopenmpi-dev"
unpack k4 "libtrilinos-kokkos-dev libtrilinos-kokkos-kernels-dev"
unpack k5 "libkokkos-dev"
pinc=$(dirname "$(find "$cache/petsc" -name petscconf.h | head -1)")
minc=$(dirname "$(find "$cache/petsc" -path '*openmpi/include/mpi.h' | head -1)")
kver() { sed -n 's/^#define KOKKOS_VERSION \([0-9]*\)$/\1/p' "$cache/$1/usr/include/kokkos/KokkosCore_config.h"; }
echo "PETSc $petsc ($pinc), Open MPI headers $minc, Kokkos $(kver k4) (Trilinos) and $(kver k5)"

# the configure checks of CMakeLists.txt (-DGPUSTREAM_PETSC_NAME where cmake/probes/NAME.c compiles), against these
# headers
defs=""
for p in "$root"/cmake/probes/*.c; do
  gcc -Werror=incompatible-pointer-types -isystem "$pinc" -isystem "$minc" -c "$p" -o /dev/null 2>/dev/null &&
    defs="$defs -DGPUSTREAM_PETSC_$(basename "$p" .c)"
done
echo "configure checks:${defs:- none}"

cd "$root"
fail=0
# shellcheck disable=SC2086,SC2206 # $3 and $defs: compiler flags, one word each
check() { # $1: label, $2: C++ standard, $3: Kokkos flags, $4: definitions for C and C++ alike
  local f log=$cache/log.txt bad=0
  for f in $(git ls-files '*.c' '*.cxx' ':!cmake/probes'); do # (the probes may fail: they test for features)
    case $f in
      *.c) cmd=(gcc -std=gnu11 ${4:-}) ;;
      *.cxx) cmd=(g++ "-std=$2" $3 ${4:-}) ;;
    esac
    if ! "${cmd[@]}" -Wall -Wno-unknown-pragmas -Iinclude -Isrc/sys -Isrc/device -isystem "$pinc" -isystem "$minc" $defs -O0 -c "$f" -o /dev/null >"$log" 2>&1; then
      echo "$1: FAIL $f"; grep -E "error" "$log" | head -5; bad=1
    elif grep -v "^$cache" "$log" | grep -q -E "^[^ ]*: warning"; then
      echo "$1: WARN $f"; grep -E "^[^ ]*: warning" "$log" | grep -v "^$cache" | head -5; bad=1
    fi
  done
  [ $bad = 0 ] && echo "$1: every source compiles without warnings"
  return $bad
}
for k in ${KOKKOS:-4 5}; do
  if [ "$k" = 4 ]; then
    # Trilinos' Kokkos-Kernels comes with this Kokkos: the device factors are compiled too
    check "PETSc $petsc, Kokkos $(kver k4)" c++17 "-isystem $cache/k4/usr/include/kokkos -isystem $cache/k4/usr/include/trilinos" -DGPUSTREAM_HAVE_KOKKOSKERNELS || fail=1
  else
    check "PETSc $petsc, Kokkos $(kver k5)" c++20 "-fopenmp -isystem $cache/k5/usr/include/kokkos" || fail=1
  fi
done
exit $fail
