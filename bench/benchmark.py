"""What a benchmark is, and the registry ``turncheck bench TOPIC`` reads its topics from.

A benchmark is a function ``run(scale) -> Iterable[str]``: it measures, and returns the lines
to print (figures and ratios of one run; nothing here is a timed test). Built-in topics register
themselves at the end of their module, and :mod:`turncheck.bench` imports every such module in
one place; an extension registers with ``turncheck.register_bench(name, run)``. The command
lists topics in registration order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from turncheck.models.registry import Registry

Benchmark = Callable[[str], Iterable[str]]

BENCHMARKS: Registry[Benchmark] = Registry("benchmark", home="turncheck.bench")
"""Every benchmark topic by name."""


def register_bench(name: str, run: Benchmark | None = None) -> Any:
    """Register ``run`` as topic ``name`` of ``turncheck bench`` (or use as
    ``@register_bench(name)``); returns ``run`` unchanged."""
    if run is None:
        return lambda fn: register_bench(name, fn)
    return BENCHMARKS.register(name, run)
