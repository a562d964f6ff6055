"""The provider rules table of docs/your-agent.md, generated from the registry itself.

Each row is one :class:`~models.provider_rules.ProviderRule` of
:data:`~models.provider_rules.REGISTRY`: its API, its id, what it flags, the API's own error text,
the threads it was read in (and, where the error text is not the API's whole text, how it was
read), and the minimal histories it refuses and accepts. The page's block
(``kind=provider-rules``, see :mod:`docs.tools.doc_figures`) is this function's output, so a
rule added, dropped or re-cited changes the page, and the quick suite fails until it is
regenerated. ``python -m docs.tools.provider_rules_doc`` prints it.

Invariant: the output is a pure function of the registry (its order kept).
"""

from __future__ import annotations

from turncheck.models.provider_rules import REGISTRY, RULES
from turncheck.reports.tables import markdown_rows


def _link(source: str) -> str:
    """``owner/repo#N`` as a link to the thread; a URL as it is."""
    if source.startswith("https://"):
        return source
    repo, _, number = source.partition("#")
    return f"[{source}](https://github.com/{repo}/issues/{number})"


def _code(text: str) -> str:
    """Text holding single backticks (Anthropic's) as code: double backticks around it."""
    return f"`` {text} ``"


def render() -> list[str]:
    """The table's lines (no trailing newline)."""
    rows = [
        (r.provider, f"`{r.id}`", RULES[r.id], _code(r.error),
         ", ".join(_link(s) for s in r.source.split(", ")) + (f" (error text {r.note})" if r.note else ""),
         f"`{r.refused}`", f"`{r.clean}`")
        for r in REGISTRY
    ]  # fmt: skip
    header = ("API", "rule", "flags", "the API's error", "read in", "refused", "accepted")
    return markdown_rows(header, rows, [False] * len(header))


if __name__ == "__main__":
    print("\n".join(render()))
