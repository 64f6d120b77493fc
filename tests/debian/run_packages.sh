#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The Debian packages (debian/): builds them from a clean copy of the tree
# (the files git tracks, and new ones it does not ignore: no build folders,
# nothing configured), checks them with lintian, installs them, uses them as
# a user would, and purges what it installed, so the machine is left as found.
#
#   bash tests/debian/run_packages.sh          (root, or sudo for apt-get)
#
# Checks: the changelog's version is configure.ac's; dpkg-buildpackage -b;
# lintian without errors; apt-get install of the .debs; pkg-config finds the
# installed amcoll.pc; a C program built with `gcc $(pkg-config --cflags
# --libs amcoll)` runs right under mpirun -np 2; amc_info and amc_goal run;
# an MPI program under LD_PRELOAD=libamcoll_mpi.so.0 runs right with its
# collectives routed; pkg-config finds amcoll_mpich.pc, and the same program
# built with mpicc.mpich runs right under mpiexec.mpich with
# LD_PRELOAD=libamcoll_mpich.so.0, its collectives routed; the component, when its package exists: listed by
# ompi_info, silent when not enabled, and with coll_amcoll_enable=1 takes
# MPI_COMM_WORLD, with no path option; the purge. Ends with
# "packages: N passed, N failed".
#
# Environment:
#   AMCTEST_DEB_JOBS   parallel build jobs (default: nproc)
#   AMCTEST_DEB_CHECK  1: the package build runs its quick unit tests too
#                      (default 0, DEB_BUILD_OPTIONS=nocheck: tests/run_all.sh
#                      ran them, and the whole suite, before this step)
#   AMCTEST_DEB_KEEP   1: keep the work folder (packages, logs) and print it
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
jobs=${AMCTEST_DEB_JOBS:-$(nproc 2>/dev/null || echo 2)}
LIMIT=120                                 # seconds for one mpirun
# the packages are what is tested: nothing of a build tree or a developer's
# own setup may be found instead
unset LD_LIBRARY_PATH LD_PRELOAD PKG_CONFIG_PATH OMPI_MCA_mca_base_component_path
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8

passed=0
failed=0
pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
finish() {
    echo "packages: ${passed} passed, ${failed} failed"
    [ "$failed" -eq 0 ]
    exit
}

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    if sudo -n true 2>/dev/null; then
        sudo="sudo"
    else
        fail "installing packages needs root or sudo"
        finish
    fi
fi
apt=(apt-get -y -q -o DPkg::Lock::Timeout=300)
[ -n "$sudo" ] && apt=(sudo "${apt[@]}")

