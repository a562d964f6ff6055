"""How a missing optional extra is installed: a line a user can paste.

turncheck is on no package index, so installing ``turncheck[peers]`` by name installs whatever
claims that name there, or fails: a hint names the extra's own requirements as the installed
distribution declares them (its ``Requires-Dist`` lines), and only where no distribution is
installed (a checkout run with ``PYTHONPATH``) the checkout's ``pip install '.[EXTRA]'``.
"""

from __future__ import annotations

import re
import shlex
from importlib import metadata

_EXTRA = re.compile(r";\s*extra\s*==\s*[\"']([^\"']+)[\"']\s*$")


def extra_requirements(extra: str) -> list[str]:
    """The requirements of ``extra`` (``tiktoken<0.15,>=0.14``, …) as the installed turncheck
    declares them; empty when turncheck is not installed as a distribution or has no such extra."""
    try:
        requires = metadata.requires("turncheck") or []
    except metadata.PackageNotFoundError:
        return []
    found = ((r.split(";", 1)[0].strip(), _EXTRA.search(r)) for r in requires)
    return [req for req, marker in found if marker is not None and marker.group(1) == extra]


def install_hint(extra: str) -> str:
    """``pip install 'REQ' …`` for the packages of ``extra``, never turncheck by name."""
    wanted = extra_requirements(extra)
    if not wanted:
        return f"pip install '.[{extra}]' in turncheck's checkout"
    return f"pip install {' '.join(shlex.quote(req) for req in wanted)} (turncheck's {extra} extra)"
