"""The turncheck pytest plugin (entry point ``pytest11``): the ``check_projector`` fixture.

Installed with turncheck; pytest loads it by itself. A test asks for the fixture and calls it
with its projector; the check runs under the active Hypothesis settings profile::

    def test_my_trimmer(check_projector):
        check_projector(my_trimmer, checks=["orphanRes", "overBudget"])

The marker ``@pytest.mark.turncheck(checks=[...], cost=...)`` sets the fixture's defaults for
one test (a keyword given to the call still wins). Importing the plugin is cheap: turncheck's
checking code is imported when the fixture is first used.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "turncheck(checks=..., cost=...): defaults for the check_projector fixture in this test"
    )


@pytest.fixture
def check_projector(request: pytest.FixtureRequest) -> Callable[..., None]:
    """:func:`turncheck.testing.check_projector`, with the ``turncheck`` marker's defaults."""
    from turncheck.testing import check_projector as check

    marker = request.node.get_closest_marker("turncheck")
    defaults: dict[str, Any] = dict(marker.kwargs) if marker is not None else {}

    def run(projector: Any, **options: Any) -> None:
        __tracebackhide__ = True
        check(projector, **{"key": request.node.nodeid, **defaults, **options})

    return run
