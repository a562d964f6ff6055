"""The code that knows another product, behind one boundary: ``turncheck.integrations``.

* :mod:`~turncheck.integrations.peers` — other libraries' trimmers as peers (``peer:NAME``), and
  the bridges that run peers written in another language;
* :mod:`~turncheck.integrations.formats` — the importers of other products' logs (``--from``);
* :mod:`~turncheck.integrations.vendors` — the vendor-protocol catalogue (protocol models of
  real systems' compaction);
* :mod:`~turncheck.integrations.stores` — stress stores kept by a library (the Agents SDK's
  ``SQLiteSession``, LangGraph's ``SqliteSaver``, ADK's ``DatabaseSessionService``) and the
  side-car that makes them checkable;
* :mod:`~turncheck.integrations.scenarios` and :mod:`~turncheck.integrations.plots` — the
  ``peers`` scenario and its plot.

The direction is one way: these modules import ``turncheck.models`` … ``turncheck.reports``;
nothing in ``models``, ``sim``, ``scenarios`` or ``reports`` imports them (a test checks it).
The core reaches them only through its registries: a :class:`~turncheck.models.registry.Registry`
names its *homes* by module name, and a registry whose built-ins live here names the sub-package
(``PEERS`` → ``turncheck.integrations.peers``, ``STORES``, ``SCENARIOS`` and ``PLOTS`` one core
home and one here) or each module of it (``FORMATS`` → ``…formats.openai_chat`` …, ``MODELS`` →
``…vendors.agents_js_compaction`` …: a lookup imports the one it needs) and imports it
with :func:`importlib.import_module` on its first lookup. So a fresh interpreter, a spawned
worker or a Dask worker that only imports ``turncheck.models.projector`` still finds every peer
and format when it asks for one, and ``import turncheck`` stays as cheap as before. The
third-party libraries stay optional: each module imports its library only when its peer, format
or store runs (the extras ``peers``, ``frameworks``, ``adk``, ``formats``).

Importing this package imports nothing else.
"""
