"""Reading a damaged log back: torn tails, damage in the middle, and what was skipped.

The log is the record ("sending less is not storing less"), so reading it back must never
invent, merge or reorder a turn. The scanners here recover both formats of
:mod:`models.log_format`.

Recovery invariant: the records returned are byte-for-byte records a writer completed, in
write order. A damaged region followed by no valid record is a torn tail (cut, in bytes);
followed by a valid record it is corruption in the middle, and the caller's policy decides:
``stop`` refuses naming the offset, ``resync`` skips to the next valid record and reports what
it skipped.
"""

from __future__ import annotations

import json
import struct
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from operator import itemgetter
from typing import Literal
from zlib import crc32

from turncheck.models.crc_range import RangeCrc
from turncheck.models.log_format import (
    FRAME_HEAD,
    HEADER_SIZE,
    LINE_START,
    MAX_ID_BYTES,
    LogCorrupt,
    Ref,
    StoreError,
    check_frame_header,
    check_line_header,
)
from turncheck.models.resync import next_frame

RecoveryPolicy = Literal["stop", "resync"]
POLICIES: tuple[str, ...] = ("stop", "resync")
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class Skipped:
    """A region recovery stepped over: where, how long, why, and records known lost there.

    ``lost`` counts the records whose numbers are missing around the region (framed format),
    or ``None`` when the format cannot tell (lines).
    """

    offset: int
    length: int
    reason: str
    lost: int | None = None

    def line(self) -> str:
        lost = "" if self.lost is None else f", {self.lost} record(s) lost"
        return f"skipped {self.length} B at byte {self.offset} ({self.reason}{lost})"


@dataclass(frozen=True)
class Recovery:
    """What opening a log found: the report every open returns, clean or not.

    ``torn_offset``/``torn_bytes`` describe the torn tail (``torn_offset == 0`` with records 0
    means the header itself was torn or the file is empty); ``cut`` says whether the tail was
    actually truncated (a read-only open only reports it).
    """

    format: str
    policy: str
    size: int
    records: int
    torn_offset: int | None = None
    torn_bytes: int = 0
    skipped: tuple[Skipped, ...] = ()
    duplicates: int = 0
    cut: bool = False

    @property
    def clean(self) -> bool:
        return self.torn_bytes == 0 and not self.skipped and self.duplicates == 0

    @property
    def header_missing(self) -> bool:
        return self.torn_offset == 0

    def with_cut(self) -> Recovery:
        return Recovery(
            self.format,
            self.policy,
            self.size,
            self.records,
            self.torn_offset,
            self.torn_bytes,
            self.skipped,
            self.duplicates,
            cut=True,
        )

    def summary(self) -> str:
        """One line: records, torn tail, skipped regions and duplicates."""
        parts = [f"{self.records} turn(s) in {self.size} B ({self.format}, policy {self.policy})"]
        verb = "cut" if self.cut else "to cut"
        if self.header_missing:
            torn = f"torn header of {self.torn_bytes} B {verb}; " if self.torn_bytes else ""
            parts.append(torn + ("new log (header written)" if self.cut else "empty log (no header yet)"))
        elif self.torn_bytes:
            parts.append(f"torn tail of {self.torn_bytes} B at byte {self.torn_offset} {verb}")
        parts.extend(s.line() for s in self.skipped)
        if self.duplicates:
            parts.append(f"{self.duplicates} duplicate record(s) ignored")
        if self.clean and not self.header_missing:
            parts.append("clean")
        return "; ".join(parts)


def _frame_problem(data: bytes, pos: int, n: int, crcs: RangeCrc) -> str | None:
    """Why no valid frame starts at ``pos`` (``None`` when one does)."""
    if pos + 13 > n:
        return "truncated frame header"
    length, check, _number, k = FRAME_HEAD.unpack_from(data, pos)
    if k == 0 or length < 5 + k + 2:
        return f"bad frame length {length} / id length {k}"
    end = pos + 8 + length
    if end > n:
        return f"frame of {length} B runs past the end of the file"
    if crcs.crc(pos + 8, end) != check:
        return "checksum mismatch"
    return None


