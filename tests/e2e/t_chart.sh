#!/usr/bin/env bash
# The bench-per-iteration chart on the demo: `optloop chart` draws it with
# cairo as SVG and PNG (the SVG opened by a real renderer, rsvg-convert, and
# compared with cairo's own PNG pixel by pixel; points, the best line, the
# noise band, and the failed and dropped marks on the x axis found by their
# colours and places), --shape picks one measured shape or says which exist,
# an empty log is said; `report pr` and `report final` carry the same series
# as a Mermaid xychart block, one value per iteration with a number.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/confirm_lib.sh"

export DEMO_BENCH_WARMUP_MS=1 DEMO_BENCH_REP_MS=1
jget() {
	python3 -c 'import json,sys
v=json.load(sys.stdin)
for k in sys.argv[1].split("."):
    v=v[int(k)] if isinstance(v,list) else v[k]
print(" ".join(map(str,v)) if isinstance(v,list) else ("null" if v is None else v))' "$1"
}
reps() { sed -i "s/rep < [0-9]*;/rep < $1;/" "$kernel"; }

# The kernel computes everything 4 times over: 3 is a real 1.33x win that
# confirm_bench times by the repetition count, so confirm holds under load.
confirm_workspace 4 "every shape at least 1.2x"

# ---- usage and an empty log --------------------------------------------------
out=$("$OPTLOOP" chart 2>&1); rc=$?
t_is "chart without an output is a usage error (exit 2)" "$rc" 2
t_like "saying what to give" "$out" 'say where to draw it: --svg FILE or --png FILE'
t_exit "two outputs on standard output are a usage error" 2 "$OPTLOOP" chart --svg - --png -
out=$("$OPTLOOP" chart --svg "$T_TMP/empty.svg" 2>&1); rc=$?
t_is "a log with no rows: nothing to chart (exit 3)" "$rc" 3
t_like "said, with the step to take" "$out" \
	'nothing to chart yet: .*OPT_LOG.md has no rows \(measure the baseline first: optloop verify'
t_ok "and no file is written" test ! -e "$T_TMP/empty.svg"

# ---- a short loop: baseline, a failed gate, a confirmed keep, a revert --------
"$OPTLOOP" verify >/dev/null 2>&1
"$OPTLOOP" log --direction baseline --commit >/dev/null
sed -i 's/ot\[j\] += a \* vs\[j\];/ot[j] += 2 * a * vs[j];/' "$kernel"
t_exit "iteration 1 fails the gate" 1 "$OPTLOOP" verify
"$OPTLOOP" log --direction "double the intra-chunk term" --status drop --commit >/dev/null
reps 3
"$OPTLOOP" verify >/dev/null 2>&1
t_exit "iteration 2 is a confirmed win" 0 "$OPTLOOP" confirm
"$OPTLOOP" log --direction "3 repetitions" --status keep --commit >/dev/null
sed -i 's|/\* Tokens per chunk|/* Tokens per chunk:|' "$kernel"
"$OPTLOOP" verify >/dev/null 2>&1
"$OPTLOOP" log --direction "a comment" --status revert --commit >/dev/null
t_is "four rows, iteration 2 the best" "$("$OPTLOOP" status --json | jget best.iter)" 2

# ---- the series, from the engine ---------------------------------------------
j=$("$OPTLOOP" chart --json)
t_is "chart --json: each row's kind" "$(printf '%s' "$j" | python3 -c 'import json,sys
print(" ".join(r["kind"] for r in json.load(sys.stdin)["rows"]))')" "base failed keep dropped"
t_is "only the rows that may be the best are points" "$(printf '%s' "$j" | python3 -c 'import json,sys
print(" ".join(str(r["iter"]) for r in json.load(sys.stdin)["rows"] if r["point"]))')" "0 2"
t_is "the best so far is the baseline, then the keep (not the reverted row)" \
	"$(printf '%s' "$j" | python3 -c 'import json,sys
r=json.load(sys.stdin)["rows"]; b=[x["best_ms"] for x in r]
print("ok" if b[0]==b[1]==r[0]["ms"] and b[2]==b[3]==r[2]["ms"] else b)')" ok
t_is "the best and its noise band around it" "$(printf '%s' "$j" | python3 -c 'import json,sys
j=json.load(sys.stdin); lo,hi=j["band"]
print(j["best"]["iter"], lo < j["best"]["ms"] < hi)')" "2 True"

