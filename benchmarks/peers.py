"""Benchmark: what a peer library's trimmer costs per request, and the offline tokenizer's speed.

Figures (printed, never asserted):

* per-request time of each peer and of M0 (our core) on sessions of real text, at growing
  history lengths, budget 4000, ``bpe:o200k_base`` — a peer runs before every model call, so
  this is latency an agent pays each turn;
* per-request time at 10², 10³ and 10⁴ events (one request at the end of one long session;
  a peer whose request takes more than :data:`CAP_S` seconds is not tried at the next size);
* BPE throughput of ``cl100k_base`` and ``o200k_base`` on the generated text (MB/s);
* the real-text generator's rate (events/s).

Peers whose library is not installed are reported as skipped.
"""

from __future__ import annotations

import importlib.util
import statistics
import time

from turncheck.models.history import History
from turncheck.models.peer import PEERS
from turncheck.models.projector import project
from turncheck.models.tokenizer import ENCODINGS, BpeCost, count_tokens
from turncheck.models.workload import WorkloadParams, generate_columns
from turncheck.scenarios.real_text import dressed_sessions, phrasebook

BUDGET = 4000
SEED = 20261030
CAP_S = 5.0
SIZES = (100, 1000, 10000)


def _median_ms(samples: list[float]) -> str:
    return f"{statistics.median(samples) * 1000:9.3f}"


def run(scale: str = "full") -> list[str]:
    """Run the benchmark; returns the printed lines."""
    full = scale == "full"
    turns = [10, 20, 50] if full else [10, 20]
    sessions = 5 if full else 2
    lines: list[str] = []
    for module in ("tiktoken", "faker"):
        if importlib.util.find_spec(module) is None:
            return [f"skipped: {module} is not installed (pip install 'turncheck[peers]')"]
    book = phrasebook(SEED)
    cost = BpeCost("o200k_base")
    started = time.perf_counter()
    dressed = {
        t: list(dressed_sessions(generate_columns(WorkloadParams(sessions=sessions, turns=t)), book, SEED))
        for t in turns
    }
    events = [e for group in dressed.values() for s in group for e in s]
    lines.append(f"real-text generator: {len(events) / (time.perf_counter() - started):,.0f} events/s")
    texts = [e.text or "" for e in events]
    megabytes = sum(len(t.encode()) for t in texts) / 1e6
    for name in ENCODINGS:
        count_tokens(name, "warm up")
        count_tokens.cache_clear()
        t0 = time.perf_counter()
        for text in texts:
            count_tokens(name, text)
        lines.append(f"BPE {name}: {megabytes / (time.perf_counter() - t0):.1f} MB/s over {megabytes:.1f} MB")
    histories = {t: [History(s, costs=(cost,)) for s in group] for t, group in dressed.items()}
    lines.append(f"per-request time (ms, median of {sessions} sessions), budget {BUDGET}, {cost.name}:")
    lines.append("  strategy                      " + "".join(f"{t:>7} turns" for t in turns))
    for name in ("M0", *PEERS):
        if name in PEERS and (why := PEERS[name].missing()) is not None:
            lines.append(f"  {name:30}skipped: {why}")
            continue
        project(histories[turns[0]][0], BUDGET, name, cost)  # imports the library once
        row = []
        for t in turns:
            samples = []
            for h in histories[t]:
                t0 = time.perf_counter()
                project(h, BUDGET, name, cost)
                samples.append(time.perf_counter() - t0)
            row.append(_median_ms(samples))
        lines.append(f"  {name:30}" + "   ".join(row))
    lines.extend(by_events(book, cost, SIZES if full else SIZES[:2]))
    return lines


def by_events(book: object, cost: BpeCost, sizes: tuple[int, ...]) -> list[str]:
    """One request at the end of a session cut to each size (a real session of enough turns,
    ~5 events a turn); a peer is not tried at a size after a request over :data:`CAP_S`."""
    session = next(iter(dressed_sessions(generate_columns(WorkloadParams(sessions=1, turns=max(sizes) // 4 + 10,
                                                                         p_parallel=0.3)), book, SEED)))  # type: ignore[arg-type]  # fmt: skip
    lines = [f"per-request time by history length (ms, one request at the end), budget {BUDGET}, {cost.name}:",
             "  strategy                    " + "".join(f"{n:>12,} ev" for n in sizes)]  # fmt: skip
    for name in ("M0", *PEERS):
        if name in PEERS and (why := PEERS[name].missing()) is not None:
            lines.append(f"  {name:28}skipped: {why}")
            continue
        project(History(session[:20], costs=(cost,)), BUDGET, name, cost)  # imports the library once
        cells: list[str] = []
        over = False
        for n in sizes:
            if over:
                cells.append(f"{'> cap':>15}")
                continue
            h = History(session[:n], costs=(cost,))
            t0 = time.perf_counter()
            project(h, BUDGET, name, cost)
            dt = time.perf_counter() - t0
            over = dt > CAP_S
            cells.append(f"{dt * 1000:15.1f}")
        lines.append(f"  {name:28}" + "".join(cells))
    lines.append(f"  (> cap: the previous size took over {CAP_S:.0f} s; peer:llamaindex puts the whole history into a "
                 "fresh Memory each time, an agent's Memory would put one message per request)")  # fmt: skip
    return lines
