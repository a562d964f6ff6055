"""keep_last.mjs's rule over the exec protocol, taking each request as what changed since the last.

Its first answer says ``"incremental": true``; from then on a request carries ``"keep": K`` —
the first K messages of the previous request stay — and only the messages after them, so a long
session costs each request what was appended, not the whole history again (docs/exec-protocol.md).
Run it as ``--strategy "exec:python examples/exec/keep_last_incremental.py"``.
"""

import json
import sys


def keep_last(messages: list[dict], budget: int) -> list[dict]:
    return messages[-budget:] if budget > 0 else []


def main() -> None:
    held: list[dict] = []
    for line in sys.stdin:
        request = json.loads(line)
        del held[request.get("keep", 0) :]  # a whole request keeps nothing
        held.extend(request["messages"])
        answer = {"messages": keep_last(held, request["budget"]), "incremental": True}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
