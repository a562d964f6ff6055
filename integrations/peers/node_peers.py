"""The TypeScript peers: LangChain.js, the Vercel AI SDK, Mastra and openai-agents-js, run by Node.

Each is one command of ``bridges/node`` (``peers/NAME.mjs``, installed by ``npm ci`` from its
``package-lock.json``) answering over the exec protocol (:mod:`models.exec_protocol`), so each
sees exactly what a user's ``exec:`` trimmer sees — our history as OpenAI chat messages, the
budget less the frame, each message's cost under our cost model — converts it to the library's
own message objects, lets the library choose, and answers with the messages it kept:

* ``peer:langchainjs-trim`` — ``trimMessages`` of ``@langchain/core``, ``strategy: "last"``, no
  partial messages, ``tokenCounter`` summing our costs (as ``peer:langchain`` does in Python);
* ``peer:vercel-prune`` — ``pruneMessages`` of ``ai`` as its documentation configures it: tool
  calls and results before the last two messages pruned, emptied messages removed; it takes no
  budget, so what it keeps is what it sends;
* ``peer:mastra-token-limiter`` / ``-contiguous`` — ``TokenLimiterProcessor`` of
  ``@mastra/core`` at the prompt stage (``processLLMRequest``), ``limit`` = the budget, counting
  by its own estimate; ``best-fit`` skips a message group that does not fit and keeps older
  ones, ``contiguous`` stops there; its ``TripWire`` (nothing fits) is a refused request;
* ``peer:agents-js-session`` — ``MemorySession.getItems(limit)`` of ``@openai/agents-core``,
  one item per call as the SDK stores them, ``limit`` = the items of the newest messages that
  fit under our costs (the best a count can do).
"""

from __future__ import annotations

from turncheck.integrations.peers.bridge import NODE
from turncheck.models.peer import Peer, register_peer

#: peer id, script and arguments, npm package, what it calls, whose counting
TABLE = (
    ("peer:langchainjs-trim", ("peers/langchainjs-trim.mjs",), "@langchain/core",
     "trimMessages({strategy: 'last', tokenCounter})", "ours (tokenCounter)"),
    ("peer:vercel-prune", ("peers/vercel-prune.mjs",), "ai",
     "pruneMessages({toolCalls: 'before-last-2-messages', emptyMessages: 'remove'})", "none (takes no budget)"),
    ("peer:mastra-token-limiter", ("peers/mastra-token-limiter.mjs", "best-fit"), "@mastra/core",
     "TokenLimiterProcessor({limit, trimMode: 'best-fit'}).processLLMRequest", "its own (estimate)"),
    ("peer:mastra-token-limiter-contiguous", ("peers/mastra-token-limiter.mjs", "contiguous"), "@mastra/core",
     "TokenLimiterProcessor({limit, trimMode: 'contiguous'}).processLLMRequest", "its own (estimate)"),
    ("peer:agents-js-session", ("peers/agents-js-session.mjs",), "@openai/agents-core",
     "new MemorySession().getItems(N)", "item count N (N chosen by ours)"),
)  # fmt: skip

for _name, _args, _package, _call, _counting in TABLE:
    register_peer(Peer(_name, NODE.projector(_name, *_args), _package, _package, _call, _counting,
                       extra="", bridge=NODE))  # fmt: skip
