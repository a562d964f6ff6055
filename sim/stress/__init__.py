"""Real stores under real processes: the home of the store registry
(:data:`turncheck.sim.stress.stores.STORES`), importing each built-in store module, which
registers itself (in this order, the order they list in)."""

from turncheck.sim.stress import sqlite, postgres, agents_sqlite, langgraph_sqlite, adk_database  # noqa: F401, I001
