#!/usr/bin/env bash
# The work tree as git sees it: a kernel file with a filter driver
# (filter.NAME.clean / .smudge in the configuration, filter=NAME in
# .gitattributes) or with eol=crlf is compared and restored the way git
# does.  A file git calls clean is not a change; a drop writes back what
# `git checkout` would write (the smudged form, CRLF endings), never the
# form stored in git.
. "$(dirname "$0")/lib.sh"
mk="$OPTLOOP_ROOT/tests/fixtures/make_tiny_project.sh"

# project DIR ATTR: the tiny project with kernel/params.txt under ATTR,
# committed, then checked out again through the filters
project() {
	"$mk" "$1" >/dev/null && cd "$1" || exit 1
	git config filter.local.clean "sed '/^#local/d'"
	git config filter.local.smudge "cat; echo '#local %f'"
	printf 'kernel/*.txt %s\n' "$2" >.gitattributes
	printf 'a\nb\n' >kernel/params.txt
	git add .gitattributes kernel/params.txt && git commit -qm attributes
	rm kernel/params.txt && git checkout -- kernel/params.txt
	"$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh --naive ref/naive.sh \
		--verify ./verify --target "2x" --languages sh --promotion "full gate" >/dev/null
}
# a change: the kernel shifts, and the filtered file gets a line
change() {
	sed -i 's/\$(( \$1 \* 2 ))/$(( $1 << 1 ))/' kernel/compute.sh
	printf 'c\n' >>kernel/params.txt
}

# ---- a clean/smudge driver ----------------------------------------------------
project "$T_TMP/driver" filter=local
t_is "the smudge filter ran on checkout" "$(tail -n 1 kernel/params.txt)" "#local kernel/params.txt"
t_is "git calls the work tree clean" "$(git status --porcelain)" ""
t_ok "the baseline is measured: the smudged file is the committed one" "$OPTLOOP" verify
t_ok "and logged" "$OPTLOOP" log --direction baseline --commit
change
t_ok "a change is measured" "$OPTLOOP" verify
t_ok "and dropped" "$OPTLOOP" log --direction shift --status drop --commit
t_is "the drop wrote the file as git checks it out (smudged)" "$(cat kernel/params.txt)" \
	"$(printf 'a\nb\n#local kernel/params.txt')"
t_is "the iteration's commit holds the clean form" "$(git show HEAD~1:kernel/params.txt)" "$(printf 'a\nb\nc')"
t_is "the tree is clean after the drop" "$(git status --porcelain)" ""
t_is "status: the loop goes on" "$("$OPTLOOP" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')" \
	ready

# a driver that fails: content as it is (git does the same), unless required
git config filter.local.clean "exit 3"
t_ok "a failing driver that is not required reads the file as it is" "$OPTLOOP" status
git config filter.local.required true
"$OPTLOOP" verify >"$T_TMP/req.out" 2>&1
t_like "a failing required driver is an error that names it and the file" "$(cat "$T_TMP/req.out")" \
	"filter driver local failed on kernel/params.txt"
git config --unset filter.local.clean
"$OPTLOOP" verify >"$T_TMP/req2.out" 2>&1
t_like "a required driver without the command is an error that says which" "$(cat "$T_TMP/req2.out")" \
	"the required filter driver local has no clean command for kernel/params.txt"
git config --unset filter.local.required
git config filter.local.clean "sed '/^#local/d'"

# ---- eol=crlf -----------------------------------------------------------------
project "$T_TMP/crlf" "text eol=crlf"
t_is "the checkout wrote CRLF" "$(od -An -c kernel/params.txt | tr -d ' \n')" 'a\r\nb\r\n'
t_ok "the baseline is measured" "$OPTLOOP" verify
t_ok "and logged" "$OPTLOOP" log --direction baseline --commit
sed -i 's/\$(( \$1 \* 2 ))/$(( $1 << 1 ))/' kernel/compute.sh
printf 'c\r\n' >>kernel/params.txt
t_ok "a change is measured" "$OPTLOOP" verify
t_ok "and dropped" "$OPTLOOP" log --direction shift --status drop --commit
t_is "the drop restored CRLF endings, as git would" "$(od -An -c kernel/params.txt | tr -d ' \n')" 'a\r\nb\r\n'
t_is "git stores LF" "$(git show HEAD~1:kernel/params.txt | od -An -c | tr -d ' \n')" 'a\nb\nc\n'
t_is "the tree is clean after the drop" "$(git status --porcelain)" ""

t_done
