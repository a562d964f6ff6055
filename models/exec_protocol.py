"""The exec protocol: a message-level trimmer in any language, run as a child process.

``--strategy exec:'CMD ARGS'`` (anywhere a strategy is taken) starts ``CMD ARGS`` — split as a
shell would (:func:`shlex.split`), no shell run, in the working directory — the first time the
strategy projects, and keeps it for the rest of the run. For each request it writes one line
``{"budget": B, "messages": [...], "costs": [...]}`` to the command's standard input —
``messages`` and ``B`` exactly what a ``messages:`` trimmer is called with
(:mod:`models.messages`: OpenAI chat dicts, ``B`` = the budget less the cost model's frame),
``costs`` each message's cost under the run's cost model, so a trimmer in another language can
trim by our counting — and reads one line back from its standard output: ``{"messages": [...]}``,
mapped onto the log as for ``messages:``; ``{"refused": "why"}``, the request is not made
(a library that raises rather than send a window); or ``{"error": "why"}``, the run stops. An
answer may add ``"incremental": true``: later requests then carry ``"keep": K`` and only the
messages after the first K of the previous request (:meth:`ExecTrimmer.ask`), so a long session
is not sent whole before every request. The command's standard error passes through to ours. The lines are JSON in UTF-8 (turncheck writes
ASCII, ``\\u`` escapes for the rest); the protocol's version-1 schema is
``docs/exec-protocol.schema.json``.

Invariant kept: every failure of the command — it cannot start, it exits or crashes, it does not
answer within the timeout (``TURNCHECK_EXEC_TIMEOUT`` seconds, default
:data:`DEFAULT_TIMEOUT`), it answers a line that is not the protocol's, or answers ``error`` —
is one :class:`ExecError` naming the command and the request, and the command is stopped and
reaped first, its whole process group with it on POSIX (no zombie, no orphan). A command still running
when the interpreter exits gets end of input, then is stopped after a grace period; on Linux a
turncheck killed by a signal takes the command with it (the parent-death signal).
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from turncheck.models.cost import CostModel
from turncheck.models.errors import BadParameter, TurncheckError
from turncheck.models.exec_guard import descendants
from turncheck.models.history import History
from turncheck.models.parent_death import parent_death_signal
from turncheck.models.projector import EXEC_PREFIX, RESOLVERS, Strategy, Window

PROTOCOL_VERSION = 1
DEFAULT_TIMEOUT = 60.0
"""Seconds a request may take, the command's start included (a JVM or a Node library import)."""
TIMEOUT_VARIABLE = "TURNCHECK_EXEC_TIMEOUT"
GRACE = 2.0
"""Seconds a command has to exit after end of input before it is killed."""
POLL = 0.05
"""Seconds between two looks at whether a command that has not answered yet has exited."""
MAX_ANSWER_BYTES = 64 << 20
"""Longest answer line read (64 MiB, its newline included). Decoded and parsed, an answer takes
several times its size in memory, and a line is read whole before it can be judged: a command
that printed one 1 GiB line took turncheck to 1.45 GB before the run failed as if the command had
exited (issue 57). Longer is refused, read no further."""


_NO_MEMORY = (
    f"answer line too large to read and parse in the memory left (lines are capped at"
    f" {MAX_ANSWER_BYTES >> 20} MiB, MAX_ANSWER_BYTES; a memory limit lower still stops it first)"
)


class ExecError(TurncheckError):
    """The command behind an ``exec:`` strategy failed a request (the message names both)."""


def request_timeout() -> float:
    """The per-request timeout: ``TURNCHECK_EXEC_TIMEOUT`` when set, else :data:`DEFAULT_TIMEOUT`."""
    raw = os.environ.get(TIMEOUT_VARIABLE)
    if raw is None or not raw.strip():
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise BadParameter(f"{TIMEOUT_VARIABLE} must be a positive number of seconds, got {raw!r}")
    return value


