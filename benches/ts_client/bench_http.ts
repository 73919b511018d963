// The official TypeScript SDK's client calling one tool of a Streamable HTTP
// server N times, C calls in flight, printing the same JSON report as
// `mcp-harness bench --json`. Run by benches/gateway.rs against an upstream
// directly and through `mcp-harness serve --http`, with the pinned Node 22:
//
//   node bench_http.ts SDK_DIR N C TOOL ARGS_JSON URL [TOKEN]
//
// A warm-up of 50 calls comes first and is not counted.

import { pathToFileURL } from "node:url";

const [sdkDir, nText, cText, tool, argsJson, url, token] = process.argv.slice(2);
if (!sdkDir || !nText || !cText || !tool || !argsJson || !url) {
  console.error("usage: node bench_http.ts SDK_DIR N C TOOL ARGS_JSON URL [TOKEN]");
  process.exit(2);
}
const calls = Number(nText);
const concurrency = Number(cText);
const args = JSON.parse(argsJson);

const load = (path: string) => import(pathToFileURL(`${sdkDir}/dist/esm/${path}`).href);
const { Client } = await load("client/index.js");
const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");

const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
const client = new Client({ name: "ts-sdk-bench-http", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));

for (let i = 0; i < 50; i += 1) {
  await client.callTool({ name: tool, arguments: args });
}

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
    tool,
    calls: latencies.length,
    ok,
    errors,
    concurrency,
    latency_us: { p50: percentile(50), p90: percentile(90), p99: percentile(99) },
    calls_per_s: Math.round((latencies.length / seconds) * 10) / 10,
  }),
);
