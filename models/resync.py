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

_MARK = np.frombuffer(EVENTS_MARK, np.uint8)
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


def _markers(data: bytes, arr: Bytes, lo: int, hi: int, n: int) -> Ints:
    """Offsets ``m`` in ``lo … hi - 1`` where the marker starts (wholly inside ``data[:n]``)."""
    top = min(hi, n - len(EVENTS_MARK) + 1)
    if top <= lo:
        return np.empty(0, np.int64)
    if data.find(EVENTS_MARK, lo, top + len(EVENTS_MARK) - 1) < 0:  # the common case: C-speed no
        return np.empty(0, np.int64)
    at = np.flatnonzero(arr[lo:top] == _MARK[0]).astype(np.int64) + lo
    for i in range(1, len(EVENTS_MARK)):
        at = at[arr[at + i] == _MARK[i]]
    return at


def _first_in_window(
    data: bytes, arr: Bytes, start: int, lo: int, hi: int, n: int, crcs: RangeCrc, best: int | None
) -> int | None:
    """The smallest valid frame start ``q`` (``start <= q``, ``q < best``) whose marker lies in
    ``lo … hi - 1``."""
    marks = _markers(data, arr, lo, hi, n)
    if not len(marks):
        return None
    after = data.find(EVENTS_MARK, int(marks[-1]) + 1, n)
    following = np.append(marks[1:], after if after >= 0 else n + len(EVENTS_MARK))
    floor = max(start, 0) + 12  # j = q + 12 is the id-length byte
    if len(marks) * MAX_ID_BYTES <= hi - lo + _REACH:  # sparse: look behind each marker
        j = (marks[:, None] - 1 - _K[None, :]).ravel()
        which = np.repeat(np.arange(len(marks)), MAX_ID_BYTES)
        keep = j >= floor
        j, which = j[keep], which[keep]
        keep = arr[j] == (marks[which] - 1 - j)
        j, which = j[keep], which[keep]
    else:  # dense: every byte names the one marker it would belong to
        j0 = max(floor, lo - _REACH + 12)
        j = np.arange(j0, hi - 1, dtype=np.int64)
        m = j + arr[j0 : hi - 1] + 1
        keep = (arr[j0 : hi - 1] > 0) & (m >= lo) & (m < hi)
        j, m = j[keep], m[keep]
        which = np.searchsorted(marks, m)
        which = np.minimum(which, len(marks) - 1)
        keep = marks[which] == m
        j, which = j[keep], which[keep]
    if not len(j):
        return None
    q = j - 12
    k = arr[j].astype(np.int64)
    length = (
        arr[q].astype(np.int64)
        | (arr[q + 1].astype(np.int64) << 8)
        | (arr[q + 2].astype(np.int64) << 16)
        | (arr[q + 3].astype(np.int64) << 24)
    )
    end = q + 8 + length
    keep = (length >= 13 + k) & (end <= n) & (end <= following[which] + len(EVENTS_MARK) - 1)
    if best is not None:
        keep &= q < best
    q, end = q[keep], end[keep]
    if not len(q):
        return None
    keep = arr[end - 1] == 0x5D  # the events array's closing "]"
    q, end = q[keep], end[keep]
    order = np.argsort(q, kind="stable")
    for at, stop in zip(q[order].tolist(), end[order].tolist(), strict=True):
        if crcs.crc(at + 8, stop) == _U32.unpack_from(data, at + 4)[0]:
            return int(at)
    return None
