"""Rich display in a notebook and table export, shared by the public result types of every layer.

Jupyter shows an object through its ``_repr_html_``; a data scientist's next step is a table.
Each result type (a projected window and its structural report, an exploration, a scenario
result and its tables, a sweep, a counterexample trace) answers both with the functions here:
one rule for a cell's text (:func:`cell_text`, which the HTML report, the Markdown tables and
the findings use too), one table markup (:func:`html_table`, the report's own) and one door to
pandas (:func:`data_frame`). ``to_records()`` is plain lists of dicts, which pandas, Polars and
PyArrow all accept; pandas stays optional: imported on the first ``to_pandas()``, one clear
line naming the extra without it.

Invariant: every value placed in the HTML passes through :func:`esc`; the only markup is this
module's and its callers' own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from turncheck.models.extras import install_hint

Cell = int | float | str | bool | None
THIN_SPACE = "\u202f"  # groups the digits of large numbers: a narrow NO-BREAK space, so they never wrap
EXTRA = "notebook"


def esc(value: Any) -> str:
    """Text from a file or a user, made safe to place in HTML (quotes included). ``html`` is
    imported by the first call: its entity table is a cost of every command that imports this
    module (a small ``check``) and escapes nothing."""
    import html

    return html.escape(str(value), quote=True)


def cell_text(value: Cell, group: str = " ") -> str:
    """A table cell as shown: — for missing, yes/no, digits of large integers grouped with
    ``group``, floats to 3 places. Markdown and HTML render cells through this one rule."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 1e6 else f"{value:.4g}"
    if isinstance(value, int):
        return f"{value:,}".replace(",", group) if abs(value) >= 10_000 else str(value)
    return str(value)


def breakable(name: str) -> str:
    """An escaped column name with a line-break opportunity (``<wbr>``) after ``_``, ``@``, ``/``
    and before a camelCase capital: ``max_retry_streak`` and ``orphanResRequests`` can wrap in a
    narrow header, so a wide table fits its page instead of running past it."""
    return re.sub(r"(?<=[_@/])(?=.)|(?<=[a-z])(?=[A-Z])", "<wbr>", name)


def html_table(columns: Sequence[str], rows: Iterable[Sequence[Cell]], wrap_heads: bool = False) -> str:
    """A table in a horizontally scrolling box (class ``scroll``), numbers marked ``num``; with
    ``wrap_heads`` the column names may wrap (:func:`breakable`)."""
    head = "".join(f"<th>{breakable(esc(c)) if wrap_heads else esc(c)}</th>" for c in columns)
    body = []
    for row in rows:
        cells = []
        for v in row:
            cls = ' class="num"' if isinstance(v, (int, float)) and not isinstance(v, bool) else ""
            cells.append(f"<td{cls}>{esc(cell_text(v, THIN_SPACE))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def data_frame(records: Sequence[Mapping[str, Any]], columns: Sequence[str] = ()) -> Any:
    """``records`` as a ``pandas.DataFrame`` (columns kept even when there are no rows).

    Raises
    ------
    MissingExtra
        pandas is not installed (it is not a dependency of turncheck).
    """
    try:
        import pandas
    except ImportError:
        from turncheck.models.tokenizer import MissingExtra

        raise MissingExtra(
            f"to_pandas() needs pandas, which is not installed: {install_hint(EXTRA)}"
        ) from None
    return pandas.DataFrame.from_records(
        list(records), columns=list(columns or (records[0] if records else ()))
    )
