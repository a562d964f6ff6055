"""The vendor-protocol catalogue: the compaction protocols of real systems, one model per module.

Each module of this folder reproduces one public report — an issue, a pull request, a vendor's
documented procedure — as a small protocol model with ``variant=buggy`` (what shipped, or what the
docs allow) and ``variant=fixed`` (the fix that was merged or proposed), and registers itself with
:func:`turncheck.models.catalog.register_model` and a one-line description. ``buggy`` fails with
the shortest counterexample in the report's words; ``fixed`` passes over every interleaving.

This package is the home of the model registry (:data:`turncheck.models.catalog.MODELS`): it is
imported on the registry's first use — never by ``turncheck --help`` — and imports every module
of the folder in name order, so adding a model is adding one file. Modules whose name starts with
an underscore hold what several models share and register nothing.
"""

from __future__ import annotations

import importlib
import pkgutil

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")):
    importlib.import_module(f"{__name__}.{_module}")
