"""The explorer on several processes: the same breadth-first search, each process owning a share.

The visited states are partitioned by a hash of the canonical state (a prime-length table of
hash residues, :func:`sim.explorer_share.ownership`; this process, which also assembles the
result, owns a little less): each process (a *rank*) keeps only the states it owns
(:mod:`sim.explorer_share`), and the search runs level by level —
every rank expands its share of the frontier, sends each successor to the rank owning it (in
bulk: one pickle per pair of ranks and level), and the owner deduplicates. Ids are the
one-process explorer's: a new state's discovery key is its smallest ``(parent id, action
index)``, the ranks exchange their new keys, and a state's id is the level's first id plus the
number of smaller keys on every rank. So ids, parents, actions, levels, state counts, worst
cases (largest value, then lowest id) and shortest counterexamples are those of
:func:`sim.explorer.explore`, byte for byte; the ranks judge properties and metrics over their
own shares and this process combines them (lowest id), then assembles the states in id order.

Hashes must agree between processes. Under ``fork`` they do (the workers inherit this process's
hash secret and address space), and this process is rank 0. Under ``spawn`` and ``forkserver``
this process only coordinates: ``jobs`` workers own the states, started with one fixed
``PYTHONHASHSEED``; if they still hash some value differently (``hash(None)`` is an address
before Python 3.12) they partition with :func:`sim.explorer_share.stable_hash` instead — the
same result, more slowly.

Bounds: ``max_depth`` and ``max_states`` stop exactly where the one-process search stops (counts
of generated transitions included: every rank knows every new key, so every rank knows the parent
at which the one-process search met its ``max_states``-th state); ``timeout`` is checked between
levels. Recording every edge (``record_edges``) is not supported here: :func:`sim.explorer.explore`
runs it in one process. A worker that fails stops the search with one :class:`WorkerFailed`
naming its error; no worker outlives the call, and Ctrl-C is this process's to handle.

Speed: the partition adds work the one process never does (an owner hash per transition, and
pickling, unpickling and a second lookup for every successor another rank owns), so on models
whose transitions are cheap the ranks together do much more than one process; ``turncheck bench
check --compare`` measures that work and the wall-time speedup, and docs/performance.md explains
them.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import pickle
import signal
import sys
import time
from array import array
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from itertools import chain
from multiprocessing.connection import Connection, wait
from typing import Any

import numpy as np

from turncheck.models.errors import BadParameter, TurncheckError
from turncheck.models.protocol import Property, ProtocolModel
from turncheck.sim.explorer import (
    Exploration,
    ProgressLine,
    _identity,
    _judge,
)
from turncheck.sim.explorer_judgement import combined_outcomes, combined_worst, depth_of_ids
from turncheck.sim.explorer_portable import model_in_worker, portable_model, property_indices
from turncheck.sim.explorer_share import Share, decode, owner_function, ownership, probe


class WorkerFailed(TurncheckError):
    """A worker process of the parallel explorer stopped with an error."""


class _Lost(Exception):
    """A process this one exchanges with has gone (its own error is reported by itself)."""


def _canon(model: ProtocolModel[Any, Any], symmetry: bool) -> Callable[[Any], Hashable]:
    return model.canonical if symmetry else _identity


class _Peers:
    """One rank's links to every other rank, and the bulk exchange over them.

    ``exchange`` sends each peer its payload and receives one from each, pair by pair in the
    order of (lower rank, higher rank) — the lower one sends first — so no two ranks ever wait
    on each other. ``alive`` (this process only) lets a receive notice a worker that died.
    """

    def __init__(self, rank: int, links: dict[int, Connection], sentinels: Sequence[int] = ()) -> None:
        self.rank = rank
        self.links = links
        self.sentinels = list(sentinels)

    def _recv(self, link: Connection) -> bytes:
        if self.sentinels:
            while not link.poll():
                ready = wait([link, *self.sentinels])
                if link not in ready and not link.poll():
                    raise _Lost("a worker ended")
        try:
            return link.recv_bytes()
        except (EOFError, OSError) as exc:
            raise _Lost(type(exc).__name__) from None

    def _send(self, link: Connection, payload: bytes) -> None:
        try:
            link.send_bytes(payload)
        except OSError as exc:
            raise _Lost(type(exc).__name__) from None

    def exchange(self, payloads: Sequence[bytes | None]) -> list[bytes]:
        got: list[bytes] = []
        for other in sorted(self.links):
            link, payload = self.links[other], payloads[other]
            assert payload is not None
            if self.rank < other:
                self._send(link, payload)
                got.append(self._recv(link))
            else:
                got.append(self._recv(link))
                self._send(link, payload)
        return got


def _level(share: Share, peers: _Peers, limit_states: int, check_movable: bool) -> tuple[Any, ...]:
    """One BFS level on one rank: ``(generated, terminal, new states, stopped at, movable)``."""
    received = peers.exchange(share.expand())
    keys = share.merge(received)
    others = peers.exchange([keys] * share.ranks)
    total, stopped_at = share.number(others, limit_states)
    generated, terminal = share.tally(stopped_at)
    movable = stopped_at is None and check_movable and share.movable()
    return generated, terminal, total, stopped_at, movable


def _worker(
    control: Connection,
    peer_links: dict[int, Connection],
    inherited: list[Connection],
    portable: Any,
    symmetry: bool,
    rank: int,
    ranks: int,
    limit_states: int,
) -> None:
    """A worker rank: owns its share, runs each level when told, reports its share at the end.
    Module-level, so any start method can run it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's to handle: it
    # stops the workers; a worker's own KeyboardInterrupt would only print a traceback
    for link in inherited:  # a forked worker holds copies of links that are not its own: a dead
        link.close()  # process's pipe must read as closed to whoever shares it
    gc.disable()  # states are acyclic tuples, as in the one-process search
    try:
        model = model_in_worker(portable)
        control.send(("ready", probe()))
        _, kind, table = control.recv()
        share = Share(model, _canon(model, symmetry), rank, table, owner_function(kind))
        peers = _Peers(rank, peer_links)
        while True:
            msg = control.recv()
            if msg[0] == "level":
                control.send(("stats", *_level(share, peers, limit_states, msg[1])))
            elif msg[0] == "finish":
                indices = msg[1]
                props = list(model.properties())
                control.send(("states", share.shipment()))  # first: assembled while we judge
                judged = share.judge([props[i] for i in indices]) if indices is not None else None
                control.send(("judged", judged, share.worst()))
            else:
                return
    except (_Lost, EOFError, BrokenPipeError, ConnectionResetError) as exc:
        _tell(control, ("lost", f"{type(exc).__name__}: {exc}"))
    except Exception as exc:  # noqa: BLE001 - reported to the main process, which raises
        _tell(control, ("error", f"{type(exc).__name__}: {exc}"))


