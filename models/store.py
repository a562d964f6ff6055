"""The durable event log: an owned, append-only file of committed turns.

The unit of commit is one whole turn (USER, CALL/RESULT pairs, TERM) written as one record, so
after any crash a turn is either entirely in the log or not at all. A turn carries an id:
committing the same id with the same content again returns the stored turn and writes nothing,
the same id with other content is refused. One opener owns a log at a time (``flock``: writers
exclusive, read-only openers shared); a refused append, a failed write or a projection leaves
the file byte-identical. Opening recovers the file (:mod:`models.recovery`): a torn tail is cut
and reported in bytes, damage in the middle is refused or skipped by policy.

:class:`TurnLog` is the framed store (length + CRC32 per frame). A format subclasses
:class:`TurnStore` and supplies the format hooks (the benchmarks' newline-delimited one,
``benchmarks/store_lines.py``, does, to compare the two).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import ClassVar, Literal

from turncheck.models.errors import BadParameter
from turncheck.models.events import Event, events_from_json
from turncheck.models.log_file import (
    LogBusy,
    LogNotFound,
    LogPermission,
    lock,
    open_fd,
    read_all,
    read_range,
    sync_dir,
    sync_file,
    write_at,
)
from turncheck.models.log_format import (
    BadTurn,
    LogCorrupt,
    NewerFormat,
    NotALog,
    Ref,
    StoredTurn,
    StoreError,
    as_stored,
    check_readback,
    check_turn,
    check_turn_id,
    default_turn_id,
    encode_frame,
    encode_frame_header,
    encode_turn,
    events_json,
    frame_content,
    frame_events_json,
    stored_turn,
)
from turncheck.models.recovery import POLICIES, Recovery, Skipped, scan_frame_file, scan_frames
from turncheck.models.store_read import RecordUndecodable, TurnReading, highest_seq
from turncheck.models.turn_wire import plain_turn

__all__ = [
    "BadTurn",
    "LogBusy",
    "LogClosed",
    "LogCorrupt",
    "LogFull",
    "LogNotFound",
    "LogPermission",
    "LogReplaced",
    "NewerFormat",
    "NotALog",
    "RecordUndecodable",
    "Recovery",
    "Skipped",
    "StoreError",
    "StoredTurn",
    "TurnConflict",
    "TurnLog",
    "TurnStore",
    "check_turn",
    "check_turn_id",
    "default_turn_id",
    "events_json",
]

FsyncPolicy = Literal["always", "batch", "never"]
FSYNC_POLICIES: tuple[str, ...] = ("always", "batch", "never")
DEFAULT_MAX_BYTES = 4 * 1024 * 1024
DEFAULT_BATCH = 256
MAX_WAIT = 86400.0  # a day: NaN, infinity and absurd waits are refused (a NaN wait once polled forever)


class LogFull(StoreError):
    """The append would grow the log past its size limit; nothing was written."""


class TurnConflict(StoreError):
    """A turn id already committed with different content."""


class LogReplaced(StoreError):
    """The path no longer names the file this writer owns (deleted, rotated, replaced): a commit
    would go to a file no reader finds, so it is refused and nothing is written."""


class LogClosed(StoreError):
    """The log was closed, opened read-only, or is used from another process than its opener."""


def _check_options(fsync: str, policy: str, max_bytes: int, wait: float, batch: int) -> None:
    if fsync not in FSYNC_POLICIES:
        raise BadParameter(f"fsync policy {fsync!r} is not one of {', '.join(FSYNC_POLICIES)}")
    if policy not in POLICIES:
        raise BadParameter(f"recovery policy {policy!r} is not one of {', '.join(POLICIES)}")
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes <= 0:
        raise BadParameter(f"max_bytes must be a positive integer, got {max_bytes!r}")
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise BadParameter(f"batch must be a positive integer, got {batch!r}")
    if isinstance(wait, bool) or not isinstance(wait, int | float) or not 0 <= wait <= MAX_WAIT:
        raise BadParameter(f"wait must be a number of seconds in 0..{MAX_WAIT:g}, got {wait!r}")


class TurnStore(TurnReading):
    """An open, owned log of committed turns (the shared interface of every format).

    Use :meth:`open`; a store is a context manager. Not thread-safe: one thread uses one opener.
    Writers hold an exclusive ``flock`` for as long as they are open, so two processes appending
    to one log take turns (open, commit, close), or the second passes ``wait`` to queue.
    """

    format_name: ClassVar[str] = ""

    # -- format hooks --------------------------------------------------------------------
    @staticmethod
    def _scan(data: bytes, policy: str, where: str) -> tuple[list[Ref], Recovery]:
        raise NotImplementedError

    @classmethod
    def _scan_file(cls, fd: int, size: int, policy: str, where: str) -> tuple[list[Ref], Recovery]:
        """Recover the first ``size`` bytes of the open file (default: read all, :meth:`_scan`)."""
        return cls._scan(read_all(fd, size), policy, where)

    @staticmethod
    def _header() -> bytes:
        raise NotImplementedError

    @staticmethod
    def _encode(number: int, turn_id: bytes, events_json: bytes) -> bytes:
        raise NotImplementedError

    @staticmethod
    def _content(record: bytes) -> bytes:
        """The part of a record that identifies the turn (equal records ⇔ same id and events)."""
        raise NotImplementedError

    @staticmethod
    def _decode(record: bytes) -> tuple[Event, ...]:
        """The events of a record (``ValueError``, ``RecursionError`` or :class:`EventFormatError`
        when it holds none or does not decode)."""
        raise NotImplementedError

    # -- life cycle ----------------------------------------------------------------------
    def __init__(
        self, path: Path, fd: int, readonly: bool, refs: list[Ref], recovery: Recovery, size: int,
        fsync: str, max_bytes: int, batch: int,
    ) -> None:  # fmt: skip
        self.path = path
        self.readonly = readonly
        self.recovery = recovery
        self.fsync = fsync
        self.max_bytes = max_bytes
        self.batch = batch
        self._fd: int | None = fd
        self._pid = os.getpid()
        st = os.fstat(fd)
        self._identity = (st.st_dev, st.st_ino)  # the file owned; the path must keep naming it
        self._spath = os.fspath(path)
        self._refs = refs
        self._ids: dict[bytes, int] | None = None  # built on first use: read-only opens never need it
        self._cache: list[StoredTurn | None] = [None] * len(refs)
        self._size = size
        self._next_number = refs[-1][1] + 1 if refs else 0
        self._unsynced = 0
        self._unchecked = 0  # commits since the last identity check (see _check_identity)
        self._dead_ids: set[bytes] = set()  # ids of records skipped as undecodable (resync)
        self.last_seq = -1
        try:
            i = len(refs) - 1
            while i >= 0:  # the last turn that decodes gives the seq to continue after
                try:
                    self.last_seq = self._turn_at(i).events[-1].seq
                    break
                except RecordUndecodable as exc:
                    self._skip_undecodable(i, exc)
                    i -= 1
            if not readonly and refs:
                self.last_seq = max(self.last_seq, highest_seq(read_all(fd, refs[-1][3]), refs))
        except BaseException:
            self._fd = None  # the opener closes the descriptor; never close it twice
            raise

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        create: bool = False,
        readonly: bool = False,
        fsync: str = "always",
        policy: str = "stop",
        max_bytes: int = DEFAULT_MAX_BYTES,
        wait: float = 0.0,
        batch: int = DEFAULT_BATCH,
        follow_symlinks: bool = False,
    ) -> TurnStore:
        """Open (and recover) a log, taking ownership.

        Parameters
        ----------
        path : path-like
            The log file.
        create : bool
            Create the file (with its header) when missing; an empty or torn-header file is
            (re)initialised either way when opened for writing.
        readonly : bool
            Shared lock, no writes: recovery is only reported (a torn tail is not cut).
        fsync : {'always', 'batch', 'never'}
            ``always``: each commit is on disk when it returns. ``batch``: data is fsynced every
            ``batch`` commits, on :meth:`sync` and on close. ``never``: left to the OS.
        policy : {'stop', 'resync'}
            Damage in the middle of the file: refuse naming the offset, or skip to the next
            valid record and report the skipped bytes.
        max_bytes : int
            Size limit (default 4 MiB); an append that would pass it is refused.
        wait : float
            Seconds to wait for another owner to close (default: fail at once).
        batch : int
            Commits per fsync under ``fsync='batch'``.
        follow_symlinks : bool
            Let a writer open a log whose path is a symlink (refused by default: a commit would
            land in the link's target).

        Raises
        ------
        LogNotFound, LogPermission, LogBusy, NotALog, NewerFormat, LogCorrupt
            Each a one-line :class:`StoreError`; the file is left as it was, and a file this call
            created is removed again (a full disk leaves no 0-byte log).
        """
        _check_options(fsync, policy, max_bytes, wait, batch)
        p = Path(path)
        existed = os.path.lexists(p)
        fd = open_fd(p, readonly, create, follow_symlinks)
        try:
            lock(fd, p, readonly, wait)
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise NotALog(f"{p}: not a regular file")
            refs, recovery = cls._scan_file(fd, st.st_size, policy, str(p))
            # every check (the last turn decodes, …) runs before the file is touched:
            # a refused open changes nothing
            store = cls(p, fd, readonly, refs, recovery, recovery.size, fsync, max_bytes, batch)
        except BaseException:
            os.close(fd)
            raise
        if not readonly:
            try:
                store._size = cls._repair(fd, p, recovery, existed)
            except BaseException:
                store.close()
                if not existed:
                    p.unlink(missing_ok=True)
                raise
            if recovery.torn_offset is not None:
                store.recovery = store.recovery.with_cut()
        return store

    @classmethod
    def repair(
        cls, path: str | os.PathLike[str], wait: float = 0.0, follow_symlinks: bool = False
    ) -> tuple[Recovery, Path | None]:
        """Move damage at the end of the log to a side file and cut it there: the one operation
        that removes bytes a reader may count as acknowledged, run only on a user's request.

        The bytes from the first damaged offset with no valid record after it (a torn tail, or
        a complete record that fails its check) are written and fsynced to
        ``PATH.damaged-OFFSET`` first, then the log is truncated. Damage in the middle is left
        (``resync`` skips it). Returns the recovery report before the repair and the side file
        (``None`` when there was nothing to move). A log whose path is a symlink is refused
        unless ``follow_symlinks``: the cut would land in the link's target.
        """
        p = Path(path)
        _check_options("always", "resync", DEFAULT_MAX_BYTES, wait, DEFAULT_BATCH)
        fd = open_fd(p, False, False, follow_symlinks)
        try:
            lock(fd, p, False, wait)
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise NotALog(f"{p}: not a regular file")
            refs, rec = cls._scan_file(fd, st.st_size, "resync", str(p))
            cut = rec.torn_offset if rec.torn_offset else None
            last = rec.skipped[-1] if rec.skipped else None
            if cut is None and last is not None and last.offset + last.length == rec.size:
                if not refs or refs[-1][3] <= last.offset:
                    cut = last.offset
            if cut is None:
                return rec, None
            side = p.with_name(f"{p.name}.damaged-{cut}")
            tail = read_range(fd, cut, rec.size - cut)
            try:
                sfd = os.open(side, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                raise StoreError(f"{p}: side file {side} already exists; move it away first") from None
            except OSError as exc:
                raise StoreError(f"{p}: cannot create side file {side} ({exc.strerror})") from None
            try:
                write_at(sfd, tail, 0)
                os.fsync(sfd)
            except OSError as exc:  # the log keeps its tail; the side file is ours, made this run
                os.close(sfd)
                side.unlink()
                raise StoreError(
                    f"{p}: cannot copy the damaged tail to {side} ({exc.strerror}); nothing changed"
                ) from None
            os.close(sfd)
            sync_dir(p.parent)
            os.ftruncate(fd, cut)
            sync_file(fd)
            return rec, side
        finally:
            os.close(fd)

    @classmethod
    def _repair(cls, fd: int, path: Path, recovery: Recovery, existed: bool) -> int:
        """Cut a torn tail (and write the header of a new or torn-header log); the new size."""
        if recovery.torn_offset is None:
            return recovery.size
        size = recovery.torn_offset
        try:
            os.ftruncate(fd, size)
            if size == 0:
                header = cls._header()
                write_at(fd, header, 0)
                size = len(header)
            sync_file(fd)
            if not existed:
                sync_dir(path.parent)
        except OSError as exc:  # a new log: its header could not be written (a full disk)
            what = "cannot repair the torn tail" if existed else "cannot write the new log's header"
            raise StoreError(f"{path}: {what} ({exc.strerror})") from None
        return size

    def close(self) -> None:
        """Sync per the fsync policy and release ownership. Idempotent."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            if os.getpid() == self._pid and not self.readonly and self.fsync != "never" and self._unsynced:
                sync_file(fd)
        finally:
            os.close(fd)

    @property
    def closed(self) -> bool:
        return self._fd is None

    def __enter__(self) -> TurnStore:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_fd", None) is not None and os.getpid() == self._pid:
            self.close()

    def _live_fd(self) -> int:
        if self._fd is None:
            raise LogClosed(f"{self.path}: log is closed")
        if os.getpid() != self._pid:
            raise LogClosed(f"{self.path}: opened by process {self._pid}, used from process {os.getpid()}")
        return self._fd

    # -- writing -------------------------------------------------------------------------
    def commit(self, events: Iterable[Event], turn_id: str | None = None) -> StoredTurn:
        """Append one whole turn as one record and return it as stored; for a repeat (same id,
        same content), return the one already in the log and write nothing.

        Raises
        ------
        BadTurn
            Not one whole turn, seqs not after the log's last seq, or a bad id.
        TurnConflict
            The id is committed with different content.
        LogFull
            The record would pass ``max_bytes``.
        StoreError
            The write failed (the file is truncated back to its previous size).
        """
        fd = self._live_fd()
        if self.readonly:
            raise LogClosed(f"{self.path}: opened read-only; cannot commit")
        turn = tuple(events)
        stored, raw_id, record = self._prepare(fd, turn, turn_id, self.last_seq, self._size, {}, [])
        if record is not None:
            end = self._size + len(record)
            self._before_write(1, end, stored.turn_id)
            self._write(fd, record, 1)
            self._add(raw_id, stored, end)
            self.last_seq = turn[-1].seq
        return stored

    def commit_many(
        self, turns: Iterable[Iterable[Event]], turn_ids: Iterable[str] | None = None
    ) -> list[StoredTurn]:
        """Append whole turns in order, all or nothing, with one write: what :meth:`commit` of
        each would do (the same checks, records, repeats and refusals; a turn repeated within the
        call is a repeat of the first), except that a refusal of any turn writes none of them and
        the fsync policy counts each turn as a commit. ``turn_ids``, when given, names each turn."""
        fd = self._live_fd()
        if self.readonly:
            raise LogClosed(f"{self.path}: opened read-only; cannot commit")
        batch = [tuple(t) for t in turns]
        ids: list[str | None] = [None] * len(batch) if turn_ids is None else list(turn_ids)
        if len(ids) != len(batch):
            raise BadParameter(f"commit_many: {len(ids)} turn ids for {len(batch)} turns")
        out: list[StoredTurn] = []
        new: dict[bytes, tuple[int, bytes]] = {}  # raw id -> (its place in out, its record)
        end, after_seq = self._size, self.last_seq
        for turn, turn_id in zip(batch, ids, strict=True):
            stored, raw_id, record = self._prepare(fd, turn, turn_id, after_seq, end, new, out)
            if record is not None:
                new[raw_id] = (len(out), record)
                end += len(record)
                after_seq = turn[-1].seq
            out.append(stored)
        if new:
            self._before_write(len(new), end, None)
            self._write(fd, b"".join(record for _, record in new.values()), len(new))
            for raw_id, (place, record) in new.items():  # joined to the index in the order written
                self._add(raw_id, out[place], out[place].offset + len(record))
            self.last_seq = after_seq
        return out

    def _before_write(self, commits: int, end: int, turn_id: str | None) -> None:
        """Refuse a write past ``max_bytes`` (naming the turn, or ``None``: the call's new turns);
        check the path's identity when the policy asks. The message is built only when raised."""
        if end > self.max_bytes:
            what = f"turn {turn_id!r}" if turn_id is not None else f"{commits} new turns"
            raise LogFull(
                f"{self.path}: {what} ({end - self._size} B) would grow the log to {end} B, "
                f"past its limit of {self.max_bytes} B; nothing written"
            )
        if self.fsync == "always" or self._unchecked + commits >= self.batch:
            self._check_identity()
        else:
            self._unchecked += commits

    def _prepare(
        self, fd: int, turn: tuple[Event, ...], turn_id: str | None, after_seq: int, offset: int,
        new: dict[bytes, tuple[int, bytes]], out: list[StoredTurn],
    ) -> tuple[StoredTurn, bytes, bytes | None]:  # fmt: skip
        """One turn checked and laid out at ``offset``: (as stored, raw id, record), the record
        None for a repeat of a turn in the log or earlier in the call (``new``)."""
        if not turn:
            raise BadTurn("a turn needs at least a USER and a TERM event; got none")
        tid = turn_id if turn_id is not None else default_turn_id(turn)
        raw_id = check_turn_id(tid)
        fast = plain_turn(turn, after_seq)
        if fast is not None:
            body, kept = fast
        else:
            body, plain = encode_turn(turn)
        record = self._encode(self._next_number + len(new), raw_id, body)
        if raw_id in new or raw_id in self._index():  # a new id (the common case) costs two lookups
            return self._repeat(fd, tid, raw_id, record, new, out), raw_id, None
        if raw_id in self._dead_ids:
            raise TurnConflict(
                f"{self.path}: turn {tid!r} names a record skipped as undecodable; refusing (use another id)"
            )
        if fast is None:
            check_turn(turn, after_seq)
            if not plain:
                check_readback(body, turn)
            kept = tuple(map(as_stored, turn))
        return stored_turn(tid, kept, offset), raw_id, record

    def _repeat(self, fd: int, tid: str, raw_id: bytes, record: bytes, new: dict[bytes, tuple[int, bytes]],
                out: list[StoredTurn]) -> StoredTurn:  # fmt: skip
        """The turn committed under ``raw_id`` (in the log, or earlier in this call: ``new``) when
        ``record`` holds its content, else :class:`TurnConflict`."""
        earlier, known = new.get(raw_id), self._index().get(raw_id)
        if earlier is not None:
            place, theirs = earlier
            where = f"turn {place} of this call"
        else:
            _, _, start, stop = self._refs[known]  # type: ignore[index]
            theirs, where = os.pread(fd, stop - start, start), f"record at byte {start}"
        if self._content(theirs) != self._content(record):
            raise TurnConflict(
                f"{self.path}: turn {tid!r} is already committed with different content ({where}); refusing"
            )
        return out[earlier[0]] if earlier is not None else self._turn_at(known)  # type: ignore[arg-type]

    def _check_identity(self) -> None:
        """Refuse to write when the path no longer names the owned file (deleted, rotated, replaced).

        How often is the fsync policy's promise: under ``always`` a commit returns once durable
        *at the path*, so every write checks (one ``stat``, ≈ 1.2 µs); under ``batch`` and
        ``never`` the check runs where the batch's promise is made — before the write that closes
        each batch of ``batch`` commits, and in :meth:`sync`. A file replaced mid-batch costs at
        most the batch's unsynced commits, what a crash then costs, and the closing write is
        refused with nothing written and no fsync of the orphan reported as success.
        """
        try:
            st = os.stat(self._spath)
            same = (st.st_dev, st.st_ino) == self._identity
        except OSError:
            same = False
        if not same:
            raise LogReplaced(
                f"{self.path}: the log file was deleted, rotated or replaced while this writer owned it; "
                f"refusing to commit (nothing written) — reopen the log"
            )
        self._unchecked = 0

    def _write(self, fd: int, records: bytes, commits: int) -> None:
        """Write at the end, all or nothing: on any failure truncate back and raise."""
        try:
            done = os.pwrite(fd, records, self._size)  # whole, but for a short write (continued)
            if done != len(records):
                write_at(fd, records[done:], self._size + done)
            if self.fsync == "always":
                sync_file(fd)
            elif self.fsync == "batch":
                self._unsynced += commits
                if self._unsynced >= self.batch:
                    sync_file(fd)
                    self._unsynced = 0
            else:
                self._unsynced += commits
        except OSError as exc:
            try:
                os.ftruncate(fd, self._size)
            except OSError:
                pass
            raise StoreError(
                f"{self.path}: append failed ({exc.strerror}); log left at {self._size} B"
            ) from None

    def _add(self, raw_id: bytes, stored: StoredTurn, end: int) -> None:
        """A written record joined to the index; the log now ends where it does."""
        self._index()[raw_id] = len(self._refs)
        self._refs.append((raw_id, self._next_number, stored.offset, end))
        self._cache.append(stored)
        self._next_number += 1
        self._size = end

    def sync(self) -> None:
        """Make every commit so far durable (``fsync``), whatever the policy."""
        fd = self._live_fd()
        if not self.readonly and self._unsynced:
            self._check_identity()  # durability at the path is what sync() promises
            sync_file(fd)
            self._unsynced = 0


class TurnLog(TurnStore):
    """The framed log: 16-byte header, then one length-prefixed, CRC32-checked frame per turn."""

    format_name = "frames"

    @staticmethod
    def _scan(data: bytes, policy: str, where: str) -> tuple[list[Ref], Recovery]:
        return scan_frames(data, policy, where)

    @classmethod
    def _scan_file(cls, fd: int, size: int, policy: str, where: str) -> tuple[list[Ref], Recovery]:
        return scan_frame_file(partial(read_range, fd), size, policy, where)

    @staticmethod
    def _header() -> bytes:
        return encode_frame_header()

    _encode = staticmethod(encode_frame)  # the hook is the function itself: no frame per commit

    @staticmethod
    def _content(record: bytes) -> bytes:
        return frame_content(record)

    @staticmethod
    def _decode(record: bytes) -> tuple[Event, ...]:
        return events_from_json(frame_events_json(record))
