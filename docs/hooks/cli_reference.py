"""mkdocs hook: the CLI reference page is generated from the typer app at build time.

``docs/cli.md`` holds the marker ``<!-- turncheck-cli-reference -->``; this hook replaces it with
:func:`turncheck.cli.reference.cli_reference`, so the page always matches the commands.
"""

from __future__ import annotations

from typing import Any

MARKER = "<!-- turncheck-cli-reference -->"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if MARKER not in markdown:
        return markdown
    from turncheck.cli.reference import cli_reference

    return markdown.replace(MARKER, cli_reference(level=2))
