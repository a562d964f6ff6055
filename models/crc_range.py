"""CRC-32 of any byte range of a file in bounded time, from a table of prefix checksums.

Resynchronising a damaged log checks candidate frames of any declared length. Checksumming each
candidate's body directly costs its length, so a file crafted with many long candidates costs
quadratic time. zlib's CRC-32 is affine in its starting value: for ``B = data[a:b]``,
``crc32(B) = P(b) ^ Z(b - a)(P(a))`` where ``P(i) = crc32(data[:i])`` and ``Z(m)`` is the linear
map "feed ``m`` zero bytes". ``P`` is kept every :data:`STEP` bytes (computed once, in order);
``Z(m)`` is applied as at most 32 table look-up rounds (one per set bit of ``m``). So one range
costs at most ``STEP`` bytes of zlib plus ~32 × 4 look-ups, whatever its length.
"""

from __future__ import annotations

from zlib import crc32

STEP = 1 << 12
"""Bytes between stored prefix checksums (the most zlib work one range query does twice)."""

_Map = tuple[list[int], list[int], list[int], list[int]]
_COLUMNS: list[list[int]] = []  # columns of Z(2**j): the images of the 32 unit vectors
_MAPS: list[_Map] = []  # Z(2**j) as four byte tables


def _apply(columns: list[int], v: int) -> int:
    out, i = 0, 0
    while v:
        if v & 1:
            out ^= columns[i]
        v >>= 1
        i += 1
    return out


def _zero_map(j: int) -> _Map:
    """``Z(2**j)`` as byte tables, built on first use (and every smaller power with it)."""
    while len(_MAPS) <= j:
        k = len(_MAPS)
        if not _COLUMNS:
            z0 = crc32(b"\0", 0)
            _COLUMNS.append([crc32(b"\0", 1 << i) ^ z0 for i in range(32)])
        while len(_COLUMNS) <= k:
            last = _COLUMNS[-1]
            _COLUMNS.append([_apply(last, c) for c in last])
        cols = _COLUMNS[k]
        tables = []
        for b in range(4):
            t = [0] * 256
            for x in range(1, 256):
                low = x & -x
                t[x] = t[x ^ low] ^ cols[8 * b + low.bit_length() - 1]
            tables.append(t)
        _MAPS.append((tables[0], tables[1], tables[2], tables[3]))
    return _MAPS[j]


def shift(v: int, m: int) -> int:
    """``Z(m)(v)``: what feeding ``m`` zero bytes does to the difference of two CRC states."""
    j = 0
    while m:
        if m & 1:
            t0, t1, t2, t3 = _zero_map(j)
            v = t0[v & 255] ^ t1[(v >> 8) & 255] ^ t2[(v >> 16) & 255] ^ t3[v >> 24]
        m >>= 1
        j += 1
    return v


class RangeCrc:
    """``crc32(data[a:b])`` for any ``a <= b`` in bounded time (see the module docstring)."""

    def __init__(self, data: bytes) -> None:
        self._data = memoryview(data)
        self._marks = [0]  # crc32(data[: i * STEP])

    def prefix(self, i: int) -> int:
        """``crc32(data[:i])``."""
        j = i // STEP
        marks, mv = self._marks, self._data
        while len(marks) <= j:
            k = len(marks)
            marks.append(crc32(mv[(k - 1) * STEP : k * STEP], marks[-1]))
        return crc32(mv[j * STEP : i], marks[j])

    def crc(self, a: int, b: int) -> int:
        if b - a <= 2 * STEP:
            return crc32(self._data[a:b])
        return self.prefix(b) ^ shift(self.prefix(a), b - a)