def _complete_frame(data: bytes, pos: int, n: int) -> bool:
    """Whether the bytes at ``pos`` are a whole frame that fails its check rather than a torn one:
    its declared body is wholly in the file, or (one flipped bit in the length) the rest of the
    file is one body matching the frame's CRC. A torn write leaves a frame shorter than its
    length, or zeros (length 0)."""
    if pos + 8 > n:
        return False
    length, check = struct.unpack_from("<II", data, pos)
    if 0 < length <= n - pos - 8:
        return True
    # the length field itself damaged: the rest of the file is exactly one body that matches its CRC
    return n - pos > 8 + 5 and crc32(memoryview(data)[pos + 8 : n]) == check


CORRUPT_TAIL = "corruption, not a torn write"


def _corrupt_tail(
    where: str,
    kind: str,
    policy: str,
    n: int,
    refs: list[Ref],
    skipped: list[Skipped],
    duplicates: int,
    pos: int,
) -> tuple[list[Ref], Recovery]:
    """Damage at the end that a torn write cannot explain: a complete frame whose checksum fails,
    or a newline-terminated line that is no record. A writer's acknowledged turn may be in it,
    so it is never cut on open: ``stop`` refuses (nothing changed), ``resync`` keeps the bytes
    and skips them (a writer appends after them). Only ``log repair`` moves them aside."""
    what = (
        "frame is complete but its checksum fails"
        if kind == "frames"
        else "line is complete but not a record"
    )
    if policy == "stop":
        raise LogCorrupt(
            f"{where}: the last {kind[:-1]} at byte {pos} {what} ({CORRUPT_TAIL}); refusing (policy stop), "
            f"nothing changed — `turncheck log repair` moves its {n - pos} B to a side file, "
            f"policy resync keeps and skips them",
            pos,
        )
    skipped.append(Skipped(pos, n - pos, f"{what}: {CORRUPT_TAIL}", 1 if kind == "frames" else None))
    return refs, Recovery(kind, policy, n, len(refs), None, 0, tuple(skipped), duplicates)


def _next_frame(data: bytes, start: int, n: int, crcs: RangeCrc | None = None) -> int | None:
    """The first offset ≥ ``start`` where a valid frame begins (:func:`models.resync.next_frame`:
    candidates checked in bulk, linear time whatever the bytes)."""
    return next_frame(data, start, n, crcs)


def _corrupt(where: str, kind: str, pos: int, reason: str, q: int) -> LogCorrupt:
    return LogCorrupt(
        f"{where}: corrupt {kind} at byte {pos} ({reason}) with a valid {kind} at byte {q} after it; "
        f"refusing (policy stop) — reopen with policy resync to skip {q - pos} B",
        pos,
    )


def scan_frames(data: bytes, policy: str = "stop", where: str = "<log>") -> tuple[list[Ref], Recovery]:
    """Recover the framed log in ``data``.

    Parameters
    ----------
    data : bytes
        The whole file.
    policy : {'stop', 'resync'}
        What to do with damage followed by a valid frame.
    where : str
        The file name used in error messages.

    Returns
    -------
    (refs, recovery)
        ``refs`` are the accepted frames as (turn id, frame number, start, end), in file order
        with strictly increasing frame numbers; ``recovery`` reports torn tail, skipped regions
        and duplicate frames.

    Raises
    ------
    NotALog, NewerFormat
        For a file that is not a framed turncheck log we can read.
    LogCorrupt
        For a damaged header, or under ``stop`` for damage followed by a valid frame.
    """
    n = len(data)
    if check_frame_header(data, where) is None:
        return [], Recovery("frames", policy, n, 0, torn_offset=0, torn_bytes=n)
    refs, pos = _clean_frames(data, HEADER_SIZE, n)
    if pos == n and len(set(map(itemgetter(0), refs))) == len(refs):
        return refs, Recovery("frames", policy, n, len(refs))
    index = {r[0]: i for i, r in enumerate(refs)}
    if len(index) != len(refs):  # repeated ids in the clean stretch: take the careful path throughout
        refs, index, pos = [], {}, HEADER_SIZE
    return _scan_damaged(data, refs, index, pos, policy, where)


