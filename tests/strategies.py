"""Hypothesis strategies for histories: well-formed seq-ordered turns, and arbitrary event soups."""

from __future__ import annotations

from hypothesis import strategies as st
from turncheck.models.events import Event, Kind

TEXT = st.text(
    alphabet=st.sampled_from(list('ab "\\\n\t\x01\x7f\u2028\u2029汉字😀é<>&')), min_size=0, max_size=12
)


@st.composite
def well_formed(draw, max_turns: int = 6, dangling: bool = False, parallel: bool = True) -> list[Event]:
    """Seq-ordered turns ``USER (CALL c, RESULT c)* TERM``, optionally parallel or dangling calls."""
    events: list[Event] = []
    seq = 0
    cid = 0

    def add(turn: int, kind: Kind, call_id: str | None = None) -> None:
        nonlocal seq
        chars = draw(st.integers(0, 60))
        cjk = draw(st.booleans())
        events.append(Event(seq, "s", turn, kind, call_id, ts=float(seq), chars=chars, cjk=cjk))
        seq += 1

    for turn in range(draw(st.integers(0, max_turns))):
        add(turn, Kind.USER)
        for _ in range(draw(st.integers(0, 3))):
            batch = draw(st.integers(1, 2)) if parallel else 1
            ids = []
            for _ in range(batch):
                ids.append(f"c{cid}")
                cid += 1
                add(turn, Kind.CALL, ids[-1])
            order = draw(st.permutations(ids)) if batch > 1 else ids
            for c in order:
                if dangling and draw(st.integers(0, 4)) == 0:
                    continue
                add(turn, Kind.RESULT, c)
        add(turn, Kind.TERM)
    return events


@st.composite
def soup(draw, max_len: int = 18, with_text: bool = False) -> list[Event]:
    """Any sequence of events: reordered seqs, tied stamps, reused call ids, several sources."""
    n = draw(st.integers(0, max_len))
    seqs = draw(st.permutations(list(range(n))))
    events = []
    for i in range(n):
        kind = draw(st.sampled_from(list(Kind)))
        call_id = f"c{draw(st.integers(0, 3))}" if kind in (Kind.CALL, Kind.RESULT) else None
        text = draw(TEXT) if with_text else None
        events.append(
            Event(
                seq=seqs[i],
                session="k",
                turn=draw(st.integers(0, 3)),
                kind=kind,
                call_id=call_id,
                ts=float(draw(st.integers(0, 4))),
                text=text,
                chars=draw(st.integers(0, 50)),
                cjk=draw(st.booleans()),
                source=draw(st.sampled_from(["a", "b", None])),
            )
        )
    return events
