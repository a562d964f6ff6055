"""The built-in cases of the real-failure corpus (:mod:`models.cases`), one module per kind of input.

This package is the home of :data:`~models.cases.CASES` and :data:`~models.cases.PENDING`: it is
imported on their first use and imports every module of its folder in name order, so adding a
case is adding one entry to a module here, or one module. The histories the cases replay are
files of ``data/``, each in its product's own format (shipped in the wheel).
"""

from __future__ import annotations

import importlib
import pkgutil
from importlib import resources
from pathlib import Path

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")):
    importlib.import_module(f"{__name__}.{_module}")


def case_file(name: str) -> Path:
    """The path of a history file of ``data/`` (a case's ``HistoryInput.file``)."""
    return Path(str(resources.files(__name__) / "data" / name))
