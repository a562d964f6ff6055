#!/usr/bin/env bash
# The documentation site's tools (mkdocs, the material theme, mkdocstrings), so that
# tests/test_docs.py runs `mkdocs build --strict` instead of skipping it. Idempotent and quiet:
# exits 0 at once when they are already installed.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! python -c "import mkdocs, material, mkdocstrings, mkdocstrings_handlers.python" >/dev/null 2>&1; then
    pip install -q -c constraints.txt -e '.[docs]'
fi
