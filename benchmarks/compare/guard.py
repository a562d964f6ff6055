"""The speed guard: the ratios of one ``bench --compare`` run against a committed baseline.

Three figures regressed in one round and nothing noticed (issue 58): speed had no guard. A guard
on times would fail on every slow or busy host, so it reads *ratios* only — turncheck's CPU per
unit over its ceiling's, paired round by round (:func:`benchmarks.compare.paired_ratio`), which
a busy host shifts on both sides alike. A *figure* is one such ratio, named by its topic, its
comparison and its ceiling; peers are left out (their ratio moves with the peer's release).

Invariant kept: the verdict is "worse" exactly when a figure of a topic that ran is above
:data:`TOLERANCE` × its baseline, or is missing from the run; a figure the baseline lacks is
listed as new and never passes silently as "checked".
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from benchmarks.compare import Comparison
from turncheck.models.errors import BadParameter, read_json
from turncheck.models.output_files import write_outputs

TOLERANCE = 1.25
"""A ratio fails the guard when it is more than 25 % above its baseline (issue 58)."""
BASELINE = Path(__file__).resolve().parent.parent / "baseline.json"
"""The committed baseline (``benchmarks/baseline.json``), written by ``--write-baseline``."""
FORMAT = "turncheck-bench-ratios/1"


def figures(topic: str, comparisons: Iterable[Comparison]) -> dict[str, float]:
    """Every ceiling ratio of one topic's comparisons, by figure name: CPU, and where turncheck
    and the ceiling each ran as a fresh process (the seed's row), max RSS too (``…, max RSS``) —
    the issue's memory target is the seed's, and a bigger visited set slows nothing at tiny scale."""
    out: dict[str, float] = {}
    for c in comparisons:
        subject = c.subject
        for m in c.measured:
            if m.role != "ceiling":
                continue
            out[f"{topic}: {c.path} | turncheck/{m.name}"] = round(c.ratio(m), 4)
            if subject.peak_total and m.peak_total and subject.peak_bytes and m.peak_bytes:
                out[f"{topic}: {c.path} | turncheck/{m.name}, max RSS"] = round(
                    subject.peak_bytes / m.peak_bytes, 4
                )
    return out


def topic_of(figure: str) -> str:
    """The topic a figure's name starts with (``"store: log append … | turncheck/…"`` → store)."""
    return figure.split(":", 1)[0]


def write(path: Path, scale: str, ratios: Mapping[str, float]) -> None:
    """Write ``ratios`` as a ratio file (the baseline's format), keys sorted: byte-stable.

    Over an existing ratio file of the same scale, each figure keeps the higher of its two
    ratios: a baseline written by several runs holds the worst each figure did in them, so one
    lucky run cannot set a bar the host's own noise then fails (the store's append ratio moved
    by a third between two tiny runs). A figure of a topic the run measured but no longer has
    is dropped; the figures of topics the run did not measure are kept as they were (a one-topic
    run over the committed baseline used to drop every other topic's)."""
    if path.is_file() and not path.is_symlink():
        old_scale, old = read(path)
        if old_scale == scale:
            measured = {topic_of(k) for k in ratios}
            kept = {k: v for k, v in old.items() if topic_of(k) not in measured}
            ratios = kept | {k: max(v, old.get(k, v)) for k, v in ratios.items()}
    doc = {"format": FORMAT, "scale": scale, "tolerance": TOLERANCE, "ratios": dict(sorted(ratios.items()))}
    write_outputs({path: json.dumps(doc, indent=1, ensure_ascii=False) + "\n"})  # whole, never via a link


def read(path: Path) -> tuple[str, dict[str, float]]:
    """``(scale, ratios)`` of a ratio file; anything else is a one-line error naming the file."""
    doc = read_json(path, BadParameter)
    ratios = doc.get("ratios") if isinstance(doc, dict) else None
    if (
        not isinstance(doc, dict)
        or doc.get("format") != FORMAT
        or not isinstance(doc.get("scale"), str)
        or not isinstance(ratios, dict)
        or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in ratios.values())
    ):
        raise BadParameter(
            f"{path}: not a ratio file (an object with format {FORMAT!r}, a scale and positive "
            "'ratios' by figure, as `turncheck bench --compare --write-baseline` writes)"
        )
    return doc["scale"], {str(k): float(v) for k, v in ratios.items()}


def verdict(
    measured: Mapping[str, float], baseline: Mapping[str, float], topics: Iterable[str]
) -> tuple[list[str], bool]:
    """The guard's lines and whether a figure got worse (or went missing) against ``baseline``.

    Only figures of ``topics`` (those that ran) are judged; the lines say how many were checked,
    which are new (no baseline: not judged) and which baseline figures were not run."""
    ran = tuple(f"{t}: " for t in topics)
    judged = {k: v for k, v in baseline.items() if k.startswith(ran)}
    worse = [
        f"WORSE: {k}: {measured[k]:.2f}× against {v:.2f}× in the baseline (+{100 * (measured[k] / v - 1):.0f} %)"
        for k, v in judged.items()
        if k in measured and measured[k] > TOLERANCE * v
    ]
    missing = [
        f"MISSING: {k}: in the baseline, not measured by this run" for k in judged if k not in measured
    ]
    new = [f"new (no baseline, not judged): {k}: {v:.2f}×" for k, v in measured.items() if k not in baseline]
    skipped = len(baseline) - len(judged)
    bad = bool(worse or missing)
    head = (
        f"speed guard: {len(worse) + len(missing)} of {len(judged)} figures worse than "
        f"{TOLERANCE:.2f}× their baseline ratio or missing"
        if bad
        else f"speed guard OK: {len(judged)} figures within {TOLERANCE:.2f}× their baseline ratio"
    )
    tail = f"; {skipped} baseline figures of topics not run, not checked" if skipped else ""
    return [head + tail, *worse, *missing, *new], bad
