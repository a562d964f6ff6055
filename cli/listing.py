"""``turncheck list [KIND]``: what is registered — strategies, models, scenarios, plots, stores,
peers, lockings, log formats — built-ins first, then what extensions added, and which extensions were loaded.
A kind is named in the plural or the singular (``list model`` is ``list models``), by one rule
for every kind, so a new kind needs no word of its own.

Everything is read from the registries (:mod:`turncheck.models.registry`), the same ones the
commands take their names from, so what this lists is exactly what they accept.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Annotated, Any, Literal, get_args

import typer

from turncheck.cli.options import FormatOpt, QuietAlreadyOpt
from turncheck.cli.stdout_json import print_json
from turncheck.models.errors import UnknownName
from turncheck.models.registry import load_plugins

Kind = Literal[
    "strategies", "models", "scenarios", "plots", "stores", "peers", "lockings", "formats", "extensions"
]
KINDS: tuple[Kind, ...] = get_args(Kind)


def singular(kind: Kind) -> str:
    """A kind's singular, by the rule every kind's plural follows: ``-ies`` to ``-y``, else ``-s`` dropped."""
    return f"{kind[:-3]}y" if kind.endswith("ies") else kind.removesuffix("s")


def kind_named(word: str) -> Kind:
    """The kind ``word`` names, in the plural or the singular."""
    for kind in KINDS:
        if word in (kind, singular(kind)):
            return kind
    raise UnknownName(f"unknown kind {word!r} (known: {', '.join(KINDS)}, each also in the singular)")


def registries() -> dict[str, Mapping[str, Any]]:
    """Each kind's registry, by the word ``turncheck list`` uses for it."""
    from turncheck.models.catalog import MODELS
    from turncheck.models.importers import FORMATS
    from turncheck.models.locking import LOCKINGS
    from turncheck.models.peer import PEERS
    from turncheck.models.projector import STRATEGIES
    from turncheck.reports.plots.plot import PLOTS
    from turncheck.scenarios.base import SCENARIOS
    from turncheck.sim.stress.stores import STORES

    return {"strategies": STRATEGIES, "models": MODELS, "scenarios": SCENARIOS, "plots": PLOTS,
            "stores": STORES, "peers": PEERS, "lockings": LOCKINGS, "formats": FORMATS}  # fmt: skip


def listing() -> dict[str, list[str]]:
    """Every kind's names in registration order, and the extension modules imported."""
    out = {kind: list(registry) for kind, registry in registries().items()}
    out["extensions"] = list(load_plugins())
    return out


def list_command(
    word: Annotated[
        str | None,
        typer.Argument(
            metavar="kind",
            help="One kind only, one name per line (models: each with its one-line description, "
            "and a model of a real system with each variant's kind — buggy, upstream, proposed — "
            "and source): "
            f"{', '.join(KINDS)}, each also in the singular ('list model' is 'list models').",
            show_default=False,
        ),
    ] = None,
    fmt: FormatOpt = "table",
    quiet: QuietAlreadyOpt = False,
) -> None:
    """List the registered strategies, models, scenarios, plots, stores, peers, lockings and
    log formats, and the extensions (entry-point group turncheck.plugins) that were loaded."""
    names = listing()
    kind = None if word is None else kind_named(word)
    if kind is not None:
        names = {kind: names[kind]}
    if fmt == "json":
        print_json(names)
    elif kind == "models":
        sys.stdout.write(_described(names[kind]))
    elif kind is not None:
        sys.stdout.write("".join(f"{n}\n" for n in names[kind]))
    else:
        sys.stdout.write("".join(f"{k}: {', '.join(v) or '(none)'}\n" for k, v in names.items()))


def _described(models: list[str]) -> str:
    """One line per model: its name, then its registered description (none for a model an
    extension registered without one); under a model of a real system, one line per variant —
    its ``variant=`` name, its kind (buggy, upstream, proposed) and its source, so no listing
    calls a design of ours a vendor's fix."""
    from turncheck.models.catalog import DESCRIPTIONS, model_variants

    width = max((len(n) for n in models), default=0)
    lines = []
    for n in models:
        lines.append(f"{n:<{width}}  {DESCRIPTIONS[n]}\n" if n in DESCRIPTIONS else f"{n}\n")
        variants = model_variants(n)
        named = max((len(v.name) for v in variants), default=0)
        lines += [f"  variant={v.name:<{named}}  {v.kind:<8}  {v.source}\n" for v in variants]
    return "".join(lines)


def register(app: typer.Typer) -> None:
    app.command(
        "list",
        help="List what is registered: strategies, models, scenarios, plots, stores, peers, lockings, formats.",
    )(list_command)
