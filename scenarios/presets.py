"""Scale presets: what ``--scale tiny|quick|full`` means for a scenario, read from its declaration.

One vocabulary for every command that has sizes (``scenario``, ``demo``, ``bench``): ``tiny``
runs in seconds (tests, smoke runs), ``quick`` in well under a minute (the default everywhere),
``full`` at the seeds' own sizes. A preset is a set of ``k=v`` strings, exactly as on the command
line, applied before the user's own ``--param`` values, which always win. Each scenario declares
its own (:attr:`~turncheck.scenarios.base.Scenario.presets`); a scenario with no entry gets ``scale=<scale>`` when its parameter type has a ``scale`` field that accepts it,
and its own defaults otherwise (a new scenario's defaults should then be quick).
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # the command line spells --scale with Scale before it needs any scenario
    from turncheck.scenarios.base import Scenario

Scale = Literal["tiny", "quick", "full"]
SCALES: tuple[Scale, ...] = ("tiny", "quick", "full")


def declares_scale(scenario: Scenario, scale: str) -> bool:
    """Whether the scenario's parameter type has a ``scale`` field that accepts ``scale``."""
    params_type = scenario.params_type
    if "scale" not in {f.name for f in dataclasses.fields(params_type)}:
        return False
    hint = typing.get_type_hints(params_type).get("scale")
    return typing.get_origin(hint) is Literal and scale in typing.get_args(hint)


def has_preset(scenario: Scenario, scale: str) -> bool:
    """Whether ``scale`` is spelled out for this scenario (in its presets, or by its own field);
    ``full`` always is: a scenario's defaults are its full scale."""
    return scale == "full" or scale in scenario.presets or declares_scale(scenario, scale)


def preset(scenario: Scenario, scale: str) -> Mapping[str, str]:
    """The ``k=v`` parameters ``--scale scale`` stands for (see the module docstring)."""
    if scale in scenario.presets:
        return dict(scenario.presets[scale])
    if declares_scale(scenario, scale):
        return {"scale": scale}
    return {}
