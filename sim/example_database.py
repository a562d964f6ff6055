"""Hypothesis's directory example database, with each example written whole or not at all.

``DirectoryBasedExampleDatabase.save`` writes an example to a temporary file in the *system's*
temporary folder and renames it into the database; where that is another filesystem than the
database's (``/tmp`` a tmpfs, the project on a disk: the rename fails with ``EXDEV``, Hypothesis
issue 4335) it falls back to writing the example in place, and on a full disk that left 0-byte
files under ``.turncheck/hypothesis`` (issue 57: nothing half-written after an error). Here the
temporary file is made in the example's own folder, synced and renamed, and removed when any
step fails; like Hypothesis's, a failed save is silent (an example database is a cache).
"""

from __future__ import annotations

import contextlib
import os
import tempfile

from hypothesis.database import DirectoryBasedExampleDatabase


class AtomicDirectoryDatabase(DirectoryBasedExampleDatabase):
    """:class:`DirectoryBasedExampleDatabase` whose ``save`` never leaves a partial example."""

    def save(self, key: bytes, value: bytes) -> None:
        key_path = self._key_path(key)
        if key_path.name != self._metakeys_hash:
            self.save(self._metakeys_name, key)  # the meta entry of all keys, as upstream keeps it
        tmp: str | None = None
        try:
            self._ensure_directory_exists()
            key_path.mkdir(exist_ok=True, parents=True)
            path = self._value_path(key, value)
            if path.exists():
                return
            fd, tmp = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=key_path)
            try:
                view = memoryview(value)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, path)
            tmp = None
        except OSError:
            pass
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


__all__ = ["AtomicDirectoryDatabase"]
