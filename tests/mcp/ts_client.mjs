// Drive the fixture server with the TypeScript MCP SDK's client (`@modelcontextprotocol/sdk`, a
// 2025-11-25 client), over streamable HTTP or stdio, and check what it gets back.
//
// Usage: node ts_client.mjs SDK_PREFIX WORKSPACE http URL
//        node ts_client.mjs SDK_PREFIX WORKSPACE stdio -- COMMAND ARGS...
//
// SDK_PREFIX is the npm prefix the SDK is installed under; WORKSPACE the server's workspace
// directory (the accepted approval's file is looked for there). Checks: the revision the
// `initialize` handshake really negotiated, the `tools/list` order, a structured result, a
// refusal's reason code as data, an approval round trip through server-to-client elicitation
// (declined, accepted without `approve`, accepted), an image result and the error for an unknown
// tool. Prints one line per check and exits 1 on any mismatch.

import { createRequire } from "node:module";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

const [sdkPrefix, workspace, transportKind, ...rest] = process.argv.slice(2);
const require = createRequire(join(resolve(sdkPrefix), "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { ElicitRequestSchema, McpError } = require("@modelcontextprotocol/sdk/types.js");
// The package's exports do not include its package.json: read it from where the client resolved.
const sdkVersion = JSON.parse(
  readFileSync(join(require.resolve("@modelcontextprotocol/sdk/client/index.js").split("/dist/")[0], "package.json"), "utf8"),
).version;

const failures = [];
function check(ok, what) {
  console.log((ok ? "ok   " : "FAIL ") + what);
  if (!ok) failures.push(what);
}

function makeTransport() {
  if (transportKind === "http") {
    return new StreamableHTTPClientTransport(new URL(rest[0]));
  }
  if (transportKind === "stdio" && rest[0] === "--" && rest.length > 1) {
    return new StdioClientTransport({ command: rest[1], args: rest.slice(2), stderr: "inherit" });
  }
  throw new Error(`unknown transport: ${transportKind} ${rest.join(" ")}`);
}

// Records the `initialize` result the server sent, whichever transport carries it: the SDK
// keeps the negotiated version to itself on stdio.
function recordInitialize(transport) {
  const seen = { protocolVersion: undefined };
  let handler;
  Object.defineProperty(transport, "onmessage", {
    configurable: true,
    get: () => handler,
    set: (inner) => {
      handler = (message, extra) => {
        if (message && message.id === 0 && message.result && message.result.protocolVersion) {
          seen.protocolVersion = message.result.protocolVersion;
        }
        return inner?.(message, extra);
      };
    },
  });
  return seen;
}

const textOf = (result) =>
  (result.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
const reasonCode = (result) => [
  (result.structuredContent || {}).reason_code,
  (result._meta || {}).reason_code,
];

async function run() {
  const transport = makeTransport();
  const negotiated = recordInitialize(transport);
  const client = new Client({ name: "ts-sdk-test", version: sdkVersion }, { capabilities: { elicitation: { form: {} } } });

  // The approval form: the answer to give next, and what was asked.
  const elicitor = { answer: "decline", asked: 0, messages: [], schemas: [] };
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    elicitor.asked += 1;
    elicitor.messages.push(request.params.message || "");
    elicitor.schemas.push(request.params.requestedSchema || {});
    if (elicitor.answer === "accept") return { action: "accept", content: { approve: true } };
    if (elicitor.answer === "accept-without-approve") return { action: "accept", content: { approve: false } };
    return { action: "decline" };
  });

  await client.connect(transport);
  try {
    check(negotiated.protocolVersion === "2025-11-25", `negotiated 2025-11-25 (got ${negotiated.protocolVersion}, sdk ${sdkVersion})`);
    if (transportKind === "http") {
      check(transport.protocolVersion === "2025-11-25", `the transport sends 2025-11-25 (got ${transport.protocolVersion})`);
    }
    console.log(`protocol: ${negotiated.protocolVersion} (sdk ${sdkVersion}, ${transportKind})`);

    const names = (await client.listTools()).tools.map((t) => t.name);
    const sorted = [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    check(JSON.stringify(names) === JSON.stringify(sorted), `tools/list is sorted by name (${names.slice(0, 4).join(", ")}, ...)`);
    for (const name of ["write_note", "count_words", "read_note", "test_image_content"]) {
      check(names.includes(name), `tools/list has ${name}`);
    }

    let r = await client.callTool({ name: "count_words", arguments: { text: "one two three" } });
    check(!r.isError && (r.structuredContent || {}).words === 3, `count_words structured result (${JSON.stringify(r.structuredContent)})`);

    r = await client.callTool({ name: "read_note", arguments: { path: "../outside.txt" } });
    check(r.isError === true, "a path outside the workspace is refused");
    const codes = reasonCode(r);
    check(codes[0] === "path_outside_workspace" && codes[1] === "path_outside_workspace", `the refusal's reason code is data (${codes})`);

    const target = join(workspace, "ts-approved.txt");
    elicitor.answer = "decline";
    r = await client.callTool({ name: "write_note", arguments: { path: "ts-approved.txt", text: "from ts" } });
    check(elicitor.asked === 1, `the approval was asked once (asked ${elicitor.asked})`);
    check(r.isError === true && reasonCode(r)[0] === "approval_denied", `declined: approval_denied (${textOf(r).slice(0, 60)})`);
    check(elicitor.messages.at(-1).includes("write_note"), "the question names the tool");
    check((elicitor.schemas.at(-1).properties || {}).approve?.type === "boolean", "the form asks for a boolean `approve`");
    check(!existsSync(target), "declined: nothing was written");

    elicitor.answer = "accept-without-approve";
    r = await client.callTool({ name: "write_note", arguments: { path: "ts-approved.txt", text: "from ts" } });
    check(elicitor.asked === 2, `asked again for the next call (asked ${elicitor.asked})`);
    check(r.isError === true && reasonCode(r)[0] === "approval_denied", `accepted with approve=false: approval_denied (${textOf(r).slice(0, 60)})`);
    check(!existsSync(target), "approve=false: nothing was written");

    elicitor.answer = "accept";
    r = await client.callTool({ name: "write_note", arguments: { path: "ts-approved.txt", text: "from ts" } });
    check(elicitor.asked === 3, `asked again (asked ${elicitor.asked})`);
    check(!r.isError && textOf(r).includes("wrote"), `accepted: the tool ran (${textOf(r).slice(0, 60)})`);
    check(existsSync(target) && readFileSync(target, "utf8") === "from ts", "accepted: the file holds the text");

    r = await client.callTool({ name: "test_image_content", arguments: {} });
    const image = (r.content || []).find((c) => c.type === "image");
    check(!r.isError && image !== undefined, `an image block (${(r.content || []).map((c) => c.type)})`);
    if (image) {
      check(image.mimeType === "image/png", `the image is image/png (${image.mimeType})`);
      const bytes = Buffer.from(image.data, "base64");
      const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
      check(bytes.length > signature.length && bytes.subarray(0, 8).equals(signature), `the data is a PNG (${bytes.length} bytes)`);
    }

    try {
      await client.callTool({ name: "no_such_tool", arguments: {} });
      check(false, "an unknown tool is a JSON-RPC error");
    } catch (e) {
      check(e instanceof McpError && e.code === -32602, `an unknown tool is -32602 (got ${e.code}: ${e.message})`);
    }
  } finally {
    await client.close();
  }
}

run()
  .catch((e) => {
    check(false, `the client failed: ${e && e.stack ? e.stack : e}`);
  })
  .finally(() => {
    console.log(`${failures.length} failed`);
    process.exit(failures.length ? 1 : 0);
  });
