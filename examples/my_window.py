"""A user's own window rule for Spring AI's ``MessageWindowChatMemory``, checked as written.

spring-ai PR #6029 (open) proposes to keep the count cut and then drop the tool responses left
at the head of the window without their tool call. This file is that rule on the catalogue's
``spring-ai-window`` model: one method, ``keep``, the rest of the model unchanged. Run it with::

    turncheck check examples/my_window.py:DropOrphans --engine explore
    turncheck check examples/my_window.py:DropOrphans --param writers=2 --engine explore

The first passes: no orphan, never an empty window while one would fit. The second fails
``no-lost-append``: the rule fixes the window, not ``saveAll``'s read, delete-all, insert-all.
"""

from __future__ import annotations

from turncheck.integrations.vendors.spring_ai_window import Messages, MessageWindow, orphans


class DropOrphans(MessageWindow):
    """The count cut, then the leading orphan tool responses dropped (spring-ai PR #6029)."""

    name = "drop-orphans"

    def keep(self, messages: Messages) -> Messages:
        kept = messages[-self.size :]
        while kept and orphans(kept[:1]):
            kept = kept[1:]
        return kept
