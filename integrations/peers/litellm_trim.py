"""Peer ``litellm``: ``litellm.utils.trim_messages(messages, model=M, max_tokens=budget − frame)``.

Our events become Chat Completions message dicts (see :mod:`models.message_spans`). litellm
is imported with ``LITELLM_LOCAL_MODEL_COST_MAP=True`` so it makes no network call; its
tokenizer files ship in its wheel.

Counting. ``trim_messages`` takes no token counter: it counts with its own ``token_counter``
for ``model`` — OpenAI's chat rule (3 tokens per message, plus role and content tokens, tool
calls by their arguments) over the model's BPE. The adapter picks the model whose encoding
matches our cost model (``gpt-4`` for ``bpe:cl100k_base``, ``gpt-4o`` for
``bpe:o200k_base`` and for every other cost model), so under a BPE cost model the two counts
differ only by litellm's per-message overhead; under the estimator they differ by the
estimator's error too. Our report judges the result under our cost model.

What litellm does (1.110.2), and how it is mapped back:

* trailing tool messages are set aside, never counted, and always returned;
* from the newest message back, a message is added while the total fits; one that does not
  fit is *shortened* (the middle of its content replaced by ``".."``) if that fits, else
  skipped — and older messages are still tried, so the result can have holes
  (:attr:`PeerWindow.dropped_inside`) and shortened messages (:attr:`PeerWindow.shortened`,
  sent as shortened events, so our cost prices what is really sent);
* a tool-call message (content ``None``) that does not fit makes shortening raise; litellm
  swallows the error and returns the input *unchanged* (``untrimmed_on_error``).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from turncheck.integrations.peers.library import require
from turncheck.models.cost import CostModel
from turncheck.models.errors import TurncheckError
from turncheck.models.events import Event
from turncheck.models.history import History
from turncheck.models.message_spans import Span, openai_message, spans
from turncheck.models.peer import Peer, register_peer
from turncheck.models.projector import Window
from turncheck.models.selection import Selection, window_of

DEFAULT_MODEL = "gpt-4o"
MODEL_OF_ENCODING = {"cl100k_base": "gpt-4", "o200k_base": "gpt-4o"}


def model_for(cost: CostModel) -> str:
    """The litellm model whose tokenizer is our cost model's encoding (``gpt-4o`` otherwise)."""
    encoding = getattr(cost, "encoding", None)
    return MODEL_OF_ENCODING.get(encoding, DEFAULT_MODEL) if isinstance(encoding, str) else DEFAULT_MODEL


@contextmanager
def quiet_litellm() -> Iterator[None]:
    """litellm logs a stack trace for the error it swallows; keep the terminal clean."""
    logger = logging.getLogger("LiteLLM")
    saved = logger.disabled
    logger.disabled = True
    try:
        yield
    finally:
        logger.disabled = saved


def _shortened(original: str, sent: str) -> bool:
    """litellm's shortening: ``original[:h] + ".." + original[-h:]`` (repeated up to ten
    times; with ``h = 0`` the right part is the whole content, a litellm quirk)."""
    at = sent.find("..")
    while at >= 0:
        if original.startswith(sent[:at]) and original.endswith(sent[at + 2 :]):
            return True
        at = sent.find("..", at + 1)
    return False


def _matches(original: dict[str, Any], sent: dict[str, Any]) -> tuple[bool, bool]:
    """``(same message, content shortened)``."""
    if original.get("role") != sent.get("role") or original.get("tool_call_id") != sent.get("tool_call_id"):
        return False, False
    if original.get("tool_calls") != sent.get("tool_calls"):
        return False, False
    a, b = original.get("content"), sent.get("content")
    if a == b:
        return True, False
    if isinstance(a, str) and isinstance(b, str) and _shortened(a, b):
        return True, True
    return False, False


def map_back(
    history: History, message_spans: list[Span], originals: list[dict[str, Any]], sent: list[dict[str, Any]]
) -> Selection:
    """Align litellm's output (an in-order subsequence, contents possibly shortened) with the
    input messages, left to right."""
    positions: list[int] = []
    replaced: dict[int, Event] = {}
    i = 0
    for message in sent:
        while i < len(originals):
            same, shortened = _matches(originals[i], message)
            if same:
                break
            i += 1
        else:
            raise TurncheckError(
                f"peer:litellm returned a message that is not one of its input messages: {str(message)[:80]}"
            )
        span = message_spans[i]
        positions.extend(span.positions)
        if shortened:
            e = history.events[span.start]
            text = message["content"]
            replaced[span.start] = dataclasses.replace(e, text=text, chars=len(text))
        i += 1
    return Selection(tuple(positions), replaced)


def select(history: History, budget: int, cost: CostModel, model: str | None = None) -> Selection:
    """What ``litellm.trim_messages`` keeps of ``history``, as history positions."""
    utils = require("litellm.utils", "peer:litellm")
    message_spans = spans(history)
    messages = [openai_message(history, s) for s in message_spans]
    with quiet_litellm():
        out = utils.trim_messages(messages, model=model or model_for(cost), max_tokens=budget - cost.frame)
    if out is messages:  # litellm returns its input object only from its error handler
        return Selection(tuple(range(len(history))), untrimmed_on_error=True)
    if isinstance(out, tuple):
        out = out[0]
    return map_back(history, message_spans, messages, list(out))


def trim_messages(history: History, budget: int, cost: CostModel) -> Window:
    """``peer:litellm``: ``litellm.trim_messages(max_tokens=budget − frame)``."""
    return window_of(history, budget, cost, select(history, budget, cost), "peer:litellm")


register_peer(Peer("peer:litellm", trim_messages, "litellm", "litellm",
                   "litellm.utils.trim_messages(max_tokens)",
                   "its own (token_counter of gpt-4o / gpt-4)", colour="#393b79", marker="*"))  # fmt: skip
