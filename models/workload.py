"""Seed 004's workload manifold, generated as columns without a Python object per event.

Sessions × turns; each turn is ``USER (CALL c, RESULT c)* TERM``; a turn has no tool call with
probability ``p_no_calls`` and otherwise ``uniform{0..max_calls}`` calls (which together give the
seed's 1.8 calls per turn); each call's result is written with probability ``p_result`` (the
rest dangle); result sizes are uniform in ``result_chars``. A turn issues its calls in parallel
(all CALLs, then the RESULTs in reverse order) with probability ``p_parallel``. A written result
arrives late with probability ``p_late_result``: it moves to the next turn, right after its USER
(a human approving a call only after the agent has answered and the user has chatted on); in a
session's last turn it stays where it is. At ``p_late_result`` 0 nothing is drawn for it, so
every existing workload is byte-identical.

Determinism: sessions are generated in fixed blocks of :data:`BLOCK` sessions, each from its own
random stream keyed by ``(seed, block)``, so any set of worker processes generating any blocks
produces byte-identical events.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from turncheck.models.errors import BadParameter
from turncheck.models.events import Event, Kind
from turncheck.models.random_streams import stream_rng

BLOCK = 1000
MAX_BLOCK_EVENTS = 1 << 23
"""Most events one block may hold, counted at its worst (every turn with ``max_calls`` calls,
each with its result: ``2 * max_calls + 2`` events a turn). A block is built whole in memory, at
about 240 bytes an event at its peak (measured: 4.6 million events, 1.1 GB resident), so the
mean block, half the worst, stays near 1 GB, within the 2 GiB budget a run keeps; ``generate
--max-calls 1e9`` ran unbounded (issue 57). It also keeps call numbers (``turn × (max_calls +
1) + j``) within 31 bits."""
SEED = 20261030


@dataclass(frozen=True)
class WorkloadParams:
    """Every knob of the manifold; defaults are seed 004's full scale with p_result 1.00.

    The seed states result sizes, call counts and ``p_result`` but not the sizes of user
    messages, final replies and call arguments, nor the CJK share; ``cjk_share`` 0.7 and final
    replies of 20–400 characters are calibrated once against the seed's M3 empty-window curve
    (docs/testbench.md shows the calibration), and every other level follows from them.
    """

    sessions: int = 60_000
    turns: int = 50
    seed: int = SEED
    p_result: float = 1.0
    p_no_calls: float = 0.10
    max_calls: int = 4
    p_parallel: float = 0.0
    cjk_share: float = 0.7
    p_late_result: float = 0.0
    user_chars: tuple[int, int] = (20, 400)
    call_chars: tuple[int, int] = (20, 200)
    result_chars: tuple[int, int] = (200, 3000)
    term_chars: tuple[int, int] = (20, 400)

    def __post_init__(self) -> None:
        for name in ("sessions", "turns"):
            if getattr(self, name) < 1:
                raise BadParameter(f"workload {name} must be >= 1, got {getattr(self, name)}")
        if self.max_calls < 0:
            raise BadParameter(f"workload max_calls must be >= 0, got {self.max_calls}")
        for name in ("p_result", "p_no_calls", "p_parallel", "cjk_share", "p_late_result"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise BadParameter(f"workload {name} must be within [0, 1], got {v}")
        for name in ("user_chars", "call_chars", "result_chars", "term_chars"):
            lo, hi = getattr(self, name)
            if not 0 <= lo <= hi:
                raise BadParameter(
                    f"workload {name} must be a range lo..hi with 0 <= lo <= hi, got {lo}..{hi}"
                )
        most = min(self.sessions, BLOCK) * self.turns * (2 * self.max_calls + 2)
        if most > MAX_BLOCK_EVENTS:
            raise BadParameter(
                f"workload too large: a block of {min(self.sessions, BLOCK)} sessions × {self.turns} turns × up to "
                f"{2 * self.max_calls + 2} events a turn (max_calls {self.max_calls}) is {most:,} events, past "
                f"the limit of {MAX_BLOCK_EVENTS:,} (MAX_BLOCK_EVENTS, a 2 GiB memory budget)"
            )


@dataclass(frozen=True)
class EventColumns:
    """A generated log as parallel arrays, in seq order, sessions one after another.

    ``call`` is the call number within its session (unique per session; -1 for USER/TERM);
    ``offsets[i]:offsets[i+1]`` are the rows of session ``first_session + i``.
    """

    seq: np.ndarray
    session: np.ndarray
    turn: np.ndarray
    kind: np.ndarray
    call: np.ndarray
    chars: np.ndarray
    cjk: np.ndarray
    offsets: np.ndarray
    first_session: int = 0
    ts: np.ndarray | None = None
    source: np.ndarray | None = None

    def stamps(self) -> np.ndarray:
        """Wall-clock stamps; the generator's clean log stamps each event with its seq."""
        return self.seq.astype(np.float64) if self.ts is None else self.ts

    def sources(self) -> np.ndarray:
        """True session of each row; equal to ``session`` unless keys were collapsed."""
        return self.session if self.source is None else self.source

    def __len__(self) -> int:
        return int(self.seq.shape[0])

    @property
    def sessions(self) -> int:
        return int(self.offsets.shape[0] - 1)

    def counts(self) -> dict[str, int]:
        """The seed's generator self-check figures: events, calls, results, dangling calls."""
        calls = int(np.count_nonzero(self.kind == Kind.CALL))
        results = int(np.count_nonzero(self.kind == Kind.RESULT))
        return {"events": len(self), "calls": calls, "results": results, "dangling": calls - results}

    def checksum(self) -> str:
        """SHA-256 over every column, so two runs can be compared byte for byte."""
        h = hashlib.sha256()
        for f in ("seq", "session", "turn", "kind", "call", "chars", "cjk"):
            h.update(np.ascontiguousarray(getattr(self, f)).tobytes())
        return h.hexdigest()[:16]


