"""Protocol models by reference: a catalog name, or a user's own class as ``package.module:Class``.

Every command that takes ``MODEL --param k=v`` (``check``, ``explore``, ``replay``) resolves the
model here, so a user's locking scheme is checked exactly like ours. A reference containing a
colon names a class: ``examples.my_lock:FlagLock`` is imported as a module (the working
directory is on the import path, as for ``python -m``), ``path/to/file.py:FlagLock`` is loaded
from that file; the object it names may also be a :class:`~turncheck.models.policy.Policy`,
as may ``policy.toml`` (a TOML file's ``[policy]`` table): both run as the trigger model with
the policy's parameters. The class's constructor takes keyword parameters with defaults; ``k=v`` strings
are converted to the type of each default, exactly as for catalog models. A class that does not
subclass :class:`models.protocol.ProtocolModel` is wrapped by :func:`models.protocol.as_model`,
which supplies the base's defaults for the hooks it lacks (no symmetry, no metrics, actions
formatted with ``repr``, lanes read off the text) without touching the user's object.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from turncheck.models.catalog import build_model, construct, model_kwargs
from turncheck.models.protocol import ProtocolModel, as_model
from turncheck.models.user_code import load_object

if TYPE_CHECKING:
    from turncheck.models.policy import Policy


def is_user_reference(ref: str) -> bool:
    return ":" in ref


def is_policy_file(ref: str) -> bool:
    """``policy.toml``: a :class:`~turncheck.models.policy.Policy` stated in a TOML file."""
    return ref.endswith(".toml") and not is_user_reference(ref)


def user_model_class(ref: str) -> Callable[..., Any] | Policy:
    """The class (or :class:`~turncheck.models.policy.Policy`) named by ``package.module:Class``
    or ``file.py:Class`` (:mod:`models.user_code`)."""
    from turncheck.models.policy import Policy  # the trigger model's: a catalogue name needs neither

    return load_object(ref, "model", noun="class", values=(Policy,))  # type: ignore[no-any-return]


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
    if is_policy_file(ref):
        from turncheck.models.policy import read_policy

        return _policy_model(read_policy(ref), params)
    if not is_user_reference(ref):
        return build_model(ref, params)  # the model's own module alone (models.catalog.BUILT_INS)
    from turncheck.models.policy import Policy

    cls = user_model_class(ref)
    if isinstance(cls, Policy):
        return _policy_model(cls, params)
    kwargs = model_kwargs(cls, ref, params)
    model = construct(cls, ref, kwargs)
    return as_model(model, ref, kwargs)


def _policy_model(policy: Policy, params: Mapping[str, Any] | None) -> ProtocolModel[Any, Any]:
    """The trigger model a policy is; ``--param`` (or a trace's parameters) override its values
    under the trigger model's names (``max_turns=…``), so a saved trace replays on the policy."""
    return build_model("trigger", {**policy.trigger_params(), **(params or {})})
