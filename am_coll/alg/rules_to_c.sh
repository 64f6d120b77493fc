#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Makes the C source that compiles the built-in tuning rules into libamcoll:
#   am_coll/alg/rules_to_c.sh am_coll/alg/tuning_builtin.rules OUT.c
# The rules stay one text, read by the same parser as AMC_TUNING_FILE
# (am_coll/alg/tuning.c), so the installed file and the library agree.
set -eu
in=$1
out=$2
{
    echo "/* Made from tuning_builtin.rules by am_coll/alg/rules_to_c.sh: edit that file. */"
    echo "#include \"am_coll/alg/tuning.h\""
    echo ""
    echo "const char amc_tuning_builtin_text[] ="
    sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/    "/' -e 's/$/\\n"/' "$in"
    echo "    \"\";"
} > "$out.tmp"
mv "$out.tmp" "$out"
