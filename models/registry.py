"""The one way turncheck is extended: a named registry per kind, filled the same way for every kind.

Strategies, scenarios, plots, catalog models, stores, peers and locking strategies
each have one :class:`Registry`.
Two rules fill them, and only these two:

* **Built-ins register when their module is imported.** Each kind names its *home*, the one
  module that imports every built-in module of the kind (``turncheck.scenarios`` imports each
  scenario module, ``turncheck.reports.plots`` each plot…), or its homes, in order. The homes are
  imported by name (:func:`importlib.import_module`) on the first lookup, so a registry is
  complete whoever asks first — a fresh interpreter, a spawned or Dask worker — and ``import
  turncheck`` stays cheap. This is also the one way the core reaches :mod:`turncheck.integrations`,
  which it never imports: a kind whose built-ins know another product names its home there
  (``PEERS`` → ``turncheck.integrations.peers``; ``STORES`` → ``turncheck.sim.stress``, then
  ``turncheck.integrations.stores``).
* **Extensions are discovered through the entry-point group** ``turncheck.plugins``
  (:data:`PLUGIN_GROUP`). Each entry point names a module; :func:`load_plugins` imports each
  once, after the built-ins, and the module registers what it brings with the public
  ``turncheck.register_*`` functions. The command line calls it before it builds its choices.

Invariants: a name is registered once per kind (a second registration is refused, naming both
the kind and the name), and so is a colour (a value's ``colour``, when it has one, draws that one
name in every plot: a second taker is refused, naming the holder); names list in registration
order, built-ins before extensions; an unknown name is a :class:`UnknownRegistration` — a
:class:`~turncheck.models.errors.TurncheckError` the command line prints as one line naming the
choices.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic, TypeVar, overload

from turncheck.models.errors import TurncheckError, UnknownName

T = TypeVar("T")

PLUGIN_GROUP = "turncheck.plugins"
"""The entry-point group third-party modules are listed under (``module = "package.module"``)."""


class UnknownRegistration(UnknownName):
    """A name no registry of that kind holds; the message lists the names it does hold."""


class DuplicateRegistration(TurncheckError, ValueError):
    """A second registration of a name already taken within its kind."""


class PluginError(TurncheckError):
    """An extension listed under :data:`PLUGIN_GROUP` that could not be imported."""


class Registry(Mapping[str, T], Generic[T]):
    """Names of one kind (``"strategy"``, ``"scenario"``…) mapped to their values.

    ``home`` is the module whose import registers every built-in of the kind (or a tuple of such
    modules, imported in order); it is imported before the first lookup (and before a plugin's first registration, so built-ins always list
    first). A registry is a read-only :class:`~collections.abc.Mapping` for its users: iteration
    is in registration order (built-ins by ``key`` where the kind gives one); :meth:`register` is
    the only way in.

    ``locate`` names, for one built-in name, the one home whose import registers it (None when
    the kind cannot tell): a lookup of that name imports that home alone, not all of them, so a
    command that needs one model does not import every other (issue 58 item 7). Listing,
    counting and a name ``locate`` does not place still import every home, and ``key`` keeps the
    order whatever was imported first.
    """

    def __init__(
        self,
        kind: str,
        home: str | tuple[str, ...] | None = None,
        key: Callable[[T], Any] | None = None,
        locate: Callable[[str], str | None] | None = None,
    ) -> None:
        self.kind = kind
        self.home = (home,) if isinstance(home, str) else home
        self._locate = locate
        # where a kind's values carry their place (a scenario's ``order``), built-ins list by it:
        # registration order alone follows import order, which a direct import of one built-in
        # module changes (it registers after every module the home imports meanwhile)
        self._key = key
        self._entries: dict[str, T] = {}
        self._extensions: list[str] = []  # names an extension registered, listed after built-ins
        self._home_state = "absent" if home else "loaded"  # absent → loading → loaded

    # -- registration --------------------------------------------------------------------------

    @overload
    def register(self, name: str) -> Callable[[T], T]: ...

    @overload
    def register(self, name: str, value: T) -> T: ...

    def register(self, name: str, value: Any = None) -> Any:
        """``registry.register(name, value)``, or ``@registry.register(name)`` as a decorator.

        Raises :class:`DuplicateRegistration` when ``name``, or the value's colour, is taken.
        """
        if value is None:
            return lambda v: self.register(name, v)
        built_in = self._home_importing() or _homes_loading > 0  # registering as a home is imported
        if not built_in:
            self._load_home()
        if not isinstance(name, str) or not name:
            raise DuplicateRegistration(f"a {self.kind} needs a non-empty name, got {name!r}")
        if name in self._entries:
            raise DuplicateRegistration(f"{self.kind} {name!r} is registered twice")
        colour = getattr(value, "colour", None)
        holder = next(
            (n for n, v in self._entries.items() if colour and getattr(v, "colour", None) == colour), None
        )
        if holder is not None:
            raise DuplicateRegistration(
                f"{self.kind} {name!r}: colour {colour!r} is taken by {self.kind} {holder!r}"
            )
        self._entries[name] = value
        if _plugins_state == "loading" and not built_in:
            self._extensions.append(name)
        return value

    # -- lookup --------------------------------------------------------------------------------

    def _home_importing(self) -> bool:
        """Whether one of the homes is being imported right now: a built-in registering as its home
        is imported must not load the later homes first (their values would list before it).
        ``__spec__._initializing`` is what the import system sets while a module runs."""
        return any(
            getattr(getattr(sys.modules.get(home), "__spec__", None), "_initializing", False)
            for home in self.home or ()
        )

    def _load_home(self) -> None:
        global _homes_loading
        if self._home_state == "absent" and self.home is not None:
            self._home_state = "loading"
            _homes_loading += 1
            try:
                for module in self.home:
                    importlib.import_module(module)
            except BaseException:
                self._home_state = "absent"
                raise
            finally:
                _homes_loading -= 1
            self._home_state = "loaded"

    def _complete(self) -> dict[str, T]:
        """The entries once built-ins and extensions are in (plugins load once per process, and
        never while a kind's home is half imported)."""
        self._load_home()
        if _plugins_state == "absent" and _homes_loading == 0:
            load_plugins()  # a failure is raised here, to whoever asked first; later asks see
        return self._entries  # the built-ins (the command line re-raises it as one line)

    def _ordered(self) -> list[str]:
        entries = self._complete()
        late = set(self._extensions)
        built_in = [n for n in entries if n not in late]
        if self._key is not None:
            key = self._key
            built_in.sort(key=lambda n: key(entries[n]))
        return built_in + [n for n in self._extensions if n in entries]

    def lookup(self, name: str) -> T | None:
        """The value registered as ``name``, or None: the fast path for hot callers (a projector
        resolves its strategy on every request)."""
        value = self._entries.get(name)
        if value is None and (self._home_state != "loaded" or _plugins_state != "loaded"):
            value = self._located(name)
        if value is None and (self._home_state != "loaded" or _plugins_state != "loaded"):
            value = self._complete().get(name)
        return value

    def _located(self, name: str) -> T | None:
        """``name``'s value from the one home :attr:`locate` names for it, imported as a home is
        (its registrations are built-ins), or None: no such home, or it did not register ``name``."""
        global _homes_loading
        module = self._locate(name) if self._locate is not None and self._home_state == "absent" else None
        if module is None or module not in (self.home or ()):
            return None
        _homes_loading += 1
        try:
            importlib.import_module(module)
        finally:
            _homes_loading -= 1
        return self._entries.get(name)

    def get_or_raise(self, name: str) -> T:
        """The value registered as ``name``; :class:`UnknownRegistration` listing the names if none."""
        value = self.lookup(name)
        if value is None:
            raise UnknownRegistration(f"unknown {self.kind} {name!r} (known: {', '.join(self._ordered()) or 'none'})")
        return value

    def __getitem__(self, name: str) -> T:
        value = self._entries.get(name)
        return value if value is not None else self.get_or_raise(name)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.lookup(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._ordered())

    def __len__(self) -> int:
        return len(self._complete())

    def names(self) -> tuple[str, ...]:
        """Every name, in registration order (built-ins first, by ``key`` where given)."""
        return tuple(self._ordered())

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {list(self._entries)!r})"


