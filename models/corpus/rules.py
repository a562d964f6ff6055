"""Cases whose input is a provider rule (:data:`models.provider_rules.REGISTRY`): one case per rule
of each API, its threads those the rule cites, its refused example red and its accepted one green,
the finding the API's own error text. A rule added there is a case here, with no entry of its own.
Each case's thread is the first of the rule's threads read for this corpus (:data:`READ`: date and
state as read there), a case being refused without them (:class:`~models.cases.Case`). A rule's
source may also name a docs page (a URL): a page is no thread, so the case leaves it out."""

from __future__ import annotations

from turncheck.models.cases import Case, RuleInput, register_case
from turncheck.models.provider_rules import REGISTRY

READ = {
    "openai/openai-agents-python#2317": ("2026-01-16", "closed"),
    "BerriAI/litellm#10083": ("2025-04-17", "open"),
    "google-gemini/gemini-cli#4217": ("2025-07-15", "closed"),
    "openai/openai-agents-python#1704": ("2025-09-10", "open"),
    "google-gemini/gemini-cli#11814": ("2025-10-23", "open"),
    "langgenius/dify#12340": ("2025-01-03", "closed"),
    "anthropics/claude-code#37": ("2025-02-24", "closed"),
    "anthropics/claude-code#5060": ("2025-08-03", "closed"),
    "smarter-sh/smarter#264": ("2025-01-22", "closed"),
    "binaricat/Netcatty#684": ("2026-04-10", "closed"),
    "continuedev/continue#10018": ("2026-01-29", "open"),
    "langchain-ai/langchain-aws#130": ("2024-08-01", "closed"),
    "agno-agi/agno#6698": ("2026-02-24", "closed"),  # the date its description's log shows
    "Just-Curieous/Curie#16": ("2025-03-07", "closed"),
    "vercel/ai#12504": ("2026-02-12", "open"),
    "anthropics/claude-code#13964": ("2025-12-14", "closed"),
    "anomalyco/opencode#3077": ("2025-10-10", "closed"),
}
"""Date opened and state of the rules' threads read for this corpus."""

QUOTING = {
    ("anthropic", "result-not-next"): ("anthropics/claude-code#13964",),
}
"""Threads read for this corpus that quote a rule's error, for a rule whose own threads were not
found in the search corpus (anthropics/claude-code#24670: searched for by its error text and its
tool id, not found): the case is sourced and dated by the first thread read, the rule's own
threads listed beside it."""

for _rule in REGISTRY:
    _cited = tuple(t.strip() for t in _rule.source.split(",") if not t.strip().startswith("https://"))
    _threads = (*_cited, *QUOTING.get((_rule.provider, _rule.id), ()))
    _source = next((t for t in _threads if t in READ), _threads[0])
    _date, _state = READ.get(_source, ("not read", "not read"))
    register_case(
        Case(f"{_rule.provider}-{_rule.id}", _source, _date, _state, "orphan/pairing",
             RuleInput(_rule.provider, _rule.id), (_rule.id,), _rule.error,
             f"no library release: a provider rule is the {_rule.provider} API's, whichever library sent the "
             "request, so no library runs; checked on the rule's refused and accepted histories (its own error text)",
             also=tuple(t for t in _threads if t != _source))
    )  # fmt: skip
