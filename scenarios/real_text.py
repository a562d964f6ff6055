"""Real text for generated events, so real tokenizers and peer libraries have something to read.

The workload generator gives every event a kind, a size and a CJK flag, not words. Token
counts of filler (``"xxxx…"``) say nothing about real text, and peers that compare message
contents would see identical messages. This module dresses each event with seeded text of
about its size:

| text kind | events | text |
|-----------|--------|------|
| ``english`` | USER, TERM (not CJK) | Faker ``en_US`` sentences |
| ``chinese`` | USER, TERM (CJK) | Faker ``zh_CN`` sentences, full-width stops |
| ``json`` | CALL; RESULT (not CJK) | compact-ish JSON: call arguments, tool output records |
| ``json-zh`` | RESULT (CJK) | the same records with Chinese values |

Determinism: a phrasebook of sentences, names, companies and cities is drawn once from Faker
instances seeded with the scenario's seed; each session's texts are then composed with a numpy
generator keyed by ``(seed, session)``. Same seed and Faker version ⇒ identical texts. The
``cjk`` flag of a dressed event is recomputed from its text (the JSONL reader's rule), which
is what an estimator applied to a real log would see.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from turncheck.models.events import Event, Kind, detect_cjk, has_cjk
from turncheck.models.extras import install_hint
from turncheck.models.random_streams import stream_rng
from turncheck.models.tokenizer import EXTRA, MissingExtra
from turncheck.models.workload import EventColumns

TEXT_KINDS = ("english", "chinese", "json", "json-zh")


def cjk_text(text: str) -> bool:
    """Whether the text counts as CJK, by the events' own rule (:func:`models.events.detect_cjk`)."""
    return detect_cjk(text)


@dataclass(frozen=True)
class Phrasebook:
    """Seeded Faker material, in two languages."""

    en_sentences: tuple[str, ...]
    zh_sentences: tuple[str, ...]
    en_names: tuple[str, ...]
    zh_names: tuple[str, ...]
    en_companies: tuple[str, ...]
    zh_companies: tuple[str, ...]
    en_cities: tuple[str, ...]
    zh_cities: tuple[str, ...]


