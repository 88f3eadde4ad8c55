#!/usr/bin/env bash
# The one option parser: every command answers --help and -h from its own
# option table (each option of its usage line described, an example), help
# CMD prints the same, mistyped commands and options get a did-you-mean, and
# values are checked before anything is opened; a section a --help names
# is there.
. "$(dirname "$0")/lib.sh"

cmds=$("$OPTLOOP" help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }')
t_like "help lists the commands" "$cmds" '^status$'
n=0
for c in $cmds; do
	n=$((n + 1))
	out=$("$OPTLOOP" "$c" --help 2>&1); rc=$?
	t_is "$c --help exits 0" "$rc" 0
	t_like "$c --help starts with its usage" "$(printf '%s' "$out" | head -n 1)" "^usage: optloop ($c|\\[-C)"
	t_like "$c --help shows an example" "$out" "^  optloop $c|^  optloop -C|^  optloop --version"
	t_is "$c -h is --help" "$("$OPTLOOP" "$c" -h 2>&1)" "$out"
	t_is "help $c is $c --help" "$("$OPTLOOP" help "$c" 2>&1)" "$out"
	# every --option of the usage line is described in the help
	usage=$(printf '%s' "$out" | head -n 1)
	missing=""
	for o in $(printf '%s' "$usage" | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
		printf '%s' "$out" | grep -qE -- "^  $o( |$)" || missing="$missing $o"
	done
	t_is "$c --help describes every option of its usage line" "$missing" ""
	# a section it sends the reader to is there (the reference left the README)
	t_unlike "$c --help sends no one to the README" "$out" 'README'
	gone=""
	while IFS='|' read -r topic heading; do
		[ -n "$topic" ] || continue
		"$OPTLOOP" help "$topic" 2>/dev/null | grep -qxF "## $heading" || gone="$gone $topic:$heading"
	done <<-EOF
	$(printf '%s' "$out" | tr '\n' ' ' | sed 's/  */ /g' |
		grep -oE 'optloop help [a-z]+, under "[^"]+"' | sed -E 's/optloop help ([a-z]+), under "([^"]+)"/\1|\2/')
	EOF
	t_is "$c --help: every section it names exists" "$gone" ""
done
out=$("$OPTLOOP" watch --help)
t_like "watch --help names where each event's fields are" "$out" 'optloop help commands,'
sec=$("$OPTLOOP" help commands | sed -n '/^## Watching a workspace$/,/^## /p')
missing=""
for ev in state run.start progress stage gate run.end row commit confirm stall stop problem explain; do
	printf '%s' "$sec" | grep -qF "| \`$ev\` |" || missing="$missing $ev"
done
t_is "  and that section lists every event watch --json prints" "$missing" ""
t_like "every command was asked" "$n" '^3[0-9]$'

# verbs: the verb's own options
t_like "trap list --help has --iter" "$("$OPTLOOP" trap list --help)" '^  --iter N'
t_like "dispatch add --help has --evidence" "$("$OPTLOOP" dispatch add --help)" '^  --evidence ITERS'
t_like "report nogo --help" "$("$OPTLOOP" report nogo --help)" 'nogo: the record'

# did you mean
err=$("$OPTLOOP" stauts 2>&1); rc=$?
t_is "a mistyped command is a usage error" "$rc" 2
t_like "a mistyped command gets a did-you-mean" "$err" "'stauts' is not a command; did you mean 'status'\\?"
err=$("$OPTLOOP" help confrim 2>&1)
t_like "help with a mistyped command too" "$err" "did you mean 'confirm'"
err=$("$OPTLOOP" xyzzy 2>&1)
t_unlike "nothing close: no guess" "$err" 'did you mean'
err=$("$OPTLOOP" status --jsn 2>&1); rc=$?
t_is "a mistyped option is a usage error" "$rc" 2
t_like "a mistyped option gets a did-you-mean" "$err" 'unknown option --jsn \(did you mean --json\?\)'
t_like "and the usage line" "$err" '^usage: optloop status'
err=$("$OPTLOOP" log --direction=x --stauts keep 2>&1)
t_like "did-you-mean among the command's own options" "$err" 'did you mean --status'
err=$("$OPTLOOP" log --direction x --status kep 2>&1); rc=$?
t_is "a mistyped status is a usage error" "$rc" 2
t_like "  that names the statuses and guesses the one meant" "$err" \
	"--status must be keep, revert, drop or floor \(base for the baseline\), got 'kep' \(did you mean keep\?\)"
err=$("$OPTLOOP" log --direction x --status sideways 2>&1)
t_unlike "  nothing close: no guess" "$err" 'did you mean'

# values are checked by the table
err=$("$OPTLOOP" noise --runs 1 2>&1); rc=$?
t_is "a count out of range is a usage error" "$rc" 2
t_like "the range is named" "$err" '--runs needs a whole number from 2 to 100'
err=$("$OPTLOOP" verify --timeout soon 2>&1)
t_like "a number that is not one" "$err" "--timeout needs a number .* got 'soon'"
err=$("$OPTLOOP" log --direction 2>&1)
t_like "a missing value" "$err" '--direction needs a value \(TEXT\)'
err=$("$OPTLOOP" log --unconfirmed= --direction x 2>&1); rc=$?
t_is "an empty reason is a usage error" "$rc" 2
t_like "an empty reason is named" "$err" '--unconfirmed needs a non-empty WHY'
err=$("$OPTLOOP" parse --exit-status=300 - </dev/null 2>&1)
t_like "--name=VALUE is read too" "$err" "--exit-status needs a whole number from 0 to 255, got '300'"
err=$("$OPTLOOP" status extra 2>&1); rc=$?
t_is "an unexpected argument is a usage error" "$rc" 2
t_like "and is named" "$err" 'unexpected argument extra'
# "--" ends the options: a file named like an option
printf 'nothing\n' >"$T_TMP/--json"
out=$(cd "$T_TMP" && "$OPTLOOP" parse -- --json 2>&1)
t_like "-- ends the options" "$out" 'recognised in --json'

# version
t_like "-V prints the version" "$("$OPTLOOP" -V)" '^optloop [0-9]+\.[0-9]+'
j=$("$OPTLOOP" version --json)
t_like "version --json" "$j" '"version": "[0-9]+\.[0-9]+\.[0-9]+"'

# the reference topics of assets/man/, from anywhere
for topic in commands workbench statistics slurm gpu patterns building; do
	out=$(cd "$T_TMP" && "$OPTLOOP" help "$topic" 2>&1); rc=$?
	t_is "help $topic prints its reference (exit 0)" "$rc" 0
	t_is "  the file of assets/man/ itself" "$out" "$(cat "$OPTLOOP_ROOT/assets/man/$topic.md")"
done
t_like "help lists the topics" "$("$OPTLOOP" help)" "help TOPIC.*statistics slurm gpu"
out=$("$OPTLOOP" help statistcs 2>&1); rc=$?
t_is "a word that is no command nor topic is a usage error" "$rc" 2
t_like "  and names it" "$out" "'statistcs' is not a command"
man=$(cd "$T_TMP" && "$OPTLOOP" help --man 2>&1); rc=$?
t_is "help --man works outside the source tree (the assets folder's reference)" "$rc" 0
t_like "  and is the page" "$man" '^\.TH OPTLOOP 1'

# installed as make install lays it out (PREFIX/bin, PREFIX/share/optloop/assets), with no
# source tree anywhere near and no OPTLOOP_ASSETS: the installed assets are used
inst="$T_TMP/prefix"
install -d "$inst/bin" "$inst/share/optloop"
install -m 755 "$OPTLOOP" "$inst/bin/optloop"
cp -R "$OPTLOOP_ROOT/assets" "$inst/share/optloop/"
mkdir -p "$T_TMP/away"
ver=$(cd "$T_TMP/away" && env -u OPTLOOP_ASSETS "$inst/bin/optloop" version 2>&1)
t_like "installed: version names the installed assets folder" "$ver" \
	"assets: $(cd "$inst" && pwd -P)/share/optloop/assets$"
man=$(cd "$T_TMP/away" && env -u OPTLOOP_ASSETS "$inst/bin/optloop" help --man 2>&1); rc=$?
t_is "installed: help --man from another directory (exit 0)" "$rc" 0
t_is "  the page the source tree's make docs writes" "$man" "$(cat "$OPTLOOP_ROOT/assets/man/optloop.1")"
out=$(cd "$T_TMP/away" && env -u OPTLOOP_ASSETS "$inst/bin/optloop" help workbench 2>&1)
t_is "installed: help TOPIC from another directory" "$out" "$(cat "$OPTLOOP_ROOT/assets/man/workbench.md")"

t_done