def _tell(control: Connection, msg: tuple[str, str]) -> None:
    try:
        control.send(msg)
    except OSError:
        pass  # the main process is gone: nobody to tell


@contextmanager
def _hash_seed(fixed: bool) -> Iterator[None]:
    """Workers started meanwhile hash strings alike (one ``PYTHONHASHSEED`` for all of them)."""
    if not fixed:
        yield
        return
    before = os.environ.get("PYTHONHASHSEED")
    os.environ["PYTHONHASHSEED"] = before if before is not None and before.isdigit() else "0"
    try:
        yield
    finally:
        if before is None:
            del os.environ["PYTHONHASHSEED"]
        else:
            os.environ["PYTHONHASHSEED"] = before


class _Crew:
    """The worker processes and this process's links to them; stopping them is guaranteed."""

    def __init__(self) -> None:
        self.controls: list[Connection] = []
        self.procs: list[Any] = []

    @property
    def sentinels(self) -> list[int]:
        return [p.sentinel for p in self.procs]

    def receive(self, link: Connection) -> Any:
        """The next message from a worker; :class:`WorkerFailed` if it (or any worker) failed."""
        while not link.poll():
            ready = wait([link, *self.sentinels])
            if link not in ready and not link.poll():
                raise self.failure()
        try:
            msg = link.recv()
        except (EOFError, OSError):
            raise self.failure() from None
        if isinstance(msg, tuple) and msg and msg[0] in ("error", "lost"):
            raise self.failure(msg)
        return msg

    def send(self, link: Connection, msg: Any) -> None:
        try:
            link.send(msg)
        except OSError:
            raise self.failure() from None

    def failure(self, first: tuple[str, str] | None = None) -> WorkerFailed:
        """The error to raise: a worker's own error when one reported it (a worker that only lost
        a peer is a consequence), else that a worker ended unexpectedly."""
        reports = [first] if first is not None else []
        deadline = time.monotonic() + 2.0
        pending = list(self.controls)
        while pending and not any(r[0] == "error" for r in reports):
            ready = wait(pending, timeout=max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            for link in pending[:]:
                if link not in ready:
                    continue
                try:
                    msg = link.recv()
                except (EOFError, OSError):
                    pending.remove(link)
                    continue
                if isinstance(msg, tuple) and msg and msg[0] in ("error", "lost"):
                    reports.append(msg)
                    pending.remove(link)
        errors = [r[1] for r in reports if r[0] == "error"]
        if errors:
            return WorkerFailed(f"explorer worker failed: {errors[0]}")
        return WorkerFailed("an explorer worker process ended unexpectedly")

    def stop(self, finished: bool) -> None:
        """End every worker: told to stop after a finished search, terminated at once otherwise
        (an error or a Ctrl-C here may leave them waiting on each other mid-level)."""
        if finished:
            for link in self.controls:
                try:
                    link.send(("stop",))
                except (OSError, ValueError):
                    pass
        for proc in self.procs:
            if finished:
                proc.join(timeout=5)
            if proc.is_alive():
                proc.terminate()
            proc.join()
        for link in self.controls:
            link.close()


def _start(
    crew: _Crew, context: Any, portable: Any, symmetry: bool, jobs: int, limit_states: int
) -> tuple[bool, dict[int, Connection]]:
    """Start the workers with their links (each pair of ranks joined by one pipe). Returns
    whether this process is rank 0 and, if so, its links to the other ranks."""
    method = context.get_start_method()
    here = method == "fork"  # only forked workers are sure to hash as this process does
    worker_ranks = list(range(1, jobs)) if here else list(range(jobs))
    ends: dict[tuple[int, int], Connection] = {}  # (holder rank, other rank) -> holder's end
    for a in range(jobs):
        for b in range(a + 1, jobs):
            ends[a, b], ends[b, a] = context.Pipe()
    controls = {r: context.Pipe() for r in worker_ranks}  # rank -> (this end, worker's end)
    with _hash_seed(not here):
        for r in worker_ranks:
            mine_ = {b: ends[r, b] for b in range(jobs) if b != r}
            inherited: list[Connection] = []
            if method == "fork":
                inherited = [c for (h, _o), c in ends.items() if h != r and not c.closed]
                inherited += [pair[0] for pair in controls.values()]
                inherited += [pair[1] for q, pair in controls.items() if q != r and not pair[1].closed]
            proc = context.Process(
                target=_worker,
                args=(controls[r][1], mine_, inherited, portable, symmetry, r, jobs, limit_states),
                daemon=True,
            )
            proc.start()
            crew.procs.append(proc)
            crew.controls.append(controls[r][0])
            controls[r][1].close()
            for c in mine_.values():
                c.close()
    own = {b: ends[0, b] for b in range(1, jobs)} if here else {}
    if not here:
        for c in ends.values():
            if not c.closed:
                c.close()
    return here, own


def explore_parallel(
    model: ProtocolModel[Any, Any],
    jobs: int,
    *,
    properties: Sequence[Property[Any]] | None = None,
    symmetry: bool = True,
    max_states: int | None = 1_000_000,
    max_depth: int | None = None,
    timeout: float | None = None,
    progress: ProgressLine | None = None,
    start_method: str | None = None,
) -> Exploration:
    """:func:`sim.explorer.explore` on ``jobs`` processes; the same result for the same model
    and bounds (see the module docstring)."""
    if jobs < 2:
        raise BadParameter(f"parallel exploration needs jobs >= 2, got {jobs}")
    portable = portable_model(model)
    props = tuple(model.properties()) if properties is None else tuple(properties)
    indices = property_indices(model, props)
    limit_states = max_states if max_states is not None else sys.maxsize
    limit_depth = max_depth if max_depth is not None else sys.maxsize
    context: Any = multiprocessing.get_context(start_method)
    started = time.perf_counter()
    deadline = started + timeout if timeout is not None else float("inf")
    crew = _Crew()
    gc_was_enabled = gc.isenabled()
    gc.disable()
    own: dict[int, Connection] = {}
    finished = False
    try:
        here, own = _start(crew, context, portable, symmetry, jobs, limit_states)
        probes = [crew.receive(link)[1] for link in crew.controls]
        if here:
            probes.append(probe())
        kind = "hash" if all(p == probes[0] for p in probes) else "stable"
        table = ownership(jobs, lighter=0 if here else None)
        for link in crew.controls:
            crew.send(link, ("go", kind, table))
        share = Share(model, _canon(model, symmetry), 0, table, owner_function(kind)) if here else None
        peers = _Peers(0, own, crew.sentinels)
        try:
            search = _search(
                crew, share, peers, _initial_count(model, symmetry), limit_states, limit_depth, deadline,
                timeout, progress, started,
            )  # fmt: skip
            generated, terminal, head, bound, levels, n = search
            for link in crew.controls:
                crew.send(link, ("finish", indices))
            judged_parts: list[tuple[list[int | None] | None, dict[str, tuple[int, int]]]] = []
            if share is not None:
                judged_parts.append((share.judge(props) if indices is not None else None, share.worst()))
            shares: list[Any] = [share] if share is not None else []
            shares += [crew.receive(link)[1] for link in crew.controls]
            states, parent, via = assemble(n, shares)  # while the workers judge their shares
            for link in crew.controls:
                _, judged_w, worst_w = crew.receive(link)
                judged_parts.append((judged_w, worst_w))
        except _Lost:
            raise crew.failure() from None
        depth_of = depth_of_ids(levels)
        if indices is None:
            outcomes = _judge(props, states, depth_of)
        else:
            outcomes = combined_outcomes(props, [p[0] for p in judged_parts], depth_of)
        worst = combined_worst([p[1] for p in judged_parts], depth_of)
        finished = True
    finally:
        crew.stop(finished)
        for link in own.values():
            link.close()
        if gc_was_enabled:
            gc.enable()
    seconds = time.perf_counter() - started
    if progress is not None:
        progress(generated, n, n - head, depth_of(n - 1) if n else 0, seconds)
    return Exploration(
        model=model.name,
        params=dict(model.params),
        symmetry=symmetry,
        distinct=n,
        generated=generated,
        max_depth_seen=depth_of(n - 1) if n else 0,
        terminal=terminal,
        exhausted=bound is None,
        bound=bound,
        seconds=seconds,
        properties=outcomes,
        worst=worst,
        states=states,
        parent=parent,
        via=via,
        levels=tuple(levels),
        edges=None,
    )


def _initial_count(model: ProtocolModel[Any, Any], symmetry: bool) -> int:
    canon = _canon(model, symmetry)
    return len({canon(s): None for s in model.init_states()})


def _search(
    crew: _Crew,
    share: Share | None,
    peers: _Peers,
    n: int,
    limit_states: int,
    limit_depth: int,
    deadline: float,
    timeout: float | None,
    progress: ProgressLine | None,
    started: float,
) -> tuple[int, int, int, str | None, list[int], int]:
    """The level loop, run from this process: ``(generated, terminal, head, bound, levels,
    distinct)`` as the one-process search ends with them."""
    levels = [0]
    generated = terminal = head = d = 0
    lo, hi = 0, n
    bound: str | None = None
    while lo < hi:
        now = time.perf_counter()
        if now >= deadline:
            bound = f"timeout ({timeout:g} s)"
            break
        if progress is not None:
            progress(generated, hi, hi - lo, d, now - started)
        check_movable = d + 1 >= limit_depth
        for link in crew.controls:
            crew.send(link, ("level", check_movable))
        stats = [_level(share, peers, limit_states, check_movable)] if share is not None else []
        stats += [crew.receive(link)[1:] for link in crew.controls]
        total, stopped_at = stats[0][2], stats[0][3]
        generated += sum(s[0] for s in stats)
        terminal += sum(s[1] for s in stats)
        if stopped_at is not None:
            head = stopped_at
            n = max(hi, limit_states)  # the initial states are all kept, whatever the bound
            bound = f"max states ({limit_states:,})"
            break
        head = hi
        n = hi + total
        lo, hi = hi, n
        if lo < hi:
            d += 1
            levels.append(lo)
            if d >= limit_depth:
                if any(s[4] for s in stats):
                    bound = f"max depth ({limit_depth})"
                break
    if levels[-1] >= n:
        levels.pop()
    return generated, terminal, head, bound, levels, n


def assemble(n: int, shares: Sequence[Any]) -> tuple[list[Any], array[int], list[Any]]:
    """Every rank's states, parents and actions in id order (this process's share as it is,
    the workers' from their pickled shipments): the ids of all shares are a permutation of
    ``range(n)``, so one argsort orders all three arrays."""
    gid_parts, parent_parts, state_parts, via_parts = [], [], [], []
    for part in shares:
        if isinstance(part, Share):
            gid_bytes, parent_bytes, sts, acts = (
                part.gids.tobytes(),
                part.parent.tobytes(),
                part.states,
                part.via,
            )
        else:
            gid_bytes, parent_bytes, encoded, acts = pickle.loads(part)
            sts = decode(encoded)
        gid_parts.append(np.frombuffer(gid_bytes, dtype=np.int64))
        parent_parts.append(np.frombuffer(parent_bytes, dtype=np.int64))
        state_parts.append(sts)
        via_parts.append(acts)
    order = np.argsort(np.concatenate(gid_parts), kind="stable")
    if len(order) != n:
        raise WorkerFailed(f"explorer workers returned {len(order)} states for {n} ids")
    parent = array("q")
    parent.frombytes(np.concatenate(parent_parts)[order].tobytes())
    picks = order.tolist()
    states = list(map(list(chain.from_iterable(state_parts)).__getitem__, picks))
    via = list(map(list(chain.from_iterable(via_parts)).__getitem__, picks))
    return states, parent, via


__all__ = ["WorkerFailed", "assemble", "explore_parallel"]
