#!/usr/bin/env bash
# The README's commands on a machine where none of the Debian packages are
# installed yet.  The Makefile is run on a scratch copy of the tree with a
# stand-in toolchain on PATH: dpkg-query reports every package missing until
# apt-get "installs" them (a marker file), and the compiler answers
# -print-file-name=libgit2.a with a bare name (no archive) until then, just as
# gcc does on a bare machine.  The make that runs `deps` therefore reads the
# Makefile with no libgit2.a and the sub-make after it with one: both must
# agree on the build folder, and `make test`, `make demo` and `make bench`
# must each work the first time.
. "$(dirname "$0")/lib.sh"

tree="$T_TMP/tree"
fake="$T_TMP/fakebin"
state="$T_TMP/state"
mkdir -p "$tree" "$fake" "$state"
cp "$OPTLOOP_ROOT/Makefile" "$tree/"
for d in core views tui tests assets; do ln -s "$OPTLOOP_ROOT/$d" "$tree/$d"; done

cat >"$fake/dpkg-query" <<EOF
#!/bin/sh
[ -e "$state/installed" ] && printf 'install ok installed'
exit 0
EOF
# apt-get: $state/locked holds how many calls meet apt's lock held by
# another package manager (a fresh machine's automatic upgrades);
# $state/broken makes every call fail as a missing package does.
cat >"$fake/apt-get" <<EOF
#!/bin/sh
n=\$(cat "$state/locked" 2>/dev/null || echo 0)
if [ "\$n" -gt 0 ]; then
	echo \$((n - 1)) >"$state/locked"
	echo "apt-get locked \$*" >>"$state/apt.log"
	echo "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (unattended-upgr)" >&2
	exit 100
fi
[ -e "$state/broken" ] && { echo "E: Unable to locate package libgit2-dev" >&2; exit 100; }
echo "apt-get \$*" >>"$state/apt.log"
case "\$*" in *install*) touch "$state/installed" ;; esac
exit 0
EOF
# npm with no registry to reach (CI has Debian packages only): the SDK
# install of make deps fails as npm does offline.
cat >"$fake/npm" <<EOF
#!/bin/sh
echo "npm \$*" >>"$state/npm.log"
echo "npm error code ENOTFOUND" >&2
exit 1
EOF
cat >"$fake/sudo" <<'EOF'
#!/bin/sh
exec "$@"
EOF
# The compiler: -print-file-name answers as gcc does; -c makes an empty object;
# a link makes a program that prints one TAP line naming what it was linked as.
cat >"$fake/cc" <<EOF
#!/bin/sh
out=""; compile=0
for a in "\$@"; do
	case "\$a" in
	-print-file-name=libgit2.a)
		if [ -e "$state/installed" ] && [ -e "$state/lib/libgit2.a" ]; then echo "$state/lib/libgit2.a"; else echo libgit2.a; fi
		exit 0 ;;
	-print-file-name=*) echo "\${a#-print-file-name=}"; exit 0 ;;
	-c) compile=1 ;;
	esac
