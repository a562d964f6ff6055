"""The ``openai-chat`` importer against msgspec decoding the same lines.

turncheck: :func:`models.importers.import_log` of a JSONL file of OpenAI Chat Completions
request bodies (``lint``/``project --from openai-chat``): each body's messages read, decoded,
checked and turned into events. Ceiling: reading the same file and ``msgspec.json.decode`` of
each line — decoding alone, the least any importer of these lines does.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path

import msgspec

from benchmarks.compare import Comparison, Contender, interleave
from turncheck.models.importers import import_log


def request_bodies(sessions: int, turns: int = 10) -> str:
    """``sessions`` request bodies, one per line, each the last request of its session: a system
    prompt, then ``turns`` turns of a question, a tool call, its result and an answer."""
    lines = []
    call = {"name": "weather", "arguments": '{"city": "Paris"}'}
    for s in range(sessions):
        messages: list[dict[str, object]] = [{"role": "system", "content": "You are a helpful assistant."}]
        for t in range(turns):
            messages += [
                {"role": "user", "content": f"question {t}: what is the weather in Paris?"},
                {"role": "assistant", "content": None,
                 "tool_calls": [{"id": f"call_{t}", "type": "function", "function": call}]},
                {"role": "tool", "tool_call_id": f"call_{t}", "content": "21 degrees and sunny"},
                {"role": "assistant", "content": "It is 21 degrees and sunny in Paris."},
            ]  # fmt: skip
        lines.append(json.dumps({"model": "gpt-4o", "user": f"s{s}", "messages": messages}))
    return "\n".join(lines) + "\n"


def _import(path: Path) -> Callable[[], object]:
    return lambda: import_log("openai-chat", path)


def _decode(path: Path) -> Callable[[], object]:
    decode = msgspec.json.decode
    return lambda: [decode(line) for line in path.read_bytes().splitlines()]


def compare(scale: str) -> list[Comparison]:
    sessions = 25_000 if scale == "full" else 1_000 if scale == "tiny" else 5_000
    with tempfile.TemporaryDirectory(prefix="turncheck-bench-") as folder:
        path = Path(folder) / "bodies.jsonl"
        path.write_text(request_bodies(sessions), encoding="utf-8")
        megabytes = path.stat().st_size / 1e6
        measured = interleave(
            [
                Contender("import_log('openai-chat')", "turncheck", _import(path), megabytes),
                Contender("msgspec.json.decode of each line", "ceiling", _decode(path), megabytes),
            ],
            3 if scale == "quick" else 5,  # tiny: a decode round is milliseconds, so more of them
        )
    return [
        Comparison(
            f"importer --from openai-chat, {sessions:,} request bodies ({megabytes:,.1f} MB)",
            "ms per MB",
            1e3,
            measured,
            target="≤ 3× msgspec's decode",
        )
    ]