def _block_rng(seed: int, block: int) -> np.random.Generator:
    return stream_rng("workload-block", seed, block)


def _generate_block(p: WorkloadParams, block: int, first: int, count: int) -> EventColumns:
    rng = _block_rng(p.seed, block)
    n_turns = count * p.turns
    no_calls = rng.random(n_turns) < p.p_no_calls
    ncalls = np.where(no_calls, 0, rng.integers(0, p.max_calls + 1, n_turns)).astype(np.int64)
    parallel = rng.random(n_turns) < p.p_parallel
    slots = 2 + 2 * ncalls
    turn_of_slot = np.repeat(np.arange(n_turns, dtype=np.int64), slots)
    slot_start = np.concatenate(([0], np.cumsum(slots)[:-1]))
    pos = np.arange(turn_of_slot.shape[0], dtype=np.int64) - slot_start[turn_of_slot]
    k = ncalls[turn_of_slot]
    par = parallel[turn_of_slot]
    inner = pos - 1  # 0 .. 2k-1 for tool slots
    is_user = pos == 0
    is_term = pos == 2 * k + 1
    tool = ~(is_user | is_term)
    seq_call = np.where(inner % 2 == 0, Kind.CALL, Kind.RESULT)
    par_call = np.where(inner < k, Kind.CALL, Kind.RESULT)
    kind = np.where(is_user, Kind.USER, np.where(is_term, Kind.TERM, np.where(par, par_call, seq_call)))
    j = np.where(par, np.where(inner < k, inner, 2 * k - 1 - inner), inner // 2)
    turn_in_session = turn_of_slot % p.turns
    call = np.where(tool, turn_in_session * (p.max_calls + 1) + j, -1)
    n_calls_total = int(ncalls.sum())
    written = rng.random(n_calls_total) < p.p_result
    # map each RESULT slot to its call's written flag: calls are numbered in turn order
    call_base = np.concatenate(([0], np.cumsum(ncalls)[:-1]))
    call_index = call_base[turn_of_slot] + np.where(tool, j, 0)
    if n_calls_total == 0:
        keep = kind != Kind.RESULT
    else:
        keep = ~((kind == Kind.RESULT) & ~written[np.minimum(call_index, n_calls_total - 1)])
    kind = kind[keep].astype(np.int8)
    turn_of_slot = turn_of_slot[keep]
    call = call[keep].astype(np.int32)
    m = kind.shape[0]
    lo = np.array([p.user_chars[0], p.call_chars[0], p.result_chars[0], p.term_chars[0]], dtype=np.int64)
    hi = np.array([p.user_chars[1], p.call_chars[1], p.result_chars[1], p.term_chars[1]], dtype=np.int64)
    chars = (lo[kind] + np.floor(rng.random(m) * (hi[kind] - lo[kind] + 1)).astype(np.int64)).astype(np.int32)
    cjk = (rng.random(m) < p.cjk_share) & (kind != Kind.CALL)
    if p.p_late_result > 0:
        kind, turn_of_slot, call, chars, cjk = _late_results(p, rng, kind, turn_of_slot, call, chars, cjk)
    session = (first + turn_of_slot // p.turns).astype(np.int32)
    per_session = np.bincount(session - first, minlength=count)
    offsets = np.concatenate(([0], np.cumsum(per_session))).astype(np.int64)
    return EventColumns(
        seq=np.zeros(m, dtype=np.int64),
        session=session,
        turn=(turn_of_slot % p.turns).astype(np.int16 if p.turns < 2**15 else np.int32),
        kind=kind,
        call=call,
        chars=chars,
        cjk=cjk,
        offsets=offsets,
        first_session=first,
    )


def _late_results(p: WorkloadParams, rng: np.random.Generator, *rows: np.ndarray) -> tuple[np.ndarray, ...]:
    """The block's rows (kind first, turn of slot second) with each late RESULT moved behind the
    USER of the next turn of its session; a stable sort keeps every other row in place and
    several late results of one turn in their order."""
    kind, turn_of_slot = rows[0], rows[1]
    late = (rng.random(kind.shape[0]) < p.p_late_result) & (kind == Kind.RESULT)
    late &= turn_of_slot % p.turns < p.turns - 1
    starts = np.flatnonzero(np.concatenate(([True], turn_of_slot[1:] != turn_of_slot[:-1])))
    position = 2 * np.arange(kind.shape[0], dtype=np.int64)
    next_user = starts[np.minimum(turn_of_slot - turn_of_slot[0] + 1, starts.shape[0] - 1)]
    key = np.where(late, 2 * next_user + 1, position)
    order = np.argsort(key, kind="stable")
    moved = [r[order] for r in rows]
    moved[1] = np.where(late, turn_of_slot + 1, turn_of_slot)[order]
    return tuple(moved)


def blocks(p: WorkloadParams) -> list[tuple[int, int, int]]:
    """The fixed blocks ``(block, first_session, count)`` the workload is generated in."""
    return [
        (b, b * BLOCK, min(BLOCK, p.sessions - b * BLOCK)) for b in range((p.sessions + BLOCK - 1) // BLOCK)
    ]


def concat(parts: list[EventColumns], seq_start: int = 0) -> EventColumns:
    """Join consecutive column blocks; seq numbers are assigned in order from ``seq_start``."""
    if not parts:
        raise ValueError("nothing to concatenate")
    sizes = [len(x) for x in parts]
    offsets = [parts[0].offsets]
    base = sizes[0]
    for part in parts[1:]:
        offsets.append(part.offsets[1:] + base)
        base += len(part)
    total = sum(sizes)
    return EventColumns(
        seq=np.arange(seq_start, seq_start + total, dtype=np.int64),
        session=np.concatenate([x.session for x in parts]),
        turn=np.concatenate([x.turn for x in parts]),
        kind=np.concatenate([x.kind for x in parts]),
        call=np.concatenate([x.call for x in parts]),
        chars=np.concatenate([x.chars for x in parts]),
        cjk=np.concatenate([x.cjk for x in parts]),
        offsets=np.concatenate(offsets),
        first_session=parts[0].first_session,
    )


def generate_block(p: WorkloadParams, block: int) -> EventColumns:
    """One block of sessions, with the seq numbers it has in the whole workload.

    Seq numbers of a later block depend on the sizes of earlier ones; :func:`generate_columns`
    assigns them globally. A block alone carries seqs local to the block.
    """
    b, first, count = blocks(p)[block]
    return concat([_generate_block(p, b, first, count)])


def generate_columns(p: WorkloadParams) -> EventColumns:
    """The whole workload as columns, seq numbered from 0 in order."""
    return concat([_generate_block(p, b, first, count) for b, first, count in blocks(p)])


def column_events(cols: EventColumns) -> Iterator[Event]:
    """The events of a column block as :class:`Event` objects (for small runs and JSONL)."""
    seqs, sess, turns, kinds = (
        cols.seq.tolist(),
        cols.session.tolist(),
        cols.turn.tolist(),
        cols.kind.tolist(),
    )
    calls, chars, cjks = cols.call.tolist(), cols.chars.tolist(), cols.cjk.tolist()
    stamps = cols.stamps().tolist()
    srcs = None if cols.source is None else cols.source.tolist()
    kind_of = list(Kind)
    for i in range(len(seqs)):
        k = kind_of[kinds[i]]
        yield Event(
            seq=seqs[i],
            session=f"s{sess[i]}",
            turn=turns[i],
            kind=k,
            call_id=f"c{calls[i]}" if calls[i] >= 0 else None,
            ts=stamps[i],
            writer="0",
            chars=chars[i],
            cjk=bool(cjks[i]),
            source=None if srcs is None or srcs[i] == sess[i] else f"s{srcs[i]}",
        )


def generate_events(p: WorkloadParams) -> Iterator[Event]:
    """Every event of the workload in seq order, block by block (memory stays one block)."""
    seq = 0
    for b, first, count in blocks(p):
        cols = concat([_generate_block(p, b, first, count)], seq_start=seq)
        seq += len(cols)
        yield from column_events(cols)