def command_argv(command: str) -> list[str]:
    """``command`` split as a shell would; refused when empty or its program is not found."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise BadParameter(f"strategy {EXEC_PREFIX}{command}: {exc}") from None
    if not argv:
        raise BadParameter(f"strategy {EXEC_PREFIX} needs a command, e.g. exec:'node trim.mjs'")
    if shutil.which(argv[0]) is None:
        raise BadParameter(f"strategy {EXEC_PREFIX}{command}: program {argv[0]!r} not found")
    return argv


class ExecTrimmer:
    """A running command that answers requests (see the module doc).

    The command starts at the first call, in ``cwd`` (default: the working directory then), and
    one worker thread writes each request and reads its answer, so a command that stops reading
    or writing is caught by the timeout in the calling thread. A process that forked
    (a worker pool) starts its own command rather than share its parent's pipes.
    """

    def __init__(self, argv: Sequence[str], *, label: str, cwd: Path | None = None,
                 timeout: float | None = None) -> None:  # fmt: skip
        self.argv = list(argv)
        self.label = label
        self.cwd = cwd
        self.timeout = timeout
        self.requests = 0
        self.incremental = False
        self._last: list[dict[str, Any]] = []
        self._proc: subprocess.Popen[bytes] | None = None
        self._owner = 0
        self._inbox: queue.Queue[bytes | None] = queue.Queue()
        self._outbox: queue.Queue[bytes | BaseException] = queue.Queue()
        self._read: list[int] = [0]

    def ask(self, budget: int, messages: list[dict[str, Any]], costs: Sequence[int]) -> dict[str, Any]:
        """The command's answer for one request of ``messages`` (the whole history before it).

        Whole, ``{"budget", "messages", "costs"}``, until the command answers
        ``"incremental": true``; from then on ``"keep": K`` says the first K messages are the first
        K of the previous request's, and ``messages`` and ``costs`` hold the rest — what was
        appended, and a last message that grew (a batch of calls) sent again. The command's
        answer is always its whole window. Invariant: the list the command rebuilds is, message
        for message, the list a whole request would have carried."""
        if self._proc is None or self._owner != os.getpid():
            self.incremental, self._last = False, []  # a new command holds nothing yet
        if not self.incremental:
            request: dict[str, Any] = {"budget": budget, "messages": messages, "costs": list(costs[:])}
        else:
            keep = common_prefix(self._last, messages)
            request = {"budget": budget, "keep": keep, "messages": messages[keep:], "costs": costs[keep:]}
        answer = self.exchange(request, len(messages))
        self._last = messages
        return answer

    def exchange(self, request: dict[str, Any], whole: int | None = None) -> dict[str, Any]:
        """The command's answer to one request line: ``{"messages": [...]}`` (each an object) or
        ``{"refused": "why"}``; :class:`ExecError` for anything else. ``whole``: how many
        messages the request stands for (an incremental one carries fewer)."""
        self.requests += 1
        count = len(request["messages"]) if whole is None else whole
        where = f"{self.label}: request {self.requests} (budget {request['budget']}, {count} messages)"
        timeout = self.timeout if self.timeout is not None else request_timeout()
        if self._proc is None or self._owner != os.getpid():
            self._start(where)
        self._inbox.put((json.dumps(request, separators=(",", ":")) + "\n").encode("ascii"))
        answer = self._answer(time.monotonic() + timeout)
        if answer is None:
            self.stop(kill=True)
            raise ExecError(f"{where}: no answer within {timeout:g} s ({TIMEOUT_VARIABLE} sets it)")
        if isinstance(answer, MemoryError):
            self.stop(kill=True)
            raise ExecError(f"{where}: {_NO_MEMORY}") from None
        if isinstance(answer, BaseException) or not answer:
            status = self.stop()  # it is gone or going: its own status, not our SIGKILL
            raise ExecError(f"{where}: the command {exit_reason(status)} before answering") from None
        if len(answer) > MAX_ANSWER_BYTES:
            self.stop(kill=True)
            raise ExecError(
                f"{where}: answer line longer than {MAX_ANSWER_BYTES >> 20} MiB (MAX_ANSWER_BYTES), not read further"
            )
        return self._checked(answer, where)

    def _answer(self, deadline: float) -> bytes | BaseException | None:
        """The answer line, ``b""`` when the command has exited without one (even if a child
        it left holds its output open), ``None`` past the deadline."""
        assert self._proc is not None
        while (left := deadline - time.monotonic()) > 0:
            try:
                return self._outbox.get(timeout=min(left, POLL))
            except queue.Empty:
                if self._proc.poll() is not None:
                    try:  # what it wrote before exiting may still be in the pipe
                        return self._outbox.get(timeout=POLL)
                    except queue.Empty:
                        if not self._read[0]:
                            return b""
                    # part of the answer is read: the reader is still taking the rest in (a
                    # long line, a loaded machine); it ends at the newline or end of output
                    try:
                        return self._outbox.get(timeout=max(deadline - time.monotonic(), POLL))
                    except queue.Empty:
                        return None
        return None

    def _checked(self, answer: bytes, where: str) -> dict[str, Any]:
        try:
            value = json.loads(answer.decode("utf-8"))
        except MemoryError:
            self.stop(kill=True)
            raise ExecError(f"{where}: {_NO_MEMORY} ({len(answer):,} bytes read)") from None
        except (UnicodeDecodeError, ValueError, RecursionError):
            self.stop(kill=True)
            raise ExecError(f"{where}: malformed answer (not a JSON line): {shown(answer)}") from None
        if isinstance(value, dict) and not isinstance(value.get("incremental", False), bool):
            self.stop(kill=True)
            raise ExecError(f"{where}: malformed answer: incremental must be true or false: {shown(answer)}")
        if isinstance(value, dict) and isinstance(value.get("messages"), list):
            bad = next((k for k, m in enumerate(value["messages"]) if not isinstance(m, dict)), None)
            if bad is None:
                self.incremental = value.get("incremental", self.incremental)
                return value
            self.stop(kill=True)
            raise ExecError(f"{where}: malformed answer: message {bad + 1} is not a JSON object")
        if isinstance(value, dict) and isinstance(value.get("refused"), str):
            self.incremental = value.get("incremental", self.incremental)
            return value
        self.stop(kill=True)
        if isinstance(value, dict) and isinstance(value.get("error"), str):
            raise ExecError(f"{where}: the trimmer answered error: {value['error']}")
        raise ExecError(
            f'{where}: malformed answer (want {{"messages": [...]}}, {{"refused": "..."}} or {{"error": "..."}}): '
            f"{shown(answer)}"
        )

    def _start(self, where: str) -> None:
        self._proc = None
        self._inbox, self._outbox = queue.Queue(), queue.Queue()
        self._read = [0]
        try:
            proc = _guarded(self.argv, self.cwd)
        except OSError as exc:
            raise ExecError(f"{where}: cannot start the command: {exc.strerror or exc}") from None
        self._proc, self._owner = proc, os.getpid()
        assert proc.stdin is not None and proc.stdout is not None
        threading.Thread(
            target=_exchange,
            args=(proc.stdin, proc.stdout, self._inbox, self._outbox, self._read),
            daemon=True,
        ).start()
        _RUNNING.add(self)

    def stop(self, kill: bool = False) -> int | None:
        """Stop the command and reap it: end of input and up to :data:`GRACE` seconds to exit,
        or (``kill``) at once; its exit status (``None`` when it was not running here)."""
        proc, self._proc = self._proc, None
        _RUNNING.discard(self)
        if proc is None or self._owner != os.getpid():
            return None
        strays = descendants(proc.pid) if proc.poll() is None else []  # before it can exit
        self._inbox.put(None)
        if not kill:
            try:
                proc.wait(GRACE)
            except subprocess.TimeoutExpired:
                pass
        _kill(proc, strays)  # its children too, even when it has exited
        return proc.wait()


def _exchange(stdin: IO[bytes], stdout: IO[bytes], inbox: queue.Queue[bytes | None],
              outbox: queue.Queue[bytes | BaseException], read: list[int]) -> None:  # fmt: skip
    """The worker: each request written, its answer line read (``b""`` at end of output);
    ``read[0]`` counts the bytes of the current answer taken in so far."""
    pending = bytearray()
    try:
        while (line := inbox.get()) is not None:
            read[0] = len(pending)
            stdin.write(line)
            stdin.flush()
            outbox.put(_next_line(stdout, pending, read))
    except (OSError, ValueError, MemoryError) as exc:  # a closed pipe (the command is gone), or
        outbox.put(exc)  # a line too long for the memory left: the caller says which
    finally:
        for pipe in (stdin, stdout):
            try:
                pipe.close()
            except OSError:
                pass


def _next_line(stdout: IO[bytes], pending: bytearray, read: list[int]) -> bytes:
    """The next line of ``stdout`` with its newline, as ``readline(MAX_ANSWER_BYTES + 1)`` gives
    it (one byte more than the cap when longer; the unterminated rest, or ``b""``, at the end of
    output), read in chunks that ``read[0]`` counts; what follows the line stays in ``pending``."""
    limit = MAX_ANSWER_BYTES + 1
    searched = 0
    while (cut := pending.find(b"\n", searched)) < 0 and len(pending) < limit:
        searched = len(pending)
        chunk = stdout.read1(1 << 20)  # type: ignore[attr-defined]  # a BufferedReader's
        if not chunk:
            break
        pending += chunk
        read[0] += len(chunk)
    end = min(cut + 1 if cut >= 0 else len(pending), limit)
    line = bytes(pending[:end])
    del pending[:end]
    return line


def _guarded(argv: list[str], cwd: Path | None) -> subprocess.Popen[bytes]:
    """Start ``argv`` with its stdin and stdout piped, in a session of its own, dying with us;
    on Linux under :mod:`turncheck.models.exec_guard`, so that what it starts dies with it and
    with us too. ``OSError`` when the program cannot be started, as ``Popen`` raises it."""
    if not sys.platform.startswith("linux"):
        return subprocess.Popen(
            argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            start_new_session=os.name == "posix", preexec_fn=_dies_with_us(),
        )  # fmt: skip
    from turncheck.models import exec_guard

    status_read, status_write = os.pipe()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", exec_guard.__file__, str(status_write), *argv], cwd=cwd,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True,
            preexec_fn=_dies_with_us(), pass_fds=(status_write,),
        )  # fmt: skip
    finally:
        os.close(status_write)
    try:
        with os.fdopen(status_read, "rb") as fh:
            failed = fh.read()  # empty: the program started (or the guard died first)
    except OSError:
        failed = b""
    if failed.strip().isdigit():
        proc.wait()
        errno = int(failed)
        raise OSError(errno, os.strerror(errno))
    return proc


def _dies_with_us() -> Callable[[], object] | None:
    """What the command runs before its program: the parent-death signal
    (:func:`~turncheck.models.parent_death.parent_death_signal`), so a turncheck killed by
    SIGKILL takes the command with it. Only from the main thread: the signal fires when the
    thread that started the command ends, and a worker thread may end long before the run."""
    if os.name != "posix" or threading.current_thread() is not threading.main_thread():
        return None
    return parent_death_signal


def _kill(proc: subprocess.Popen[bytes], strays: Sequence[int]) -> None:
    """Kill the command's process group (it leads its own session), or the command alone, and
    ``strays``: the processes below it, seen while it still ran, which may have left the group
    by ``setsid()`` (once the command is gone, its orphans belong to init and cannot be told
    from anyone's)."""
    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except (ProcessLookupError, PermissionError):
        pass
    for pid in strays:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    proc.kill()  # a no-op once it has been reaped


def common_prefix(before: list[dict[str, Any]], now: list[dict[str, Any]]) -> int:
    """How many leading messages ``now`` shares with ``before``. A log only grows, so the common
    case is all of ``before`` (one list comparison in C) or all but its last message (a batch of
    parallel calls that grew); a new session or a summary falls back to a scan."""
    n = min(len(before), len(now))
    if now[:n] == before[:n]:
        return n
    if n and now[: n - 1] == before[: n - 1]:
        return n - 1
    k = 0
    while now[k] == before[k]:
        k += 1
    return k


def exit_reason(status: int | None) -> str:
    if status is None:
        return "stopped"
    if status < 0:
        try:
            return f"was killed by {signal.Signals(-status).name}"
        except ValueError:
            return f"was killed by signal {-status}"
    return f"exited with status {status}"


def shown(answer: bytes) -> str:
    text = answer.decode("utf-8", "replace").strip()
    return repr(text[:80] + ("…" if len(text) > 80 else ""))


_RUNNING: set[ExecTrimmer] = set()
_PROJECTORS: dict[tuple[str, str], Strategy] = {}


@atexit.register
def _stop_all() -> None:
    for trimmer in list(_RUNNING):
        trimmer.stop()


def exec_projector(command: str | Sequence[str], *, name: str | None = None, cwd: Path | None = None,
                   timeout: float | None = None) -> Strategy:  # fmt: skip
    """Our strategy answered by ``command`` over the exec protocol (see :mod:`models.exec_protocol`).

    The command starts at the strategy's first request and answers every request of the run.

    Parameters
    ----------
    command : str or sequence of str
        A command line (split as a shell would, run without a shell) or an argument list.
    name : str, optional
        The strategy's id in every window and result (default ``exec:COMMAND``).
    cwd : Path, optional
        Where the command starts (default: the working directory at its first request).
    timeout : float, optional
        Seconds per request (default: ``TURNCHECK_EXEC_TIMEOUT``, else 60).

    Returns
    -------
    Strategy
        ``(history, budget, cost) -> Window``, as a ``messages:`` trimmer's.

    Raises
    ------
    BadParameter
        When the command is empty or its program is not found (at once);
        :class:`ExecError` when a request fails (the command is stopped first).

    Examples
    --------
    >>> keep_last = exec_projector("node examples/exec/keep_last.mjs", name="keep-last-js")
    """
    from turncheck.models.message_replay import SpanCosts, StateCache
    from turncheck.models.messages import answer_window
    from turncheck.models.selection import Selection, window_of

    if isinstance(command, str):
        argv, text = command_argv(command), command
    else:
        argv, text = list(command), shlex.join(command)
        if not argv or shutil.which(argv[0]) is None:
            raise BadParameter(f"strategy {EXEC_PREFIX}{text}: program not found")
    label = name or EXEC_PREFIX + text
    trimmer = ExecTrimmer(argv, label=label, cwd=cwd, timeout=timeout)

    cache = StateCache("openai", lambda h, s: [], hand=False)

    def projector(history: History, budget: int, cost: CostModel) -> Window:
        # the messages grow with a replayed history (models.message_replay); the request's own
        # list holds the same message objects as the last one, so common_prefix compares
        # references, and only the costs sent are computed
        state = cache.take(history)
        try:
            costs = SpanCosts(history.prefix(cost), state.spans)
            answer = trimmer.ask(budget - cost.frame, list(state.messages), costs)
            if "messages" not in answer:
                return window_of(history, budget, cost, Selection((), refused=True), label)
            return answer_window(
                history, budget, cost, state.spans, state.messages, answer["messages"], label, state.indexed()
            )
        finally:
            cache.give(state)

    projector.trimmer = trimmer  # type: ignore[attr-defined]
    projector.strategy_id = label  # type: ignore[attr-defined]
    return projector


def resolve_exec(spec: str) -> Strategy:
    """The strategy ``exec:COMMAND``: one per command and working directory, so every request
    of a run goes to the one command started for it."""
    key = (spec, os.getcwd())
    if key not in _PROJECTORS:
        _PROJECTORS[key] = exec_projector(spec[len(EXEC_PREFIX) :], name=spec)
    return _PROJECTORS[key]


RESOLVERS.register(EXEC_PREFIX, resolve_exec)
