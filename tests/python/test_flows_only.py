"""A file of [[flow]] tables alone runs on the mqsim-paper preset the README names (its write
cache and mapping cache included), or on the preset given with --preset / ``preset=``, whose
flows it replaces (issue 31)."""

import json
import subprocess
import sys

import pytest
import ssdkit
import tomllib

FLOWS = """\
[[flow]]
name = "writer"
queue_depth = 4
read_fraction = 0.0
requests = 300

[[flow]]
name = "reader"
queue_depth = 2
requests = 200
"""


def device(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k != "flow"}


def resolved(config, **kw) -> dict:
    return tomllib.loads(ssdkit.resolve_config(config, **kw))


@pytest.fixture
def flows_file(tmp_path):
    p = tmp_path / "flows.toml"
    p.write_text(FLOWS)
    return p


def test_a_flows_only_file_runs_on_the_mqsim_paper_preset(flows_file):
    doc = resolved(str(flows_file))
    assert device(doc) == device(resolved("mqsim-paper"))
    assert doc["cache"]["mode"] == "write" and doc["ftl"]["cmt"]["mode"] == "shared"
    assert [f["name"] for f in doc["flow"]] == ["writer", "reader"]
    # TOML text alone is the same as the file.
    assert device(resolved(FLOWS)) == device(doc)


def test_run_and_steady_state_tables_keep_the_preset_device(flows_file):
    text = '[run]\nseed = 7\n\n[precondition]\nmode = "empty"\n\n' + FLOWS
    doc = resolved(text)
    assert doc["run"]["seed"] == 7 and doc["precondition"]["mode"] == "empty"
    assert doc["cache"] == resolved("mqsim-paper")["cache"]


def test_a_file_with_a_device_table_starts_from_the_built_in_defaults():
    doc = resolved("[flash]\nblocks_per_plane = 128\n\n" + FLOWS)
    assert doc["cache"]["mode"] == "off" and doc["ftl"]["cmt"]["mode"] == "ideal"


@pytest.mark.parametrize("name", ["mqsim-paper", "x25m"])
def test_a_flows_file_on_a_given_preset_replaces_its_flows(flows_file, name):
    doc = resolved(str(flows_file), preset=name)
    assert device(doc) == device(resolved(name))
    assert [f["name"] for f in doc["flow"]] == ["writer", "reader"]


def test_a_file_over_a_preset_merges_key_by_key():
    doc = resolved("[flash]\nblocks_per_plane = 128\n\n" + FLOWS, preset="mqsim-paper")
    want = resolved("mqsim-paper", overrides={"flash.blocks_per_plane": 128})
    assert device(doc) == device(want)


def test_two_presets_are_refused():
    with pytest.raises(ssdkit.ConfigError, match="give one"):
        ssdkit.resolve_config("x25m", preset="mqsim-paper")


def test_cli_runs_a_flows_file_on_a_preset(flows_file, tmp_path):
    out = tmp_path / "out.json"
    p = subprocess.run(
        [sys.executable, "-m", "ssdkit", "run", str(flows_file), "--preset", "x25m", "--no-progress", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert p.returncode == 0, p.stderr
    r = ssdkit.load(out)
    assert [f.name for f in r.flows] == ["writer", "reader"]
    assert device(r.raw["config"]) == device(json.loads(ssdkit.run("x25m", flow__0__requests=1).to_json())["config"])
    p = subprocess.run(
        [sys.executable, "-m", "ssdkit", "run", str(flows_file), "--no-progress", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["device"]["cache"]["mode"] == "write", "the mqsim-paper write cache"
