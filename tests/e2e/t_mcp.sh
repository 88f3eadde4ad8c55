#!/usr/bin/env bash
# optloop mcp: the loop over the Model Context Protocol (JSON-RPC 2.0 on
# stdio), driven by a small client written here: version negotiation, the
# tools and their schemas from the command table, a baseline verify with
# progress, log and commit, a refused verify as an error result (exit 3 and
# the due step), the spec's errors for malformed and wrong requests,
# resources and a subscription, a cancelled verify (SIGINT, as Ctrl-C: an
# attempt recorded, the candidate in the tree), a confirm cancelled half-way
# (the candidate back), a client that closes stdin mid-run (nothing lost, no
# harness left running), and a workbench on the same workspace naming the
# server and its tool as the driver.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tui_lib.sh"
d="$T_TMP/tiny"
tiny_workspace "$d"

# The client: one server per session; prints "name<TAB>got<TAB>want" per
# check, which the loop below turns into t_is lines.
cat >"$T_TMP/client.py" <<'PY'
import hashlib, json, os, queue, re, sqlite3, subprocess, sys, threading, time

OPTLOOP = os.environ["OPTLOOP"]
SLACK = float(os.environ.get("T_SLACK", "1"))
def check(name, got, want):
    print("%s\t%s\t%s" % (name, str(got).replace("\t", " ").replace("\n", " "), want), flush=True)

