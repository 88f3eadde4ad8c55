#!/usr/bin/env bash
# layers — the include rules of the source tree, checked from the
# `#include "…"` lines alone.
#
#   tests/layers.sh [ROOT]     exit 0 when every finding is allow-listed
#
# The rules (REDESIGN's layout):
#   front    core/ includes no curses, tui/ or views/ header; views/ no tui/;
#            tui/cli/ no curses; tui/workbench/ no tui/cli/.
#   facade   tui/ and views/ see core through core/loop.h and the base and
#            values layers only.
#   up       a core module includes nothing from a layer above its own
#            (the table below: base → values → formats → resources →
#            evidence → workspace → borrowers → engine).
#   cycle    no two modules include each other, directly or around a
#            circle.  A module is a file name without its extension, with
#            a private part (store_sql.h, loop_core.h, guards_loop.c)
#            counted with the module its prefix names in the same folder.
#
# Findings print one a line, "RULE FILE -> HEADER" or "cycle: M1 M2 …".
# tests/layers.allow lists today's exceptions in the same words; a finding
# not in it fails, and so does an entry that no longer finds anything (the
# list only shrinks: delete the line).
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
allow=${LAYERS_ALLOW:-$root/tests/layers.allow}
cd "$root" || exit 2

core_layers='
base       err sb fault buildid closest vis mdtable fsutil jsonw hash expr gatecfg
values     model stats rules
formats    assets contract optlog traps dispatch patset parse lint pyscan flaref slurm roofline flashape flabackend
resources  store vcs gitshow runner alloc probe probestep
evidence   measure chart
workspace  workspace
borrowers  guards report session run
engine     loop demo watch
'

files=$(find core views tui -name '*.[ch]' 2>/dev/null | LC_ALL=C sort)
[ -n "$files" ] || { echo "layers: no sources under $root" >&2; exit 2; }

# One line per include: FILE<TAB>HEADER (quoted includes) or
# FILE<TAB><HEADER> (system includes).
edges=$(for f in $files; do
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*\(["<][^">]*[">]\).*/\1/p' "$f" |
		while IFS= read -r h; do printf '%s\t%s\n' "$f" "$h"; done
done)

findings=$(printf '%s\n' "$edges" | LC_ALL=C awk -F'\t' -v layers="$core_layers" -v files="$files" '
function module(p,    d, b, n, pre) {
	sub(/\.[ch]$/, "", p)
	n = split(p, parts, "/"); b = parts[n]
	d = substr(p, 1, length(p) - length(b))
	if (index(b, "_") > 1) {
		pre = substr(b, 1, index(b, "_") - 1)
		if ((d pre ".c") in exists || (d pre ".h") in exists) return d pre
	}
	return p
}
function curses(h) { return h ~ /^<n?cursesw?\/?[a-z]*\.h>$/ || h ~ /^<(ncurses|curses|panel|menu|form)\.h>$/ }
BEGIN {
	nf = split(files, fl, "\n"); for (i = 1; i <= nf; i++) exists[fl[i]] = 1
	nl = split(layers, ll, "\n"); rank = 0
	for (i = 1; i <= nl; i++) {
		if ((nw = split(ll[i], w, " ")) < 2) continue
		rank++; name[rank] = w[1]
		for (j = 2; j <= nw; j++) layer["core/" w[j]] = rank
	}
}
$1 != "" {
	f = $1; h = $2
	if (h ~ /^</) {
		if (curses(h) && (f ~ /^core\// || f ~ /^tui\/cli\//))
			print "front " f " -> " h
		next
	}
	gsub(/"/, "", h)
	if (f ~ /^core\// && h ~ /^(tui|views)\//) print "front " f " -> " h
	if (f ~ /^views\// && h ~ /^tui\//) print "front " f " -> " h
	if (f ~ /^tui\/workbench\// && h ~ /^tui\/cli\//) print "front " f " -> " h
	mf = module(f); mh = module(h)
	if (f ~ /^(tui|views)\// && h ~ /^core\// && h != "core/loop.h" && layer[mh] > 2)
		print "facade " f " -> " h
	if (f ~ /^core\// && h ~ /^core\//) {
		if (!(mf in layer)) print "unlisted " mf " (add it to a layer in tests/layers.sh)"
		else if (mh in layer && layer[mh] > layer[mf])
			print "up " f " -> " h " (" name[layer[mf]] " includes " name[layer[mh]] ")"
	}
	if (mf != mh && !((mf, mh) in edge)) { edge[mf, mh] = 1; out[mf] = out[mf] " " mh; mods[mf]; mods[mh] }
}
END {
	# reach[a, b]: b can be reached from a; a cycle is a set of modules
	# that reach each other.
	for (a in mods) {
		delete seen; qn = 0; q[++qn] = a; head = 1
		while (head <= qn) {
			v = q[head++]; k = split(out[v], nx, " ")
			for (i = 1; i <= k; i++) if (!(nx[i] in seen)) { seen[nx[i]]; reach[a, nx[i]] = 1; q[++qn] = nx[i] }
		}
	}
	for (a in mods) {
		if (a in done || !((a, a) in reach)) continue
		list = ""
		for (b in mods) if ((a, b) in reach && (b, a) in reach) { done[b]; list = list " " b }
		print "cycle:" list
	}
}' | while IFS= read -r line; do
	case $line in
	cycle:*) printf 'cycle:%s\n' "$(printf '%s\n' ${line#cycle:} | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//; s/^/ /')" ;;
	*) printf '%s\n' "$line" ;;
	esac
done | LC_ALL=C sort -u)

allowed=$(sed -e 's/[[:space:]]*#.*//' -e '/^[[:space:]]*$/d' "$allow" 2>/dev/null | LC_ALL=C sort -u)
rc=0
new=$(LC_ALL=C comm -23 <(printf '%s\n' "$findings" | sed '/^$/d') <(printf '%s\n' "$allowed" | sed '/^$/d'))
stale=$(LC_ALL=C comm -13 <(printf '%s\n' "$findings" | sed '/^$/d') <(printf '%s\n' "$allowed" | sed '/^$/d'))
if [ -n "$new" ]; then
	echo "layers: include rules broken (fix the include, or move the code to the layer it belongs to):"
	printf '%s\n' "$new" | sed 's/^/  /'
	rc=1
fi
if [ -n "$stale" ]; then
	echo "layers: allow-listed exceptions that no longer happen (delete them from ${allow#"$root"/}):"
	printf '%s\n' "$stale" | sed 's/^/  /'
	rc=1
fi
n=$(printf '%s\n' "$allowed" | sed '/^$/d' | wc -l)
[ $rc = 0 ] && echo "layers: ok ($(printf '%s\n' "$files" | wc -l) files, $n allow-listed exceptions)"
exit $rc