start=$(date +%s)
work=$(mktemp -d "${TMPDIR:-/tmp}/amc_deb.XXXXXX") || exit 1
chmod 755 "$work"                         # apt's _apt user reads the .debs
installed=()                              # what this script installed: purged at exit
# shellcheck disable=SC2317  # run by the trap
cleanup() {
    if [ ${#installed[@]} -gt 0 ]; then
        "${apt[@]}" purge "${installed[@]}" >"$work/purge.log" 2>&1 ||
            { echo "run_packages: purge failed:"; tail -n 20 "$work/purge.log"; }
    fi
    if [ "${AMCTEST_DEB_KEEP:-0}" = 1 ]; then
        echo "run_packages: work folder kept: $work"
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# ---------------------------------------------------------------- version
ver=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version 2>/dev/null)
acver=$(sed -n 's/^AC_INIT(\[amcoll\], *\[\([^]]*\)\].*/\1/p' "$top/configure.ac")
if [ -n "$ver" ] && [ "$ver" = "$acver" ]; then
    pass "version: debian/changelog and configure.ac say $ver"
else
    fail "version: debian/changelog says '$ver', configure.ac '$acver'"
fi

# ---------------------------------------------------------------- build
src="$work/amcoll-${ver:-0}"
mkdir -p "$src"
if ! git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
    fail "copy: $top is not a git checkout"
    finish
fi
# tracked files and new ones git does not ignore, those that exist
( cd "$top" && git ls-files -z --cached --others --exclude-standard |
      while IFS= read -r -d '' f; do [ -f "$f" ] || [ -L "$f" ] && printf '%s\0' "$f"; done |
      tar --null -T - -cf - ) | tar -xf - -C "$src"
opts="parallel=$jobs"
[ "${AMCTEST_DEB_CHECK:-0}" = 1 ] || opts="nocheck $opts"
t0=$(date +%s)
if ( cd "$src" && DEB_BUILD_OPTIONS="$opts" timeout 1200 dpkg-buildpackage -us -uc -b ) \
       >"$work/build.log" 2>&1; then
    pass "dpkg-buildpackage -us -uc -b ($(( $(date +%s) - t0 )) s, DEB_BUILD_OPTIONS=\"$opts\")"
else
    fail "dpkg-buildpackage (last lines of its log follow)"
    tail -n 40 "$work/build.log"
    finish
fi
debs=()
for f in "$work"/*_"$ver"_*.deb; do
    case $f in *-dbgsym_*) ;; *) debs+=("$f") ;; esac
done
for f in "${debs[@]}"; do
    echo "    $(basename "$f"): $(dpkg-deb -c "$f" | awk '$1 !~ /^d/ { sub(/^\./, "", $6); printf "%s ", $6 }')"
    echo "        Depends: $(dpkg-deb -f "$f" Depends)"
done
# the component is built against Open MPI's internal headers: it must
# depend on the very release it was built with
compdeb=$(ls "$work"/openmpi-coll-amcoll_"$ver"_*.deb 2>/dev/null)
if [ -n "$compdeb" ]; then
    ompiver=$(dpkg-query -W -f='${Version}' libopenmpi-dev | sed -e 's/^[0-9]*://' -e 's/-[^-]*$//')
    if dpkg-deb -f "$compdeb" Depends | grep -qF "libopenmpi3 (<< $ompiver.1~)"; then
        pass "openmpi-coll-amcoll depends on Open MPI $ompiver, the release built against"
    else
        fail "openmpi-coll-amcoll: Depends has no libopenmpi3 (<< $ompiver.1~): $(dpkg-deb -f "$compdeb" Depends)"
    fi
fi

# ---------------------------------------------------------------- lintian
lintian --fail-on error --tag-display-limit 0 "$work"/amcoll_"$ver"_*.changes \
    >"$work/lintian.log" 2>&1; rc=$?
grep -v "running with root privileges" "$work/lintian.log" | sed 's/^/    /'
if [ $rc -eq 0 ]; then
    pass "lintian: no errors ($(grep -c '^W:' "$work/lintian.log") warnings)"
else
    fail "lintian: errors (above)"
fi

# ---------------------------------------------------------------- install
before=$(dpkg-query -W -f='${Package} ${db:Status-Status}\n' 2>/dev/null | awk '$2 == "installed" { print $1 }')
# what apt will install: the packages and any dependency not here yet
mapfile -t new < <("${apt[@]}" -s install "${debs[@]}" 2>/dev/null |
                   sed -n 's/^Inst \([^ ]*\) .*/\1/p' | grep -vxF -f <(echo "$before"))
for p in "${new[@]}"; do installed+=("${p%%:*}"); done
if "${apt[@]}" install "${debs[@]}" >"$work/install.log" 2>&1; then
    pass "apt-get install ${debs[*]##*/}"
else
    fail "apt-get install (last lines of its log follow)"
    tail -n 30 "$work/install.log"
    finish
fi

ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
libdir=/usr/lib/$ma
mpirun_args=(--oversubscribe --bind-to none)
[ "$(id -u)" -eq 0 ] && mpirun_args+=(--allow-run-as-root)
cd "$work" || exit 1

# runs mpirun -np 2 with ARGS..., output in $work/NAME.log
mpi2() {
    local name=$1
    shift
    timeout -k 10 "$LIMIT" mpirun "${mpirun_args[@]}" -np 2 "$@" </dev/null >"$name.log" 2>&1
}
show() { sed 's/^/    /' "$1" | tail -n "${2:-20}"; }

# ---------------------------------------------------------------- pkg-config, C
pcver=$(pkg-config --modversion amcoll 2>&1)
pcdir=$(pkg-config --variable=pcfiledir amcoll 2>&1)
if [ "$pcver" = "$ver" ] && [ "$pcdir" = "$libdir/pkgconfig" ]; then
    pass "pkg-config --modversion amcoll: $pcver (from $pcdir)"
else
    fail "pkg-config amcoll: version '$pcver' from '$pcdir' (wanted $ver from $libdir/pkgconfig)"
fi

cat >amc_sum.c <<'EOF'
#include <amcoll.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, v, sum = -1, rc;

    if ((rc = amc_init(&argc, &argv)) != AMC_SUCCESS) {
        fprintf(stderr, "amc_init: %s\n", amc_strerror(rc));
        return 1;
    }
    amc_comm_rank(AMC_COMM_WORLD, &rank);
    amc_comm_size(AMC_COMM_WORLD, &size);
    v  = rank + 1;
    rc = amc_allreduce(&v, &sum, 1, AMC_INT, AMC_SUM, AMC_COMM_WORLD);
    if (rc == AMC_SUCCESS) {
        rc = amc_barrier(AMC_COMM_WORLD);
    }
    printf("rank %d of %d: sum %d %s\n", rank, size, sum,
           (rc == AMC_SUCCESS && sum == size * (size + 1) / 2) ? "ok" : "WRONG");
    return amc_finalize() == AMC_SUCCESS && rc == AMC_SUCCESS ? 0 : 1;
}
EOF
# shellcheck disable=SC2046
if gcc -Wall -Werror -o amc_sum amc_sum.c $(pkg-config --cflags --libs amcoll) >cc.log 2>&1 &&
   [ "$(readlink -f "$(ldd ./amc_sum | awk '$1 == "libamcoll.so.0" { print $3 }')")" = \
     "$(readlink -f "$libdir/libamcoll.so.0")" ]; then
    if mpi2 amc_sum ./amc_sum && [ "$(grep -c 'sum 3 ok$' amc_sum.log)" = 2 ]; then
        pass "a C program (gcc \$(pkg-config --cflags --libs amcoll)) under mpirun -np 2"
    else
        fail "a C program under mpirun -np 2: wrong or no answer"
        show amc_sum.log
    fi
else
    fail "a C program: does not build against the installed packages"
    show cc.log
    ldd ./amc_sum 2>&1 | sed 's/^/    /'
fi

# ---------------------------------------------------------------- tools
if amc_info >amc_info.log 2>&1 && grep -q AMC_LOG_LEVEL amc_info.log &&
   amc_goal check "$src/tests/goal/recdbl_allreduce_8.goal" >amc_goal.log 2>&1; then
    pass "amc_info, amc_goal check ($(command -v amc_info), $(command -v amc_goal))"
else
    fail "amc_info or amc_goal"
    show amc_info.log 5
    show amc_goal.log 5
fi

# ---------------------------------------------------------------- MPI programs
cat >mpi_colls.c <<'EOF'
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, v, sum = -1, root_val = -1, all[64], i, ok;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    v = rank + 1;
    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == size - 1) {
        root_val = 42;
    }
    MPI_Bcast(&root_val, 1, MPI_INT, size - 1, MPI_COMM_WORLD);
    MPI_Allgather(&v, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    ok = (sum == size * (size + 1) / 2) && (root_val == 42) && (size <= 64);
    for (i = 0; ok && i < size; i++) {
        ok = (all[i] == i + 1);
    }
    printf("rank %d of %d: %s\n", rank, size, ok ? "mpi ok" : "mpi WRONG");
    MPI_Finalize();
    return ok ? 0 : 1;
}
EOF
if ! mpicc -Wall -Werror -o mpi_colls mpi_colls.c >mpicc.log 2>&1; then
    fail "an MPI program: mpicc failed"
    show mpicc.log
