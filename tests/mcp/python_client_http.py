"""Drive the fixture server over streamable HTTP with the Python `mcp` SDK's `Client`, in one
protocol mode, and check which revision it really negotiated.

Usage: python_client_http.py URL MODE EXPECTED_REVISION

MODE is the client's `mode`: `auto` (probes `server/discover`: a stateless 2026-07-28 client) or
`legacy` (the `initialize` handshake and a session). Checks: the negotiated revision, the
`tools/list` order, a structured result, a refusal's reason code as data, and an approval round
trip (declined, then accepted) through whatever the revision uses: an input-required result on
2026-07-28, a server-to-client elicitation request on 2025-11-25. Prints one line per check and
exits 1 on any mismatch.
"""

import asyncio
import sys

from mcp import Client
from mcp.shared.exceptions import MCPError

from sdk_checks import Elicitor, check, failures


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


def reason_code(result):
    structured = result.structured_content or {}
    meta = result.meta or {}
    return structured.get("reason_code"), meta.get("reason_code")


async def run(url, mode, revision):
    elicitor = Elicitor("decline")
    async with Client(url, mode=mode, elicitation_callback=elicitor) as client:
        check(client.protocol_version == revision, f"negotiated {revision} (got {client.protocol_version})")
        names = [t.name for t in (await client.list_tools()).tools]
        check(names == sorted(names), f"tools/list is sorted by name ({names[:4]}...)")
        check("write_note" in names and "count_words" in names, "tools/list has write_note and count_words")

        r = await client.call_tool("count_words", {"text": "one two three"})
        check(not r.is_error and (r.structured_content or {}).get("words") == 3, f"count_words structured result ({text_of(r)[:60]!r})")

        r = await client.call_tool("read_note", {"path": "../outside.txt"})
        check(bool(r.is_error), "a path outside the workspace is refused")
        check(reason_code(r) == ("path_outside_workspace", "path_outside_workspace"), f"the refusal's reason code is data ({reason_code(r)})")

        elicitor.answer = "decline"
        r = await client.call_tool("write_note", {"path": "new.txt", "text": "x"})
        check(elicitor.asked == 1, f"the approval was asked once (asked {elicitor.asked})")
        check(bool(r.is_error) and reason_code(r)[0] == "approval_denied", f"declined: approval_denied ({text_of(r)[:60]!r})")
        check(bool(elicitor.messages) and "write_note" in elicitor.messages[-1], "the question names the tool")

        elicitor.answer = "accept"
        r = await client.call_tool("write_note", {"path": "new.txt", "text": "x"})
        check(elicitor.asked == 2, f"asked again for the next call (asked {elicitor.asked})")
        check(not r.is_error and "wrote" in text_of(r), f"accepted: the tool ran ({text_of(r)[:60]!r})")

        try:
            await client.call_tool("no_such_tool", {})
            check(False, "an unknown tool is a JSON-RPC error")
        except MCPError as e:
            check(e.code == -32602, f"an unknown tool is -32602 (got {e.code})")


def main():
    url, mode, revision = sys.argv[1:4]
    asyncio.run(run(url, mode, revision))
    print(f"{len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
