// client.mjs OPTLOOP DIR PART: drive `optloop -C DIR mcp` with the official
// MCP TypeScript SDK (Client over StdioClientTransport), for
// tests/e2e/t_mcp_sdk.sh.  Prints one "name<TAB>got<TAB>want" line per check
// and "client<TAB>done<TAB>done" at the end.
//   loop:   tools listed, status, a baseline verify with progress, a refused
//           second verify, log, commit, the resources read
//   cancel: a slow verify aborted through the SDK (notifications/cancelled):
//           the run ends as an attempt
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [optloop, dir, part] = process.argv.slice(2);
const slack = Number(process.env.T_SLACK || 1);

function check(name, got, want) {
	const s = (v) => (typeof v === "string" ? v : JSON.stringify(v)).replace(/[\t\n]/g, " ");
	console.log(`${name}\t${s(got)}\t${s(want)}`);
}

const transport = new StdioClientTransport({
	command: optloop,
	args: ["-C", dir, "mcp"],
	env: { ...process.env },
	stderr: "inherit",
});
const client = new Client({ name: "t_mcp_sdk", version: "1.0.0" });
await client.connect(transport);
check("the SDK connects and reads the server's name", client.getServerVersion()?.name, "optloop");

const timeout = 120000 * slack;

async function loop() {
	const { tools } = await client.listTools();
	const names = tools.map((t) => t.name).sort();
	check("listTools: every tool", names.join(" "),
		"commit confirm contract dependents export log noise promote_attach promote_check " +
		"promote_explain reassess report status stop verify");
	let r = await client.callTool({ name: "status" });
	check("status: the state as structured content", r.structuredContent?.state, "need_baseline");

	const progress = [];
	r = await client.callTool({ name: "verify", arguments: {} }, undefined, {
		onprogress: (p) => progress.push(p),
		timeout,
	});
	check("verify: the baseline passes its gate", [r.isError, r.structuredContent?.gate], [false, "pass"]);
	check("  progress came through the SDK", progress.length > 3, true);
	check("  with the gate line", progress.some((p) => /GATE PASSED/.test(p.message || "")), true);

	r = await client.callTool({ name: "verify" });
	check("a second verify: an error result, exit 3", [r.isError, r.structuredContent?.exit], [true, 3]);
	check("  naming the due step", /run optloop log first/.test(r.content[0].text), true);

	r = await client.callTool({ name: "log", arguments: { direction: "baseline" } });
	check("log", r.isError, false);
	r = await client.callTool({ name: "commit" });
	check("commit", r.isError, false);

	let err = "";
	try {
		await client.callTool({ name: "log", arguments: { direction: 7 } });
	} catch (e) {
		err = String(e.message);
	}
	check("a wrong argument type: the SDK rejects with the server's error", /-32602.*direction/.test(err), true);

	const { resources } = await client.listResources();
	check("listResources", resources.length, 4);
	const log = await client.readResource({ uri: "optloop://workspace/OPT_LOG.md" });
	check("readResource OPT_LOG.md: the baseline row", /\| 0 \| baseline \|/.test(log.contents[0].text), true);
	const st = await client.readResource({ uri: "optloop://status" });
	check("readResource status", JSON.parse(st.contents[0].text).state, "ready");
}

async function cancel() {
	const ac = new AbortController();
	let aborted = "";
	const call = client
		.callTool({ name: "verify" }, undefined, {
			signal: ac.signal,
			timeout,
			onprogress: (p) => {
				if (/Correctness gate/.test(p.message || "")) ac.abort("enough");
			},
		})
		.catch((e) => (aborted = String(e)));
	await call;
	check("an aborted verify rejects in the client", aborted !== "", true);
	// the server stopped it as Ctrl-C does: the attempt is on record
	let next = "";
	for (let i = 0; i < 300 * slack && !/was cancelled/.test(next); i++) {
		const r = await client.callTool({ name: "status" });
		next = r.structuredContent?.next || "";
		if (!/was cancelled/.test(next)) await new Promise((res) => setTimeout(res, 100));
	}
	check("  the server cancelled the run: status shows the attempt", /was cancelled/.test(next), true);
}

await (part === "cancel" ? cancel() : loop());
await client.close();
console.log("client\tdone\tdone");
