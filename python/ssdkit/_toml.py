"""TOML reading: the standard library's tomllib from Python 3.11, its original, tomli, before
(a dependency there, pyproject.toml)."""

from __future__ import annotations

import sys

from ._native import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - a dependency on Python < 3.11 (pyproject.toml)
    import tomli as tomllib

__all__ = ["toml_loads", "tomllib"]


def toml_loads(text: str, origin: str) -> dict:
    """``text`` parsed; invalid TOML raises :class:`ConfigError` naming ``origin``."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{origin}: invalid TOML: {e}") from None
