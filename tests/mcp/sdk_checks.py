"""What the Python SDK clients share: the check printer and the approval answerer."""

import mcp.types as types

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


class Elicitor:
    """Answers approval requests: accepts when `answer` is "accept", else declines; counts the
    questions and keeps their messages."""

    def __init__(self, answer=None):
        self.answer = answer
        self.asked = 0
        self.messages = []

    async def __call__(self, context, params):
        self.asked += 1
        self.messages.append(getattr(params, "message", ""))
        if self.answer == "accept":
            return types.ElicitResult(action="accept", content={"approve": True})
        return types.ElicitResult(action="decline")