# ---- SVG and PNG --------------------------------------------------------------
out=$("$OPTLOOP" chart --svg "$T_TMP/c.svg" --png "$T_TMP/c.png" 2>&1); rc=$?
t_is "chart --svg --png exits 0" "$rc" 0
t_like "and says what it wrote" "$out" "wrote $T_TMP/c.svg \\(SVG, 960x540\\)"
t_like "the SVG is 960x540 px" "$(head -c 400 "$T_TMP/c.svg")" 'width="960px" height="540px"'
t_ok "rsvg-convert renders the SVG" rsvg-convert -o "$T_TMP/r.png" "$T_TMP/c.svg"
cat >"$T_TMP/png.py" <<'PY'
# Read 8-bit RGB(A) PNGs without a library: IHDR, IDAT, the five filters.
import struct, sys, zlib
def read(path):
    d = open(path, "rb").read()
    assert d[:8] == b"\x89PNG\r\n\x1a\n", path + ": not a PNG"
    pos, idat = 8, b""
    while pos < len(d):
        n, typ = struct.unpack(">I4s", d[pos:pos + 8])
        body = d[pos + 8:pos + 8 + n]
        pos += 12 + n
        if typ == b"IHDR":
            w, h, depth, ctype, _, _, inter = struct.unpack(">IIBBBBB", body)
        elif typ == b"IDAT":
            idat += body
    assert depth == 8 and ctype in (2, 6) and inter == 0, (depth, ctype, inter)
    bpp = 4 if ctype == 6 else 3
    raw, stride, rows, prev, i = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp), 0
    for _ in range(h):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1: line[x] = (line[x] + a) & 255
            elif f == 2: line[x] = (line[x] + b) & 255
            elif f == 3: line[x] = (line[x] + ((a + b) >> 1)) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, bpp)])
        prev = line
    return w, h, rows
PY
size() { python3 -c 'import struct,sys; d=open(sys.argv[1],"rb").read(24); print("%dx%d" % struct.unpack(">II", d[16:24]))' "$1"; }
t_is "cairo's PNG is 960x540 (IHDR)" "$(size "$T_TMP/c.png")" 960x540
t_is "the rendered SVG is 960x540 too" "$(size "$T_TMP/r.png")" 960x540
# Text is hinted in cairo's PNG and drawn from outlines by rsvg, so glyph
# edges differ by a pixel; the plot inside the axes (well within 84..928 x
# 80..436 of the 960x540 layout) holds no text and must match exactly.
t_is "the rendered SVG is the same picture as cairo's PNG" "$(python3 - "$T_TMP" <<'PY'
import sys; sys.path.insert(0, sys.argv[1]); import png
_, _, a = png.read(sys.argv[1] + "/c.png"); _, _, b = png.read(sys.argv[1] + "/r.png")
diff = n = far = 0
for y, (ra, rb) in enumerate(zip(a, b)):
    for x, (pa, pb) in enumerate(zip(ra, rb)):
        d = max(abs(pa[k] - pb[k]) for k in range(3)); diff += d; n += 1
        far += d > 64 and 100 <= x < 900 and 90 <= y < 420
print("ok" if diff / n < 3 and far == 0 else "mean difference %.2f, %d pixels apart in the plot" % (diff / n, far))
PY
)" ok
# Where each kind of thing is: colours in the plot (the legend below it left out).
cat >"$T_TMP/find.py" <<'PY'
import sys; sys.path.insert(0, sys.argv[1]); import png
w, h, rows = png.read(sys.argv[2])
kinds = {
    "point": lambda r, g, b: r < 80 and 70 < g < 140 and b > 180,
    "best": lambda r, g, b: r < 90 and g > 120 and b < 100,
    "band": lambda r, g, b: abs(r - 216) < 8 and abs(g - 237) < 8 and abs(b - 221) < 8,
    "failed": lambda r, g, b: r > 170 and g < 80 and b < 80,
    "dropped": lambda r, g, b: r > 190 and 100 < g < 180 and b < 60,
}
found = {k: [] for k in kinds}
for y in range(60, int(h * 0.88)):
    for x, (r, g, b) in enumerate(rows[y]):
        for k, f in kinds.items():
            if f(r, g, b): found[k].append((x, y))
