#!/usr/bin/env bash
# The build's promises: the core library never references curses, the binary
# answers its basic commands, and an installed copy finds its assets.
. "$(dirname "$0")/lib.sh"

lib="${LIBCORE:-$OPTLOOP_ROOT/build/rel/libcore.a}"
if [ -f "$lib" ]; then
	# Every symbol ncursesw exports; none may appear undefined in the core.
	# (libncursesw.so itself may be a linker script: read the real objects.)
	sos=$(ldconfig -p | awk '/lib(ncursesw|tinfo)\.so\.6 /{print $NF}')
	curses_syms=$(for so in $sos; do nm -D --defined-only "$so"; done 2>/dev/null |
		awk 'NF == 3 {print $3}' | sed 's/@.*//' | sort -u)
	core_undef=$(nm -u "$lib" 2>/dev/null | awk '{print $2}' | sort -u)
	t_like "ncursesw symbol list is readable" "$(printf '%s\n' "$curses_syms" | wc -l)" '^[0-9]{3,}'
	both=$(comm -12 <(printf '%s\n' "$curses_syms") <(printf '%s\n' "$core_undef"))
	t_is "core library references no curses symbol" "$both" ""
	inc=$(grep -lE '#include *<(n?curses|ncursesw/)' "$OPTLOOP_ROOT"/core/*.[ch] 2>/dev/null)
	t_is "no core source includes curses" "$inc" ""
else
	t_fail "core library exists at $lib"
fi

out=$("$OPTLOOP" version)
t_like "version prints a version" "$out" '^optloop [0-9]+\.[0-9]+\.[0-9]+'
out=$("$OPTLOOP" help)
t_like "help lists commands" "$out" 'commands:'
t_exit "unknown command is a usage error" 2 "$OPTLOOP" no-such-command
t_exit "no command is a usage error" 2 "$OPTLOOP"
t_exit "help for an unknown command is a usage error" 2 "$OPTLOOP" help nope

# make install into a scratch prefix; the installed binary finds its assets.
if [ -z "${SKIP_INSTALL_TEST:-}" ]; then
	prefix="$T_TMP/prefix"
	if make -s -C "$OPTLOOP_ROOT" install PREFIX="$prefix" >"$T_TMP/install.log" 2>&1; then
		t_pass "make install into a scratch prefix"
		t_ok "installed man page" test -f "$prefix/share/man/man1/optloop.1"
		t_ok "installed assets" test -d "$prefix/share/optloop/assets/patterns"
		out=$("$prefix/bin/optloop" version 2>&1)
		t_is "installed binary finds its own assets" "$(printf "%s" "$out" | sed -n "s/^assets: //p")" "$prefix/share/optloop/assets"
	else
		t_fail "make install into a scratch prefix" "$(tail -n 20 "$T_TMP/install.log")"
	fi
fi
# How the binary is linked (Makefile, LINK): statically, libgit2's calls to the
# certificate loaders and to libssh2_init go to tui/no_tls.c through --wrap;
# shared, libgit2 itself is a shared object and the executable interposes.
bin=$(command -v "$OPTLOOP")
if ldd "$bin" 2>/dev/null | grep -q 'libgit2\.so'; then
	t_like "shared link: the certificate loaders are defined in the executable" \
		"$(nm "$bin" 2>/dev/null)" ' T mbedtls_x509_crt_parse_file$'
else
	t_unlike "static link: libsqlite3, libpcre2 and libncursesw are not shared objects" \
		"$(ldd "$bin" 2>&1)" 'lib(sqlite3|pcre2-8|ncursesw|git2|ssh2|crypto)\.so'
	dis=$(objdump -d --no-show-raw-insn "$bin" 2>/dev/null)
	t_like "static link: libgit2's SSH start-up calls the wrapper (no OpenSSL engines)" \
		"$(printf '%s\n' "$dis" | awk '/<git_transport_ssh_global_init>:/,/^$/')" \
		'call .*<__wrap_libssh2_init>'
	t_like "static link: libgit2's certificate loading calls the wrappers" \
		"$(printf '%s\n' "$dis" | awk '/<git_mbedtls__set_cert_location>:/,/^$/' | grep -c '<__wrap_mbedtls_x509_crt_parse_')" \
		'^[1-9]'
	t_like "static link: the executable is not position-independent" \
		"$(readelf -h "$bin" 2>/dev/null)" 'Type: +EXEC'
fi
# optloop works on local repositories only; libgit2's start-up must not parse
# the system's CA bundle (tui/no_tls.c), yet git work goes on as before.
if command -v strace >/dev/null 2>&1 && strace -o /dev/null true 2>/dev/null; then
	repo="$T_TMP/tlsrepo"
	mkdir -p "$repo/k" && git -C "$repo" init -q && echo x >"$repo/k/kern.c" &&
		echo t >"$repo/k/test.c" && echo n >"$repo/k/naive.c" &&
		git -C "$repo" add -A && git -C "$repo" commit -qm init
	"$OPTLOOP" -C "$repo" init --op tls --kernel k/kern.c --test-file k/test.c --naive k/naive.c \
		--verify true >/dev/null
	# (LeakSanitizer cannot run under ptrace: no leak check for this one run)
	opened=$(ASAN_OPTIONS=detect_leaks=0 strace -f -e trace=open,openat -o "$T_TMP/strace.log" \
		"$OPTLOOP" -C "$repo" status 2>&1)
	t_like "status still works through libgit2" "$opened" 'state: +no_contract'
	t_unlike "no CA bundle or certificate directory is opened" "$(cat "$T_TMP/strace.log")" \
		'/etc/ssl|ca-certificates|/certs'
	t_like "the store was opened (the trace is real)" "$(cat "$T_TMP/strace.log")" 'optloop\.db'
else
	t_skip "no CA bundle is opened at start-up" "strace is missing or may not trace here (make deps installs it)"
fi
t_done
