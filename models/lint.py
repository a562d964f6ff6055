"""Structural checks of a real log, as seed 004's closing SQL self-check suggests, and more.

Each problem kind is counted, with the first offending lines kept so a user can open the file
at the right place. The checks read the log in seq order per session, which is the order the
writers meant; a log that only looks right in file order is still flagged.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from turncheck.models.events import Event, Kind
from turncheck.models.provider_rules import PROVIDERS, RULES, callers_not_sent, provider_findings
from turncheck.models.summaries import COVERAGE_PROBLEMS, coverage_faults

_USER, _CALL, _RESULT, _SUMMARY = Kind.USER, Kind.CALL, Kind.RESULT, Kind.SUMMARY
"""The kinds read per event, as globals: ``Kind.CALL`` is a slow lookup (``EnumType``'s
``__getattr__`` keeps CPython from caching class attributes), ~15x a global's."""

PROBLEMS: dict[str, str] = {
    "duplicate-seq": "seq used by more than one event",
    "missing-seq": "gap in the seq numbering",
    "orphan-result": "RESULT whose call id has no CALL in its session",
    "dangling-call": "CALL that never gets a RESULT",
    "result-before-call": "RESULT appended (by seq) before its CALL",
    "turn-not-starting-with-user": "(session, turn) whose first event is not USER",
    "turn-with-several-users": "(session, turn) holding more than one USER",
    "turn-with-several-sources": "(session, turn) holding events of more than one source",
    "reused-call-id": "call id issued by more than one CALL in a session",
    "answered-twice": "RESULT for a call already answered",
    "result-in-later-turn": "RESULT in a later turn than its CALL (a pending approval or confirmation)",
}
PROBLEMS.update(RULES)  # a provider's rules, checked with --provider (models.provider_rules)
PROBLEMS.update(COVERAGE_PROBLEMS)
PROBLEMS["over-budget"] = (
    "a request of a trace whose messages, or whose provider-reported input, cost more than --budget tokens"
)
PROBLEMS["estimate-drift"] = (
    "first request of a conversation whose messages fit --budget while the provider counted more "
    "(a trigger counting the messages does not fire)"
)


