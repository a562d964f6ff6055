#!/usr/bin/env bash
# The headless browser the page tests drive: Debian's chromium (Playwright's own browser download
# cannot work offline), and the Python playwright package that drives it. Idempotent and quiet:
# exits 0 at once when both are already present.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
if ! python -c "import playwright" >/dev/null 2>&1; then
    pip install -q -c constraints.txt -e '.[browser]'
fi