for k, v in found.items():
    if v:
        xs = sorted(p[0] for p in v)
        print(k, len(v), sum(xs) / len(xs), sum(p[1] for p in v) / len(v), xs[0], xs[-1])
    else:
        print(k, 0)
PY
python3 "$T_TMP/find.py" "$T_TMP" "$T_TMP/r.png" >"$T_TMP/found" 2>&1
at() { awk -v k="$1" -v f="$2" '$1 == k { print $f }' "$T_TMP/found"; }
gt() { python3 -c 'import sys; print(float(sys.argv[1]) > float(sys.argv[2]))' "$1" "$2"; }
for k in point best band failed dropped; do
	t_is "the rendered chart shows the $k" "$(gt "$(at $k 2)" 20)" True
done
# The points of iterations 0 and 2 are blue pixels at the left and at the
# right of the failed mark (iteration 1); the dropped mark (iteration 3) is
# right of them all; both marks sit on the x axis, below every point.
t_is "the failed mark lies between the baseline and the keep" \
	"$(gt "$(at failed 3)" "$(at point 5)") $(gt "$(at point 6)" "$(at failed 3)")" "True True"
t_is "the dropped mark comes after the keep" "$(gt "$(at dropped 3)" "$(at point 6)")" True
t_is "both marks are on the x axis, below the points" \
	"$(gt "$(at failed 4)" "$(at point 4)") $(gt "$(at dropped 4)" "$(at point 4)")" "True True"
t_is "the two marks are at one height" \
	"$(python3 -c 'import sys; print(abs(float(sys.argv[1]) - float(sys.argv[2])) < 3)' "$(at failed 4)" "$(at dropped 4)")" True
t_like "the SVG holds its labels as glyph outlines" \
	"$(grep -c '<use xlink:href="#glyph' "$T_TMP/c.svg") $(grep -c '<symbol overflow="visible" id="glyph' "$T_TMP/c.svg")" \
	'^[1-9][0-9]{2,} [2-9][0-9]$'
svg=$("$OPTLOOP" chart --svg - 2>/dev/null)
t_like "--svg - writes the SVG on standard output" "$svg" '^<\?xml version'
t_like "all of it" "$(printf '%s' "$svg" | tail -n 1)" '</svg>'

# ---- one shape ------------------------------------------------------------------
out=$("$OPTLOOP" chart --shape B=8 --svg "$T_TMP/s.svg" 2>&1); rc=$?
t_is "an unknown shape is a usage error (exit 2)" "$rc" 2
t_like "naming the measured shapes" "$out" \
	"--shape 'B=8' was never measured; the measured shapes are 'fwd B=2 T=512 H=4 D=64', 'fwd B=1 T=1024 H=2 D=128', 'fwd B=4 T=512 H=4 D=32'"
t_like "words that are no shape are said to be so" "$("$OPTLOOP" chart --shape huge --png "$T_TMP/s.png" 2>&1)" \
	"'huge' is not a shape: name one of the measured shapes"
t_like "a shape that names two asks for one" "$("$OPTLOOP" chart --shape T=512 --png "$T_TMP/s.png" 2>&1)" \
	"'T=512' matches 2 measured shapes, 'fwd B=2 T=512 H=4 D=64', 'fwd B=4 T=512 H=4 D=32': name one"
t_ok "no file for a bad shape" test ! -e "$T_TMP/s.png"
j=$("$OPTLOOP" chart --shape B2-T512-H4-D64 --json --png "$T_TMP/s.png" 2>/dev/null)
t_is "a Target's spelling picks the shape" "$(printf '%s' "$j" | jget shape)" "fwd B=2 T=512 H=4 D=64"
t_is "its times are the verify runs' samples of that shape" "$(printf '%s' "$j" | python3 -c '
import json, sqlite3, sys
j = json.load(sys.stdin)
db = sqlite3.connect("profile/chunk_linear_attn-opt/optloop.db")
want = {it: ms for it, ms in db.execute("SELECT i.iter, COALESCE(s.new_ms, s.base_ms) FROM iterations i JOIN samples s ON s.run_id = i.run_id "
                                       "WHERE s.B = 2 AND s.T = 512 AND s.H = 4 AND s.D = 64")}
