"""Named experiments: each a typed parameter set and a run function that returns tables.

Importing this package registers every scenario; see :mod:`scenarios.base` for the contract.
"""
