"""What every model of the vendor catalogue shares: a ``variant`` parameter and its lanes.

A vendor model is built with ``variant=NAME``, one of its :class:`~turncheck.models.catalog.Variant`
values, each declared with its kind and its source: ``buggy`` (what the report shows), a fix that
shipped (``upstream``, naming the pull request or release) or a design not merged anywhere
(``proposed``) — so a listing never calls a design of ours the vendor's fix. It is otherwise a plain
:class:`~turncheck.models.protocol.ProtocolModel` whose states are named tuples (the viewers show
their fields by name) and whose steps are told as ``LANE does …`` (the transcript's lane is the
first word). A refused variant is one line naming the ones the model has, with their kinds; a
name the model used to take (``renamed``: ``fixed`` where that was no merged fix) is refused
with one line naming what it is now. What a model's
``panel`` lists — the messages the next request would send, each with its marks (``orphan``,
``lost``…) — is the trace viewer's window panel at every step, under ``panel_title``, with the
model's ``describe_window`` as its summary.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from turncheck.models.catalog import Variant
from turncheck.models.errors import BadParameter
from turncheck.models.protocol import ProtocolModel, WindowItem, WindowPanel

S = TypeVar("S")
Action = tuple[Any, ...]


class VendorModel(ProtocolModel[S, Action]):
    """A catalogue model: ``variants`` (the first is the default), ``renamed`` (a former variant
    name and the one it is now), ``lanes`` in transcript order."""

    variants: tuple[Variant, ...] = ()
    renamed: Mapping[str, str] = {}
    lanes: tuple[str, ...] = ()
    update_writes = ""
    """How the real code writes one update, as the catalogue says it: ``one: …`` (one write, so
    no crash window), ``two: …`` (two writes, and the crash window is declared with
    :meth:`~turncheck.models.protocol.ProtocolModel.crash_points`), ``two, …`` (two writes the
    model abstracts away, naming the model that declares them) or ``not modelled: …``; each
    with the reason, read in the real source."""
    panel_title = "what the next request sends"

    def __init__(self, variant: str = "buggy") -> None:
        names = {v.name: v for v in self.variants}
        listed = ", ".join(f"{v.name} ({v.kind})" for v in self.variants)
        if variant in self.renamed:
            now = names[self.renamed[variant]]
            raise BadParameter(
                f"model {self.name}: variant {variant!r} is now {now.name!r} ({now.kind}: {now.source}); "
                f"variants: {listed}"
            )
        if variant not in names:
            raise BadParameter(f"model {self.name}: parameter variant: {variant!r} is not one of {listed}")
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
