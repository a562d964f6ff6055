import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
if str(ROOT / "tests") not in sys.path:
    sys.path.insert(0, str(ROOT / "tests"))


def pytest_collection_modifyitems(config, items):
    """Full-scale runs are marked slow: skipped unless TURNCHECK_SCALE=full (benchmarks, not CI)."""
    if os.environ.get("TURNCHECK_SCALE") == "full":
        return
    skip = pytest.mark.skip(reason="full-scale run: set TURNCHECK_SCALE=full")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
