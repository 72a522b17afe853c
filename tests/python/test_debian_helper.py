"""_debian.need and skip_unless, with a fake apt-get first on PATH: a package it cannot locate
makes it refresh the package lists once and retry, and a program that cannot be had is a skip
naming its package, never a silent pass."""

from __future__ import annotations

import os
import stat

import _debian
import pytest

# Locates nothing until `update` ran; then `install` creates the program named by the package.
FAKE_APT = """#!/bin/sh
echo "$*" >> "{log}"
case "$1" in
update) touch "{bin}/.updated"; exit 0 ;;
install)
  pkg="$4"
  [ "$pkg" = "ssdkit-absent" ] && {{ echo "E: Unable to locate package $pkg"; exit 100; }}
  [ -e "{bin}/.updated" ] || {{ echo "E: Unable to locate package $pkg"; exit 100; }}
  printf '#!/bin/sh\\n' > "{bin}/$pkg-tool"; chmod +x "{bin}/$pkg-tool"; exit 0 ;;
esac
exit 1
"""


@pytest.fixture
def fake_apt(tmp_path, monkeypatch):
    if os.geteuid() != 0:
        pytest.skip("_debian installs only as root; the fake apt-get check did not run")
    fake_bin, log = tmp_path / "bin", tmp_path / "apt.log"
    fake_bin.mkdir()
    apt = fake_bin / "apt-get"
    apt.write_text(FAKE_APT.format(log=log, bin=fake_bin))
    apt.chmod(apt.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{fake_bin}{os.pathsep}{os.environ['PATH']}")
    caches = (_debian.need, _debian._install, _debian._updated)
    for f in caches:
        f.cache_clear()
    yield log
    # The fake's answers must not outlive the test.
    for f in caches:
        f.cache_clear()


def test_need_updates_the_lists_once_when_a_package_is_not_located(fake_apt):
    found = _debian.need("ssdkit-fake-tool", "ssdkit-fake")
    assert found is not None and found.endswith("/bin/ssdkit-fake-tool")
    assert fake_apt.read_text().splitlines() == [
        "install -y -q ssdkit-fake",
        "update -q",
        "install -y -q ssdkit-fake",
    ]
    # Memoised: no second round of apt-get.
    assert _debian.need("ssdkit-fake-tool", "ssdkit-fake") == found
    assert len(fake_apt.read_text().splitlines()) == 3


def test_skip_unless_names_the_package_and_the_checks(fake_apt):
    with pytest.raises(pytest.skip.Exception) as skipped:
        _debian.skip_unless("ssdkit-absent-tool", "ssdkit-absent", "the frobnication checks")
    msg = str(skipped.value)
    assert "Debian package ssdkit-absent" in msg and "the frobnication checks did not run" in msg
    # It tried: install, the one update, install again.
    assert fake_apt.read_text().splitlines() == [
        "install -y -q ssdkit-absent",
        "update -q",
        "install -y -q ssdkit-absent",
    ]


def test_found_programs_need_no_apt_get(fake_apt):
    assert _debian.need("sh", "dash") is not None
    assert not fake_apt.exists()