class Server:
    def __init__(self, env=None, args=()):
        e = dict(os.environ); e.update(env or {})
        self.p = subprocess.Popen([OPTLOOP, *args, "mcp"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, env=e)
        self.q = queue.Queue(); self.next_id = 0; self.notes = []
        threading.Thread(target=self._read, daemon=True).start()
    def _read(self):
        for line in self.p.stdout:
            self.q.put(line)
        self.q.put(None)
    def send_raw(self, text):
        self.p.stdin.write(text.encode() + b"\n"); self.p.stdin.flush()
    def send(self, msg):
        self.send_raw(json.dumps(msg))
    def get(self, timeout=30):
        line = self.q.get(timeout=timeout * SLACK)
        return None if line is None else json.loads(line)
    def request(self, method, params=None, timeout=60, rid=None):
        if rid is None:
            self.next_id += 1; rid = self.next_id
        m = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None: m["params"] = params
        self.send(m)
        return self.wait(rid, timeout)
    def wait(self, rid, timeout=60):
        end = time.time() + timeout * SLACK
        while True:
            m = self.get(max(0.1, end - time.time()))
            if m is None: raise SystemExit("server closed stdout")
            if "id" in m and m.get("id") == rid and "method" not in m: return m
            self.notes.append(m)
    def call(self, tool, args=None, token=None, timeout=60):
        p = {"name": tool, "arguments": args or {}}
        if token is not None: p["_meta"] = {"progressToken": token}
        return self.request("tools/call", p, timeout)
    def initialize(self, version="2025-06-18"):
        r = self.request("initialize", {"protocolVersion": version, "capabilities": {},
                                        "clientInfo": {"name": "t_mcp", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return r

def sha(path):
    return hashlib.sha1(open(path, "rb").read()).hexdigest()
def db():
    return sqlite3.connect("file:profile/tiny-opt/optloop.db?mode=ro", uri=True)
def last_run():
    with db() as c:
        return c.execute("SELECT id, gate, t_end > 0 FROM runs ORDER BY id DESC LIMIT 1").fetchone()
def last_cancelled():
    """whether the last run was stopped by its own signal handler (SIGINT,
    as Ctrl-C), not killed"""
    with db() as c:
        return c.execute("SELECT cancelled FROM runs ORDER BY id DESC LIMIT 1").fetchone()[0]
def harness_running():
    return subprocess.run(["pgrep", "-f", "^sleep 27\\.3$"], capture_output=True).returncode == 0
def wait_for(pred, secs):
    end = time.time() + secs * SLACK
    while time.time() < end:
        if pred(): return True
        time.sleep(0.1)
    return False

def session_main():
    s = Server()
    r = s.initialize()
    check("initialize answers the version asked for", r["result"]["protocolVersion"], "2025-06-18")
    check("and names the server", r["result"]["serverInfo"]["name"], "optloop")
    check("it offers tools and subscribable resources",
          (sorted(r["result"]["capabilities"]), r["result"]["capabilities"]["resources"]["subscribe"]),
          (["resources", "tools"], True))
    r = s.request("initialize", {"protocolVersion": "1999-01-01", "capabilities": {},
                                 "clientInfo": {"name": "old", "version": "0"}})
    check("a version it does not support: it answers its latest", r["result"]["protocolVersion"], "2025-06-18")
    check("ping answers an empty result", s.request("ping")["result"], {})

    tools = {t["name"]: t for t in s.request("tools/list")["result"]["tools"]}
    want = ["commit", "confirm", "contract", "dependents", "export", "log", "noise",
            "promote_attach", "promote_check", "promote_explain", "reassess", "report",
            "status", "stop", "verify"]
    check("tools/list lists every tool", sorted(tools), want)
    bad = []
    for t in tools.values():
        sc = t["inputSchema"]
        ok = (sc.get("type") == "object" and isinstance(sc.get("properties"), dict)
              and sc.get("additionalProperties") is False
              and set(sc.get("required", [])) <= set(sc["properties"])
              and isinstance(t.get("description"), str) and t["description"])
        for p in sc["properties"].values():
            ok = ok and p.get("type") in ("boolean", "string", "integer", "number", "array") \
                 and isinstance(p.get("description"), str)
            if p.get("type") == "array": ok = ok and p.get("items") == {"type": "string"}
        if not ok: bad.append(t["name"])
    check("every input schema is a JSON Schema object with typed, described properties", bad, [])
    lg = tools["log"]["inputSchema"]
    check("log: direction is a required string", (lg["required"], lg["properties"]["direction"]["type"]),
          (["direction"], "string"))
    check("log: status takes the statuses", lg["properties"]["status"]["enum"], ["keep", "revert", "drop", "floor"])
    check("log: --json is given by the server, not an argument", "json" in lg["properties"], False)
    vp = tools["verify"]["inputSchema"]["properties"]
    check("verify: timeout is a number, include a list, profile a flag",
          (vp["timeout"]["type"], vp["include"]["type"], vp["profile"]["type"], "gate_k" in vp),
          ("number", "array", "boolean", True))
    check("confirm: max_pairs is an integer with its bounds",
          tools["confirm"]["inputSchema"]["properties"]["max_pairs"]["type"], "integer")
    check("promote_explain needs its text", tools["promote_explain"]["inputSchema"]["required"], ["explain"])
    check("report takes which report as an enum",
          tools["report"]["inputSchema"]["properties"]["report"]["enum"], ["final", "header", "pr", "nogo"])
    ann = lambda n: (tools[n]["annotations"]["readOnlyHint"], tools[n]["annotations"]["destructiveHint"])
    check("annotations: status and export only read", (ann("status"), ann("export"), ann("promote_check")),
          ((True, False), (True, False), (True, False)))
    check("annotations: verify, log and commit write; stop is destructive",
          (ann("verify"), ann("log"), ann("commit"), ann("stop")),
          ((False, False), (False, False), (False, False), (False, True)))

    # the loop: baseline verify with progress
    s.notes = []
    r = s.call("verify", {}, token="base", timeout=120)
    res = r["result"]
    check("baseline verify: a result, not an error", res["isError"], False)
    check("its JSON is the structured content", (res["structuredContent"]["gate"],
          res["structuredContent"]["iteration"]), ("pass", 0))
    check("and a text copy of it", json.loads(res["content"][0]["text"])["gate"], "pass")
    prog = [n["params"] for n in s.notes if n.get("method") == "notifications/progress"]
    check("progress notifications came with the token", len(prog) > 3 and all(p["progressToken"] == "base" for p in prog), True)
    check("progress only grows", all(b["progress"] > a["progress"] for a, b in zip(prog, prog[1:])), True)
    msgs = " | ".join(p.get("message", "") for p in prog)
    check("they carry the stage and gate lines", ("Correctness gate" in msgs, "GATE PASSED" in msgs), (True, True))
    check("  each gate case led by the stage and its percent", any(re.match(r"\[gate 100%\] tests/", p.get("message", "")) for p in prog), True)
    check("  the banner and the verdict by the stage", ("[gate] Correctness gate" in msgs, "[gate] GATE PASSED" in msgs), (True, True))
    r = s.call("verify")["result"]
    check("a second verify is refused: an error result with exit 3",
          (r["isError"], r["structuredContent"]["exit"]), (True, 3))
    check("  whose message names the due step", "run optloop log first" in r["content"][0]["text"], True)
    check("  structured as well", "run optloop log first" in r["structuredContent"]["message"], True)
    r = s.call("log", {"direction": "baseline"})["result"]
    check("log: the row", (r["isError"], r["structuredContent"].get("iteration")), (False, 0))
    r = s.call("commit")["result"]
    check("commit", r["isError"], False)
    r = s.call("status")["result"]
    check("status: ready, as structured content", r["structuredContent"]["state"], "ready")

    # errors of the protocol
    s.send_raw('{"jsonrpc": "2.0", "id": 99, "method": ')
    m = s.get()
    check("malformed JSON: -32700 with a null id", (m["error"]["code"], m["id"]), (-32700, None))
    m = s.request("tools/frobnicate")
    check("an unknown method: -32601", m["error"]["code"], -32601)
    s.send({"jsonrpc": "2.0", "method": "notifications/whatever"})
    m = s.request("ping")
    check("an unknown notification gets no answer", m["result"], {})
    s.send({"jsonrpc": "1.0", "id": 7, "method": "ping"})
    m = s.get()
    check("jsonrpc not 2.0: -32600", (m["error"]["code"], m["id"]), (-32600, 7))
    s.send({"jsonrpc": "2.0", "id": [1], "method": "ping"})
    check("an id that is neither string nor integer: -32600", s.get()["error"]["code"], -32600)
    s.send_raw('[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]')
    check("a batch: -32600", s.get()["error"]["code"], -32600)
    m = s.call("frobnicate")
    check("an unknown tool: -32602 naming it", (m["error"]["code"], "frobnicate" in m["error"]["message"]), (-32602, True))
    m = s.call("log", {"direction": 5})
    check("a wrong argument type: -32602 saying which and what it must be",
          (m["error"]["code"], m["error"]["message"]), (-32602, "argument 'direction' must be a string, not an integer"))
    m = s.call("log", {"direction": "x", "colour": "blue"})
    check("an unknown argument: -32602 listing what it takes",
          (m["error"]["code"], "takes no argument 'colour'" in m["error"]["message"], "direction" in m["error"]["message"]),
          (-32602, True, True))
    m = s.call("log", {})
    check("a missing required argument: -32602", (m["error"]["code"], "needs argument 'direction'" in m["error"]["message"]), (-32602, True))
    m = s.call("confirm", {"max_pairs": 0})
    check("out of range: -32602", m["error"]["code"], -32602)
    m = s.call("log", {"direction": "x", "status": "maybe"})
    check("not one of the choices: -32602", m["error"]["code"], -32602)
    m = s.request("tools/call", {"name": "status", "_meta": {"progressToken": {"a": 1}}})
    check("a progress token that is neither string nor integer: -32602", m["error"]["code"], -32602)
    m = s.request("tools/call", {"name": "status", "arguments": []})
    check("arguments that are not an object: -32602", m["error"]["code"], -32602)

    # resources
    rs = [x["uri"] for x in s.request("resources/list")["result"]["resources"]]
    check("resources/list", rs, ["optloop://workspace/OPT_LOG.md", "optloop://workspace/TRAPS.md",
                                 "optloop://workspace/docs/draft.md", "optloop://status"])
    c = s.request("resources/read", {"uri": "optloop://workspace/OPT_LOG.md"})["result"]["contents"][0]
    check("OPT_LOG.md reads as the file", c["text"] == open("profile/tiny-opt/OPT_LOG.md").read(), True)
    c = s.request("resources/read", {"uri": "optloop://workspace/docs/draft.md"})["result"]["contents"][0]
    check("docs/draft.md too", "N up to 50, 2x" in c["text"], True)
    c = s.request("resources/read", {"uri": "optloop://status"})["result"]["contents"][0]
    check("the status is JSON", (c["mimeType"], json.loads(c["text"])["state"]), ("application/json", "ready"))
    m = s.request("resources/read", {"uri": "optloop://nothing"})
    check("an unknown resource: -32002", m["error"]["code"], -32002)
    check("subscribe to OPT_LOG.md", s.request("resources/subscribe", {"uri": "optloop://workspace/OPT_LOG.md"})["result"], {})
    # a failed gate: exit 1, the command's JSON beside a short message
    src = open("kernel/compute.sh").read()
    open("kernel/compute.sh", "w").write(src.replace("* 2 ))", "* 3 ))"))
    s.notes = []
    r = s.call("verify", timeout=120)["result"]
    sc = r["structuredContent"]
    check("a failed gate: an error result with exit 1 and the run's JSON",
          (r["isError"], sc["exit"], sc["result"]["gate"]), (True, 1, "fail"))
    check("  its message is the gate and the due step, not the harness's output",
          (sc["message"].startswith("gate: fail\nnext: log iteration"), "test_compute" in sc["message"]),
          (True, False))
    r = s.call("log", {"direction": "times three", "status": "drop"})["result"]
    check("log of a drop row", r["isError"], False)
    s.request("ping")
    ups = [n["params"]["uri"] for n in s.notes if n.get("method") == "notifications/resources/updated"]
    check("a row logged: notifications/resources/updated for OPT_LOG.md", ups[:1], ["optloop://workspace/OPT_LOG.md"])
    check("commit of the drop row", s.call("commit")["result"]["isError"], False)
    s.p.stdin.close()
    check("closing stdin ends the server (exit 0)", s.p.wait(timeout=30 * SLACK), 0)

def start_slow_verify(s, token):
    s.next_id += 1
    rid = s.next_id
    s.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
            "params": {"name": "verify", "arguments": {}, "_meta": {"progressToken": token}}})
    return rid

def session_cancel():
    with open("kernel/compute.sh", "a") as f: f.write("# candidate\n")
    cand = sha("kernel/compute.sh")
    before = last_run()[0]
    s = Server(env={"KERNEL_SLEEP": "27.3"})
    s.initialize()
    rid = start_slow_verify(s, "slow")
    check("a slow verify: its harness starts", wait_for(harness_running, 20), True)
    m = s.request("ping", timeout=10)
    check("while it runs, other requests are answered", m["result"], {})
    s.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": rid, "reason": "the user changed their mind"}})
    check("cancelled: the run ends, recorded incomplete (gate 4), ended",
          wait_for(lambda: last_run()[0] > before and last_run()[1:] == (4, 1), 30), True)
    check("  and no harness is left running", wait_for(lambda: not harness_running(), 10), True)
    s.request("ping")
    time.sleep(0.5)
    s.request("ping")
    check("  the child got SIGINT, as from Ctrl-C: the run was cancelled, not killed", last_cancelled(), 1)
    check("  the cancelled request gets no answer", [n for n in s.notes if n.get("id") == rid], [])
    r = s.call("status")["result"]["structuredContent"]
    check("  the workspace shows the attempt", ("was cancelled" in r["next"], r["state"]), (True, "editing"))
    check("  the candidate is still in the tree", sha("kernel/compute.sh"), cand)
    s.p.stdin.close()
    s.p.wait(timeout=30 * SLACK)

def session_confirm():
    # the candidate of the cancelled verify, measured; then a confirm whose
    # runs are slow, cancelled while the best is swapped into the tree
    cand = sha("kernel/compute.sh")
    s = Server()
    s.initialize()
    r = s.call("verify", timeout=120)["result"]
    check("the candidate measured", r["isError"], False)
    before = last_run()[0]
    s.next_id += 1
    rid = s.next_id
    s.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
            "params": {"name": "confirm", "arguments": {"cmd": "sleep 27.3; ./verify --no-gate"},
                       "_meta": {"progressToken": 7}}})
    check("a slow confirm: its first run starts", wait_for(harness_running, 20), True)
    check("  with the best swapped into the tree", sha("kernel/compute.sh") != cand, True)
    s.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}})
    check("cancelled half-way: the confirm's run ends, recorded incomplete",
          wait_for(lambda: last_run()[0] > before and last_run()[1:] == (4, 1), 30), True)
    check("  no harness is left running", wait_for(lambda: not harness_running(), 10), True)
    s.request("ping")
    time.sleep(0.5)
    check("  the confirm got SIGINT, as from Ctrl-C: its run was cancelled, not killed", last_cancelled(), 1)
    with db() as c:
        ev = c.execute("SELECT detail FROM events WHERE kind = 'confirm.cancelled' ORDER BY id DESC LIMIT 1").fetchone()
    check("  the confirm's cancel is on record with the candidate back", "the candidate is back" in (ev or [""])[0], True)
    check("  the candidate is back in the tree", sha("kernel/compute.sh"), cand)
    check("  the cancelled confirm gets no answer", [n for n in s.notes if n.get("id") == rid], [])
    r = s.call("log", {"direction": "a comment more", "status": "drop", "commit": True})["result"]
    check("the candidate logged as a drop and committed in one call", r["isError"], False)
    s.p.stdin.close()
    s.p.wait(timeout=30 * SLACK)

