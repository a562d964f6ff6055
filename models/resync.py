"""Where the next valid frame starts after damage: every candidate checked in bulk, linear time.

Resynchronisation must cost time linear in the file whatever its bytes, including bytes crafted
against the scanner. Every frame's events JSON begins with :data:`EVENTS_MARK` at ``13 + k``
bytes into the frame (``k`` the id length, stored at byte 12), so a frame start ``q`` is a
*candidate* only where a marker ``m`` sits at ``q + 13 + data[q + 12]``. Candidates are found
and filtered with numpy over windows of the buffer (markers found at once, one vector pass per
window); only the few that pass every check below pay a CRC, each in bounded time
(:class:`~models.crc_range.RangeCrc`).

A candidate at ``q`` with id length ``k``, declared length ``L`` and end ``e = q + 8 + L`` is
checked for, in order:

* ``L >= 5 + k + 8`` (number, id length, id, at least the marker) and ``e <= n``;
* ``data[e - 1] == "]"`` (the events array closes the body);
* **no other marker inside the body**: the next marker after ``m`` starts at ``e - 7`` or later.
  A writer's events JSON is a flat array of flat objects (``[{"seq":…},{"seq":…}]``): ``[``
  occurs outside strings only at its start, and inside a string every ``"`` is escaped, so
  ``[{"seq":`` cannot occur a second time in a frame's events. (The id, before ``m``, may hold
  any text; it is not searched.) This check is what keeps marker-dense garbage — a fake frame
  head and marker every few bytes, each declaring a long body — from costing one CRC per marker;
* the body's CRC.

The result is the smallest valid ``q >= start``, the same frame the one-candidate-at-a-time
scan found; the work is proportional to the bytes between ``start`` and that frame (windows
grow from :data:`FIRST_WINDOW` by doubling, so a short gap costs a short window).
"""

from __future__ import annotations

import struct

import numpy as np
import numpy.typing as npt

from turncheck.models.crc_range import RangeCrc
from turncheck.models.log_format import MAX_ID_BYTES

EVENTS_MARK = b'[{"seq":'
"""How every frame's events JSON begins (``event_to_dict`` puts ``seq`` first): the per-frame
marker resynchronisation searches for, at ``13 + k`` bytes into a frame."""

FIRST_WINDOW = 1 << 10
"""Bytes of markers examined by the first window (then 2×, 4×, … up to :data:`LAST_WINDOW`)."""
LAST_WINDOW = 1 << 20

_MARK64 = np.frombuffer(EVENTS_MARK, "<u8")[0]
_K = np.arange(1, MAX_ID_BYTES + 1, dtype=np.int64)
_REACH = 13 + MAX_ID_BYTES  # a marker at m admits frame starts in m - _REACH … m - 14
_U32 = struct.Struct("<I")
Bytes = npt.NDArray[np.uint8]
Ints = npt.NDArray[np.int64]


def next_frame(data: bytes, start: int, n: int, crcs: RangeCrc | None = None) -> int | None:
    """The first offset ``>= start`` where a valid frame begins in ``data[:n]``, or ``None``."""
    arr: Bytes = np.frombuffer(data, np.uint8, count=n)
    crcs = crcs or RangeCrc(data)
    best: int | None = None
    lo, width = start + 14, FIRST_WINDOW
    while lo + len(EVENTS_MARK) <= n:
        hi = min(n, lo + width)
        if best is not None:  # a marker at m can only start a frame after m - _REACH
            hi = min(hi, best + _REACH)
            if hi <= lo:
                break
        found = _first_in_window(data, arr, start, lo, hi, n, crcs, best)
        if found is not None:
            best = found
        lo, width = hi, min(2 * width, LAST_WINDOW)
    return best


_IOTA: list[npt.NDArray[np.intp]] = []


def _iota(size: int) -> npt.NDArray[np.intp]:
    """``arange(size)`` from one array kept across calls (a window's worth, made on first use)."""
    if not _IOTA or len(_IOTA[0]) < size:
        _IOTA[:] = [np.arange(max(size, LAST_WINDOW + 2 * _REACH), dtype=np.intp)]
    return _IOTA[0][:size]


