#!/usr/bin/env bash
# optloop demo [DIR]: a fresh git repository holding the demo project, one
# commit, a clean tree; refusals; the identity fallback; the terminal case.
. "$(dirname "$0")/lib.sh"

demo_src="$OPTLOOP_ROOT/assets/demo"
export DEMO_BENCH_WARMUP_MS=5 DEMO_BENCH_REP_MS=20

# --- named DIR, not on a terminal ----------------------------------------------
d="$T_TMP/proj"
out=$("$OPTLOOP" demo "$d" </dev/null 2>&1)
rc=$?
t_is "demo DIR: exit 0" "$rc" 0
t_is "demo DIR: first line is the directory" "$(head -n 1 <<<"$out")" "$(cd "$d" 2>/dev/null && pwd -P)"
t_like "demo DIR: says what it made" "$out" '^made: a git repository \(branch main, one commit [0-9a-f]{7}\)'
t_like "demo DIR: names the workspace" "$out" 'workspace .*/proj/profile/chunk_linear_attn-opt \(contract complete\)'
t_like "demo DIR: the workspace waits for the baseline" \
	"$("$OPTLOOP" -C "$d" status --json 2>&1)" '"state": "need_baseline"'
t_like "demo DIR: the whole frozen scope is in the contract" \
	"$("$OPTLOOP" -C "$d" status --json 2>&1 | tr -d ' \n')" '"frozen":\["tests/ops/test_linear_attn.c","ops/linear_attn/naive.c","ops/linear_attn/linear_attn.h"'
t_unlike "demo DIR: no terminal, no workbench message" "$out" 'workbench'
t_unlike "demo DIR: identity configured, no note" "$out" '^note:'
t_is "demo DIR: branch main" "$(git -C "$d" symbolic-ref --short HEAD 2>&1)" main
t_is "demo DIR: exactly one commit" "$(git -C "$d" rev-list --count HEAD 2>&1)" 1
t_is "demo DIR: clean tree" "$(git -C "$d" status --porcelain 2>&1)" ""
t_is "demo DIR: author from git config" "$(git -C "$d" log -1 --format='%an <%ae>' 2>&1)" \
	"optloop test <test@optloop.invalid>"
t_is "demo DIR: verify committed as executable" "$(git -C "$d" ls-files -s verify | cut -c1-6)" 100755
t_ok "demo DIR: kernel committed" git -C "$d" cat-file -e HEAD:ops/linear_attn/chunk.c
t_ok "demo DIR: frozen test committed" git -C "$d" cat-file -e HEAD:tests/ops/test_linear_attn.c
t_is "demo DIR: the files are the assets' files" \
	"$(diff -r -x .git -x build -x profile "$demo_src" "$d" 2>&1)" ""
t_is "demo DIR: every asset file is tracked" \
	"$(cd "$demo_src" && find . -type f ! -path './build/*' | sed 's|^\./||' | sort)" \
	"$(git -C "$d" ls-files | sort)"
vout=$(cd "$d" && ./verify --op chunk_linear_attn 2>&1)
t_like "demo DIR: its verify passes" "$vout" 'GATE PASSED\.'
t_is "demo DIR: verify leaves the tree clean" "$(git -C "$d" status --porcelain 2>&1)" ""

# the binary under test is not on PATH, so the hint names it by its path
self=$(cd "$(dirname "$OPTLOOP")" && pwd -P)/$(basename "$OPTLOOP")
next=$(sed -n 's/^next: //p' <<<"$out")
t_is "demo DIR: the next step names this optloop by its path (not on PATH)" "$next" \
	"cd $(cd "$d" && pwd -P) && $self verify"
vout=$(env PATH=/usr/local/bin:/usr/bin:/bin bash -c "$next" 2>&1)
t_is "demo DIR: the next step works as printed, with no optloop on PATH" "$?" 0
t_like "  it ran the baseline verify" "$vout" 'GATE PASSED'
t_is "  and the workspace holds iteration 0" \
	"$("$OPTLOOP" -C "$d" status --json 2>&1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')" measured
mkdir -p "$T_TMP/bin"
ln -s "$self" "$T_TMP/bin/optloop"
out2=$(PATH="$T_TMP/bin:$PATH" "$OPTLOOP" demo "$T_TMP/onpath" </dev/null 2>&1)
t_like "demo DIR: where optloop on PATH is this one, the hint says optloop" "$out2" \
	"^next: cd .*/onpath && optloop verify$"
cp "$self" "$T_TMP/bin/other" && ln -sf "$T_TMP/bin/other" "$T_TMP/bin/optloop"
out2=$(PATH="$T_TMP/bin:$PATH" "$OPTLOOP" demo "$T_TMP/otherpath" </dev/null 2>&1)
t_like "demo DIR: where optloop on PATH is another program, the path again" "$out2" \
	"^next: cd .*/otherpath && $self verify$"

# --- refusals -------------------------------------------------------------------
mkdir -p "$T_TMP/busy"
echo keep >"$T_TMP/busy/file"
out=$("$OPTLOOP" demo "$T_TMP/busy" 2>&1)
t_is "non-empty DIR: usage error" "$?" 2
t_like "non-empty DIR: clear message" "$out" 'busy is not empty; the demo is made only in a new or empty directory'
t_is "non-empty DIR: left as it was" "$(ls -A "$T_TMP/busy")" file
out=$("$OPTLOOP" demo "$T_TMP/busy/file" 2>&1)
t_is "DIR is a file: usage error" "$?" 2
t_like "DIR is a file: says so" "$out" 'exists and is not a directory'
t_exit "a second run on the same DIR is refused" 2 "$OPTLOOP" demo "$d"
t_exit "two directories: usage error" 2 "$OPTLOOP" demo "$T_TMP/a" "$T_TMP/b"
t_exit "unknown option: usage error" 2 "$OPTLOOP" demo --bogus

