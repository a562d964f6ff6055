"""What a worker process of the parallel explorer can rebuild of this process's search.

A worker gets the model pickled, or — for a catalog model that does not pickle — its catalog
name and parameters, and the properties to judge as indices into ``model.properties()``, which
holds only when each property is provably the model's own (same name, expectation, code and
captured values). Anything else is refused before a worker starts, so a worker never judges a
property other than the one asked for.
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from typing import Any

from turncheck.models.errors import BadParameter, TurncheckError
from turncheck.models.protocol import Property, ProtocolModel


def property_indices(model: ProtocolModel[Any, Any], props: Sequence[Property[Any]]) -> list[int] | None:
    """Indices into ``model.properties()`` of ``props`` when each is the model's own (same name,
    kind, code and captured values), so a worker can rebuild them; None otherwise."""
    own = list(model.properties())
    out = []
    for p in props:
        match = next((i for i, q in enumerate(own) if same_property(p, q)), None)
        if match is None:
            return None
        out.append(match)
    return out


def same_property(p: Property[Any], q: Property[Any]) -> bool:
    if (p.name, p.expectation) != (q.name, q.expectation):
        return False
    f, g = p.holds, q.holds
    if f is g:
        return True
    code_f, code_g = getattr(f, "__code__", None), getattr(g, "__code__", None)
    if code_f is None or code_f is not code_g:
        return False
    cells_f = [c.cell_contents for c in (getattr(f, "__closure__", None) or ())]
    cells_g = [c.cell_contents for c in (getattr(g, "__closure__", None) or ())]
    try:
        return bool(cells_f == cells_g) and getattr(f, "__defaults__", None) == getattr(
            g, "__defaults__", None
        )
    except Exception:  # noqa: BLE001 - a captured value that cannot be compared: not provably the same
        return False


def portable_model(model: ProtocolModel[Any, Any]) -> Any:
    """What a worker needs to have the same model: the model pickled, or, for a catalog model
    that does not pickle (cached bound methods), its catalog name and parameters."""
    try:
        pickle.dumps(model)
        return model
    except Exception as exc:  # noqa: BLE001 - any pickling failure means the same thing here
        why = f"{type(exc).__name__}: {exc}"
    from turncheck.models.catalog import build_model, model_names

    if model.name in model_names():
        try:
            rebuilt = build_model(model.name, dict(model.params))
        except TurncheckError:
            rebuilt = None
        if type(rebuilt) is type(model):
            return ("catalog", model.name, dict(model.params))
    raise BadParameter(
        f"model {model.name} cannot be sent to worker processes ({why}); explore it with --jobs 1"
    )


def model_in_worker(portable: Any) -> ProtocolModel[Any, Any]:
    if isinstance(portable, tuple) and portable[:1] == ("catalog",):
        from turncheck.models.catalog import build_model

        return build_model(portable[1], portable[2])
    model: ProtocolModel[Any, Any] = portable
    return model


__all__ = ["model_in_worker", "portable_model", "property_indices", "same_property"]
