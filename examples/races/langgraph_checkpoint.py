"""Two concurrent updates of one LangGraph thread, checkpointed by the real AsyncSqliteSaver.

A graph whose state is a list with an appending reducer; two callers add a message to the same
thread at once (``aupdate_state``, as a UI and a background job would). Each update reads the
thread's latest checkpoint, applies the reducer and writes a child checkpoint — so when both
read before either writes, the second write forks from the same parent and one message is
not in the thread's latest state (plain asyncio already shows it); a lock around each update
keeps both::

    turncheck race examples/races/langgraph_checkpoint.py:test_both_updates_kept             # exit 1
    turncheck race examples/races/langgraph_checkpoint.py:test_both_updates_kept_serialised  # exit 0
"""

import asyncio
import operator
import tempfile
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    messages: Annotated[list[str], operator.add]


def build(saver: AsyncSqliteSaver) -> Any:
    graph = StateGraph(State)
    graph.add_node("echo", lambda state: {"messages": []})
    graph.add_edge(START, "echo")
    graph.add_edge("echo", END)
    return graph.compile(checkpointer=saver)


async def two_updates(lock: asyncio.Lock | None) -> list[str]:
    with tempfile.TemporaryDirectory() as folder:
        async with AsyncSqliteSaver.from_conn_string(str(Path(folder) / "checkpoints.db")) as saver:
            app = build(saver)
            config = {"configurable": {"thread_id": "t1"}}
            await app.ainvoke({"messages": ["hello"]}, config)

            async def update(message: str) -> None:
                if lock is None:
                    await app.aupdate_state(config, {"messages": [message]})
                    return
                async with lock:
                    await app.aupdate_state(config, {"messages": [message]})

            await asyncio.gather(update("from the UI"), update("from the job"))
            return list((await app.aget_state(config)).values["messages"])


async def test_both_updates_kept() -> None:
    kept = await two_updates(None)
    assert sorted(kept) == ["from the UI", "from the job", "hello"], f"the thread holds {kept}"


async def test_both_updates_kept_serialised() -> None:
    """The same with the read-and-write of one thread's state serialised by the caller."""
    kept = await two_updates(asyncio.Lock())
    assert sorted(kept) == ["from the UI", "from the job", "hello"], f"the thread holds {kept}"


if __name__ == "__main__":
    print(asyncio.run(two_updates(None)))
