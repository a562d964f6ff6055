"""The protocol models by name, for every engine and command that takes ``MODEL --param k=v``.

:data:`MODELS` (a :class:`~turncheck.models.registry.Registry`) maps a model's name to a factory taking keyword parameters with defaults; the
factory validates them and raises :class:`BadParameter` naming the parameter. :func:`build_model`
is the one door the command line goes through: it looks the name up, turns ``k=v`` strings into
the types the factory's signature declares (taken from its defaults), and refuses an unknown
parameter by name — so every engine sees the same model for the same words.
"""

from __future__ import annotations

import importlib.util
import inspect
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from turncheck.models.errors import BadParameter, UnknownName
from turncheck.models.parameters import parse_value, type_of_default
from turncheck.models.protocol import ProtocolModel
from turncheck.models.registry import Registry

ModelFactory = Callable[..., ProtocolModel[Any, Any]]

VENDORS = "turncheck.integrations.vendors"

BUILT_INS: dict[str, str] = {
    "clock": "turncheck.models.clock",
    "keys": "turncheck.models.keys",
    "projector": "turncheck.models.projector_model",
    "trigger": "turncheck.models.trigger",
    "cost-trigger": "turncheck.models.cost_trigger",
}
"""Each built-in model's name and the module that registers it (at its end, as each vendor
model's module does), in the order ``turncheck list models`` shows them."""


def _vendor_modules() -> tuple[str, ...]:
    """The vendor catalogue's model modules (:mod:`turncheck.integrations.vendors`), in name
    order, found by listing the folder, not by importing them: every module there registers the
    model it is named after (``agents_js_compaction`` → ``agents-js-compaction``); a name that
    starts with an underscore holds what several share and registers nothing."""
    spec = importlib.util.find_spec(VENDORS)
    folders = list(spec.submodule_search_locations or ()) if spec is not None else []
    names = sorted(m.name for m in pkgutil.iter_modules(folders) if not m.name.startswith("_"))
    return tuple(f"{VENDORS}.{name}" for name in names)


HOMES = (*BUILT_INS.values(), *_vendor_modules())
"""Every module whose import registers a model of the catalogue, in listing order."""


def _home_of(name: str) -> str:
    """The one home whose import registers model ``name`` when it is in the catalogue (the
    registry imports it only if it is one of :data:`HOMES`): a lone ``check trigger`` imports
    the trigger model, not the clock's projector and msgspec nor the vendor catalogue (issue 58
    item 7)."""
    return BUILT_INS.get(name) or f"{VENDORS}.{name.replace('-', '_')}"


def _place(factory: ModelFactory) -> tuple[int, int]:
    """Where a model lists: the built-ins, then models registered directly (``register_model``
    outside an extension) in registration order, then the vendor catalogue by module name —
    whichever a lookup imported first."""
    module = factory.__module__
    if module not in HOMES:
        return len(BUILT_INS), 0
    at = HOMES.index(module)
    return (at, 0) if at < len(BUILT_INS) else (len(BUILT_INS) + 1, at)


MODELS: Registry[ModelFactory] = Registry("model", home=HOMES, key=_place, locate=_home_of)
"""Every protocol model's factory by name: the built-ins (:data:`BUILT_INS`), then the
vendor-protocol catalogue (:mod:`turncheck.integrations.vendors`), then extensions through
``turncheck.register_model``. Each model's module registers it; a lookup by name imports the one
home :func:`_home_of` names, a listing imports them all."""

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