def phrasebook(seed: int, size: int = 800) -> Phrasebook:
    """Draw the phrasebook from Faker ``en_US`` and ``zh_CN`` seeded with ``seed``."""
    try:
        from faker import Faker
    except ImportError:
        raise MissingExtra(f"real event text needs Faker: {install_hint(EXTRA)}") from None
    en = Faker("en_US")
    zh = Faker("zh_CN")
    en.seed_instance(seed)
    zh.seed_instance(seed)

    def zh_sentence(words: int) -> str:
        s = zh.sentence(nb_words=words).rstrip(".")
        cut = len(s) // 2
        return s[:cut] + "，" + s[cut:] + "。"

    return Phrasebook(
        en_sentences=tuple(en.sentence(nb_words=6 + i % 14) for i in range(size)),
        zh_sentences=tuple(zh_sentence(4 + i % 10) for i in range(size)),
        en_names=tuple(en.name() for _ in range(size // 4)),
        zh_names=tuple(zh.name() for _ in range(size // 4)),
        en_companies=tuple(en.company() for _ in range(size // 4)),
        zh_companies=tuple(zh.company() for _ in range(size // 4)),
        en_cities=tuple(en.city() for _ in range(size // 4)),
        zh_cities=tuple(zh.city() for _ in range(size // 4)),
    )


class TextWriter:
    """Composes texts of a requested size from a phrasebook with one random stream."""

    def __init__(self, book: Phrasebook, rng: np.random.Generator) -> None:
        self.book = book
        self.rng = rng

    def _pick(self, items: tuple[str, ...]) -> str:
        return items[int(self.rng.integers(len(items)))]

    def prose(self, chars: int, zh: bool) -> str:
        """Sentences until ``chars`` characters, cut to exactly ``chars``."""
        pool = self.book.zh_sentences if zh else self.book.en_sentences
        sep = "" if zh else " "
        parts: list[str] = []
        size = 0
        while size < chars:
            s = self._pick(pool)
            parts.append(s)
            size += len(s) + len(sep)
        return sep.join(parts)[:chars]

    def arguments(self, chars: int) -> str:
        """A tool call's JSON arguments, about ``chars`` long."""
        top_k = int(self.rng.integers(1, 20))
        shell = json.dumps({"query": "", "top_k": top_k}, ensure_ascii=False)
        query = self.prose(max(chars - len(shell), 1), zh=False).strip()
        return json.dumps({"query": query, "top_k": top_k}, ensure_ascii=False)

    def tool_output(self, chars: int, zh: bool) -> str:
        """A tool's JSON output: records until at least ``chars`` characters."""
        b = self.book
        names, companies, cities = (
            (b.zh_names, b.zh_companies, b.zh_cities) if zh else (b.en_names, b.en_companies, b.en_cities)
        )
        head, tail = '{"results": [', "]}"
        records: list[str] = []
        size = len(head) + len(tail)
        while size < chars:
            record = {
                "id": int(self.rng.integers(1, 100_000)),
                "title": self.prose(int(self.rng.integers(20, 90)), zh),
                "author": self._pick(names),
                "org": self._pick(companies),
                "city": self._pick(cities),
                "score": round(float(self.rng.random()), 3),
            }
            records.append(json.dumps(record, ensure_ascii=False))
            size += len(records[-1]) + (2 if len(records) > 1 else 0)
        return head + ", ".join(records) + tail  # == json.dumps({"results": [...]}, ensure_ascii=False)

    def text(self, kind: Kind, chars: int, cjk: bool) -> str:
        if kind is Kind.CALL:
            return self.arguments(chars)
        if kind is Kind.RESULT:
            return self.tool_output(chars, cjk)
        return self.prose(chars, cjk)


def session_rng(seed: int, session: int) -> np.random.Generator:
    return stream_rng("real-text", seed, session)


def dressed_sessions(cols: EventColumns, book: Phrasebook, seed: int) -> Iterator[list[Event]]:
    """Each session of ``cols`` as events with real text, in seq order.

    Returns one list per session; each event keeps its seq, session, turn, kind and call id,
    gets a text of about its generated size, ``chars = len(text)`` and ``cjk`` detected from it.
    """
    seqs, sess, turns = cols.seq.tolist(), cols.session.tolist(), cols.turn.tolist()
    kinds, calls, chars, cjks = cols.kind.tolist(), cols.call.tolist(), cols.chars.tolist(), cols.cjk.tolist()
    offsets = cols.offsets.tolist()
    kind_of = list(Kind)
    for s in range(cols.sessions):
        lo, hi = offsets[s], offsets[s + 1]
        if lo == hi:
            yield []
            continue
        writer = TextWriter(book, session_rng(seed, sess[lo]))
        out: list[Event] = []
        for i in range(lo, hi):
            k = kind_of[kinds[i]]
            text = writer.text(k, chars[i], bool(cjks[i]))
            out.append(
                Event(
                    seq=seqs[i],
                    session=f"s{sess[i]}",
                    turn=turns[i],
                    kind=k,
                    call_id=f"c{calls[i]}" if calls[i] >= 0 else None,
                    ts=float(seqs[i]),
                    text=text,
                    chars=len(text),
                    cjk=cjk_text(text),
                )
            )
        yield out


def kind_of_text(event: Event) -> str:
    """The text kind of a dressed event (a tool output is ``json-zh`` when it holds any CJK)."""
    if event.kind is Kind.CALL:
        return "json"
    if event.kind is Kind.RESULT:
        return "json-zh" if has_cjk(event.text or "") else "json"
    return "chinese" if event.cjk else "english"
