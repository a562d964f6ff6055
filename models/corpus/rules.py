"""Cases whose input is a provider rule (:data:`models.provider_rules.REGISTRY`): one case per rule
of each API, its threads those the rule cites, its refused example red and its accepted one green,
the finding the API's own error text. A rule added there is a case here, with no entry of its own.
Dates and states are given for the threads read for this corpus; the others say ``not read``. A
rule's source may also name a docs page (a URL): a page is no thread, so the case leaves it out."""

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
}
"""Date opened and state of the rules' threads read for this corpus."""

for _rule in REGISTRY:
    _threads = tuple(t.strip() for t in _rule.source.split(",") if not t.strip().startswith("https://"))
    _date, _state = READ.get(_threads[0], ("not read", "not read"))
    register_case(
        Case(f"{_rule.provider}-{_rule.id}", _threads[0], _date, _state, "orphan/pairing",
             RuleInput(_rule.provider, _rule.id), (_rule.id,), _rule.error,
             f"no library release: a provider rule is the {_rule.provider} API's, whichever library sent the "
             "request, so no library runs; checked on the rule's refused and accepted histories (its own error text)",
             also=_threads[1:])
    )  # fmt: skip
