"""Where this install keeps the C API: the shared library libssdkit and its header ssdkit.h.

The wheel carries both (the build puts them in ``lib/`` and ``include/`` beside this file), so
a C program builds against an installed ssdkit with no Rust tooling:

    cc -std=c11 prog.c $(ssdkit c-flags) -o prog

``cflags()`` is ``-I<include folder>``; ``libs()`` is ``-L<lib folder> -lssdkit`` plus a run
path to that folder, so the program finds the library where the install keeps it without
``LD_LIBRARY_PATH``.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from .._native import SsdkitError

HERE = Path(__file__).resolve().parent
LIBRARY_NAME = "ssdkit"


def include_dir() -> Path:
    """The folder holding ssdkit.h."""
    return _existing(HERE / "include" / "ssdkit.h").parent


def library_path() -> Path:
    """The shared library itself (libssdkit.so; libssdkit.dylib on macOS)."""
    suffix = ".dylib" if sys.platform == "darwin" else ".so"
    return _existing(HERE / "lib" / f"lib{LIBRARY_NAME}{suffix}")


def library_dir() -> Path:
    """The folder holding the shared library."""
    return library_path().parent


def cflags() -> list[str]:
    """The compiler's flags: the header's folder."""
    return [f"-I{include_dir()}"]


def libs() -> list[str]:
    """The linker's flags: the library, and a run path to its folder."""
    d = library_dir()
    return [f"-L{d}", f"-l{LIBRARY_NAME}", f"-Wl,-rpath,{d}"]


def _existing(p: Path) -> Path:
    if not p.is_file():
        raise SsdkitError(
            f"this ssdkit has no C API: {p} is missing. The C library and header come with an install of the "
            "package (`pip install .`, which builds them with cargo); a checkout used through PYTHONPATH has "
            "them only after such an install"
        )
    return p


def flags(compile: bool = True, link: bool = True) -> str:
    """The flags as one shell-quoted line: the compiler's, the linker's, or both."""
    parts = (cflags() if compile else []) + (libs() if link else [])
    return " ".join(shlex.quote(a) for a in parts)