def _scan_damaged(
    data: bytes, refs: list[Ref], index: dict[bytes, int], pos: int, policy: str, where: str
) -> tuple[list[Ref], Recovery]:
    """The careful path of :func:`scan_frames` from ``pos``, where the clean stretch ended: each
    candidate frame judged against the frames accepted so far, damage skipped (``resync``) or
    refused (``stop``), and back to the fast path after every accepted frame."""
    n = len(data)
    skipped: list[Skipped] = []
    duplicates = 0
    expected = refs[-1][1] + 1 if refs else 0
    after_skip = False
    unpack = FRAME_HEAD.unpack_from
    crcs = RangeCrc(data)  # every CRC of a candidate costs bounded time: no quadratic scan
    while pos < n:
        if pos + 13 <= n:
            length, check, number, k = unpack(data, pos)
            end = pos + 8 + length
            if k and length >= 7 + k and end <= n and crcs.crc(pos + 8, end) == check:
                tid = data[pos + 13 : pos + 13 + k]
                if number == expected and tid not in index:
                    index[tid] = len(refs)
                    refs.append((tid, number, pos, end))
                    after_skip = False
                    more, stop = _clean_frames(data, end, n, number + 1)  # back to the fast path
                    pos = _resume(refs, index, more, stop)
                    expected = refs[-1][1] + 1
                    continue
                problem = _frame_anomaly(data, refs, index, tid, number, expected, pos, end, after_skip)
                if problem is None:  # a gap explained by the region just skipped
                    last = skipped[-1]
                    lost = (last.lost or 0) + number - expected
                    skipped[-1] = Skipped(last.offset, last.length, last.reason, lost)
                    index[tid] = len(refs)
                    refs.append((tid, number, pos, end))
                    expected = number + 1
                    after_skip = False
                    pos = end
                    continue
                if problem == "duplicate":
                    duplicates += 1
                    pos = end
                    continue
                if policy == "stop":
                    raise LogCorrupt(
                        f"{where}: {problem} at byte {pos}; refusing (policy stop) — "
                        f"reopen with policy resync to skip it",
                        pos,
                    )
                if problem.startswith("frame numbers jump"):  # keep the frame, report the gap
                    skipped.append(Skipped(pos, 0, problem, number - expected))
                    index[tid] = len(refs)
                    refs.append((tid, number, pos, end))
                    expected = number + 1
                    after_skip = False
                else:
                    skipped.append(Skipped(pos, end - pos, problem, 1))
                    after_skip = False
                pos = end
                continue
        reason = _frame_problem(data, pos, n, crcs) or "invalid frame"
        q = _next_frame(data, pos + 1, n, crcs)
        if q is not None and pos + 13 <= n and q < pos + 8 + unpack(data, pos)[0]:
            reason = f"torn frame: a valid frame starts {q - pos} B in, inside its declared length"
        if q is None:
            if _complete_frame(data, pos, n):
                return _corrupt_tail(where, "frames", policy, n, refs, skipped, duplicates, pos)
            recovery = Recovery("frames", policy, n, len(refs), pos, n - pos, tuple(skipped), duplicates)
            return refs, recovery
        if policy == "stop":
            raise _corrupt(where, "frame", pos, reason, q)
        skipped.append(Skipped(pos, q - pos, reason, 0))
        after_skip = True
        pos = q
    return refs, Recovery("frames", policy, n, len(refs), None, 0, tuple(skipped), duplicates)


SCAN_CHUNK = 1 << 20
"""Bytes read at a time by :func:`scan_frame_file` (a frame longer than this is read whole)."""


def scan_frame_file(
    read: Callable[[int, int], bytes], size: int, policy: str = "stop", where: str = "<log>"
) -> tuple[list[Ref], Recovery]:
    """Recover a framed log of ``size`` bytes, read through ``read(offset, length)``.

    The same result as :func:`scan_frames` over the whole file, reached faster: an undamaged
    log (every frame valid and numbered in order, ids unique, the last frame ending at
    ``size``) is checked chunk by chunk, so its bytes are copied once into a cache-sized buffer
    instead of into one file-sized one. Anything else — a damaged or torn frame, a repeated id,
    a short read, a bad header — reads the whole file and hands it to :func:`scan_frames`,
    which decides (and words any error) exactly as it always does.
    """
    if size <= SCAN_CHUNK:
        return scan_frames(read(0, size), policy, where)
    buf = read(0, SCAN_CHUNK)
    try:
        whole = len(buf) == SCAN_CHUNK and check_frame_header(buf, where) == HEADER_SIZE
    except StoreError:
        whole = False
    refs: list[Ref] = []
    base, pos = 0, HEADER_SIZE  # ``buf`` holds the file from ``base``; ``pos`` is an offset in it
    while whole:
        more, pos = _clean_frames(buf, pos, len(buf), len(refs), base)
        refs += more
        at = base + pos
        if at == size:
            if len(set(map(itemgetter(0), refs))) == len(refs):
                return refs, Recovery("frames", policy, size, len(refs))
            break
        rest = len(buf) - pos
        need = 13 if rest < 13 else 8 + FRAME_HEAD.unpack_from(buf, pos)[0]
        if need <= rest or at + need > size:
            break  # a frame that is damaged or runs past the end: the careful path classifies it
        want = min(max(SCAN_CHUNK, need), size - at)
        buf, base, pos = read(at, want), at, 0
        whole = len(buf) == want
    return scan_frames(read(0, size), policy, where)