done
while [ \$# -gt 0 ]; do [ "\$1" = -o ] && out=\$2; shift; done
[ -n "\$out" ] || exit 0
if [ \$compile = 1 ]; then : >"\$out"; exit 0; fi
printf '#!/bin/sh\necho "ok 1 - %s ran (\$*)"\n' "\$out" >"\$out"
chmod +x "\$out"
EOF
chmod +x "$fake"/*
mkdir -p "$state/lib" && : >"$state/lib/libgit2.a"

# (the suite runs under make: its BUILD, MAKEFLAGS and MAKELEVEL must not leak in)
fmake() { env -u BUILD -u LINK -u SANITIZE -u MAKEFLAGS -u MFLAGS -u MAKELEVEL PATH="$fake:$PATH" make --no-print-directory -C "$tree" CC="$fake/cc" "$@"; }

# Before anything is installed the outer make would pick the shared link.
t_is "with no packages the compiler finds no libgit2.a" "$("$fake/cc" -print-file-name=libgit2.a)" "libgit2.a"

out=$(fmake test TESTS_FILTER=test_base 2>&1); rc=$?
t_is "make test works the first time on a bare machine" "$rc" 0
t_like "make test installed the missing packages first" "$(cat "$state/apt.log" 2>/dev/null)" 'install .*libgit2-dev'
t_like "make test ran the unit test from the build folder the sub-make chose" "$out" \
	'^test_base +1 passed +0 failed'
t_like "make test ends with the runner's summary" "$(printf '%s\n' "$out" | tail -n 1)" \
	'^1 passed, 0 failed, 0 skipped$'
t_ok "the objects went to build/rel (static link, decided after deps)" test -e "$tree/build/rel/libcore.a"
t_ok "nothing was built for the shared link" test ! -e "$tree/build/rel-shared"
t_unlike "no make error" "$out" 'No rule to make target|Error [0-9]'

# The same for the demo and the benchmarks, each from a bare machine again.
rm -rf "$tree/build" "$tree/optloop" "$state/installed" "$state/apt.log"
out=$(fmake demo DIR="$T_TMP/demo" 2>&1); rc=$?
t_is "make demo works the first time on a bare machine" "$rc" 0
t_like "make demo opened the built binary on the demo" "$out" "optloop ran \\(demo $T_TMP/demo\\)"
t_like "make demo installed the missing packages first" "$(cat "$state/apt.log" 2>/dev/null)" 'install'

rm -rf "$tree/build" "$tree/optloop" "$state/installed" "$state/apt.log"
out=$(fmake config 2>&1)
t_like "make config reports the decision taken after deps" "$out" $'LINK=static\nBUILD=build/rel'

# apt's lock held by another package manager: make deps says so and waits
rm -f "$state/installed" "$state/apt.log"
echo 1 >"$state/locked"
out=$(fmake deps 2>&1); rc=$?
t_is "make deps waits out a package manager that holds apt's lock" "$rc" 0
t_like "  and says what it waits for" "$out" "another package manager holds apt's lock .*waiting for it"
t_is "  the locked call was tried again, then the install ran" \
	"$(awk '{ printf "%s%s", (NR > 1 ? " " : ""), ($2 == "locked" ? $2 " " $3 : $2) }' "$state/apt.log")" \
	"locked update update install"
# any other failure is reported at once
rm -f "$state/installed" "$state/apt.log"
touch "$state/broken"
out=$(fmake deps 2>&1); rc=$?
t_is "an apt failure that is not the lock: make deps fails" "$rc" 2
t_like "  with apt's words and what to install by hand" "$out" 'Unable to locate package'
t_like "  at once, with no wait" "$(printf '%s\n' "$out" | grep -c 'waiting for it')" '^0$'
t_like "  naming the packages" "$out" 'make deps: apt-get failed; install by hand: .*libgit2-dev'
rm -f "$state/broken"
fmake deps >/dev/null 2>&1

# npm cannot reach its registry: one line says the SDK suite will be
# skipped, and deps succeeds
rm -f "$tree/build/node/npm-failed" "$state/npm.log"
out=$(fmake deps 2>&1); rc=$?
t_is "make deps with npm and no registry still succeeds" "$rc" 0
t_like "  npm was asked for the pinned SDK" "$(cat "$state/npm.log")" '^npm ci '
t_is "  one line says the MCP SDK suite will be skipped" \
	"$(printf '%s\n' "$out" | grep -c 'npm could not install @modelcontextprotocol/sdk .*t_mcp_sdk) will be skipped')" 1
out=$(fmake deps 2>&1); rc=$?
t_is "  the next make deps does not wait on npm again" "$rc $(grep -c '^npm ci' "$state/npm.log")" "0 1"
t_like "  and says how to try again" "$out" 'rm build/node/npm-failed to try again'

# no npm: Debian's nodejs and npm are installed only where the registry
# answers (a closed port stands for CI's machine; a listener for the registry)
: >"$state/apt.log"
out=$(fmake deps NPM=npm-absent NPM_PROBE=127.0.0.1/1 2>&1); rc=$?
t_is "no npm and no registry: make deps succeeds" "$rc" 0
t_is "  without asking apt for nodejs" "$(grep -c nodejs "$state/apt.log")" 0
t_like "  saying the SDK suite will be skipped" "$out" 'npm not found: the MCP SDK suite \(t_mcp_sdk\) will be skipped'
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
python3 -c 'import socket,sys,time; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(4); time.sleep(60)' "$port" &
listener=$!
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
out=$(fmake deps NPM=npm-absent NPM_PROBE="127.0.0.1/$port" 2>&1); rc=$?
kill "$listener" 2>/dev/null
t_is "no npm, the registry reachable: make deps succeeds" "$rc" 0
t_like "  and asked apt for Debian's nodejs and npm" "$(cat "$state/apt.log")" 'install -y -qq --no-install-recommends nodejs npm'

# With no static archive at all (the packages installed but libgit2.a absent)
# the build is shared and goes to build/rel-shared, consistently.
rm -rf "$state/lib/libgit2.a"
out=$(fmake config 2>&1)
t_like "without libgit2.a the build is shared" "$out" $'LINK=shared\nBUILD=build/rel-shared'
out=$(fmake test TESTS_FILTER=test_base 2>&1); rc=$?
t_is "make test works with the shared link too" "$rc" 0
t_ok "the shared build went to build/rel-shared" test -x "$tree/build/rel-shared/tests/test_base"

# Sanitizer builds have their own folder whatever is installed.
out=$(fmake sanitize TESTS_FILTER=test_base 2>&1); rc=$?
t_is "make sanitize works through the same path" "$rc" 0
t_ok "the sanitizer build went to build/san" test -x "$tree/build/san/tests/test_base"

t_done
