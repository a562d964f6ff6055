"""mkdocs hook: the CLI reference page is generated from the typer app at build time.

``docs/cli.md`` holds the marker ``<!-- turncheck-cli-reference -->``; this hook replaces it with
:func:`docs.tools.reference.cli_reference`, so the page always matches the commands. The doc
tooling is a package of the repository, not of turncheck: its root goes on the import path.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

MARKER = "<!-- turncheck-cli-reference -->"
ROOT = str(Path(__file__).resolve().parents[2])


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if MARKER not in markdown:
        return markdown
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)
    from docs.tools.reference import cli_reference

    return markdown.replace(MARKER, cli_reference(level=2))