def _markers(data: bytes, arr: Bytes, lo: int, hi: int, n: int) -> Ints:
    """Offsets ``m`` in ``lo … hi - 1`` where the marker starts (wholly inside ``data[:n]``):
    every ``[`` found in one pass, then compared as one 8-byte word each."""
    top = min(hi, n - len(EVENTS_MARK) + 1)
    if top <= lo or data.find(EVENTS_MARK, lo, top + len(EVENTS_MARK) - 1) < 0:  # the common case
        return np.empty(0, np.int64)
    at = np.flatnonzero(arr[lo:top] == EVENTS_MARK[0]) + lo
    return at[_words(data, n, "<u8")[at] == _MARK64].astype(np.int64)


def _words(data: bytes, n: int, kind: str) -> npt.NDArray[np.unsignedinteger]:
    """The little-endian word starting at every byte offset of ``data[:n]`` (a strided view)."""
    size = np.dtype(kind).itemsize
    return np.ndarray(shape=(max(n - size + 1, 0),), dtype=kind, buffer=data, strides=(1,))


def _first_in_window(
    data: bytes, arr: Bytes, start: int, lo: int, hi: int, n: int, crcs: RangeCrc, best: int | None
) -> int | None:
    """The smallest valid frame start ``q`` (``start <= q``, ``q < best``) whose marker lies in
    ``lo … hi - 1``. The cheapest tests run first, on every candidate; the next-marker test on
    the few left; the CRC on the fewer still."""
    marks = _markers(data, arr, lo, hi, n)
    if not len(marks):
        return None
    floor = max(start, 0) + 12  # j = q + 12 is the id-length byte
    if len(marks) * MAX_ID_BYTES <= hi - lo + _REACH:  # sparse: look behind each marker
        mask = np.zeros(hi - lo, np.bool_)
        mask[marks - lo] = True
        j = (marks[:, None] - 1 - _K[None, :]).ravel()
        j = j[j >= floor]
        j = j[mask.take(j + arr[j] + 1 - lo, mode="clip") & (j + arr[j] + 1 < hi)]
    else:  # dense: every byte names the one marker it would belong to, looked up in one pass
        j0 = max(floor, lo - _REACH + 12)
        seg = arr[j0 : hi - 1]
        table = np.zeros(len(seg) + 256, np.bool_)  # the marker at m is table[m - j0 - 1]
        table[marks - (j0 + 1)] = True
        # byte j0 + i names the marker at j0 + i + seg[i] + 1, always inside the table
        j = np.flatnonzero(table.take(_iota(len(seg)) + seg, mode="clip")) + j0
        j = j[arr[j] != 0]  # an id length of 0 names no frame
    if not len(j):
        return None
    q = j - 12
    k = arr[j].astype(np.int64)
    end = q + 8 + _words(data, n, "<u4")[q].astype(np.int64)
    keep = (end >= q + 21 + k) & (end <= n)  # length >= 13 + k, the body inside the file
    if best is not None:
        keep &= q < best
    keep &= arr.take(end - 1, mode="clip") == 0x5D  # the events array's closing "]"
    q, end, k = q[keep], end[keep], k[keep]
    if not len(q):
        return None
    m = q + 13 + k
    after = data.find(EVENTS_MARK, int(marks[-1]) + 1, n)
    following = np.append(marks[1:], after if after >= 0 else n + len(EVENTS_MARK))
    keep = end <= following[np.searchsorted(marks, m)] + len(EVENTS_MARK) - 1  # no marker inside
    q, end = q[keep], end[keep]
    order = np.argsort(q, kind="stable")
    for at, stop in zip(q[order].tolist(), end[order].tolist(), strict=True):
        if crcs.crc(at + 8, stop) == _U32.unpack_from(data, at + 4)[0]:
            return int(at)
    return None
