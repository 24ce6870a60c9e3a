#!/bin/bash
# Installs what building and testing need on Debian 12 (PETSc 3.18 with Open MPI, Kokkos and Kokkos-Kernels 3.4.1,
# PETSc's tutorials, CMake, a C/C++ compiler, Python). Skips apt-get when everything is there already. apt-get runs as
# root, or through sudo; without either it names the missing packages and fails.
set -euo pipefail
pkgs="petsc-dev libtrilinos-kokkos-dev libtrilinos-kokkos-kernels-dev libpetsc3.18-dev-examples cmake make g++ pkg-config python3"
missing=""
for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
[ -z "$missing" ] && exit 0
sudo=""
if [ "$(id -u)" != 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "install-deps.sh: these Debian packages are missing:$missing" >&2
    echo "install-deps.sh: installing them needs root or sudo, and sudo is not installed; as root, run" >&2
    echo "  apt-get update && apt-get install -y --no-install-recommends$missing" >&2
    exit 1
  fi
  sudo=sudo
fi
$sudo apt-get update -qq
# shellcheck disable=SC2086 # one word a package
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