def session_eof():
    with open("kernel/compute.sh", "a") as f: f.write("# another candidate\n")
    cand = sha("kernel/compute.sh")
    before = last_run()[0]
    s = Server(env={"KERNEL_SLEEP": "27.3"})
    s.initialize()
    rid = start_slow_verify(s, "eof")
    check("another slow verify starts", wait_for(harness_running, 20), True)
    t0 = time.time()
    s.p.stdin.close()
    rc = s.p.wait(timeout=30 * SLACK)
    check("the client closes stdin mid-run: the server stops the run and exits 0", rc, 0)
    check("  well before the harness would have ended", time.time() - t0 < 25, True)
    m = s.wait(rid, 5)
    check("  the run's answer was still written: an error result (exit 4, incomplete)",
          (m["result"]["isError"], m["result"]["structuredContent"]["exit"]), (True, 4))
    check("  the run is recorded incomplete and ended", (last_run()[0] > before, last_run()[1:]), (True, (4, 1)))
    check("  no harness is left running", not harness_running(), True)
    check("  the candidate is in the tree", sha("kernel/compute.sh"), cand)

{"main": session_main, "cancel": session_cancel, "confirm": session_confirm,
 "eof": session_eof}[sys.argv[1]]()
print("client\tdone\tdone")
PY

