"""The one registration mechanism: names in order, one registration per name, unknown names listed."""

from __future__ import annotations

import pytest

from turncheck.models.errors import TurncheckError
from turncheck.models.registry import DuplicateRegistration, Registry, UnknownRegistration


def test_register_direct_and_as_decorator_keeps_registration_order() -> None:
    reg: Registry[int] = Registry("number")
    reg.register("two", 2)

    @reg.register("double")
    def double(x: int) -> int:
        return 2 * x

    reg.register("one", 1)
    assert reg.names() == ("two", "double", "one")
    assert list(reg) == ["two", "double", "one"]
    assert reg["double"] is double and double(4) == 8  # the decorator hands the function back
    assert "one" in reg and "three" not in reg and len(reg) == 3


def test_a_name_is_registered_once() -> None:
    reg: Registry[int] = Registry("number")
    reg.register("one", 1)
    with pytest.raises(DuplicateRegistration, match="number 'one' is registered twice"):
        reg.register("one", 11)
    assert reg["one"] == 1


def test_an_unknown_name_is_one_line_naming_the_choices() -> None:
    reg: Registry[int] = Registry("number")
    reg.register("one", 1)
    reg.register("two", 2)
    with pytest.raises(UnknownRegistration) as info:
        reg["three"]
    assert isinstance(info.value, TurncheckError) and isinstance(info.value, KeyError)
    assert str(info.value) == "unknown number 'three' (known: one, two)"


def test_the_home_module_is_imported_before_the_first_lookup() -> None:
    import sys

    reg: Registry[int] = Registry("number", home="json")
    sys.modules.pop("json.tool", None)
    assert reg.names() == ()
    assert "json" in sys.modules
