#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds amcoll out of tree in build/ (or $AMC_BUILD_DIR) with
# -Wall -Wextra -Werror, after installing whatever Debian packages are missing.
# Extra arguments go to configure. Used by tests/run_all.sh and bench/run_all.sh.
set -euo pipefail

top=$(cd "$(dirname "$0")" && pwd)
cd "$top"
builddir=${AMC_BUILD_DIR:-build}

./install-deps.sh
if [ -f Makefile ] && [ -f config.status ]; then
    echo "build.sh: this checkout was configured in place; run 'make distclean' first" >&2
    exit 1
fi
[ -x configure ] || ./autogen.sh >/dev/null
mkdir -p "$builddir"
cd "$builddir"
[ -f Makefile ] || "$top/configure" --enable-werror "$@" >/dev/null
make -j"$(nproc 2>/dev/null || echo 2)" >/dev/null
echo "build.sh: built in $top/$builddir"