for part in main cancel confirm eof; do
	timeout $((300 * ${T_SLACK:-1})) python3 "$T_TMP/client.py" "$part" >"$T_TMP/$part.tsv" 2>"$T_TMP/$part.err"
	ran=0
	while IFS=$'\t' read -r name got want; do
		[ "$name" = client ] && continue
		t_is "$name" "$got" "$want"
		ran=1
	done <"$T_TMP/$part.tsv"
	t_is "the $part session ran to its end" "$(tail -n 1 "$T_TMP/$part.tsv")" $'client\tdone\tdone'
	[ "$ran" = 1 ] || t_fail "$part: no checks" "$(tail -n 20 "$T_TMP/$part.err")"
	grep -q . "$T_TMP/$part.err" && [ "$(tail -n 1 "$T_TMP/$part.tsv")" != $'client\tdone\tdone' ] &&
		printf '#   %s\n' "$(tail -n 20 "$T_TMP/$part.err")"
done

# -C and --op reach every tool call, as for every command
cd "$T_TMP" || exit 1
out=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"status"}}' |
	"$OPTLOOP" -C "$d" --op tiny mcp)
t_is "-C DIR and --op: the tool runs on that workspace" \
	"$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["structuredContent"]["op"])')" tiny
out=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"status"}}' |
	"$OPTLOOP" -C "$d" --op nosuch mcp)