fi

shim=$(dpkg -L libamcoll-mpi0 2>/dev/null | grep '/libamcoll_mpi\.so\.0$')
# the routed count at MPI_Finalize (AMCOLL_MPI_STATS, coll_amcoll_verbose)
routed() { sed -n "s|^$1 stats rank 0: on; routed \([0-9]*\),.*|\1|p" "$2" | head -1; }
if [ -x mpi_colls ] && [ -n "$shim" ] &&
   mpi2 preload -x LD_PRELOAD="$shim" -x AMCOLL_MPI_STATS=1 ./mpi_colls &&
   [ "$(grep -c 'mpi ok$' preload.log)" = 2 ] && [ "$(routed amcoll_mpi preload.log)" -gt 0 ] 2>/dev/null; then
    pass "an MPI program under LD_PRELOAD=$shim ($(routed amcoll_mpi preload.log) collectives routed on rank 0)"
else
    fail "an MPI program under LD_PRELOAD=${shim:-(libamcoll_mpi.so.0 not installed)}"
    [ -f preload.log ] && show preload.log
fi

# ---------------------------------------------------------------- MPICH
# libamcoll_mpich: the same program built against MPICH, under its Hydra
# (no PMIx server: amcoll starts by MPI's own exchange)
pcver=$(pkg-config --modversion amcoll_mpich 2>&1)
pcdir=$(pkg-config --variable=pcfiledir amcoll_mpich 2>&1)
if [ "$pcver" = "$ver" ] && [ "$pcdir" = "$libdir/pkgconfig" ]; then
    pass "pkg-config --modversion amcoll_mpich: $pcver (from $pcdir)"
