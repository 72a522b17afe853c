"""Programs from Debian's packages for the tests that drive real clients (a browser, fio, the NBD
tools): found on PATH, or installed now when this process may install packages (root with
apt-get, as on CI), or else the test is skipped with a message naming the package and the
checks that did not run, never silently."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess

import pytest

# apt-get as root on a fresh machine: fio alone pulls in a few hundred MB of libraries.
INSTALL_TIMEOUT_S = 900


def _may_install() -> bool:
    return shutil.which("apt-get") is not None and hasattr(os, "geteuid") and os.geteuid() == 0


def _apt_get(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    return subprocess.run(
        ["apt-get", *args], capture_output=True, text=True, env=env, check=False, timeout=INSTALL_TIMEOUT_S
    )


@functools.cache
def _updated() -> bool:
    # Once per test session: package lists can be stale or missing on a fresh machine.
    return _apt_get("update", "-q").returncode == 0


@functools.cache
def _install(package: str) -> bool:
    p = _apt_get("install", "-y", "-q", package)
    if p.returncode != 0 and "Unable to locate" in p.stdout + p.stderr and _updated():
        p = _apt_get("install", "-y", "-q", package)
    return p.returncode == 0


@functools.cache
def need(binary: str, package: str) -> str | None:
    """The path of ``binary``, installing Debian's ``package`` first if it is missing and this
    process may install packages; None when it cannot be had."""
    found = shutil.which(binary)
    if found or not _may_install():
        return found
    _install(package)
    return shutil.which(binary)


def skip_unless(binary: str, package: str, what: str) -> str:
    """The path of ``binary`` (see :func:`need`), or skip the calling test saying which checks
    (``what``) did not run and which package would have run them."""
    found = need(binary, package)
    if found is None:
        pytest.skip(
            f"{binary} (Debian package {package}) is not installed and cannot be installed here "
            f"(apt-get as root): {what} did not run"
        )
    return found