def _resume(refs: list[Ref], index: dict[bytes, int], more: list[Ref], stop: int) -> int:
    """Accept a clean stretch found by a fast path until an id repeats; where scanning goes on."""
    for ref in more:
        if ref[0] in index:
            return ref[2]  # the careful loop classifies the repeat
        index[ref[0]] = len(refs)
        refs.append(ref)
    return stop


def _clean_frames(data: bytes, pos: int, n: int, first: int = 0, base: int = 0) -> tuple[list[Ref], int]:
    """The longest run of valid frames numbered ``first``, ``first + 1``, … from ``pos`` (the
    fast path: undamaged logs never leave it), and where it stops.

    Only ``data[:n]`` is read; ``data`` starts at file offset ``base`` (the refs carry file
    offsets, the position returned is in ``data``). The CRC runs over a memoryview slice.
    """
    unpack = FRAME_HEAD.unpack_from
    mv = memoryview(data)
    refs: list[Ref] = []
    add = refs.append
    expected = first
    limit = n - 13
    while pos <= limit:
        length, check, number, k = unpack(data, pos)
        end = pos + 8 + length
        if end > n or number != expected or not k or length < 7 + k or crc32(mv[pos + 8 : end]) != check:
            break
        add((data[pos + 13 : pos + 13 + k], number, base + pos, base + end))
        expected += 1
        pos = end
    return refs, pos


def _frame_anomaly(
    data: bytes,
    refs: list[Ref],
    index: dict[bytes, int],
    tid: bytes,
    number: int,
    expected: int,
    pos: int,
    end: int,
    after_skip: bool,
) -> str | None:
    """Classify a checksum-valid frame that is not simply the next one.

    Returns ``None`` (accept: a numbering gap right after a skipped region), ``"duplicate"``
    (byte-identical copy of an accepted frame), or a description of the anomaly.
    """
    if tid in index:
        _, seen_no, s, e = refs[index[tid]]
        if seen_no == number and data[s:e] == data[pos:end]:
            return "duplicate"
        return f"turn id {tid.decode('utf-8', 'replace')!r} repeats the turn at byte {s} with other content"
    if number < expected:
        i = bisect_left([r[1] for r in refs], number)
        if i < len(refs) and refs[i][1] == number:
            return f"frame number {number} repeats the frame at byte {refs[i][2]} with other content"
        return f"frame number {number} out of order (expected {expected})"
    if after_skip:
        return None
    return f"frame numbers jump from {expected - 1} to {number} (frames missing)"


