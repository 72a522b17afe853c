"""A configuration (or any nested document) as dotted keys, ``flash.channels`` or
``flow.0.queue_depth``, as overrides and sweeps name them."""

from __future__ import annotations

# Not typing.TYPE_CHECKING: importing `typing` is 3 ms of a command line run's start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _is_flow_name(key: str) -> bool:
    parts = key.split(".")
    return len(parts) == 3 and parts[0] == "flow" and parts[2] == "name"


def _flatten(node: Any, prefix: str = "") -> dict[str, Any]:
    """A configuration as ``{dotted key: leaf value}``; lists of tables (flows) by index."""
    out: dict[str, Any] = {}
    if isinstance(node, dict):
        for k, v in node.items():
            out.update(_flatten(v, f"{prefix}{k}."))
    elif isinstance(node, list) and node and all(isinstance(x, dict) for x in node):
        for i, v in enumerate(node):
            out.update(_flatten(v, f"{prefix}{i}."))
    else:
        out[prefix[:-1]] = tuple(node) if isinstance(node, list) else node
    return out
