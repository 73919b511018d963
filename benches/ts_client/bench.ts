// The baseline for `mcp-harness bench`: the official TypeScript SDK's client
// calling one tool of a stdio server N times, C calls in flight, printing the
// same JSON report as `mcp-harness bench --json`. Run by benches/vs_ts_sdk.rs
// with the pinned Node 22 (type stripping runs this file as is):
//
//   node bench.ts SDK_DIR N C TOOL ARGS_JSON COMMAND [SERVER_ARGS...]
//
// SDK_DIR is the installed @modelcontextprotocol/sdk (pinned in interop/),
// imported by path because this file lives outside its node_modules.

import { pathToFileURL } from "node:url";

const [sdkDir, nText, cText, tool, argsJson, command, ...serverArgs] = process.argv.slice(2);
if (!sdkDir || !nText || !cText || !tool || !argsJson || !command) {
  console.error("usage: node bench.ts SDK_DIR N C TOOL ARGS_JSON COMMAND [SERVER_ARGS...]");
  process.exit(2);
}
const calls = Number(nText);
const concurrency = Number(cText);
const args = JSON.parse(argsJson);

const load = (path: string) => import(pathToFileURL(`${sdkDir}/dist/esm/${path}`).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");

const client = new Client({ name: "ts-sdk-bench", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command, args: serverArgs, stderr: "ignore" }));

const latencies: number[] = [];
const errors: Record<string, number> = {};
let ok = 0;
let started = 0;

async function worker(): Promise<void> {
  while (started < calls) {
    started += 1;
    const start = process.hrtime.bigint();
    try {
      const result = await client.callTool({ name: tool, arguments: args });
      if (result.isError) {
        errors.remote_error = (errors.remote_error ?? 0) + 1;
      } else {
        ok += 1;
      }
    } catch {
      errors.exception = (errors.exception ?? 0) + 1;
    }
    latencies.push(Number(process.hrtime.bigint() - start) / 1000);
  }
}

const t0 = process.hrtime.bigint();
await Promise.all(Array.from({ length: concurrency }, worker));
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
await client.close();

latencies.sort((a, b) => a - b);
// Nearest rank, as `mcp-harness bench` computes it.
const percentile = (p: number) =>
  Math.round(latencies[Math.max(1, Math.ceil((p * latencies.length) / 100)) - 1] ?? 0);
console.log(
  JSON.stringify({
    alias: "ts-sdk",
    tool,
    calls: latencies.length,
    ok,
    errors,
    concurrency,
    latency_us: { p50: percentile(50), p90: percentile(90), p99: percentile(99) },
    calls_per_s: Math.round((latencies.length / seconds) * 10) / 10,
  }),
);
