"""Protocol models by reference: a catalog name, or a user's own class as ``package.module:Class``.

Every command that takes ``MODEL --param k=v`` (``check``, ``explore``, ``replay``) resolves the
model here, so a user's locking scheme is checked exactly like ours. A reference containing a
colon names a class: ``examples.my_lock:FlagLock`` is imported as a module (the working
directory is on the import path, as for ``python -m``), ``path/to/file.py:FlagLock`` is loaded
from that file. The class's constructor takes keyword parameters with defaults; ``k=v`` strings
are converted to the type of each default, exactly as for catalog models. A class that does not
subclass :class:`models.protocol.ProtocolModel` is wrapped by :func:`models.protocol.as_model`,
which supplies the base's defaults for the hooks it lacks (no symmetry, no metrics, actions
formatted with ``repr``, lanes read off the text) without touching the user's object.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from turncheck.models.catalog import build_model, construct, model_kwargs
from turncheck.models.protocol import ProtocolModel, as_model
from turncheck.models.user_code import load_object


def is_user_reference(ref: str) -> bool:
    return ":" in ref


def user_model_class(ref: str) -> Callable[..., Any]:
    """The class named by ``package.module:Class`` or ``file.py:Class`` (:mod:`models.user_code`)."""
    return load_object(ref, "model", noun="class")  # type: ignore[no-any-return]


def load_model(ref: str, params: Mapping[str, Any] | None = None) -> ProtocolModel[Any, Any]:
    """Build the model ``ref`` (catalog name or ``package.module:Class``) with ``params``.

    Parameters
    ----------
    ref
        ``trigger``, ``projector``, ``clock`` … or a user's class reference.
    params
        Values or ``k=v`` strings; dashes and underscores are interchangeable in names.

    Raises
    ------
    UnknownName
        Unknown model, unknown parameter, or a class that does not follow the interface.
    BadParameter
        A value of the wrong type or out of range, naming the parameter.
    """
    if not is_user_reference(ref):
        return build_model(ref, params)
    cls = user_model_class(ref)
    kwargs = model_kwargs(cls, ref, params)
    model = construct(cls, ref, kwargs)
    return as_model(model, ref, kwargs)
