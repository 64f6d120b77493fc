#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The library's module graph and its circles.
#
# A module is a .c and the .h of the same stem in the same folder
# (am_coll/coll/coll_engine.c and a header of that stem, were there one, are
# one module: am_coll/coll/coll_engine). Module A depends on module B when a
# file of A
#   - includes a header of B ("B.h"), or
#   - names a function or variable that a file of B defines (an extern
#     definition in B.c, or a static inline one in B.h): a header that
#     declares what another .c defines hides that arrow, and this finds it.
# The strongly connected components of that graph (Tarjan) with more than
# one module are the circles: none of their modules can be read or changed
# alone.
#
#   tests/include_graph.sh            the circles; exit 1 if there is one
#   tests/include_graph.sh --edges    every arrow: "from to why"
#   tests/include_graph.sh --sccs     every component, one a line
# AMC_GRAPH_INCLUDES_ONLY=1 leaves out the arrows of use (includes alone).
# Folders read: base transport handlers ctrl am_coll (all depths), less the
# files the build generates.
set -u
src=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
[ -d "$src/am_coll" ] || src=$(cd "$src/.." && pwd)
cd "$src" || exit 1
mode=${1:-circles}

# Files the build makes (Makefile.am's BUILT_SOURCES), not sources: an
# in-tree build (./configure in this folder) leaves them beside the sources,
# where tuning_builtin.c, which includes tuning.h and defines the text
# tuning.c reads, would make a circle of two.
generated="am_coll/alg/tuning_builtin.c"
files=$(find base transport handlers ctrl am_coll -type f \( -name '*.c' -o -name '*.h' \) |
    grep -vxF -e "$generated" | LC_ALL=C sort)
if [ -z "$files" ] || [ ! -f am_coll/context/context.h ]; then
    echo "include_graph: no library sources under $(pwd)" >&2
    exit 2
fi

# shellcheck disable=SC2086
awk -v mode="$mode" -v inconly="${AMC_GRAPH_INCLUDES_ONLY:-0}" '
function modof(f,   m) { m = f; sub(/\.[ch]$/, "", m); return m }
function strip(s) {
    # comments (with the state kept across lines), strings, characters
    out = ""
    while (s != "") {
        if (incomment) {
            p = index(s, "*/")
            if (p == 0) return out
            s = substr(s, p + 2); incomment = 0
            continue
        }
        p = index(s, "/*"); q = index(s, "//")
        if (q > 0 && (p == 0 || q < p)) { s = substr(s, 1, q - 1); continue }
        if (p > 0) { out = out substr(s, 1, p - 1) " "; s = substr(s, p + 2); incomment = 1; continue }
        out = out s; s = ""
    }
    gsub(/\\./, "", out)
    gsub(/"[^"]*"/, "\"\"", out)
    gsub(/\047[^\047]*\047/, "0", out)
    return out
}
FNR == 1 {
    incomment = 0; depth = 0; pend = ""; nfiles++; file[nfiles] = FILENAME
    mod[FILENAME] = modof(FILENAME); ismod[modof(FILENAME)] = 1
    isc = (FILENAME ~ /\.c$/)
}
{
    raw = $0
    if (raw ~ /^[ \t]*#[ \t]*include[ \t]*"/) {
        t = raw; sub(/^[^"]*"/, "", t); sub(/".*/, "", t)
        inc[FILENAME, ++ninc[FILENAME]] = t
        next
    }
    if (raw ~ /^[ \t]*#/) next
    line = strip(raw)
    # what a file uses: the names inside braces (bodies, initialisers), not
    # the declarations at file level
    if (depth > 0 || line ~ /\{/) text[FILENAME] = text[FILENAME] " " line
    # definitions at file level: a function (up to its "{"), an extern variable
    if (depth == 0) {
        if (pend != "") {
            if (line ~ /\{/) { def[pend] = def[pend] ? def[pend] : mod[FILENAME]; pend = "" }
            else if (line ~ /;/) pend = ""
        } else if (line ~ /^[A-Za-z_]/ && line !~ /^(typedef|extern|struct [A-Za-z0-9_]+ *\{|union|enum)/) {
            inl = (line ~ /^static[ \t]+inline/ || line ~ /^static[ \t]+AMC_[A-Z_]*[ \t]+inline/)
            if ((isc && line !~ /^static/) || (!isc && inl)) {
                if (match(line, /[A-Za-z_][A-Za-z0-9_]*[ \t]*\(/)) {
                    name = substr(line, RSTART, RLENGTH); sub(/[ \t]*\($/, "", name)
                    rest = substr(line, RSTART + RLENGTH)
                    if (rest ~ /\{/) { if (!(name in def)) def[name] = mod[FILENAME] }
                    else if (rest !~ /;/) pend = name
                } else if (isc && match(line, /[A-Za-z_][A-Za-z0-9_]*[ \t]*(\[[^]]*\])*[ \t]*=/)) {
                    name = substr(line, RSTART, RLENGTH); sub(/[ \t]*(\[[^]]*\])*[ \t]*=$/, "", name)
                    if (!(name in def)) def[name] = mod[FILENAME]
                }
            }
        }
    }
    n = gsub(/\{/, "{", line); depth += n
    n = gsub(/\}/, "}", line); depth -= n
}
END {
    nm = 0
    for (i = 1; i <= nfiles; i++) {
        f = file[i]; m = mod[f]
        for (k = 1; k <= ninc[f]; k++) {
            t = modof(inc[f, k])
            if ((t in ismod) && t != m) addedge(m, t, "includes " inc[f, k] " (" f ")")
        }
        s = (inconly == 1) ? "" : text[f]; gsub(/[^A-Za-z0-9_]+/, " ", s)
        nt = split(s, tok, " ")
        for (k = 1; k <= nt; k++) {
            w = tok[k]
            if ((w in def) && def[w] != m && !((f, w) in seen)) {
                seen[f, w] = 1
                addedge(m, def[w], "uses " w " (" f ")")
            }
        }
    }
    if (mode == "--edges") {
        for (e in why) { split(e, pe, SUBSEP); print pe[1], pe[2], why[e] }
        exit 0
    }
    # Tarjan
    for (m in ismod) { mods[++nm] = m }
    idx = 0; sp = 0; ncomp = 0
    for (i = 1; i <= nm; i++) if (!(mods[i] in index_)) strong(mods[i])
    ncirc = 0
    for (c = 1; c <= ncomp; c++) {
        if (mode == "--sccs") print comp[c]
        else if (csize[c] > 1) { print "circle (" csize[c] " modules):" comp[c]; ncirc++ }
    }
    if (mode == "circles") {
        print "include_graph: " nm " modules, " nedges " arrows, " ncirc " circle(s)"
        exit ncirc > 0
    }
}
function addedge(a, b, w) {
    if (!((a, b) in why)) { why[a, b] = w; succ[a] = succ[a] " " b; nedges++ }
}
function strong(v,   i, n, ws, w, c) {
    index_[v] = idx; low[v] = idx; idx++
    stack[++sp] = v; onstack[v] = 1
    n = split(succ[v], ws, " ")
    for (i = 1; i <= n; i++) {
        w = ws[i]
        if (!(w in index_)) { strong(w); if (low[w] < low[v]) low[v] = low[w] }
        else if (onstack[w] && index_[w] < low[v]) low[v] = index_[w]
    }
    if (low[v] == index_[v]) {
        c = ++ncomp; comp[c] = ""; csize[c] = 0
        do { w = stack[sp--]; onstack[w] = 0; comp[c] = comp[c] " " w; csize[c]++ } while (w != v)
    }
}
' $files
