"""Real stores under real processes: the first home of the store registry
(:data:`turncheck.sim.stress.stores.STORES`), importing each built-in store module, which
registers itself (in this order, the order they list in); the library-backed stores follow from
its second home, :mod:`turncheck.integrations.stores`."""

from turncheck.sim.stress import sqlite, postgres  # noqa: F401, I001
