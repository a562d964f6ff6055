"""Scale presets: what ``--scale tiny|quick|full`` means for each scenario, in one table.

One vocabulary for every command that has sizes (``scenario``, ``demo``, ``bench``): ``tiny``
runs in seconds (tests, smoke runs), ``quick`` in well under a minute (the default everywhere),
``full`` at the seeds' own sizes. A preset is a set of ``k=v`` strings, exactly as on the command
line, applied before the user's own ``--param`` values, which always win. A scenario with no
entry here gets ``scale=<scale>`` when its parameter type has a ``scale`` field that accepts it,
and its own defaults otherwise (a new scenario's defaults should then be quick).
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from typing import Literal

from turncheck.scenarios.base import Scenario

Scale = Literal["tiny", "quick", "full"]
SCALES: tuple[Scale, ...] = ("tiny", "quick", "full")

# scenario → scale → parameters. The demo runs the tiny and quick presets; ``full`` is the
# scenario's defaults unless it says otherwise.
PRESETS: dict[str, dict[Scale, dict[str, str]]] = {
    "trigger-gap": {"quick": {}, "tiny": {"iterations": "2000"}},  # the seed's eight rows, 200 000 slots
    "locking": {"quick": {"slots": "300"}, "tiny": {"slots": "40", "writers": "1,4", "gap": "0,2"}},
    "testbench": {
        "quick": {"scale": "quick"},
        "tiny": {"scale": "quick", "sessions": "100", "turns": "10"},
        "full": {"scale": "full"},
    },
    "peers": {
        "quick": {
            "sessions": "3",
            "turns": "6",
            "repro_events": "4",
            "timing_sizes": "100,1000",
            "timing_cap": "1",
        },
        "tiny": {
            "sessions": "2",
            "turns": "4",
            "repro_events": "3",
            "timing_sizes": "100",
            "timing_cap": "1",
        },
    },
    "token-estimate": {"quick": {"sessions": "10", "turns": "20"}, "tiny": {"sessions": "2", "turns": "4"}},
    "clock-skew": {"quick": {"sessions": "2000"}, "tiny": {"sessions": "50"}},
    "key-collapse": {"quick": {"sessions": "2000", "keys": "64"}, "tiny": {"sessions": "64", "keys": "8"}},
    "projection": {"quick": {}, "tiny": {}},
    "framing": {"quick": {"records": "20000"}, "tiny": {"records": "500"}},
    "real-locking": {
        "quick": {"stores": "sqlite", "seconds": "1.2"},
        "tiny": {"stores": "sqlite", "seconds": "0.6"},
    },
}


def declares_scale(scenario: Scenario, scale: str) -> bool:
    """Whether the scenario's parameter type has a ``scale`` field that accepts ``scale``."""
    params_type = scenario.params_type
    if "scale" not in {f.name for f in dataclasses.fields(params_type)}:
        return False
    hint = typing.get_type_hints(params_type).get("scale")
    return typing.get_origin(hint) is Literal and scale in typing.get_args(hint)


def has_preset(scenario: Scenario, scale: str) -> bool:
    """Whether ``scale`` is spelled out for this scenario (in the table, or by its own field);
    ``full`` always is: a scenario's defaults are its full scale."""
    return scale == "full" or scale in PRESETS.get(scenario.name, {}) or declares_scale(scenario, scale)


def preset(scenario: Scenario, scale: str) -> Mapping[str, str]:
    """The ``k=v`` parameters ``--scale scale`` stands for (see the module docstring)."""
    table = PRESETS.get(scenario.name)
    if table is not None and scale in table:
        return dict(table[scale])
    if declares_scale(scenario, scale):
        return {"scale": scale}
    return {}
