"""Every example of README.md runs as written: each fenced code block is one test, named after
the README line its fence opens on (``README.md:L58-sh``).

Where a block runs: in a fresh temporary folder that mirrors the repository's root (every
top-level entry but hidden ones and ``target/`` is symlinked into it), so relative paths such as
``tests/data/mqsim/ssdconfig.xml`` resolve as they do for a reader in the root folder, while
whatever an example writes (``out.json``, ``dev.snap``, ``my.toml``, ...) lands in the temporary
folder. Blocks do not share files: each one must stand alone. ``ssdkit``, ``python`` and
``python3`` on the ``PATH`` are the interpreter running pytest (``sys.executable``), so the
examples use the installed package under test.

By language:

- ``python``: the block is written to a file in the folder and run with ``sys.executable``; it
  must exit with status 0.
- ``sh``, ``bash``, ``console``: every command line is run with bash, in order, and must exit
  with status 0 (``console``: only lines starting with ``$ ``; a line ending in ``\\`` continues
  on the next). Comment-only and empty lines are ignored. Lines that install or build are
  skipped: a first word (after ``VAR=value`` assignments) of ``pip``, ``pip3``, ``make``,
  ``cargo``, ``maturin``, ``rustup``, ``git``, ``cd``, ``source``, ``.``, ``sudo``, ``apt``,
  ``apt-get``, ``brew``, ``curl`` or ``xcode-select``, and ``python``/``python3 -m pip`` or
  ``-m venv``. A block left with nothing to run is reported as skipped.
- ``toml``: the first line must be ``# NAME.toml: run it with `ssdkit ...```; the block is written
  to NAME.toml and that command is run. It is then run again with ``--json`` and every flow of
  the resolved configuration that sets ``duration_ms`` must have issued fewer requests than its
  request limit (else the example's duration is not what stopped it).
- Other blocks (no language: file trees, output) are not run.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
TIMEOUT_S = 600

SKIP_FIRST_WORDS = {
    "pip",
    "pip3",
    "make",
    "cargo",
    "maturin",
    "rustup",
    "git",
    "cd",
    "source",
    ".",
    "sudo",
    "apt",
    "apt-get",
    "brew",
    "curl",
    "xcode-select",
}
PYTHON_INSTALL = re.compile(r"^python3?(\.\d+)?\s+-m\s+(pip|venv)\b")
TOML_HEAD = re.compile(r"^# (?P<file>[\w.-]+\.toml): run it with `(?P<cmd>ssdkit [^`]+)`\s*$")
RUN_LANGS = {"python", "sh", "bash", "console", "toml"}


@dataclass
class Block:
    line: int  # 1-based line of the opening fence
    lang: str
    text: str

    @property
    def id(self) -> str:
        return f"README.md:L{self.line}-{self.lang}"


def readme_blocks() -> list[Block]:
    blocks = []
    lines = README.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^(`{3,})\s*([\w+-]*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        fence, lang, start = m.group(1), m.group(2).lower(), i
        body = []
        i += 1
        while i < len(lines) and not lines[i].startswith(fence):
            body.append(lines[i])
            i += 1
        assert i < len(lines), f"README.md:{start + 1}: code block never closed"
        blocks.append(Block(start + 1, lang, "\n".join(body) + "\n"))
        i += 1
    return blocks


BLOCKS = [b for b in readme_blocks() if b.lang in RUN_LANGS]


def shell_commands(block: Block) -> list[str]:
    """The block's command lines, continuation lines joined."""
    raw = block.text.splitlines()
    if block.lang == "console":
        raw = [ln[2:] for ln in raw if ln.startswith("$ ")]
    out, cur = [], ""
    for ln in raw:
        if ln.rstrip().endswith("\\"):
            cur += ln.rstrip()[:-1] + " "
            continue
        cur += ln
        if cur.strip() and not cur.strip().startswith("#"):
            out.append(cur.strip())
        cur = ""
    return out


def installs_or_builds(cmd: str) -> bool:
    words = cmd.split()
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        words = words[1:]  # VAR=value prefixes
    if not words:
        return False
    return words[0] in SKIP_FIRST_WORDS or bool(PYTHON_INSTALL.match(" ".join(words)))


@pytest.fixture
def workdir(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A folder that looks like the repository root, and an environment whose ssdkit and
    python are this interpreter."""
    for entry in ROOT.iterdir():
        if entry.name.startswith(".") or entry.name == "target":
            continue
        (tmp_path / entry.name).symlink_to(entry)
    bindir = tmp_path / ".readme-bin"
    bindir.mkdir()
    for name, args in (("ssdkit", ' -m ssdkit "$@"'), ("python", ' "$@"'), ("python3", ' "$@"')):
        exe = bindir / name
        exe.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)}{args}\n")
        exe.chmod(exe.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}"}
    return tmp_path, env


def run(cmd: list[str], cwd: Path, env: dict[str, str], what: str) -> subprocess.CompletedProcess:
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    if p.returncode != 0:
        pytest.fail(
            f"{what} exited with status {p.returncode}\n--- stdout (end) ---\n{p.stdout[-3000:]}"
            f"\n--- stderr (end) ---\n{p.stderr[-3000:]}",
            pytrace=False,
        )
    return p


def test_readme_has_examples():
    langs = [b.lang for b in BLOCKS]
    assert "python" in langs and "sh" in langs and "toml" in langs


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_readme_block(block: Block, workdir):
    cwd, env = workdir
    if block.lang == "python":
        script = cwd / f"readme_L{block.line}.py"
        script.write_text(block.text, encoding="utf-8")
        run([sys.executable, script.name], cwd, env, f"{block.id} (python)")
    elif block.lang == "toml":
        first = block.text.splitlines()[0] if block.text.strip() else ""
        m = TOML_HEAD.match(first)
        assert m, f"{block.id}: a TOML example starts with `# NAME.toml: run it with `ssdkit ...``, not {first!r}"
        (cwd / m["file"]).write_text(block.text, encoding="utf-8")
        run(["bash", "-c", m["cmd"]], cwd, env, f"{block.id}: `{m['cmd']}`")
        if m["cmd"].split()[:2] == ["ssdkit", "run"]:
            p = run(["bash", "-c", m["cmd"] + " --json"], cwd, env, f"{block.id}: `{m['cmd']} --json`")
            check_durations_govern(block, json.loads(p.stdout))
    else:
        cmds = [c for c in shell_commands(block) if not installs_or_builds(c)]
        if not cmds:
            pytest.skip("only install/build commands")
        for cmd in cmds:
            run(["bash", "-c", "set -o pipefail; " + cmd], cwd, env, f"{block.id}: `{cmd}`")


def check_durations_govern(block: Block, doc: dict) -> None:
    """A flow given a duration must not have been stopped by its request count first."""
    for cfg, flow in zip(doc["config"]["flow"], doc["flows"]):
        if cfg.get("duration_ms", 0) > 0 and cfg.get("requests", 0) > 0:
            assert flow["issued"] < cfg["requests"], (
                f"{block.id}: flow {flow['name']} has duration_ms = {cfg['duration_ms']} but stopped at its "
                f"request limit ({cfg['requests']}); set requests = 0 for no request limit"
            )
