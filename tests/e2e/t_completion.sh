#!/usr/bin/env bash
# Shell completion: bash's completion function, run here as bash runs it
# (COMP_WORDS, COMP_CWORD, COMPREPLY), offers the commands, each command's
# own options, statuses, stop reasons, the workspaces' ops and the verbs;
# the zsh and fish scripts are printed and parse; make install puts all
# three where the shells look.
. "$(dirname "$0")/lib.sh"

bin=$(dirname "$OPTLOOP")
d="$T_TMP/fla"
"$OPTLOOP_ROOT/tests/fixtures/make_fla_tree.sh" "$d" >/dev/null
(cd "$d" && "$OPTLOOP" init --op chunk_delta >/dev/null && "$OPTLOOP" init --op chunk_gdn >/dev/null)

# comp WORD...: what bash offers for the last word of "optloop WORD..."
comp() {
	(cd "$d" && PATH="$bin:$PATH" bash -c '
		source <(optloop completion bash)
		COMP_WORDS=(optloop "$@")
		COMP_CWORD=$#
		_optloop
		printf "%s\n" "${COMPREPLY[@]}"' comp "$@" | tr '\n' ' ' | sed 's/ $//')
}

t_is "a command from its start" "$(comp st)" "status stop"
t_is "every command from nothing" "$(comp '' | wc -w)" "$("$OPTLOOP" help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { n++ } on && /^$/ { exit } END { print n }')"
t_is "options once a dash is typed" "$(comp log --st)" "--status"
t_is "a status" "$(comp log --direction x --status '')" "keep revert drop floor"
t_is "a stop reason" "$(comp stop --reason '')" "cap floor directions"
t_is "the workspaces' ops for --op" "$(comp --op '')" "chunk_delta chunk_gdn"
t_is "--op after the command too" "$(comp status --op chunk_g)" "chunk_gdn"
t_is "the verbs of trap" "$(comp trap '')" "list add mark"
t_is "a verb's own options" "$(comp trap list --)" "--iter --json --help"
t_is "the kinds of report" "$(comp report '')" "final header pr nogo"
t_is "chart is a command" "$(comp cha)" "chart"
t_is "help completes commands" "$(comp help conf)" "confirm"
t_is "global options" "$(comp -)" "-C --op --help --version -V"
t_like "a file for a path value" "$(comp init --kernel fl)" '^fla$'

# each command offers exactly what its table accepts (what --help lists)
for c in status verify log commit confirm noise promote init parse chart; do
	want=$("$OPTLOOP" "$c" --help | sed -n 's/^  \(--[a-z-]*\).*/\1/p' | grep -v -- '--help' | tr '\n' ' ')
	t_is "$c: options offered are those of its help" "$(comp "$c" -- | sed 's/ --help//') " "$want"
done

# the other shells
z=$("$OPTLOOP" completion zsh)
t_like "zsh script" "$z" '^#compdef optloop'
if command -v zsh >/dev/null; then
	t_ok "zsh parses it" zsh -n <(printf '%s\n' "$z")
else
	t_skip "zsh parses it" "zsh is not installed"
fi
f=$("$OPTLOOP" completion fish)
t_like "fish script" "$f" '^complete -c optloop'
if command -v fish >/dev/null; then
	t_ok "fish parses it" fish -n -c "$f"
else
	t_skip "fish parses it" "fish is not installed"
fi
t_exit "an unknown shell is a usage error" 2 "$OPTLOOP" completion tcsh

# make install puts them in place
if [ -n "$OPTLOOP_ROOT" ] && [ -x "$OPTLOOP_ROOT/optloop" ] && [ "$OPTLOOP" = "$OPTLOOP_ROOT/optloop" ]; then
	make -s -C "$OPTLOOP_ROOT" install DESTDIR="$T_TMP/inst" PREFIX=/usr >/dev/null 2>&1
	for p in share/bash-completion/completions/optloop share/zsh/site-functions/_optloop \
		share/fish/vendor_completions.d/optloop.fish; do
		t_ok "make install: $p" test -s "$T_TMP/inst/usr/$p"
	done
else
	t_skip "make install puts the scripts in place" "not the tree's own binary"
fi
t_done