@dataclass
class LintReport:
    """Counts per problem kind and up to ``keep`` example lines for each."""

    keep: int = 5
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PROBLEMS, 0))
    examples: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    events: int = 0
    sessions: int = 0
    requests: int = 0
    """Model requests of a trace checked as sent (:mod:`models.sent_windows`)."""
    costs: list[dict[str, object]] = field(default_factory=list)
    """Per request of a trace, its three costs (:class:`~models.sent_windows.RequestCost`), when
    ``--budget`` is given or the trace reports usage."""
    provider: str | None = None
    """The API whose rules were checked on the whole log (``--provider``, or the format's own)."""
    named: set[str] = field(default_factory=set)
    """Rules checked with no provider because the log names their API (:func:`flag_named_rules`)."""
    opaque: dict[str, int] = field(default_factory=dict)
    """Parts of a foreign log kept as opaque content, by type (:mod:`models.chat_log`): not a
    problem (the log is clean without them), but what the check read without understanding."""

    def flag(self, problem: str, where: str) -> None:
        self.counts[problem] += 1
        if len(self.examples[problem]) < self.keep:
            self.examples[problem].append(where)

    @property
    def clean(self) -> bool:
        return not any(self.counts.values())

    @property
    def verdict(self) -> str:
        """``problems``, ``clean``, or ``nothing checked``: a log with no event is neither clean
        nor broken (an empty or wrongly read file passed a CI gate as "clean", exit 0)."""
        return "problems" if not self.clean else "clean" if self.events else "nothing checked"

    def to_json(self, file: str) -> dict[str, object]:
        """``lint --format json`` for the log ``file``."""
        return {"file": file, "events": self.events, "sessions": self.sessions,
                **({"requests": self.requests} if self.requests else {}),
                **({"opaque": self.opaque} if self.opaque else {}),
                **({"costs": self.costs} if self.costs else {}), "clean": self.clean, "verdict": self.verdict,
                "rules_checked": self.rules_checked(),
                "counts": self.counts, "examples": dict(self.examples)}  # fmt: skip

    def lines(self, file: str) -> list[str]:
        """``lint``'s table output: the totals, then each problem found with its example lines."""
        sent = f", {self.requests} model requests checked as sent" if self.requests else ""
        out = [f"{file}: {self.events} events in {self.sessions} sessions{sent}"]
        out += self.cost_lines()
        if self.verdict == "nothing checked":
            out.append("INCONCLUSIVE: nothing checked — the log holds no event")
        elif self.clean:
            out.append(f"clean: no structural problems; {self.rules_checked()}")
        for problem, count in self.counts.items():
            if count:
                out.append(f"{count:>8}  {problem}: {PROBLEMS[problem]}")
                out += [f"          {where}" for where in self.examples[problem]]
        return out

    def cost_lines(self) -> list[str]:
        """The provider usage of a trace's requests (when ``--budget`` is given or the trace reports
        usage): how many report their input tokens — saying so when none or only some do, whose
        budget verdict is then on their messages alone — then, side by side, the three costs of
        the ``keep`` largest requests (reported count, else messages; in file order on a tie)."""
        if not self.costs:
            return []
        n = len(self.costs)
        ratios = [r for c in self.costs if isinstance(r := c["ratio"], float | int)]
        known = sum(c["reported"] is not None for c in self.costs)
        if not known:
            head = f"provider usage: none of the {n} requests reports its input tokens; each is judged on its messages only"
        else:
            head = f"provider usage: {known} of {n} requests report their input tokens; " + (
                f"messages/reported from {min(ratios)} to {max(ratios)}" if ratios else "no ratio"
            )
            head += f"; {n - known} without a count judged on their messages only" if known < n else ""
        out = [head + " (--format json: each request's costs)"]
        size = [r if isinstance(r := c["reported"] or c["messages"], int) else 0 for c in self.costs]
        rows = sorted(range(n), key=lambda i: -size[i])[: self.keep]
        for c in (self.costs[i] for i in sorted(rows)):
            frame = (
                "frame unknown"
                if c["frame"] is None
                else f"frame {c['frame']} ("
                f"{'system prompt and tools' if c['frame_from'] == 'trace' else 'reported − messages'})"
            )
            reported = "no reported count" if c["reported"] is None else f"reported {c['reported']}"
            out.append(
                f"  request {c['request']}: messages {c['messages']} ({c['counted_with']}), {frame}, {reported}"
            )
        return out + ([f"  … {n - len(rows)} more requests (--format json)"] if n > len(rows) else [])

    def rules_checked(self) -> str:
        """What a clean verdict covered of the APIs' rules, and what it did not."""
        if self.provider is not None:
            ids = sorted({r.id for r in PROVIDERS[self.provider]})
            return f"nothing {self.provider} refuses (its {len(ids)} rules: {', '.join(ids)})"
        if self.requests:
            return f"each of the {self.requests} requests checked against its own API's rules"
        given = f"--provider {', '.join(PROVIDERS)} checks all of one API's"
        if self.named:
            return (
                f"of the APIs' rules only {', '.join(sorted(self.named))}, the log naming its API ({given})"
            )
        return f"no API's rules checked ({given})"


Located = tuple[int | str, Event]
"""An event and where it was read: a line number of our JSONL, or the record of a foreign log
it was imported from (``chat.json: session 'chat': record 1``)."""


def place(line: int | str) -> str:
    return f"line {line}" if isinstance(line, int) else line


def at(line: int | str, e: Event) -> str:
    """An example line: where the event was read, then the event itself."""
    return f"{place(line)}: seq {e.seq} session {e.session} turn {e.turn} {e.kind.name}" + (
        f" {e.call_id}" if e.call_id else ""
    )


