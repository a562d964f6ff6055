#!/usr/bin/env bash
# Installs the `frameworks` extra (Semantic Kernel, AutoGen core, LangGraph, Pydantic AI) at the
# versions tests/test_peers.py pins; idempotent and quiet, exits 0 when already present.
set -euo pipefail
cd "$(dirname "$0")/.."
if python - <<'PY' 2>/dev/null
import importlib.metadata as m, sys
want = {l.split("==")[0]: l.split("==")[1] for l in open("constraints.txt").read().split()}
names = ("semantic-kernel", "autogen-core", "langgraph", "pydantic-ai-slim")
sys.exit(0 if all(m.version(n) == want[n] for n in names) else 1)
PY
then
    exit 0
fi
pip install -q -e '.[frameworks]' -c constraints.txt
