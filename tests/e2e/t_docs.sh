#!/usr/bin/env bash
# The man page comes from one source per part (the command reference
# assets/man/commands.md, each command's option table, the workbench's key table, the
# prose of assets/man/optloop.1.in): the committed page is what `make docs`
# makes, groff reads it without a warning, man renders it, and it documents
# every command, every option, the keys, FILES, EXIT STATUS, ENVIRONMENT,
# EXAMPLES and SEE ALSO, and the loop's rules.
. "$(dirname "$0")/lib.sh"
root=$OPTLOOP_ROOT
page="$root/assets/man/optloop.1"
gen="$T_TMP/optloop.1"
(cd "$root" && "$OPTLOOP" help --man >"$gen" 2>"$T_TMP/gen.err")
t_is "the generator runs" "$?" 0
t_is "every command has a row in the command reference" "$(cat "$T_TMP/gen.err")" ""
if cmp -s "$gen" "$page"; then
	t_pass "the committed man page is what make docs makes"
else
	t_fail "the committed man page is what make docs makes (run make docs)" \
		"$(diff "$page" "$gen" | head -20)"
fi
if command -v groff >/dev/null 2>&1; then
	t_is "groff reads it without a warning" "$(groff -man -ww -z "$page" 2>&1)" ""
else
	t_skip "groff reads it without a warning" "groff is not installed"
fi
if command -v man >/dev/null 2>&1; then
	out=$(MANWIDTH=100 man -l "$page" 2>&1)
	t_is "man -l renders it" "$?" 0
	for s in NAME SYNOPSIS DESCRIPTION COMMANDS "WORKBENCH KEYS" FILES "EXIT STATUS" \
		ENVIRONMENT EXAMPLES "SEE ALSO"; do
		t_like "section $s" "$out" "^$s\$"
	done
	# every command and option in the page, and in the command's usage
	# line (optloop help COMMAND, the first line)
	missing="" unnamed=""
	for c in $("$OPTLOOP" completion --list commands 2>/dev/null || "$OPTLOOP" help | sed -n 's/^  \([a-z]*\) .*/\1/p'); do
		printf '%s' "$out" | grep -qE "^   optloop $c( |\$)" || missing="$missing $c"
		u=$("$OPTLOOP" help "$c" | head -1)
		for o in $("$OPTLOOP" "$c" --list-options 2>/dev/null); do
			[ "$o" = --help ] && continue
			printf '%s' "$out" | grep -qF -- "$o" || missing="$missing $c:$o"
			printf '%s' "$u" | grep -qF -- "$o" || unnamed="$unnamed $c:$o"
		done
	done
	t_is "every command and every option is in it" "$missing" ""
	t_is "every usage line names every option of its command" "$unnamed" ""
	# and the other way: an option a usage line names (a hand-written
	# synopsis's too) is one its command, or one of its verbs, takes
	unknown=""
	for c in $("$OPTLOOP" completion --list ''); do
		u=$("$OPTLOOP" help "$c" | head -1)
		known=$("$OPTLOOP" "$c" --list-options | sed 's/ .*//')
		for v in $(printf '%s\n' "$known" | grep -v '^-'); do
			known="$known $("$OPTLOOP" "$c" "$v" --list-options | sed 's/ .*//')"
		done
		for o in $(printf '%s' "$u" | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
			printf '%s\n' $known | grep -qxF -- "$o" || unknown="$unknown $c:$o"
		done
	done
	t_is "every option a usage line names is in its command's table" "$unknown" ""
	t_like "the statuses" "$out" 'keep.*revert.*drop.*floor|floor'
	t_like "the one best" "$out" '[Tt]he one best'
	t_like "attempts" "$out" '[Aa]ttempt'
	t_like "optloop.db with its -wal and -shm" "$out" 'optloop\.db-wal'
	t_like "the workbench keys" "$out" 'run the verify command'
else
	t_skip "man -l renders it" "man is not installed"
fi
t_done
