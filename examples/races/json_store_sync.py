"""A JSON-file chat store appended to from two threads: read the file, add, write it back (issue 53).

``append`` reads the session file, adds the message, writes the whole list to a temporary file,
``fsync``s it and moves it over the old one with ``os.replace`` — each write is atomic, and
still, between one thread's read and its replace, the other thread's append can land and be
overwritten. Nothing here is async: the test starts two ``threading.Thread``s calling the
store's unchanged ``append``::

    python examples/races/json_store_sync.py                                       # plain threads
    turncheck race examples/races/json_store_sync.py:test_no_lost_append          # exit 1, a token
    turncheck race examples/races/json_store_sync.py:test_no_lost_append_locked   # exit 0
    turncheck race examples/races/json_store_sync.py:test_acknowledged_kept_in_place --faults  # exit 1
    turncheck race examples/races/json_store_sync.py:test_acknowledged_kept --faults           # exit 0

Plain threads lose an append only when the operating system switches threads inside that
window; run the file to see how often on this machine. ``turncheck race`` pauses each thread at
its ``open``, ``read``, ``write``, ``close``, ``os.fsync`` and ``os.replace`` and chooses who
runs next, so the window is found and replayed by its token. Under ``--faults`` those calls
fail or stop their thread: a store that writes its file in place (``InPlaceJsonFileStore``)
loses the whole history to a crash between emptying the file and writing it.
"""

import json
import os
import shutil
import sys
import tempfile
import threading

from turncheck.sim.race.faults import Acknowledged, after_run


class JsonFileStore:
    """One session per JSON file; ``append`` is read, add, write a temporary file, replace."""

    def __init__(self, path: str) -> None:
        self.path = path

    def messages(self) -> list[str]:
        if not os.path.exists(self.path):
            return []
        with open(self.path) as f:
            messages: list[str] = json.load(f)
        return messages

    def append(self, message: str) -> None:
        messages = self.messages()
        messages.append(message)
        tmp = f"{self.path}.{threading.get_ident()}.tmp"
        with open(tmp, "w") as f:
            f.write(json.dumps(messages))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)


class LockedJsonFileStore(JsonFileStore):
    """The same store, every append under one ``threading.Lock``."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.lock = threading.Lock()

    def append(self, message: str) -> None:
        with self.lock:
            super().append(message)


class InPlaceJsonFileStore(JsonFileStore):
    """The same store writing the file in place: ``open(path, "w")`` empties it, then the write
    fills it — a crash between the two leaves an empty history."""

    def messages(self) -> list[str]:
        if not os.path.exists(self.path):
            return []
        with open(self.path) as f:
            text = f.read()
        return list(json.loads(text)) if text else []

    def append(self, message: str) -> None:
        messages = [*self.messages(), message]
        with open(self.path, "w") as f:
            f.write(json.dumps(messages))


def check_acknowledged_kept(store_type: type[JsonFileStore]) -> None:
    """Two appends, each acknowledged once it returned; under ``--faults`` an append may fail
    (the test goes on) or its thread crash. ``Acknowledged`` checks after the run that every
    acknowledged message is kept and that the history never went empty."""
    folder = tempfile.mkdtemp()
    store = store_type(os.path.join(folder, "session.json"))
    history = Acknowledged(store.messages)
    after_run(lambda: shutil.rmtree(folder))  # after the checks: they read the file
    for message in ("user: weather?", "tool: 21°C"):
        try:
            store.append(message)
        except OSError:
            continue
        history.ack(message)


def test_acknowledged_kept() -> None:
    check_acknowledged_kept(JsonFileStore)


def test_acknowledged_kept_in_place() -> None:
    check_acknowledged_kept(InPlaceJsonFileStore)


def check_both_kept(store_type: type[JsonFileStore]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = store_type(os.path.join(folder, "session.json"))
        threads = [threading.Thread(target=store.append, args=(m,)) for m in ("user: weather?", "tool: 21°C")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        kept = store.messages()
    assert len(kept) == 2, f"an append was lost: the session holds {kept}"


def test_no_lost_append() -> None:
    check_both_kept(JsonFileStore)


def test_no_lost_append_locked() -> None:
    check_both_kept(LockedJsonFileStore)


if __name__ == "__main__":
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    lost = 0
    for _ in range(runs):
        try:
            test_no_lost_append()
        except AssertionError:
            lost += 1
    print(f"plain threads: an append was lost in {lost} of {runs} runs")
    sys.exit(1 if lost else 0)
