#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs the Debian 12 packages amcoll builds, tests and benchmarks with,
# if any is missing. Needs root (or sudo) only when something must be installed.
set -euo pipefail

# clang: the fuzz target (tests/fuzz/build.sh, libFuzzer) needs it;
# slurm-wlm, munge, iproute2: the emulated cluster (tests/cluster/);
# dpkg-dev, debhelper, chrpath, lintian: the Debian packages (debian/,
# tests/debian/run_packages.sh); mpich, libmpich-dev: libamcoll_mpich and
# its tests (mpicc.mpich, mpiexec.mpich), beside Open MPI
packages=(build-essential autoconf automake libtool pkg-config clang
          libucx-dev ucx-utils libpmix-dev openmpi-bin libopenmpi-dev gnuplot-nox
          slurm-wlm munge iproute2
          dpkg-dev debhelper chrpath lintian
          mpich libmpich-dev)

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

# mpirun, mpicc and MPI's include folder stay Open MPI's: the build and the
# tests take them so (MPICH's are mpicc.mpich, mpiexec.mpich). MPICH's
# alternatives rank below Open MPI's, but a choice made by hand or an
# install order can leave them on MPICH: set back, only where they are not.
keep_openmpi() {
    local name want now
    for name in mpirun mpi $(update-alternatives --get-selections 2>/dev/null |
                             awk '$1 ~ /^mpi-.*-linux-gnu/ {print $1}'); do
        want=$(update-alternatives --list "$name" 2>/dev/null | grep -m1 openmpi) || continue
        now=$(update-alternatives --query "$name" 2>/dev/null | sed -n 's/^Value: //p')
        if [ "$now" != "$want" ]; then
            echo "install-deps: alternative $name back to Open MPI's ($want, was ${now:-none})"
            $sudo update-alternatives --set "$name" "$want" >/dev/null
        fi
    done
}

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "install-deps: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq "${missing[@]}"
fi
keep_openmpi
