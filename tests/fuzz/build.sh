#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds the libFuzzer target fuzz_coll (tests/fuzz/fuzz_coll.c) in
# build-fuzz/ (or $AMC_FUZZ_BUILD_DIR), apart from the normal build: the
# library's sources (as Makefile.am lists them) and the fake transport are
# compiled with clang for AddressSanitizer + UBSan and coverage
# (-fsanitize=fuzzer-no-link), the target is linked with -fsanitize=fuzzer.
# No configure: the library needs no config.h, and skipping it keeps this
# step short enough for tests/run_all.sh. The library gets edge coverage
# without comparison tracing: the target builds headers field by field, so
# tracing the library's compares guided little and cost a third of each
# input. Needs clang (install-deps.sh installs it). Prints the binary's path.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out=${AMC_FUZZ_BUILD_DIR:-$top/build-fuzz}
cc=${AMC_FUZZ_CC:-clang}
jobs=$(nproc 2>/dev/null || echo 2)
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
cflags="-g -O1 -fno-omit-frame-pointer -std=gnu11 -Wall -Wextra -Werror $san"
cppflags="-I$top/include -I$top $(pkg-config --cflags ucx pmix)"

command -v "$cc" >/dev/null || { echo "fuzz/build.sh: $cc not found (apt-get install clang)" >&2; exit 1; }
cd "$top"
srcs=$(sed -n '/^libamcoll_la_SOURCES/,/^libamcoll_la_LIBADD/p' Makefile.am |
           tr ' \\\t' '\n\n\n' | grep '\.c$')
rm -rf "$out/obj"
mkdir -p "$out/obj"
# the built-in tuning rules, made as the build makes them
sh am_coll/alg/rules_to_c.sh am_coll/alg/tuning_builtin.rules "$out/obj/tuning_builtin.c"
srcs="$srcs transport/fake.c $out/obj/tuning_builtin.c"
# one object per source, flattened (am_coll/context/comm.c -> am_coll__comm.o)
# shellcheck disable=SC2086
printf '%s\n' $srcs | xargs -P "$jobs" -I{} sh -c \
    'o="$1/obj/$(echo "$2" | sed "s|/|__|g; s|\.c$|.o|")"; exec "$3" $4 $5 -fsanitize=fuzzer-no-link -fno-sanitize-coverage=trace-cmp -c "$2" -o "$o"' \
    sh "$out" {} "$cc" "$cflags" "$cppflags"
# shellcheck disable=SC2046,SC2086
"$cc" $cflags $cppflags -fsanitize=fuzzer -o "$out/fuzz_coll" \
    tests/fuzz/fuzz_coll.c tests/fuzz/fuzz_world.c tests/unit/harness.c "$out"/obj/*.o \
    $(pkg-config --libs ucx pmix) -lpthread
echo "$out/fuzz_coll"
