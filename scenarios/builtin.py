"""The built-in scenarios: the home of the scenario registry, imported on its first lookup.

This is the one place the built-in scenario modules are imported: each registers its scenario
(:data:`turncheck.scenarios.base.SCENARIOS`) as it is imported; each scenario's ``order`` places
it where the demo and the report tell it. The ``peers`` scenario is in the registry's second
home, :mod:`turncheck.integrations.scenarios`.
"""

# isort: off
import turncheck.scenarios.trigger_gap  # noqa: F401  (concurrency: issue 4)
import turncheck.scenarios.locking  # noqa: F401  (concurrency: issue 4)
import turncheck.scenarios.testbench  # noqa: F401  (seed 004 testbench: issue 6)
import turncheck.scenarios.token_estimate  # noqa: F401  (peers and real tokens: issue 8)
import turncheck.scenarios.cost_trigger  # noqa: F401  (the cost the trigger measures: issue 52)
import turncheck.scenarios.clock_skew  # noqa: F401  (concurrency: issue 4)
import turncheck.scenarios.key_collapse  # noqa: F401  (concurrency: issue 4)
import turncheck.scenarios.projection  # noqa: F401  (durable log: issue 3)
import turncheck.scenarios.framing  # noqa: F401  (durable log: issue 3)
import turncheck.scenarios.real_locking  # noqa: F401  (real stores: issue 13)
import turncheck.scenarios.testbench_fit  # noqa: F401  (calibration preset: issue 14)
# isort: on
