#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The main job from a fresh checkout: installs what is missing, builds, and
# runs the barrier benchmark over 2-32 tasks (table on stdout, plot in
# bench/results/barrier.png).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/build.sh"
exec bash "$top/bench/run_barrier.sh" "$top/${AMC_BUILD_DIR:-build}/bench/barrier_bench"
