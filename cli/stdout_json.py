"""JSON on stdout names its shape: every object a command prints with ``--format json`` carries
a ``format`` key, so a script can tell a shape it knows from a newer one.

The key is ``turncheck/1`` unless the object is a document with a format of its own (a scenario
result is ``turncheck-result/1``, a trace ``turncheck-trace/1``), which it keeps. Only stdout is
stamped: the result files a command writes are unchanged.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

STDOUT_FORMAT = "turncheck/1"


def print_json(obj: Mapping[str, Any], **options: Any) -> None:
    """Print ``obj`` on stdout as one JSON document (``options`` as for :func:`json.dumps`;
    non-ASCII text as it is unless ``ensure_ascii=True``), ``format`` its first key.

    Flushed, since a long run prints one such line per topic."""
    options.setdefault("ensure_ascii", False)
    sys.stdout.write(json.dumps({"format": STDOUT_FORMAT, **obj}, **options) + "\n")
    sys.stdout.flush()
