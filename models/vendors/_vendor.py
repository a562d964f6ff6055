"""What every model of the vendor catalogue shares: a ``variant`` parameter and its lanes.

A vendor model is built with ``variant=NAME`` — ``buggy`` (what the report shows), ``fixed`` (the
fix) and, where the report names one, a third — and is otherwise a plain
:class:`~turncheck.models.protocol.ProtocolModel` whose states are named tuples (the viewers show
their fields by name) and whose steps are told as ``LANE does …`` (the transcript's lane is the
first word). A refused variant is one line naming the ones the model has. What a model's
``panel`` lists — the messages the next request would send, each with its marks (``orphan``,
``lost``…) — is the trace viewer's window panel at every step, under ``panel_title``, with the
model's ``describe_window`` as its summary.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from turncheck.models.errors import BadParameter
from turncheck.models.protocol import ProtocolModel, WindowItem, WindowPanel

S = TypeVar("S")
Action = tuple[Any, ...]


class VendorModel(ProtocolModel[S, Action]):
    """A catalogue model: ``variants`` (the first is the default), ``lanes`` in transcript order."""

    variants: tuple[str, ...] = ("buggy", "fixed")
    lanes: tuple[str, ...] = ()
    panel_title = "what the next request sends"

    def __init__(self, variant: str = "buggy") -> None:
        if variant not in self.variants:
            raise BadParameter(
                f"model {self.name}: parameter variant: {variant!r} is not one of {', '.join(self.variants)}"
            )
        self.variant = variant
        self.params: Mapping[str, Any] = {"variant": variant}

    def lane_order(self) -> tuple[str, ...]:
        return self.lanes

    def panel(self, state: S) -> Sequence[tuple[str, tuple[str, ...]]]:
        """The window panel's items at ``state``: a label and its marks each."""
        return []

    def window_panels(self, states: Sequence[S], actions: Sequence[Action]) -> list[WindowPanel | None]:
        return [
            WindowPanel(
                self.panel_title,
                tuple(WindowItem(label, marks) for label, marks in self.panel(s)),
                self.describe_window(s),
            )
            for s in states
        ]
