"""The typed reading of JSONL request bodies (``--from openai-chat``) is a fast path, never a
second definition: every file below gives the same events, origins and errors as the generic
reader, and the typed structs are really what reads the common shape."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from turncheck.integrations.formats import openai_chat
from turncheck.models.chat_log import ImportFormatError
from turncheck.models.events import Event, Kind, new_event
from turncheck.models.importers import Imported, _two_lines, import_log, json_lines, json_or_jsonl

CALL: dict[str, Any] = {
    "id": "c1",
    "type": "function",
    "function": {"name": "weather", "arguments": '{"city":"Paris"}'},
}


def body(user: str | None, messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"model": "gpt-4o", "messages": messages, **extra}
    if user is not None:
        out["user"] = user
    return out


TURN: list[dict[str, Any]] = [
    {"role": "system", "content": "be brief"},
    {"role": "user", "content": "weather?"},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "c1", "content": "21 degrees"},
    {"role": "assistant", "content": [{"type": "text", "text": "21 "}, {"type": "text", "text": "degrees"}]},
]
FILES: dict[str, list[dict[str, Any]]] = {
    "growing session": [body("a", TURN[:2]), body("a", TURN[:4]), body("a", TURN)],
    "interleaved sessions": [body("a", TURN[:2]), body("b", TURN[:3]), body("a", TURN), body("b", TURN)],
    "unnamed sessions": [body(None, TURN[:2]), body(None, TURN), body(None, TURN[:3])],
    "metadata names it": [body(None, TURN, metadata={"session_id": "m1"}), body("u", TURN)],
    "null vs missing": [
        body("a", TURN[:2]),
        body("a", [TURN[0], {**TURN[1], "tool_calls": None}, *TURN[2:]]),
    ],
    "user name": [body("a", TURN[:2]), body("a", [TURN[0], {**TURN[1], "name": "x"}, *TURN[2:]])],
    "image part": [
        body("a", [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}])
    ],
    "unknown field": [body("a", [{"role": "user", "content": "hi", "audio": None}, TURN[4]])],
    "integer id": [body("a", [TURN[1], {"role": "assistant", "tool_calls": [{**CALL, "id": 7}]}])],
    "object arguments": [
        body(
            "a",
            [
                TURN[1],
                {
                    "role": "assistant",
                    "tool_calls": [{"id": "c", "function": {"arguments": {"b": 1.5, "a": [1]}}}],
                },
            ],
        )
    ],  # fmt: skip
    "CJK text": [body("a", [{"role": "user", "content": "天気はどうですか"}, TURN[4]])],
    "unknown role": [body("a", [{"role": "robot", "content": "beep"}])],
    "call without id": [body("a", [TURN[1], {"role": "assistant", "tool_calls": [{**CALL, "id": ""}]}])],
    "not a continuation": [body("a", TURN), body("a", TURN[:2])],
    "lone surrogate": [body("a", [{"role": "user", "content": "\ud800"}])],
}


def _write(path: Path, bodies: list[dict[str, Any]]) -> Path:
    text = "\n".join(json.dumps(b) for b in bodies) + "\n"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    return path


def _generic(path: Path) -> Imported:
    return json_or_jsonl(path, "messages", openai_chat.add_openai_message)


def _outcome(read: Any, path: Path) -> tuple[list[tuple[Any, ...]], list[str], dict[str, int]] | str:
    try:
        got = read(path)
    except ImportFormatError as exc:
        return f"error: {exc}"
    return [dataclasses.astuple(e) for e in got.events], got.origins, dict(got.opaque)


@pytest.mark.parametrize("name", sorted(FILES))
def test_the_typed_reading_gives_what_the_generic_one_gives(tmp_path: Path, name: str) -> None:
    path = _write(tmp_path / "bodies.jsonl", FILES[name])
    assert _outcome(lambda p: import_log("openai-chat", p), path) == _outcome(_generic, path)


def test_the_common_shape_is_read_typed_and_the_rest_generic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    generic: list[str] = []
    add = openai_chat.add_openai_message

    def counted(b: Any, message: Any, where: str) -> None:
        generic.append(where)
        add(b, message, where)

    monkeypatch.setattr(openai_chat, "add_openai_message", counted)
    import_log("openai-chat", _write(tmp_path / "typed.jsonl", FILES["interleaved sessions"]))
    assert generic == []  # every record read by the typed structs
    import_log("openai-chat", _write(tmp_path / "image.jsonl", FILES["image part"]))
    assert len(generic) == 1  # an image part: the whole file read the generic way


def test_sessions_begun_after_a_session_that_grows_later_are_moved(tmp_path: Path) -> None:
    got = import_log("openai-chat", _write(tmp_path / "b.jsonl", FILES["interleaved sessions"]))
    assert [e.seq for e in got.events] == list(range(len(got.events)))
    assert [e.ts for e in got.events] == [float(e.seq) for e in got.events]
    assert [e.session for e in got.events] == ["a"] * 4 + ["b"] * 4


def test_new_event_is_the_event_its_fields_make() -> None:
    fields = (3, "s", 1, Kind.CALL, "c1", 2.5, "w", "text", 4, True, "src", None, "c0", "srv")
    made = new_event(*fields)
    assert made == Event(*fields) and dataclasses.astuple(made) == fields
    assert (made.tied_to, made.caller) == ("c0", "srv")  # not compared by ==, set all the same
    assert new_event(*fields[:-1]).caller is None  # a reader with no caller leaves it unset
    assert not hasattr(Event, "__post_init__")  # new_event would skip it
    assert Event.__slots__ == tuple(f.name for f in dataclasses.fields(Event))


_NAMES = st.none() | st.text(max_size=5)


@given(
    st.tuples(
        st.integers(0, 2**63 - 1), st.text(max_size=5), st.integers(0, 99), st.sampled_from(Kind), _NAMES,
        st.floats(allow_nan=False), st.text(max_size=3), _NAMES, st.integers(0, 99), st.booleans(), _NAMES,
        st.none() | st.tuples(st.integers(0, 9), st.integers(0, 9)), _NAMES, _NAMES,
    )
)  # fmt: skip
def test_new_event_is_event_on_generated_fields(fields: tuple[Any, ...]) -> None:
    """The fast constructor and the dataclass's own, pinned to each other: same type, same
    fields (``tied_to`` and ``caller`` too, which ``==`` ignores), same hash, still frozen."""
    made, built = new_event(*fields), Event(*fields)
    assert type(made) is Event and made == built and hash(made) == hash(built)
    assert dataclasses.astuple(made) == dataclasses.astuple(built) == fields
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.seq = 1  # type: ignore[misc]


@pytest.mark.parametrize(
    "field", ['"temperature": 1', '"messages": [{"role": "user", "content": "x"}], "n": 1']
)
def test_an_integer_past_pythons_limit_is_refused_on_both_paths(tmp_path: Path, field: str) -> None:
    """json refuses an integer longer than ``sys.get_int_max_str_digits()``; msgspec would skip
    it in a field the structs do not name, so such a line is left to the generic reader."""
    line = '{"user": "a", ' + field + "0" * 5000 + ', "messages": [{"role": "user", "content": "hi"}]}'
    path = tmp_path / "big.jsonl"
    path.write_text(json.dumps(body("a", TURN[:2])) + "\n" + line + "\n")
    typed, generic = _outcome(lambda p: import_log("openai-chat", p), path), _outcome(_generic, path)
    assert typed == generic and isinstance(typed, str) and "unreadable JSON" in typed


def test_json_nested_too_deeply_is_one_line_on_both_paths(tmp_path: Path) -> None:
    """msgspec raises RecursionError past its depth, even in a field it skips: the generic reader
    then gives its one line."""
    deep = '{"user": "b", "x": ' + "[" * 50_000 + "]" * 50_000 + ', "messages": []}'
    path = tmp_path / "deep.jsonl"
    path.write_text(json.dumps(body("a", TURN[:2])) + "\n" + deep + "\n")
    typed, generic = _outcome(lambda p: import_log("openai-chat", p), path), _outcome(_generic, path)
    assert typed == generic and isinstance(typed, str) and "nested too deeply" in typed


def test_a_stamped_session_after_another_keeps_its_unstamped_events_at_their_place() -> None:
    """Events are built with their final seq; in a session whose format keeps the writer's stamps
    (``ts``), an event read before the first stamp is stamped with its place in the session, as
    when each session was built from seq 0 and moved."""
    from turncheck.models.chat_log import SessionBuilder
    from turncheck.models.importers import build_sessions

    def add(b: SessionBuilder, record: tuple[str, float | None], where: str) -> None:
        b.clock = record[1]
        b.user(record[0], where)

    got = build_sessions(
        [("a", [("x", None), ("y", None)], "f", 1), ("b", [("p", None), ("q", 100.0), ("r", None)], "f", 1)],
        add,
    )
    assert [(e.session, e.seq, e.ts) for e in got.events] == [
        ("a", 0, 0.0), ("a", 1, 1.0), ("b", 2, 0.0), ("b", 3, 100.0), ("b", 4, 2.0),
    ]  # fmt: skip


@given(st.text(alphabet="a{}\n\r \t\x0b\x0c\x1c\x85\u2028\u3000", max_size=12))
def test_two_lines_is_two_non_blank_json_lines(text: str) -> None:
    """Whether a file that is not one JSON document is read as JSON lines: answered without
    splitting it, pinned to the split it stands for (Unicode spaces and line breaks included)."""
    assert _two_lines(text) == (len([line for line in json_lines(text) if line.strip()]) >= 2)


def test_the_collector_is_paused_while_reading_and_resumed_after(tmp_path: Path) -> None:
    """import_log reads with the cyclic collector paused (a third of an import's CPU went to it
    re-walking the growing log) and resumes it after — a refusal too; a collector the caller
    paused stays paused."""
    import gc

    from turncheck.models.collector import cycles_not_collected

    seen: list[bool] = []
    with cycles_not_collected():
        seen.append(gc.isenabled())
    assert seen == [False] and gc.isenabled()
    good = _write(tmp_path / "good.jsonl", FILES["growing session"])
    assert import_log("openai-chat", good).events and gc.isenabled()
    bad = _write(tmp_path / "bad.jsonl", FILES["not a continuation"])
    with pytest.raises(ImportFormatError, match="does not continue"):
        import_log("openai-chat", bad)
    assert gc.isenabled()
    gc.disable()
    try:
        with cycles_not_collected():
            pass
        import_log("openai-chat", good)
        assert not gc.isenabled()  # the caller's pause is the caller's
    finally:
        gc.enable()
