"""Scenario ``framing`` (seed 004 §8): newline-delimited JSON versus length + CRC32 frames.

The seed wrote 200 000 records and tore the write at record 26 000, 94 000 and 158 000 (half a
record, then the writer stopped), and found that both framings detect a torn *tail*. It left
out the case it called the worst for lines: a torn half-record followed by more appends. This
scenario runs both, plus a flipped digit at rest, through the stores' own recovery code
(:mod:`models.recovery`) and two naive line readers for contrast: the seed's lax field reader,
and a strict JSON reader that skips bad lines. Records are single events in the stores' exact
on-disk records (one event per record; the store's unit is a turn, which changes nothing here).

Counts per reader: records *returned*; *intact* (byte-identical to an acknowledged record);
*phantom* (returned but never written in that form — merged, partial or modified); *missing*
(acknowledged but not returned intact). The torn record was never acknowledged; a record
flipped at rest was.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from turncheck.models.log_format import (
    LINE_HEADER,
    LogCorrupt,
    encode_frame,
    encode_frame_header,
    encode_line,
)
from turncheck.models.recovery import scan_frames, scan_lines
from turncheck.scenarios.base import (
    Cell,
    Judgement,
    Progress,
    Scenario,
    ScenarioResult,
    Table,
    params_dict,
    register,
    require,
)

SEED_RECORDS = 200_000
SEED_TEARS = (26_000, 94_000, 158_000)
SEED_TABLE_TEAR = 94_000
_KINDS = ("USER", "CALL", "RESULT", "TERM")
_LAX_ID = re.compile(rb'"id":"(r\d+)"')


@dataclass(frozen=True)
class FramingParams:
    """``records`` written; ``tears``: records complete before each torn tail (default: the
    seed's 26 000 / 94 000 / 158 000, scaled to ``records``); ``at``: the record torn before
    more appends, and flipped at rest (default: the seed's table point 94 000, scaled)."""

    records: int = SEED_RECORDS
    tears: tuple[int, ...] | None = None
    at: int | None = None
    seed: int = 20261030

    def __post_init__(self) -> None:
        require(100 <= self.records <= 5_000_000, f"records must be 100..5000000, got {self.records}")
        for t in self.tear_points():
            require(1 <= t <= self.records - 2, f"tears: {t} is outside 1..{self.records - 2}")
        tears = self.tear_points()
        require(list(tears) == sorted(set(tears)), f"tears must increase strictly, got {tears}")
        require(
            1 <= self.append_point() <= self.records - 2,
            f"at must be within 1..{self.records - 2}, got {self.append_point()}",
        )

    def tear_points(self) -> tuple[int, ...]:
        if self.tears is not None:
            return self.tears
        return tuple(t * self.records // SEED_RECORDS for t in SEED_TEARS)

    def append_point(self) -> int:
        return self.at if self.at is not None else SEED_TABLE_TEAR * self.records // SEED_RECORDS


def event_records(records: int, seed: int) -> list[bytes]:
    """The records' event JSON, byte-identical to :func:`models.events.dumps_event` of
    ``Event(seq=i, session=f"s{i // 200}", turn=(i // 4) % 50, kind, call_id, ts=i, chars)``
    (a template, since building 200 000 Event objects would dominate the run)."""
    rng = random.Random(seed)
    out = []
    for i in range(records):
        kind = _KINDS[i % 4]
        call = f',"call_id":"c{i // 4}"' if kind in ("CALL", "RESULT") else ""
        chars = rng.randrange(200, 3001)
        out.append(
            f'{{"seq":{i},"session":"s{i // 200}","turn":{(i // 4) % 50},"kind":"{kind}"{call},'
            f'"ts":{i},"writer":"0","chars":{chars},"cjk":false}}'.encode()
        )
    return out


@dataclass(frozen=True)
class Framed:
    """One framing of all records: the whole file, each record's bytes and start offset."""

    name: str
    data: bytes
    records: list[bytes]
    starts: list[int]
    header: int
    payload: int
    index: dict[bytes, int]

    def torn_tail(self, t: int) -> bytes:
        return self.data[: self.starts[t] + len(self.records[t]) // 2]

    def torn_then_appended(self, t: int) -> bytes:
        return self.torn_tail(t) + self.data[self.starts[t + 1] :]

    def flipped(self, t: int) -> bytes:
        """A digit of record ``t``'s ``chars`` value changed at rest (valid JSON either way)."""
        at = self.data.index(b'"chars":', self.starts[t]) + len(b'"chars":')
        digit = self.data[at : at + 1]
        return self.data[:at] + (b"9" if digit != b"9" else b"8") + self.data[at + 1 :]


def build(records: list[bytes]) -> tuple[Framed, Framed]:
    """Both framings of the same records (record i has turn id ``r{i}``)."""
    out = []
    ids = [b"r%d" % i for i in range(len(records))]
    for name, header, encode in (
        ("lines", LINE_HEADER, lambda i, body: encode_line(ids[i], body)),
        ("frames", encode_frame_header(), lambda i, body: encode_frame(i, ids[i], body)),
    ):
        encoded = [encode(i, b"[" + r + b"]") for i, r in enumerate(records)]
        starts, pos = [], len(header)
        for rec in encoded:
            starts.append(pos)
            pos += len(rec)
        payload = sum(len(r) + 2 for r in records)
        index = dict(zip(ids, range(len(ids)), strict=True))
        out.append(Framed(name, header + b"".join(encoded), encoded, starts, len(header), payload, index))
    return out[0], out[1]


Returned = list[tuple[bytes, int, int, int]]
"""What a reader returned: (turn id, number, start, end) — each record's span in the data."""


@dataclass(frozen=True)
class Outcome:
    reader: str
    data: bytes
    refused_at: int | None
    returned: Returned
    skipped_bytes: int = 0
    torn_bytes: int = 0


def store_reader(framing: Framed, policy: str) -> Callable[[bytes], Outcome]:
    scan = scan_frames if framing.name == "frames" else scan_lines

    def read(data: bytes) -> Outcome:
        try:
            refs, rec = scan(data, policy, framing.name)
        except LogCorrupt as exc:
            return Outcome(f"store {policy}", data, exc.offset, [])
        skipped = sum(k.length for k in rec.skipped)
        return Outcome(f"store {policy}", data, None, refs, skipped, rec.torn_bytes)

    return read


def _lines_with_spans(data: bytes) -> list[tuple[bytes, int, int]]:
    """Each piece between newlines after the header, with its span (newline included)."""
    out, pos = [], len(LINE_HEADER)
    for line in data[pos:].split(b"\n"):
        end = min(pos + len(line) + 1, len(data))
        if line:
            out.append((line, pos, end))
        pos = end
    return out


def lax_lines(data: bytes) -> Outcome:
    """The seed's lax reader: split on newlines, take the first ``"id"`` field of each line."""
    out: Returned = []
    for line, s, e in _lines_with_spans(data):
        m = _LAX_ID.search(line)
        if m:
            out.append((m.group(1), len(out), s, e))
    return Outcome("lax fields", data, None, out)


def strict_skipping_lines(data: bytes) -> Outcome:
    """A strict JSON reader that skips lines that do not parse (no idea of torn or merged)."""
    out: Returned = []
    skipped = 0
    parse = json.JSONDecoder().raw_decode
    for line, s, e in _lines_with_spans(data):
        try:
            text = line.decode("utf-8")
            obj, stop = parse(text)
            if stop != len(text):
                raise ValueError("extra data")
            out.append((obj["id"].encode("utf-8"), len(out), s, e))
        except (ValueError, KeyError, TypeError, AttributeError):
            skipped += e - s
    return Outcome("strict, skip bad lines", data, None, out, skipped)


def tally(outcome: Outcome, framing: Framed, upto: int, without: int | None = None) -> dict[str, int]:
    """Returned / intact / phantom / missing against the acknowledged records: ``0..upto-1``
    except ``without`` (the torn one). Intact means byte-identical to what was written."""
    index, records, data = framing.index, framing.records, outcome.data
    matched: set[int] = set()
    for tid, _, s, e in outcome.returned:
        i = index.get(tid)
        if i is not None and i < upto and i != without:
            rec = records[i]
            if e - s == len(rec) and data.startswith(rec, s):
                matched.add(i)
    returned, intact = len(outcome.returned), len(matched)
    acknowledged = upto - (1 if without is not None and without < upto else 0)
    return {
        "returned": returned,
        "intact": intact,
        "phantom": returned - intact,
        "missing": acknowledged - intact,
    }


def _damage_rows(
    case: str,
    framings: tuple[Framed, Framed],
    damaged: Callable[[Framed], bytes],
    acknowledged: tuple[int, int | None],
    lax: bool,
    skipping: bool,
    step: Callable[[], None],
) -> list[tuple[Cell, ...]]:
    rows: list[tuple[Cell, ...]] = []
    for framing in framings:
        data = damaged(framing)
        readers: list[Callable[[bytes], Outcome]] = []
        if framing.name == "lines":
            readers += [lax_lines] if lax else []
            readers += [strict_skipping_lines] if skipping else []
        readers += [store_reader(framing, "stop"), store_reader(framing, "resync")]
        for read in readers:
            out = read(data)
            t = tally(out, framing, *acknowledged)
            outcome = "opened" if out.refused_at is None else f"refused at byte {out.refused_at}"
            rows.append(
                (
                    case,
                    framing.name,
                    out.reader,
                    outcome,
                    t["returned"],
                    t["intact"],
                    t["phantom"],
                    t["missing"],
                    out.skipped_bytes,
                    len(data),
                )
            )
            step()
    return rows


DAMAGE_COLUMNS = (
    "case",
    "framing",
    "reader",
    "outcome",
    "returned",
    "intact",
    "phantom",
    "missing",
    "bytes skipped",
    "bytes on disk",
)


def run(params: FramingParams, progress: Progress) -> ScenarioResult:
    """Write, damage and recover both framings; deterministic for given parameters."""
    n = params.records
    lines, frames = build(event_records(n, params.seed))
    tears, at = params.tear_points(), params.append_point()
    total = 2 * len(tears) + 6 + 5
    done = [0]

    def step() -> None:
        done[0] += 1
        progress(done[0], total)

    tail_rows, tail_ok = _tail_rows(tears, (lines, frames), step)

    append_rows = _damage_rows(
        "torn half-record, then more appends",
        (lines, frames),
        lambda f: f.torn_then_appended(at),
        (n, at),
        lax=True,
        skipping=True,
        step=step,
    )
    flip_rows = _damage_rows(
        "flipped digit at rest",
        (lines, frames),
        lambda f: f.flipped(at),
        (n, None),
        lax=True,
        skipping=False,
        step=step,
    )
    tables = _tables(n, at, (tail_rows, append_rows, flip_rows), _size_rows((lines, frames), n))
    judgements = _judge(tail_ok, tears, append_rows, flip_rows)
    return ScenarioResult("framing", params_dict(params), params.seed, tables, judgements)


def _tail_rows(
    tears: tuple[int, ...], framings: tuple[Framed, Framed], step: Callable[[], None]
) -> tuple[list[tuple[Cell, ...]], bool]:
    """Seed 004 §8: each framing torn inside the next record; ok when both recover exactly the
    complete records and detect the torn one."""
    tail_rows: list[tuple[Cell, ...]] = []
    tail_ok = True
    for t in tears:
        for framing in framings:
            data = framing.torn_tail(t)
            out = store_reader(framing, "stop")(data)
            counts = tally(out, framing, t)
            body = data[framing.header :]
            units = body.count(b"\n") + 1 if framing.name == "lines" else len(out.returned)
            torn = int(out.torn_bytes > 0)
            tail_ok &= counts["intact"] == counts["returned"] == t and torn == 1
            tail_rows.append((framing.name, t, units, counts["intact"], torn, len(data), out.torn_bytes))
            step()
    return tail_rows, tail_ok


def _size_rows(framings: tuple[Framed, Framed], n: int) -> list[tuple[Cell, ...]]:
    """Bytes on disk per framing, and what the framing itself costs per record."""
    lines = framings[0]
    size_rows: list[tuple[Cell, ...]] = []
    for framing in framings:
        overhead = len(framing.data) - framing.header - framing.payload
        size_rows.append(
            (
                framing.name,
                n,
                len(framing.data),
                round(len(framing.data) / n, 2),
                round(overhead / n, 2),
                round(len(framing.data) / len(lines.data), 4),
            )
        )
    return size_rows


def _tables(
    n: int,
    at: int,
    damage: tuple[list[tuple[Cell, ...]], list[tuple[Cell, ...]], list[tuple[Cell, ...]]],
    size_rows: list[tuple[Cell, ...]],
) -> tuple[Table, ...]:
    tail_rows, append_rows, flip_rows = damage
    return (
        Table(
            "torn_tail",
            f"Torn tail: half of the next record written, then the writer stops ({n} records)",
            (
                "framing",
                "torn at record",
                "lines/frames read",
                "records recovered",
                "torn detected",
                "bytes on disk",
                "bytes cut",
            ),
            tuple(tail_rows),
            "Seed 004 §8's table. Lines read counts the unterminated half-line; both framings "
            "recover exactly the complete records and detect the torn one.",
        ),
        Table(
            "torn_then_append",
            f"Torn half-record at record {at}, then more appends",
            DAMAGE_COLUMNS,
            tuple(append_rows),
            "The case the seed did not test. The torn record was never acknowledged, so 'missing' "
            "counts acknowledged records lost; 'phantom' counts records returned that were never "
            "written in that form (a merged line). 'stop' refuses to open and returns nothing.",
        ),
        Table(
            "flipped_digit",
            f"One digit of record {at} flipped at rest (still valid JSON)",
            DAMAGE_COLUMNS,
            tuple(flip_rows),
            "Lines have no checksum: the modified record comes back as if written. Frames refuse "
            "(stop) or drop exactly that record (resync).",
        ),
        Table(
            "bytes_on_disk",
            f"Bytes on disk for all {n} records",
            (
                "framing",
                "records",
                "bytes on disk",
                "bytes per record",
                "framing overhead per record",
                "size vs lines",
            ),
            tuple(size_rows),
            "Overhead: everything but the events JSON — lines: the id/events wrapper and newline; "
            "frames: length, CRC32, frame number, id length and id.",
        ),
    )


def _row(rows: list[tuple[Cell, ...]], framing: str, reader: str) -> dict[str, Any]:
    for r in rows:
        if r[1] == framing and r[2] == reader:
            return dict(zip(DAMAGE_COLUMNS, r, strict=True))
    raise KeyError((framing, reader))


def _judge(
    tail_ok: bool,
    tears: tuple[int, ...],
    append_rows: list[tuple[Cell, ...]],
    flip_rows: list[tuple[Cell, ...]],
) -> tuple[Judgement, ...]:
    fr, lr = _row(append_rows, "frames", "store resync"), _row(append_rows, "lines", "store resync")
    fs, ls = _row(append_rows, "frames", "store stop"), _row(append_rows, "lines", "store stop")
    lax, skip = _row(append_rows, "lines", "lax fields"), _row(append_rows, "lines", "strict, skip bad lines")
    flip_l, flip_f = _row(flip_rows, "lines", "store resync"), _row(flip_rows, "frames", "store resync")
    flip_fs = _row(flip_rows, "frames", "store stop")
    return (
        Judgement(
            "torn tail recovered exactly",
            tail_ok,
            f"both framings return exactly the complete records at tears {', '.join(map(str, tears))}",
        ),
        Judgement(
            "torn then appended: stop refuses at the tear",
            fs["returned"] == ls["returned"] == 0,
            f"frames {fs['outcome']}; lines {ls['outcome']}",
        ),
        Judgement(
            "torn then appended: resync loses nothing acknowledged",
            fr["missing"] == fr["phantom"] == lr["missing"] == lr["phantom"] == 0,
            f"frames missing {fr['missing']} phantom {fr['phantom']}; "
            f"lines missing {lr['missing']} phantom {lr['phantom']} (merged line split)",
        ),
        Judgement(
            "naive line readers lose or invent a record",
            lax["phantom"] + lax["missing"] > 0 and skip["missing"] > 0,
            f"lax fields: {lax['phantom']} phantom, {lax['missing']} missing; "
            f"strict skipping: {skip['missing']} missing",
        ),
        Judgement(
            "flipped digit: frames never return it, lines do",
            flip_f["phantom"] == 0 and flip_fs["returned"] == 0 and flip_l["phantom"] == 1,
            f"frames resync phantom {flip_f['phantom']} missing {flip_f['missing']}; "
            f"lines resync phantom {flip_l['phantom']}",
        ),
    )


SCENARIO = register(
    Scenario(
        name="framing",
        params_type=FramingParams,
        run=run,
        summary="Seed 004 §8: lines vs length+CRC frames under torn tails, torn-then-append and bit flips",
        presets={"quick": {"records": "20000"}, "tiny": {"records": "500"}},
        order=90,
    )
)
