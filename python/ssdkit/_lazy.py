"""A module imported on first use, so that a command or an entry point pays only for the
modules it needs (the run API and the result model, numpy, the converters: about 0.3 s
together)."""

from __future__ import annotations

import importlib


class _Lazy:
    """``ssdkit.<name>``, imported when one of its attributes is first looked up."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str):
        module = importlib.import_module(f"ssdkit.{self._name}")
        # The next lookups find the module's attributes on the proxy itself.
        self.__dict__.update(vars(module))
        return getattr(module, attr)
