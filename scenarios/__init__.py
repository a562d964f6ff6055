"""Named experiments: each a typed parameter set and a run function that returns tables.

Importing this package registers every scenario; see :mod:`scenarios.base` for the contract.
"""

import turncheck.scenarios.framing  # noqa: E402, F401  (durable log: issue 3)
import turncheck.scenarios.peers  # noqa: E402, F401  (peers and real tokens: issue 8)
import turncheck.scenarios.projection  # noqa: E402, F401  (durable log: issue 3)
import turncheck.scenarios.real_locking  # noqa: E402, F401  (real stores: issue 13)
import turncheck.scenarios.testbench  # noqa: E402, F401  (seed 004 testbench: issue 6)
import turncheck.scenarios.testbench_fit  # noqa: E402, F401  (calibration preset: issue 14)
import turncheck.scenarios.token_estimate  # noqa: E402, F401  (peers and real tokens: issue 8)
from turncheck.scenarios import clock_skew, key_collapse, locking, trigger_gap  # noqa: E402, F401  (concurrency: issue 4)
