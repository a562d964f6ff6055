"""The scenarios that run other products' code, a home of the scenario registry
(:data:`turncheck.scenarios.base.SCENARIOS`, imported by name after :mod:`turncheck.scenarios.builtin`;
each scenario's ``order`` places it among the built-ins)."""

import turncheck.integrations.scenarios.peers  # noqa: F401  (peers and real tokens: issue 8)
