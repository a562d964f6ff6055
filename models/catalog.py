"""The protocol models by name, for every engine and command that takes ``MODEL --param k=v``.

:data:`MODELS` (a :class:`~turncheck.models.registry.Registry`) maps a model's name to a factory taking keyword parameters with defaults; the
factory validates them and raises :class:`BadParameter` naming the parameter. :func:`build_model`
is the one door the command line goes through: it looks the name up, turns ``k=v`` strings into
the types the factory's signature declares (taken from its defaults), and refuses an unknown
parameter by name — so every engine sees the same model for the same words.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from turncheck.models.clock import ClockModel
from turncheck.models.cost_trigger import CostTriggerModel
from turncheck.models.errors import BadParameter, UnknownName
from turncheck.models.keys import KeysModel
from turncheck.models.parameters import parse_value, type_of_default
from turncheck.models.projector_model import ProjectorModel
from turncheck.models.protocol import ProtocolModel
from turncheck.models.registry import Registry
from turncheck.models.trigger import TriggerModel

ModelFactory = Callable[..., ProtocolModel[Any, Any]]

VENDORS = "turncheck.integrations.vendors"

MODELS: Registry[ModelFactory] = Registry(
    "model", home=VENDORS, key=lambda factory: factory.__module__.startswith(VENDORS + ".")
)
"""Every protocol model's factory by name: the built-ins below, then the vendor-protocol
catalogue (:mod:`turncheck.integrations.vendors`, the registry's home: its import registers each model
of that folder), then extensions through ``turncheck.register_model``."""

DESCRIPTIONS: dict[str, str] = {}
"""Each registered model's one-line description, as ``turncheck list models`` shows it."""


@dataclass(frozen=True)
class DemoCheck:
    """A check ``turncheck demo`` runs on a registered model: its parameters (``k=v`` strings),
    the verdict it expects (``"fail"``: the model exists to show a counterexample; ``"pass"``)
    and why, said in the demo's summary and report."""

    expect: Literal["pass", "fail"]
    why: str
    params: Mapping[str, str] = field(default_factory=dict)


VariantKind = Literal["buggy", "upstream", "proposed"]


@dataclass(frozen=True)
class Variant:
    """One variant of a model of a real system, as ``--param variant=NAME`` names it, with what
    it is — ``buggy`` (the behaviour a report shows, in the releases ``source`` names),
    ``upstream`` (what a merged change or a release ships, named in ``source``) or ``proposed``
    (a design not merged anywhere: ours, or an open pull request ``source`` names) — so no
    listing or page calls a design of ours the vendor's fix. A passing check of a ``proposed``
    variant says the design holds in the model, not that any release does."""

    name: str
    kind: VariantKind
    source: str


DEMO_CHECKS: dict[str, DemoCheck] = {}
"""Registered models' demo checks, in registration order (the built-in trigger's two are the
demo's own, :data:`turncheck.cli.demo.CHECKS`)."""


def register_model(
    name: str,
    factory: ModelFactory | None = None,
    *,
    description: str = "",
    demo: DemoCheck | None = None,
) -> Any:
    """Register ``factory`` (a class or function taking keyword parameters with defaults) as
    model ``name``, or use as ``@register_model(name)``; returns the factory unchanged. Every
    engine and command then builds it by name (:func:`build_model`); ``description`` is the
    line ``turncheck list models`` shows beside the name (one line: a newline is refused); with
    ``demo``, ``turncheck demo`` checks it too and its counterexample is drawn in the report."""
    if factory is None:
        return lambda f: register_model(name, f, description=description, demo=demo)
    if "\n" in description:
        raise BadParameter(f"model {name!r}: its description must be one line")
    registered = MODELS.register(name, factory)
    if description:
        DESCRIPTIONS[name] = description
    if demo is not None:
        DEMO_CHECKS[name] = demo
    return registered


