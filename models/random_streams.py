"""Every seeded random stream turncheck draws from, in one table, built one way.

A stream is named; :func:`stream_rng` is the only place a numpy generator is built (PCG64 from
a :class:`numpy.random.SeedSequence`), from the run's seed, the stream's id and, for streams
drawn block by block or session by session, that index. New streams use the house layout,
``[seed low 32 bits, seed high 32 bits, id, index…]``, with an id no other row uses.

The older rows keep the exact entropy they were written with, because every result file and
pinned figure of the project depends on them (changing one word changes every draw). Their
layouts and the collisions between them are recorded here rather than fixed:

* ``real-text`` shares id 7 with ``keys`` and puts the session where the seed's high word goes:
  for a seed below 2³² its session 0 is the very stream ``keys`` draws (``[lo, 0, 7]``);
* ``workload-block`` has no id — the block number sits in the id's place — so its block 7 is
  ``keys``' stream, its block 11 ``slot-arrivals``' and its block 4 ``clock``'s block 0
  (SeedSequence pads short entropy with zeros: ``[lo, hi, 4]`` equals ``[lo, hi, 4, 0]``);
* ``keys`` per block (``[lo, hi, 7, first_session]``) at first session 0 is ``keys`` itself.

Each collision pairs streams of different scenarios over different quantities, so no result
draws one stream twice; giving them distinct ids would change the demo's ``key-collapse``,
``token-estimate``, ``testbench``, ``clock-skew`` and ``trigger-gap`` result files, which the
project keeps byte-identical. A new stream takes the next free id (14 and up).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

Layout = Literal["split", "split-no-id", "whole-seed", "index-for-high"]


@dataclass(frozen=True)
class Stream:
    """One named stream: its id and how its entropy words are laid out (see the module doc)."""

    name: str
    id: int | None
    layout: Layout
    drawn_by: str

    def entropy(self, seed: int, index: int | None = None) -> list[int]:
        lo, hi = seed & 0xFFFFFFFF, seed >> 32
        more = [] if index is None else [index]
        if self.layout == "split":
            return [lo, hi, self.id, *more]  # type: ignore[list-item]
        if self.layout == "split-no-id":
            return [lo, hi, *more]
        if self.layout == "whole-seed":
            return [seed, self.id, *more]  # type: ignore[list-item]
        return [lo, *more, self.id]  # type: ignore[list-item]  # index-for-high


STREAMS: dict[str, Stream] = {
    s.name: s
    for s in (
        Stream(
            "workload-block", None, "split-no-id", "models.workload: the synthetic sessions, block by block"
        ),
        Stream("clock", 4, "split", "models.clock: clock skew and arrival times, block by block"),
        Stream("keys", 7, "split", "models.keys: key collapse, and per block the concurrent append times"),
        Stream(
            "real-text", 7, "index-for-high", "scenarios.real_text: the dressed sessions' text, per session"
        ),
        Stream("slot-arrivals", 11, "split", "sim.simulation: arrivals per slot (trigger-gap)"),
        Stream("poisson-arrivals", 12, "whole-seed", "sim.simulation: Poisson arrivals"),
        Stream("turn-sizes", 13, "whole-seed", "sim.simulation: turn sizes"),
        Stream("timed-runs", 14, "split", "sim.timed_runs: the SimPy engine's initial states and actions"),
    )
}


def stream_rng(name: str, seed: int, index: int | None = None) -> np.random.Generator:
    """The generator of stream ``name`` for ``seed`` (and block or session ``index``)."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(STREAMS[name].entropy(seed, index))))