got = {r["iter"]: r["ms"] for r in j["rows"] if r["ms"] is not None}
print("ok" if got == want and len(got) == 3 else (got, want))')" ok
t_is "the per-shape PNG is 960x540" "$(size "$T_TMP/s.png")" 960x540

# ---- the Mermaid block of report pr and report final -----------------------------
cat >"$T_TMP/mermaid.py" <<'PY'
# The fenced xychart block read as Mermaid's grammar has it, against the rows.
import json, re, sqlite3, sys
md = sys.stdin.read()
blocks = re.findall(r"```mermaid\n(.*?)```\n", md, re.S)
bad = []
if len(blocks) != 1: sys.exit("%d mermaid blocks" % len(blocks))
lines = blocks[0].rstrip("\n").split("\n")
NUM = r"[+-]?(?:\d+(?:\.\d+)?|\.\d+)"
def items(line, head, item):
    m = re.fullmatch(re.escape(head) + r"\[(.*)\]", line)
    if not m: bad.append("not a list: " + line); return []
    v = [t.strip() for t in m.group(1).split(",")]
    for t in v:
        if not re.fullmatch(item, t): bad.append("bad item %r in %s" % (t, head))
    return v
if lines[0] != "xychart-beta": bad.append("first line " + lines[0])
cats = bars = line = None
for ln in lines[1:]:
    if not ln.startswith("    "): bad.append("not indented: " + ln); continue
    ln = ln[4:]
    if ln.startswith("title "):
        if not re.fullmatch(r'title "[^"]*"', ln): bad.append(ln)
    elif ln.startswith("x-axis "): cats = [int(t.strip('"')) for t in items(ln, 'x-axis "iteration" ', r'"\d+"')]
    elif ln.startswith("y-axis "):
        m = re.fullmatch(r'y-axis "ms" (%s) --> (%s)' % (NUM, NUM), ln)
        if not m: bad.append(ln)
        else: lo, hi = float(m.group(1)), float(m.group(2))
    elif ln.startswith("bar "): bars = [float(t) for t in items(ln, "bar ", NUM)]
    elif ln.startswith("line "): line = [float(t) for t in items(ln, "line ", NUM)]
    else: bad.append("unknown line: " + ln)
db = sqlite3.connect("profile/chunk_linear_attn-opt/optloop.db")
rows = list(db.execute("SELECT iter, bench_ms FROM iterations ORDER BY iter"))
want = [(i, ms) for i, ms in rows if ms is not None]
if cats != [i for i, _ in want]: bad.append("categories %s" % cats)
if not bars or len(bars) != len(want) or any(abs(b - ms) > 1e-4 * ms + 1e-4 for b, (_, ms) in zip(bars, want)):
    bad.append("bars %s, rows %s" % (bars, want))
best = {0: rows[0][1], 1: rows[0][1], 2: rows[2][1], 3: rows[2][1]}
if not line or len(line) != len(want) or any(abs(l - best[i]) > 1e-4 * best[i] + 1e-4 for l, (i, _) in zip(line, want)):
    bad.append("best line %s" % line)
if any(not lo <= v <= hi for v in bars + line): bad.append("values outside the y axis")
if "Left out, no bench number: iteration 1 (failed)" not in md: bad.append("no word on iteration 1")
print("ok" if not bad else "; ".join(bad))
PY
pr=$("$OPTLOOP" report pr 2>&1)
t_like "report pr has the chart under its benchmark" "$pr" '### Bench per iteration'
t_is "report pr: a well-formed xychart, one value per iteration with a number" \
	"$(printf '%s' "$pr" | python3 "$T_TMP/mermaid.py")" ok
final=$("$OPTLOOP" report final 2>&1)
t_is "report final: the same block" "$(printf '%s' "$final" | python3 "$T_TMP/mermaid.py")" ok
t_is "report final --json carries the series" \
	"$("$OPTLOOP" report final --json | python3 -c 'import json,sys
print(" ".join(r["kind"] for r in json.load(sys.stdin)["chart"]["rows"]))')" "base failed keep dropped"
t_done
