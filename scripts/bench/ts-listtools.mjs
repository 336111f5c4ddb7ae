// ts-listtools.mjs: the TypeScript SDK's client-side cost of tools/list
// against a flameox MCP server (docs/performance.md, "MCP").
//
//   cd DIR_WITH_@modelcontextprotocol/sdk && node /path/to/ts-listtools.mjs BIN PROJECT [N]
//
// BIN is fox-mcp (run as `BIN serve --project-root PROJECT`). The script
// connects once, calls listTools N times (default 20) and prints the
// bytes of the tools list and the median, min and max milliseconds of a
// listTools call: the round trip plus the SDK's parsing and its ajv
// compilation of every output schema (Client.cacheToolMetadata).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bin, dir, n = "20"] = process.argv.slice(2);
const transport = new StdioClientTransport({ command: bin, args: ["serve", "--project-root", dir], stderr: "inherit" });
const client = new Client({ name: "flameox-bench", version: "1.0.0" });
await client.connect(transport);
const times = [];
let bytes = 0, tools = 0;
for (let i = 0; i < Number(n); i++) {
  const t0 = process.hrtime.bigint();
  const res = await client.listTools();
  times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  bytes = JSON.stringify(res).length;
  tools = res.tools.length;
}
await client.close();
times.sort((a, b) => a - b);
const med = times.length % 2 ? times[(times.length - 1) / 2] : (times[times.length / 2 - 1] + times[times.length / 2]) / 2;
console.log(JSON.stringify({ tools, bytes, calls: times.length, median_ms: +med.toFixed(2), min_ms: +times[0].toFixed(2), max_ms: +times[times.length - 1].toFixed(2) }));
