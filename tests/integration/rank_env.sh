#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs $AMCTEST_WRAPPED with environment that depends on the rank, for tests
# of ranks whose configuration differs (mpirun's -x gives every rank the
# same). The rank comes from Open MPI or PMIx.
#
#   AMCTEST_WRAPPED    the program (its arguments are this script's)
#   AMCTEST_ODD_RANK   the rank that gets AMCTEST_ODD_ENV (default 1)
#   AMCTEST_ODD_ENV    VAR=VALUE words for that rank
#   AMCTEST_OTHER_ENV  VAR=VALUE words for every other rank
rank=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-0}}
if [ -z "${AMCTEST_WRAPPED:-}" ]; then
    echo "rank_env.sh: AMCTEST_WRAPPED is not set" >&2
    exit 2
fi
if [ "$rank" = "${AMCTEST_ODD_RANK:-1}" ]; then
    words=${AMCTEST_ODD_ENV:-}
else
    words=${AMCTEST_OTHER_ENV:-}
fi
# shellcheck disable=SC2086 # the words are a list of VAR=VALUE
exec env $words "$AMCTEST_WRAPPED" "$@"
