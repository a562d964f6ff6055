"""The explored state graph as networkx, and its export as Graphviz DOT and GraphML.

The explorer keeps only compact arrays while it searches (parents, actions, optionally every
transition); this module turns them into a ``networkx.DiGraph`` after the search, on demand, so
a search that is never drawn never pays for it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import networkx as nx

from turncheck.models.output_files import output_file, write_outputs

if TYPE_CHECKING:
    from turncheck.sim.explorer import Exploration


def state_graph(result: Exploration) -> nx.DiGraph:
    """The explored states and transitions as a directed graph.

    Parameters
    ----------
    result
        An :class:`sim.exploration.Exploration`.

    Returns
    -------
    networkx.DiGraph
        Nodes are state ids with ``depth`` and ``label`` (the state's repr); edges carry the
        action as a string ``label``. Every transition when the search recorded edges
        (``record_edges=True``), else the BFS tree of parents.
    """
    g = nx.DiGraph(model=result.model)
    for i, state in enumerate(result.states):
        g.add_node(i, depth=result.depth_of(i), label=repr(state))
    if result.edges is not None:
        for src, dst, action in result.edges:
            g.add_edge(src, dst, label=str(action))
    else:
        for i in range(len(result.states)):
            if result.parent[i] >= 0:
                g.add_edge(int(result.parent[i]), i, label=str(result.via[i]))
    return g


def _quoted(text: Any) -> str:
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def write_dot(graph: nx.DiGraph, path: str) -> None:
    """Write the graph as Graphviz DOT (no pydot needed; labels escaped)."""
    lines = [f"digraph {_quoted(graph.graph.get('model', 'states'))} {{", "  node [shape=box, fontsize=9];"]
    for node, data in graph.nodes(data=True):
        lines.append(f"  {node} [label={_quoted(data.get('label', node))}, depth={data.get('depth', 0)}];")
    for src, dst, data in graph.edges(data=True):
        lines.append(f"  {src} -> {dst} [label={_quoted(data.get('label', ''))}];")
    lines.append("}")
    write_outputs({Path(path): "\n".join(lines) + "\n"}, folder=Path(path).parent)


def write_graphml(graph: nx.DiGraph, path: str) -> None:
    """Write the graph as GraphML (networkx's writer), whole or not at all (:mod:`models.output_files`)."""
    with output_file(Path(path), folder=Path(path).parent) as fh:
        nx.write_graphml(graph, fh)