# --- an existing empty DIR is used -----------------------------------------------
mkdir "$T_TMP/empty"
out=$("$OPTLOOP" demo "$T_TMP/empty" 2>&1)
t_is "empty DIR: exit 0" "$?" 0
t_is "empty DIR: one commit" "$(git -C "$T_TMP/empty" rev-list --count HEAD 2>&1)" 1

# --- no DIR: a fresh temporary directory -----------------------------------------
mkdir "$T_TMP/tmpdir"
out=$(TMPDIR="$T_TMP/tmpdir" "$OPTLOOP" demo 2>&1)
t_is "no DIR: exit 0" "$?" 0
made=$(head -n 1 <<<"$out")
t_like "no DIR: made under TMPDIR as optloop-demo.XXXXXX" "$made" "^$(cd "$T_TMP/tmpdir" && pwd -P)/optloop-demo\.[A-Za-z0-9]{6}$"
t_is "no DIR: clean tree" "$(git -C "$made" status --porcelain 2>&1)" ""
out=$(TMPDIR="$T_TMP/tmpdir" "$OPTLOOP" demo 2>&1)
t_unlike "no DIR: a second run makes another directory" "$(head -n 1 <<<"$out")" "^$made$"

# --- --json -----------------------------------------------------------------------
out=$(TMPDIR="$T_TMP/tmpdir" "$OPTLOOP" demo --json 2>&1)
keys=$(python3 -c 'import json,sys; o=json.loads(sys.stdin.read()); print(o["op"], o["branch"], len(o["commit"]), o["identity_set"], o["dir"].startswith(sys.argv[1]))' \
	"$(cd "$T_TMP/tmpdir" && pwd -P)" <<<"$out" 2>&1)
t_is "--json: op, branch, commit, identity, dir" "$keys" "chunk_linear_attn main 40 False True"

# --- a machine with no git identity ----------------------------------------------
noid="$T_TMP/noid"
mkdir -p "$noid/home"
out=$(env -u GIT_AUTHOR_NAME -u GIT_AUTHOR_EMAIL -u GIT_COMMITTER_NAME -u GIT_COMMITTER_EMAIL \
	-u XDG_CONFIG_HOME HOME="$noid/home" "$OPTLOOP" demo "$noid/proj" 2>&1)
t_is "no identity: still exit 0" "$?" 0
t_like "no identity: says a local one was set" "$out" '^note: git has no user identity configured, so the demo repository got a local one \(optloop demo <demo@optloop\.invalid>\)'
t_is "no identity: repo-local user.name" "$(git -C "$noid/proj" config --local user.name 2>&1)" "optloop demo"
t_is "no identity: the commit uses it" "$(git -C "$noid/proj" log -1 --format='%an <%ae>' 2>&1)" \
	"optloop demo <demo@optloop.invalid>"
t_is "with identity: no local identity written" "$(git -C "$d" config --local user.name)" ""

# --- assets without the demo ---------------------------------------------------------
mkdir -p "$T_TMP/assets/patterns"
out=$(OPTLOOP_ASSETS="$T_TMP/assets" "$OPTLOOP" demo "$T_TMP/nodemo" 2>&1)
t_like "assets without demo: fails" "$?" '^[1-9]'
t_like "assets without demo: says what is missing" "$out" 'demo project is missing from optloop.s assets'
t_ok "assets without demo: nothing made" test ! -e "$T_TMP/nodemo"

# --- on a terminal: the workbench opens on the new workspace ----------------------
if command -v tmux >/dev/null 2>&1; then
	sock="optloop-demo-$$"
	tmux -L "$sock" -f /dev/null new-session -d -x 160 -y 30 \
		"'$OPTLOOP' demo '$T_TMP/term'; echo EXIT=\$?; sleep 30"
	screen=""
	for _ in $(seq 1 150); do
		screen=$(tmux -L "$sock" capture-pane -p -J 2>/dev/null)
		grep -q 'NEED_BASELINE' <<<"$screen" && break
		sleep 0.1
	done
	t_like "terminal: the workbench opens on the demo workspace" "$screen" 'chunk_linear_attn'
	t_like "terminal: its status line asks for the baseline" "$screen" 'NEED_BASELINE.*baseline'
	tmux -L "$sock" send-keys q
	for _ in $(seq 1 100); do
		screen=$(tmux -L "$sock" capture-pane -p -J 2>/dev/null)
		grep -q 'EXIT=' <<<"$screen" && break
		sleep 0.1
	done
	tmux -L "$sock" kill-server 2>/dev/null
	t_like "terminal: exit 0 after quitting" "$screen" 'EXIT=0'
	t_like "terminal: after the workbench quits it says where the demo is" "$screen" \
		"the demo is in $T_TMP/term"
	t_like "terminal: and the next command, naming this optloop by its path" "$screen" \
		"next: cd $T_TMP/term && $self  \\(the workbench; $self status"
	t_ok "terminal: the workspace is there" test -f "$T_TMP/term/profile/chunk_linear_attn-opt/optloop.db"
else
	t_skip "terminal case" "tmux is not installed"
fi

t_done