register_model("clock", ClockModel, description="writer clocks and read orders: turns read back by timestamp")
register_model(
    "keys",
    KeysModel,
    description="key collapse: sessions stored under fewer keys, read back one key at a time",
)
register_model("projector", ProjectorModel, description="every small history projected by one strategy")
register_model(
    "trigger", TriggerModel, description="writers, TurnCountTrigger(maxTurns), a gap and a locking"
)
register_model(
    "cost-trigger",
    CostTriggerModel,
    description="a token trigger reading an estimate (undercount, frame, stale count) against a fixed window",
)


def model_variants(name: str) -> tuple[Variant, ...]:
    """The variants model ``name`` declares (its factory's ``variants``), none for a model
    without them."""
    return tuple(v for v in getattr(MODELS[name], "variants", ()) if isinstance(v, Variant))


def model_names() -> list[str]:
    return list(MODELS)


def model_factory(name: str) -> ModelFactory:
    """The factory registered as ``name``; raises :class:`UnknownName` listing the known ones."""
    return MODELS[name]


def factory_parameters(factory: Callable[..., Any]) -> dict[str, Any]:
    """A model factory's parameters and their defaults, in signature order."""
    sig = inspect.signature(factory)
    return {
        p.name: p.default
        for p in sig.parameters.values()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.default is not inspect.Parameter.empty
    }


def coerce_value(raw: Any, default: Any, name: str) -> Any:
    """Turn a ``--param`` string into the type of the parameter's default (ints, bools, floats,
    strings, tuples of ints: :func:`~turncheck.models.parameters.parse_value`); values that are
    not strings pass through."""
    if not isinstance(raw, str):
        return raw
    return parse_value(raw.strip(), type_of_default(default), name)


MAX_MODEL_SIZE = 1 << 17
"""Largest integer a model parameter may take (writers, turns, limits…): sizes drive the
allocations of a model's initial state, so a 148-byte trace naming 10⁹ writers is refused
before any work instead of taking tens of GB."""


def check_sizes(params: Mapping[str, Any], name: str) -> None:
    """Refuse any integer parameter (or integer in a tuple) outside ±:data:`MAX_MODEL_SIZE`."""
    for key, value in params.items():
        values = value if isinstance(value, (tuple, list)) else (value,)
        for v in values:
            if isinstance(v, int) and not isinstance(v, bool) and not -MAX_MODEL_SIZE <= v <= MAX_MODEL_SIZE:
                raise BadParameter(
                    f"model {name}: parameter {key} is past the limit of {MAX_MODEL_SIZE} (see MAX_MODEL_SIZE)"
                )


def model_kwargs(factory: Callable[..., Any], name: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """``params`` (values or ``k=v`` strings) as the keyword arguments of ``factory``: names
    checked against its signature (dashes and underscores alike), strings turned into the type
    of each default, sizes bounded (:func:`check_sizes`). ``name`` is how errors call the model."""
    known = factory_parameters(factory)
    kwargs: dict[str, Any] = {}
    for key, raw in (params or {}).items():
        pname = key.strip().replace("-", "_")
        if pname not in known:
            listed = ", ".join(known) or "none"
            raise UnknownName(f"model {name} has no parameter {key!r} (parameters: {listed})")
        kwargs[pname] = coerce_value(raw, known[pname], pname)
    check_sizes(kwargs, name)
    return kwargs


def construct(factory: Callable[..., Any], name: str, kwargs: Mapping[str, Any]) -> Any:
    """``factory(**kwargs)``, a refusal of its arguments turned into :class:`BadParameter`."""
    try:
        return factory(**kwargs)
    except BadParameter:
        raise
    except (TypeError, ValueError) as exc:
        raise BadParameter(f"model {name}: {exc}") from None


def build_model(name: str, params: Mapping[str, Any] | None = None) -> ProtocolModel[Any, Any]:
    """Build model ``name`` from parameters given as values or ``k=v`` strings.

    Dashes and underscores are interchangeable in parameter names. Raises
    :class:`UnknownName` for an unknown model or parameter and :class:`BadParameter` for a value
    of the wrong type or out of range, each naming the culprit.
    """
    factory = model_factory(name)
    return construct(factory, name, model_kwargs(factory, name, params))  # type: ignore[no-any-return]
