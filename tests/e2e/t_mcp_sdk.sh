#!/usr/bin/env bash
# optloop mcp under the official MCP TypeScript SDK (@modelcontextprotocol/sdk,
# installed by make deps into build/node at the version tests/mcp pins): the
# SDK's Client over its StdioClientTransport lists the tools, calls status
# and a verify with progress, gets a refusal as an error result, reads the
# resources, and aborts a slow verify, which the server stops as Ctrl-C does;
# the MCP Inspector's CLI (`--cli ... --method tools/list`) lists every tool.
. "$(dirname "$0")/lib.sh"
node_dir="$OPTLOOP_ROOT/build/node"
if ! command -v node >/dev/null 2>&1; then
	t_skip "the MCP SDK suite" "node is not installed (apt-get install nodejs npm, then make deps)"
	t_done
	exit
fi
if [ ! -f "$node_dir/node_modules/@modelcontextprotocol/sdk/package.json" ]; then
	t_skip "the MCP SDK suite" "@modelcontextprotocol/sdk is not installed in build/node (make deps installs it where npm reaches its registry)"
	t_done
	exit
fi
d="$T_TMP/tiny"
tiny_workspace "$d"

# the client beside the installed SDK, so that its imports resolve there
mkdir -p "$T_TMP/client"
cp "$OPTLOOP_ROOT/tests/mcp/client.mjs" "$T_TMP/client/"
ln -s "$node_dir/node_modules" "$T_TMP/client/node_modules"
t_is "the SDK is the version tests/mcp pins" \
	"$(node -p 'require(process.argv[1]).version' "$node_dir/node_modules/@modelcontextprotocol/sdk/package.json")" \
	"$(node -p 'require(process.argv[1]).dependencies["@modelcontextprotocol/sdk"]' "$OPTLOOP_ROOT/tests/mcp/package.json")"

run_part() {
	local part=$1
	shift
	env "$@" timeout $((300 * ${T_SLACK:-1})) node "$T_TMP/client/client.mjs" "$OPTLOOP" "$d" "$part" \
		>"$T_TMP/$part.tsv" 2>"$T_TMP/$part.err"
	while IFS=$'\t' read -r name got want; do
		[ "$name" = client ] && continue
		t_is "$name" "$got" "$want"
	done <"$T_TMP/$part.tsv"
	if [ "$(tail -n 1 "$T_TMP/$part.tsv")" = $'client\tdone\tdone' ]; then
		t_pass "the SDK's $part session ran to its end"
	else
		t_fail "the SDK's $part session ran to its end" "$(tail -n 20 "$T_TMP/$part.err")"
	fi
}

run_part loop

# the MCP Inspector's CLI (its own client, pinned beside the SDK) lists every
# tool the server's own listing has
insp="$node_dir/node_modules/.bin/mcp-inspector"
if [ -x "$insp" ]; then
	timeout $((120 * ${T_SLACK:-1})) "$insp" --cli "$OPTLOOP" mcp --method tools/list >"$T_TMP/insp.json" 2>"$T_TMP/insp.err"
	t_is "the Inspector's CLI lists the tools (exit 0)" "$?" 0
	mine=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
		'{"jsonrpc":"2.0","method":"notifications/initialized"}' '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' |
		"$OPTLOOP" mcp 2>/dev/null | python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("id") == 2: print(" ".join(sorted(t["name"] for t in m["result"]["tools"])))')
	t_is "  every tool of the server, by name" \
		"$(python3 -c 'import json,sys; print(" ".join(sorted(t["name"] for t in json.load(open(sys.argv[1]))["tools"])))' "$T_TMP/insp.json" 2>&1)" \
		"$mine"
	t_like "  fifteen of them, verify among them" "$(wc -w <<<"$mine") $mine" '^15 .*\bverify\b'
else
	t_skip "the Inspector's CLI" "@modelcontextprotocol/inspector is not installed in build/node (make deps installs it where npm reaches its registry)"
fi
printf '# candidate\n' >>kernel/compute.sh
cand=$(sha1sum kernel/compute.sh)
run_part cancel KERNEL_SLEEP=26.9
t_is "after the abort the candidate is in the tree" "$(sha1sum kernel/compute.sh)" "$cand"
t_is "  the run is recorded incomplete (gate 4) and ended" \
	"$(sqlite3 profile/tiny-opt/optloop.db "SELECT gate, t_end > 0 FROM runs ORDER BY id DESC LIMIT 1")" "4|1"
t_is "  and no harness is left running" "$(pgrep -fc '^sleep 26\.9$')" 0
t_done