t_like "--op naming no workspace: the tool's error result says so" \
	"$(printf '%s' "$out" | python3 -c 'import json,sys; r=json.load(sys.stdin)["result"]; print(r["isError"], r["content"][0]["text"])')" \
	'^True optloop status exited 2: .*nosuch'
out=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"optloop://status"}}' \
	'{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"optloop://workspace/OPT_LOG.md"}}' |
	"$OPTLOOP" -C "$d" --op nosuch mcp)
t_is "  and reading its status or its files is -32002, saying why" \
	"$(printf '%s\n' "$out" | python3 -c 'import json,sys
for l in sys.stdin:
    e = json.loads(l)["error"]; print(e["code"], "nosuch" in e["message"])')" $'-32002 True\n-32002 True'

# A workbench open on the workspace while an agent's tool call runs: it
# names the server and the tool as the driver.
cd "$d" || exit 1
tui_start 120 32 LANG=C.UTF-8 -- "$OPTLOOP" tui
t_screen "a workbench opens on the workspace" 'iter [0-9]+ . EDITING'
mkfifo "$T_TMP/mcp.in"
KERNEL_SLEEP=27.3 "$OPTLOOP" mcp <"$T_TMP/mcp.in" >"$T_TMP/mcp.out" 2>"$T_TMP/mcp.err" &
mpid=$!
exec 7>"$T_TMP/mcp.in"
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"verify"}}' >&7
t_screen "it names the agent's server and tool as the driver" \
	"driven by pid $mpid: optloop mcp, tool verify \\(iteration [0-9]+\\)"
