"""What every model of the vendor catalogue shares: a ``variant`` parameter and its lanes.

A vendor model is built with ``variant=NAME`` — ``buggy`` (what the report shows), ``fixed`` (the
fix) and, where the report names one, a third — and is otherwise a plain
:class:`~turncheck.models.protocol.ProtocolModel` whose states are named tuples (the viewers show
their fields by name) and whose steps are told as ``LANE does …`` (the transcript's lane is the
first word). A refused variant is one line naming the ones the model has.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from turncheck.models.errors import BadParameter
from turncheck.models.protocol import ProtocolModel

S = TypeVar("S")
Action = tuple[Any, ...]


class VendorModel(ProtocolModel[S, Action]):
    """A catalogue model: ``variants`` (the first is the default), ``lanes`` in transcript order."""

    variants: tuple[str, ...] = ("buggy", "fixed")
    lanes: tuple[str, ...] = ()

    def __init__(self, variant: str = "buggy") -> None:
        if variant not in self.variants:
            raise BadParameter(
                f"model {self.name}: parameter variant: {variant!r} is not one of {', '.join(self.variants)}"
            )
        self.variant = variant
        self.params: Mapping[str, Any] = {"variant": variant}

    def lane_order(self) -> tuple[str, ...]:
        return self.lanes