_homes_loading = 0  # homes being imported right now: no plugin loads in the middle of one
_plugins: dict[str, str] = {}  # entry-point name → module, once imported
_plugin_failure: PluginError | None = None
_plugins_state = "absent"


def load_plugins() -> tuple[str, ...]:
    """Import each module listed under :data:`PLUGIN_GROUP`, once per process; the modules
    imported, in the order the entry points list them.

    The environment variable ``TURNCHECK_PLUGINS`` narrows it: ``0`` imports none, so what is
    installed beside turncheck cannot change its results (the project's test suite runs that
    way); ``a,b`` imports only the entry points named ``a`` and ``b``; unset or empty, every one.

    Raises :class:`PluginError` naming the entry point when one cannot be imported (again on
    every later call, so the command line reports it wherever it first asks).
    """
    global _plugins_state, _plugin_failure
    if _plugins_state == "absent":
        _plugins_state = "loading"
        try:
            chosen = os.environ.get("TURNCHECK_PLUGINS", "")
            names = None if not chosen else set() if chosen == "0" else set(chosen.split(","))
            for ep in importlib.metadata.entry_points(group=PLUGIN_GROUP):
                if ep.name in _plugins or (names is not None and ep.name not in names):
                    continue
                try:
                    importlib.import_module(ep.value.split(":", 1)[0].strip())
                except Exception as exc:  # a broken extension is its author's error, not ours
                    _plugin_failure = PluginError(
                        f"extension {ep.name!r} ({PLUGIN_GROUP} = {ep.value!r}) failed to load: "
                        f"{type(exc).__name__}: {exc}"
                    )
                    break
                _plugins[ep.name] = ep.value
        finally:
            _plugins_state = "loaded"
    if _plugin_failure is not None:
        raise _plugin_failure
    return tuple(_plugins.values())
