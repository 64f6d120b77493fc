#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs the Debian 12 packages amcoll builds, tests and benchmarks with,
# if any is missing. Needs root (or sudo) only when something must be installed.
set -euo pipefail

# clang: the fuzz target (tests/fuzz/build.sh, libFuzzer) needs it;
# slurm-wlm, munge, iproute2: the emulated cluster (tests/cluster/);
# dpkg-dev, debhelper, chrpath, lintian: the Debian packages (debian/,
# tests/debian/run_packages.sh)
packages=(build-essential autoconf automake libtool pkg-config clang
          libucx-dev ucx-utils libpmix-dev openmpi-bin libopenmpi-dev gnuplot-nox
          slurm-wlm munge iproute2
          dpkg-dev debhelper chrpath lintian)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq "${missing[@]}"