else
    fail "pkg-config amcoll_mpich: version '$pcver' from '$pcdir' (wanted $ver from $libdir/pkgconfig)"
fi
if ! mpicc.mpich -Wall -Werror -o mpi_colls_mpich mpi_colls.c >mpicc_mpich.log 2>&1 ||
   ! ldd ./mpi_colls_mpich | grep -q 'libmpich\.so\.12 '; then
    fail "an MPICH program: mpicc.mpich failed, or the program is not linked with libmpich.so.12"
    show mpicc_mpich.log
    rm -f mpi_colls_mpich
fi
shim_mpich=$(dpkg -L libamcoll-mpich0 2>/dev/null | grep '/libamcoll_mpich\.so\.0$')
if [ -x mpi_colls_mpich ] && [ -n "$shim_mpich" ] &&
   timeout -k 10 "$LIMIT" mpiexec.mpich -n 2 -genv LD_PRELOAD="$shim_mpich" \
       -genv AMCOLL_MPI_STATS=1 ./mpi_colls_mpich </dev/null >preload_mpich.log 2>&1 &&
   [ "$(grep -c 'mpi ok$' preload_mpich.log)" = 2 ] &&
   [ "$(routed amcoll_mpich preload_mpich.log)" -gt 0 ] 2>/dev/null; then
    pass "an MPICH program under mpiexec.mpich, LD_PRELOAD=$shim_mpich ($(routed amcoll_mpich preload_mpich.log) collectives routed on rank 0)"
else
    fail "an MPICH program under mpiexec.mpich, LD_PRELOAD=${shim_mpich:-(libamcoll_mpich.so.0 not installed)}"
    [ -f preload_mpich.log ] && show preload_mpich.log
fi

# ---------------------------------------------------------------- component
if ! dpkg-query -W -f='${db:Status-Status}' openmpi-coll-amcoll 2>/dev/null | grep -qx installed; then
    echo "SKIP: the Open MPI component (no openmpi-coll-amcoll package built)"
else
    comp=$(dpkg -L openmpi-coll-amcoll | grep '/mca_coll_amcoll\.so$')
    if ompi_info --param coll amcoll --level 9 2>&1 | grep -q coll_amcoll_enable; then
        pass "ompi_info --param coll amcoll lists it ($comp)"
    else
        fail "ompi_info --param coll amcoll: coll_amcoll_enable not listed ($comp)"
    fi
    if mpi2 comp_off --mca coll_amcoll_verbose 1 ./mpi_colls &&
       [ "$(grep -c 'mpi ok$' comp_off.log)" = 2 ] && ! grep -q "took communicator" comp_off.log; then
        pass "the component not enabled: the program runs, nothing taken"
    else
        fail "the component not enabled"
        show comp_off.log
    fi
    if mpi2 comp_on --mca coll_amcoll_enable 1 --mca coll_amcoll_verbose 1 ./mpi_colls &&
       [ "$(grep -c 'mpi ok$' comp_on.log)" = 2 ] &&
       grep -q "took communicator MPI_COMM_WORLD" comp_on.log &&
       [ "$(routed coll/amcoll comp_on.log)" -gt 0 ] 2>/dev/null; then
        pass "mpirun --mca coll_amcoll_enable 1 (no path option): MPI_COMM_WORLD taken, $(routed coll/amcoll comp_on.log) collectives routed on rank 0"
    else
        fail "mpirun --mca coll_amcoll_enable 1: the component not taken or a wrong answer"
        show comp_on.log
    fi
fi

# ---------------------------------------------------------------- purge
cd "$top" || exit 1
if "${apt[@]}" purge "${installed[@]}" >"$work/purge.log" 2>&1; then
    left=$(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${installed[@]}" 2>/dev/null |
           awk '$2 != "not-installed" { print $1 }')
    if [ -z "$left" ]; then
        pass "apt-get purge of what was installed (${installed[*]})"
    else
        fail "purge: still installed: $left"
    fi
    installed=()
else
    fail "apt-get purge (last lines of its log follow)"
    tail -n 20 "$work/purge.log"
fi
echo "run_packages: $(( $(date +%s) - start )) s"
finish
