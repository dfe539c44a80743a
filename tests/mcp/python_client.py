"""Drive an MCP server over stdio with the official Python `mcp` SDK and check what it returns.

Usage: python_client.py EXPECTATIONS.json WORKSPACE -- COMMAND [ARGS...]

Creates the expectation's files in WORKSPACE, starts COMMAND as a stdio MCP server, lists the
tools (exactly the expected ones when `exact_tool_list` is set), compares annotations, runs the
calls in order and prints one line per check. Exits 1 on any mismatch.
"""

import asyncio
import base64
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from sdk_checks import Elicitor, check, failures


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


async def run(expect, command):
    elicitor = Elicitor()
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, elicitation_callback=elicitor) as session:
            init = await session.initialize()
            want_name = expect.get("server_name", "declared-tools")
            check(init.server_info.name == want_name, f"server name is {want_name} ({init.server_info.name})")
            listed = {t.name: t for t in (await session.list_tools()).tools}
            if expect.get("exact_tool_list"):
                check(sorted(listed) == sorted(expect["tools"]), f"tools/list is exactly {sorted(expect['tools'])} (got {sorted(listed)})")
            for name, want in expect["tools"].items():
                tool = listed.get(name)
                check(tool is not None, f"tools/list has {name}")
                if tool is None:
                    continue
                got = tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else {}
                for key, value in want.get("annotations", {}).items():
                    check(got.get(key) == value, f"{name}.{key} == {value} (got {got.get(key)})")
                if "has_output_schema" in want:
                    check((tool.output_schema is not None) == want["has_output_schema"], f"{name} output schema presence")
                check("$schema" not in tool.input_schema or isinstance(tool.input_schema["$schema"], str), f"{name} input schema is an object schema")
            for call in expect["calls"]:
                label = f"{call['tool']}({json.dumps(call['arguments'])})"
                elicitor.answer = call.get("elicitation")
                asked_before = elicitor.asked
                try:
                    result = await session.call_tool(call["tool"], call["arguments"])
                except MCPError as e:
                    code = e.code
                    check(call.get("jsonrpc_error") == code, f"{label}: JSON-RPC error {code}")
                    continue
                check("jsonrpc_error" not in call, f"{label}: a result, not a JSON-RPC error")
                text = text_of(result)
                check(bool(result.is_error) == call["is_error"], f"{label}: isError == {call['is_error']} ({text[:80]!r})")
                if "text_starts_with" in call:
                    check(text.startswith(call["text_starts_with"]), f"{label}: text starts with {call['text_starts_with']}")
                if call["is_error"] and "text_starts_with" in call:
                    code = call["text_starts_with"]
                    got = ((result.structured_content or {}).get("reason_code"), (result.meta or {}).get("reason_code"))
                    check(got == (code, code), f"{label}: reason code {code} as data in structuredContent and _meta (got {got})")
                if "text_contains" in call:
                    check(call["text_contains"] in text, f"{label}: text contains {call['text_contains']!r}")
                if "content" in call:
                    got = [
                        {k: v for k, v in c.model_dump(by_alias=True, exclude_none=True).items() if k in ("type", "mimeType", "uri")}
                        for c in result.content
                    ]
                    check(got == call["content"], f"{label}: content blocks {call['content']} (got {got})")
                    for c in result.content:
                        if getattr(c, "type", None) in ("image", "audio"):
                            check(len(base64.b64decode(c.data, validate=True)) > 0, f"{label}: {c.type} data is base64")
                if "structured" in call:
                    check(result.structured_content == call["structured"], f"{label}: structuredContent == {call['structured']}")
                if "elicitation" in call:
                    check(elicitor.asked == asked_before + 1, f"{label}: approval asked through elicitation")


def main():
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        print(__doc__)
        return 2
    with open(sys.argv[1]) as f:
        expect = json.load(f)
    workspace = sys.argv[2]
    for rel, content in expect.get("files", {}).items():
        with open(os.path.join(workspace, rel), "w") as f:
            f.write(content)
    asyncio.run(run(expect, sys.argv[4:]))
    print(f"python mcp client: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
