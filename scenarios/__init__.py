"""Named experiments: each a typed parameter set and a run function that returns tables.

The built-in scenario modules are imported by :mod:`turncheck.scenarios.builtin`, the home of
the scenario registry, on its first lookup — not here, so that importing one module of this
package (the presets' ``Scale``, :mod:`~turncheck.scenarios.base`) costs only that module.
See :mod:`turncheck.scenarios.base` for the contract.
"""