def _line_record(line: bytes) -> bytes | None:
    """The turn id of a well-formed record line (without its newline), else ``None``."""
    if not line.startswith(LINE_START):
        return None
    try:
        obj = json.loads(line.decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    if type(obj) is not dict or len(obj) != 2:
        return None
    tid = obj.get("id")
    if type(tid) is not str or not tid or type(obj.get("events")) is not list:
        return None
    try:
        raw = tid.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return raw if len(raw) <= MAX_ID_BYTES else None


def _merged_at(line: bytes) -> int | None:
    """Offset inside ``line`` where a complete record starts after a torn fragment."""
    p = line.find(LINE_START, 1)
    while p > 0:
        if _line_record(line[p:]) is not None:
            return p
        p = line.find(LINE_START, p + 1)
    return None


def scan_lines(data: bytes, policy: str = "stop", where: str = "<log>") -> tuple[list[Ref], Recovery]:
    """Recover the newline-delimited log in ``data`` (same contract as :func:`scan_frames`).

    A record is committed only with its newline. An unterminated last line is a torn tail; a
    line that is a torn fragment followed by a complete record (a write was torn and more
    appends followed) is recognised as such: ``stop`` refuses naming both offsets, ``resync``
    skips the fragment and keeps the record. Any other bad line followed by a good one is
    corruption. Record numbers are positions in the accepted sequence.
    """
    n = len(data)
    start = check_line_header(data, where)
    if start is None:
        return [], Recovery("lines", policy, n, 0, torn_offset=0, torn_bytes=n)
    refs, pos = _clean_lines(data, start)
    if pos == n and len(set(map(itemgetter(0), refs))) == len(refs):
        return refs, Recovery("lines", policy, n, len(refs))
    index = {r[0]: i for i, r in enumerate(refs)}
    if len(index) != len(refs):  # repeated ids in the clean stretch: take the careful path throughout
        refs, index, pos = [], {}, start
    skipped: list[Skipped] = []
    duplicates = 0
    bad: tuple[int, str] | None = None  # first damaged offset not yet known to be mid-file
    while pos < n:
        nl = data.find(b"\n", pos)
        if nl < 0:
            break  # unterminated: torn tail from ``bad`` or ``pos``
        end = nl + 1
        line = data[pos:nl]
        at = pos
        tid = _line_record(line)
        reason = "not a record line"
        if tid is None:
            p = _merged_at(line)
            if p is None:
                bad = bad or (pos, reason)
                pos = end
                continue
            reason = f"torn half-line of {p} B merged with the record at byte {pos + p}"
            bad = bad or (pos, reason)
            at = pos + p
            tid = _line_record(line[p:])
            assert tid is not None
        if bad is not None:
            b_off, b_reason = bad
            if policy == "stop":
                if at > pos:
                    raise LogCorrupt(
                        f"{where}: byte {b_off}: {b_reason} (a write was torn and more records "
                        f"were appended after it); refusing (policy stop) — reopen with policy "
                        f"resync to skip {at - b_off} B",
                        b_off,
                    )
                raise _corrupt(where, "line", b_off, b_reason, at)
            skipped.append(Skipped(b_off, at - b_off, b_reason))
            bad = None
        if tid in index:
            _, _, s, e = refs[index[tid]]
            if data[s:e] == data[at:end]:
                duplicates += 1
                pos = end
                continue
            shown = tid.decode("utf-8", "replace")
            problem = f"turn id {shown!r} repeats the turn at byte {s} with other content"
            if policy == "stop":
                raise LogCorrupt(f"{where}: {problem} at byte {at}; refusing (policy stop)", at)
            skipped.append(Skipped(at, end - at, problem))
            pos = end
            continue
        index[tid] = len(refs)
        refs.append((tid, len(refs), at, end))
        more, stop = _clean_lines(data, end, len(refs))  # back to the fast path
        pos = _resume(refs, index, more, stop)
    if bad is not None and data.find(b"\n", bad[0], n) >= 0:  # a whole bad line, not a torn one
        return _corrupt_tail(where, "lines", policy, n, refs, skipped, duplicates, bad[0])
    torn_at = bad[0] if bad is not None else (pos if pos < n else None)
    torn = 0 if torn_at is None else n - torn_at
    return refs, Recovery("lines", policy, n, len(refs), torn_at, torn, tuple(skipped), duplicates)


def _clean_lines(data: bytes, pos: int, first: int = 0) -> tuple[list[Ref], int]:
    """The longest run of well-formed record lines from ``pos``, numbered from ``first`` (the
    fast path), and its end."""
    ids: list[bytes] = []
    starts: list[int] = []
    add_id, add_start = ids.append, starts.append
    scan = _DECODER.scan_once  # type: ignore[attr-defined]  # the C scanner json.loads ends in
    lines = data[pos:].split(b"\n")
    del lines[-1]  # the last piece has no newline: never committed
    for line in lines:
        try:
            text = line.decode("utf-8")
            obj, stop = scan(text, 0)
            tid = obj["id"]
            raw = tid.encode("utf-8")
        except (ValueError, StopIteration, KeyError, TypeError, AttributeError, RecursionError):
            break  # not JSON, not an object with an id, or an id that is no text
        if (
            stop != len(text) or not line.startswith(LINE_START) or len(obj) != 2
            or type(tid) is not str or type(obj.get("events")) is not list or not 0 < len(raw) <= MAX_ID_BYTES
        ):  # fmt: skip
            break
        add_id(raw)
        add_start(pos)
        pos += len(line) + 1
    ends = [*starts[1:], pos] if starts else []
    return list(zip(ids, range(first, first + len(ids)), starts, ends, strict=True)), pos