exec 7>&-
wait $mpid
t_is "the client leaves: the server stops the run and exits 0" "$?" 0
t_screen "the workbench shows the run's end: still EDITING, verify due again" 'iter [0-9]+ . EDITING'
tui_keys q
tui_stop
tui_check_stderr

# SIGTERM to the server mid-run (the client's shutdown after closing stdin
# timed out, or a session manager): the run is stopped as on Ctrl-C, its
# answer written, and the server exits 0 after it
last_run() { sqlite3 profile/tiny-opt/optloop.db "SELECT id, gate, t_end > 0, cancelled FROM runs ORDER BY id DESC LIMIT 1"; }
before=$(last_run)
mkfifo "$T_TMP/mcp2.in"
KERNEL_SLEEP=27.3 "$OPTLOOP" mcp <"$T_TMP/mcp2.in" >"$T_TMP/mcp2.out" 2>"$T_TMP/mcp2.err" &
mpid=$!
exec 7>"$T_TMP/mcp2.in"
printf '%s\n' '{"jsonrpc":"2.0","id":"v","method":"tools/call","params":{"name":"verify"}}' >&7
for _ in $(seq $((100 * ${T_SLACK:-3}))); do pgrep -f '^sleep 27\.3$' >/dev/null && break; sleep 0.1; done
kill -TERM $mpid
wait $mpid
t_is "SIGTERM to the server mid-run: it exits 0 after its child" "$?" 0
exec 7>&-
t_like "  the run is recorded: incomplete, ended, cancelled" "$(last_run)" '\|4\|1\|1$'
t_unlike "  a new one" "$(last_run)" "^${before%%|*}\|"
t_is "  the answer was written: an error result, exit 4" \
	"$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["result"]; print(r["isError"], r["structuredContent"]["exit"])' "$T_TMP/mcp2.out")" \
	"True 4"
t_is "  no harness left running" "$(pgrep -fc '^sleep 27\.3$')" 0
t_done