def lint_events(
    located: Sequence[Located], keep: int = 5, provider: str | None = None, sent: bool = False,
    ends: Collection[int] = (),
) -> LintReport:  # fmt: skip
    """Check ``(line number, event)`` pairs, and the rules of ``provider`` when given; returns the
    report (never raises on bad structure). ``sent``: each session's events are one request as
    it went out (:func:`~models.provider_rules.provider_findings`); ``ends``: the seqs where a
    request the file records went out (:attr:`~models.importers.Imported.ends`)."""
    report = LintReport(keep=keep, provider=provider)
    report.events = len(located)

    first_line: dict[int, int | str] = {}
    for line, e in located:
        if e.seq in first_line:
            report.flag("duplicate-seq", f"{place(line)}: seq {e.seq} (first at {place(first_line[e.seq])})")
        else:
            first_line[e.seq] = line
    seqs = sorted(first_line)
    for a, b in zip(seqs, seqs[1:], strict=False):
        if b != a + 1:
            report.flag("missing-seq", f"seq {a + 1}" + (f"..{b - 1}" if b - 1 > a + 1 else "") + " missing")

    by_session: dict[str, list[Located]] = defaultdict(list)
    for item in located:
        by_session[item[1].session].append(item)
    report.sessions = len(by_session)
    for items in by_session.values():
        items.sort(key=lambda it: it[1].seq)
        calls: dict[str, list[Located]] = defaultdict(list)
        results: dict[str, list[Located]] = defaultdict(list)
        turns: dict[int, list[Located]] = defaultdict(list)
        for line, e in items:
            if e.kind is not _SUMMARY:  # a summary may stand in a turn of its own
                turns[e.turn].append((line, e))
            if e.kind is _CALL:
                calls[e.call_id or ""].append((line, e))
            elif e.kind is _RESULT:
                results[e.call_id or ""].append((line, e))
        for cid, rs in results.items():
            cs = calls.get(cid, [])
            if not cs:
                for line, e in rs:
                    report.flag("orphan-result", at(line, e))
                continue
            for (line, r), (_, c) in zip(rs, cs, strict=False):
                if r.seq < c.seq:
                    report.flag("result-before-call", at(line, r))
            for line, r in rs[len(cs) :]:
                report.flag("answered-twice", at(line, r))
        for cid, cs in calls.items():
            if len(cs) > 1:
                report.flag("reused-call-id", at(*cs[1]))
            for line, c in cs[len(results.get(cid, [])) :]:
                report.flag("dangling-call", at(line, c))
        for evs in turns.values():
            line, first = evs[0]
            if first.kind is not _USER:
                report.flag("turn-not-starting-with-user", at(line, first))
            users = [it for it in evs if it[1].kind is _USER]
            if len(users) > 1:
                report.flag("turn-with-several-users", at(*users[1]))
            if len({e.true_session for _, e in evs}) > 1:
                report.flag("turn-with-several-sources", at(line, first))
        flag_late_results(report, items)
        if provider is not None:
            flag_provider_rules(report, items, provider, sent, ends)
        else:
            flag_named_rules(report, items)
        lint_coverage(report, items)
    return report


def flag_provider_rules(
    report: LintReport, items: Sequence[Located], provider: str, sent: bool = False, ends: Collection[int] = ()
) -> None:
    """What ``provider``'s API would refuse in a request holding this session as it stands, and
    in each request the file records ending inside it (``ends``, by seq)."""
    local = [k for k, (_, e) in enumerate(items) if e.seq in ends] if ends else []
    for rule, i in provider_findings(provider, [e for _, e in items], sent, local):
        report.flag(rule, at(*items[i]))


def flag_named_rules(report: LintReport, items: Sequence[Located]) -> None:
    """With no provider given or implied by the format, the rules the log itself names its API
    for: a CALL's ``caller`` is Anthropic's programmatic tool calling (only its API sends one), so
    a session holding one is judged by ``caller-not-sent`` (a Vercel AI SDK log with
    ``providerOptions.anthropic.caller`` and its source pruned read clean, vercel/ai#12504)."""
    events = [e for _, e in items]
    if any(e.caller is not None for e in events):
        report.named.add("caller-not-sent")
        for i in callers_not_sent(events):
            report.flag("caller-not-sent", at(*items[i]))


def flag_late_results(report: LintReport, items: Sequence[Located]) -> None:
    """Results outside their call's turn, in one session's seq order: the grammar's turn is
    ``USER (CALL RESULT)* TERM``, so a result arriving after a later USER (a human approving a
    call turns later) breaks every turn-aware strategy's assumption that a turn holds its pairs.
    Each RESULT pairs with the oldest unanswered CALL of its id, as :class:`History` pairs."""
    open_calls: dict[str, list[int]] = defaultdict(list)
    for line, e in items:
        if e.kind is _CALL:
            open_calls[e.call_id or ""].append(e.turn)
        elif e.kind is _RESULT and open_calls.get(e.call_id or ""):
            if open_calls[e.call_id or ""].pop(0) != e.turn:
                report.flag("result-in-later-turn", at(line, e))


def lint_coverage(report: LintReport, items: Sequence[Located]) -> None:
    """Flag one session's coverage faults (:mod:`models.summaries`), naming the summary and the event."""
    line_of = {id(e): line for line, e in items}
    for f in coverage_faults([e for _, e in items]):
        s = f.summary
        where = f"{at(line_of[id(s)], s)} covers {list(s.covers or ())}"
        if f.event is not None:
            where += f"; {at(line_of[id(f.event)], f.event)}"
        report.flag(f.problem, f"{where}: {f.detail}")
