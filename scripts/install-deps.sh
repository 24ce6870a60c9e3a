#!/bin/bash
# Installs what building and testing need on Debian 12 (PETSc 3.18 with Open MPI, Kokkos and Kokkos-Kernels 3.4.1,
# PETSc's tutorials, CMake, a C/C++ compiler, Python). Skips apt-get when everything is there already.
set -euo pipefail
pkgs="petsc-dev libtrilinos-kokkos-dev libtrilinos-kokkos-kernels-dev libpetsc3.18-dev-examples cmake make g++ pkg-config python3"
missing=""
for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
[ -z "$missing" ] && exit 0
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
