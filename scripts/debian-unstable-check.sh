#!/bin/bash
# Builds the plugin with CMake and runs the whole test suite (ctest) in a Debian unstable root made with debootstrap
# from Debian's packages, from the mirror this machine's apt uses (scripts/debian-mirror.sh): PETSc 3.2x (petsc-dev)
# with Trilinos' Kokkos 4 (Serial) and then with the standalone Kokkos 5 (OpenMP, 1 and 2 threads). The two Kokkos
# development packages cannot be installed together, so they take turns. Needs root, network access to the mirror
# and a few GB of disk; not part of CI (unstable moves). The ctest logs and a summary go to $OUT.
#   bash scripts/debian-unstable-check.sh            # k4 and k5
#   bash scripts/debian-unstable-check.sh k4
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/debian-mirror.sh"
R=${ROOTFS:-/tmp/gpustream-sid}
OUT=${OUT:-$root/unstable-out}
what="${*:-k4 k5}"
mkdir -p "$OUT"
summary=$OUT/summary.txt
say() { echo "== $*" | tee -a "$summary"; }

[ "$(id -u)" = 0 ] || { echo "debootstrap and chroot need root" >&2; exit 1; }
command -v debootstrap >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; }
if [ ! -x "$R/usr/bin/apt-get" ]; then
  say "debootstrap sid from $mirror into $R"
  debootstrap --variant=minbase sid "$R" "$mirror" >"$OUT/debootstrap.log" 2>&1
fi
cp /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null || true
# a mirror may serve unstable's index past its Valid-Until date (a snapshot): take it as it is
echo 'Acquire::Check-Valid-Until "false";' >"$R/etc/apt/apt.conf.d/99gpustream-valid-until"
# the host's /proc and /sys (MPI's hwloc and UCX read the topology there) and a /dev/shm, unmounted at the end
mountpoint -q "$R/proc" || mount --bind /proc "$R/proc"
mountpoint -q "$R/sys" || mount --bind /sys "$R/sys"
mkdir -p "$R/dev/shm" && { mountpoint -q "$R/dev/shm" || mount -t tmpfs tmpfs "$R/dev/shm"; }
# lazily (an MPI daemon of the last test may still hold /dev/shm), and never the script's exit status
trap 'umount -l "$R/dev/shm" "$R/sys" "$R/proc" 2>/dev/null || true' EXIT
inroot() { chroot "$R" env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 HOME=/root bash -c "$*"; }

inroot "apt-get update -qq"
petsc=$(inroot "apt-cache show petsc-dev | sed -n 's/^Version: \([0-9]*\.[0-9]*\).*/\1/p' | head -1")
say "PETSc $petsc ($(inroot "apt-cache show petsc-dev | sed -n 's/^Version: //p' | head -1"))"
inroot "apt-get install -y -qq --no-install-recommends petsc-dev libpetsc$petsc-dev-examples cmake make g++ pkg-config python3 >/dev/null"
rm -rf "$R/src/gpustream" && mkdir -p "$R/src/gpustream"
git -C "$root" archive HEAD | tar -x -C "$R/src/gpustream"

for k in $what; do
  case $k in
  k4) inroot "apt-get remove -y -qq libkokkos-dev >/dev/null 2>&1; apt-get install -y -qq --no-install-recommends libtrilinos-kokkos-dev >/dev/null"; threads="1" ;;
  k5) inroot "apt-get remove -y -qq libtrilinos-kokkos-dev >/dev/null 2>&1; apt-get install -y -qq --no-install-recommends libkokkos-dev >/dev/null"; threads="1 2" ;;
  *) echo "unknown: $k (k4 or k5)" >&2; exit 1 ;;
  esac
  say "$k: $(inroot "dpkg -l | awk '/kokkos/ && /dev/ {print \$2, \$3}' | tr '\n' ' '")"
  cfg="-DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUSTREAM_TESTS=ON -DGPUSTREAM_BENCH=OFF"
  if ! inroot "cmake -S /src/gpustream -B /src/build-$k $cfg" >"$OUT/build-$k.log" 2>&1; then
    # a Kokkos CMake package naming files its package lacks: the headers and library directly
    grep -q "but this file does not exist" "$OUT/build-$k.log" || { say "$k: configure failed (build-$k.log)"; continue; }
    say "$k: Kokkos' CMake package names files it does not ship: -DCMAKE_DISABLE_FIND_PACKAGE_Kokkos=ON"
    rm -rf "$R/src/build-$k"
    cfg="$cfg -DCMAKE_DISABLE_FIND_PACKAGE_Kokkos=ON"
    inroot "cmake -S /src/gpustream -B /src/build-$k $cfg" >>"$OUT/build-$k.log" 2>&1 || { say "$k: configure failed (build-$k.log)"; continue; }
  fi
  inroot "cmake --build /src/build-$k -j$(nproc)" >>"$OUT/build-$k.log" 2>&1 || { say "$k: build failed (build-$k.log)"; tail -20 "$OUT/build-$k.log"; continue; }
  for t in $threads; do
    inroot "cd /src/build-$k && OMP_NUM_THREADS=$t ctest -j$(nproc) --timeout 600" >"$OUT/ctest-$k-$t.log" 2>&1 || true
    say "$k, $t thread(s): $(grep -E 'tests passed' "$OUT/ctest-$k-$t.log" || echo 'no ctest summary')"
    grep -E '^\s+[0-9]+ - ' "$OUT/ctest-$k-$t.log" | tee -a "$summary" || true
  done
done
