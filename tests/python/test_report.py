"""`ssdkit report`: one self-contained HTML file that renders in a real browser."""

import base64
import re
import shutil
import subprocess
import sys

import pytest
import ssdkit
from ssdkit.report import report

pytest.importorskip("matplotlib", reason="matplotlib is not installed (extra ssdkit[plot])")

from _debian import need, skip_unless
from conftest import TINY

RUN = {
    **TINY,
    "flow.0.requests": 2000,
    "flow.0.read_fraction": 0.6,
    "run.timeseries_window_ms": 2,
    "run.latency_breakdown": True,
}

CHECK = """<script>
window.addEventListener('load', () => {
  const imgs = [...document.images];
  const ok = imgs.filter(i => i.complete && i.naturalWidth > 0).length;
  const d = document.createElement('div');
  d.id = 'ssdkit-check';
  d.textContent = 'images ' + imgs.length + ' loaded ' + ok + ' summary ' + (document.getElementById('summary') ? 1 : 0);
  document.body.appendChild(d);
});
</script></body>"""


def images(page: str) -> list[bytes]:
    return [base64.b64decode(m) for m in re.findall(r'src="data:image/png;base64,([^"]+)"', page)]


def chromium():
    """Chromium from the distribution's packages: installed now if it is missing and this
    process may install packages."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return need("chromium", "chromium")


@pytest.fixture(scope="module")
def result_page(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "report.html"
    report(ssdkit.run("mqsim-paper", overrides=RUN), out)
    return out


def test_result_report_is_self_contained(result_page):
    page = result_page.read_text()
    assert 'id="summary"' in page and "<h2>Configuration</h2>" in page
    pngs = images(page)
    # CDF, tail, percentiles, breakdown, time series, device, erase counts.
    assert len(pngs) == 7 and all(p[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    assert len(re.findall(r"<img ", page)) == len(pngs)
    # Nothing outside the file: no links, scripts or remote images.
    assert not re.search(r'(href|src)="(?!data:)', page) and "<script" not in page


def test_sweep_report_and_cli(tmp_path):
    pytest.importorskip("pyarrow")
    out = tmp_path / "s.parquet"
    grid = {"flow.0.queue_depth": [1, 4], "flow.0.read_fraction": [1.0, 0.5]}
    ssdkit.sweep("mqsim-paper", grid, overrides={**TINY, "flow.0.requests": 300}, workers=1, progress=False, output=out)
    html_out = tmp_path / "s.html"
    p = subprocess.run(
        [sys.executable, "-m", "ssdkit", "report", str(out), "-o", str(html_out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 0, p.stderr
    page = html_out.read_text()
    # Two lines per swept key (throughput, p99) and the heatmap; a row per point.
    assert len(images(page)) == 5 and page.count("<tr>") == 1 + 4
    p = subprocess.run(
        [sys.executable, "-m", "ssdkit", "report", str(tmp_path / "none.json"), "-o", str(html_out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode != 0 and "no such file" in p.stderr and "Traceback" not in p.stderr


def test_report_renders_in_headless_chromium(result_page, tmp_path):
    browser = chromium() or skip_unless("chromium", "chromium", "the browser check")
    page = tmp_path / "checked.html"
    page.write_text(result_page.read_text().replace("</body>", CHECK))
    args = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--virtual-time-budget=10000",
        "--window-size=1200,4000",
    ]
    dom = subprocess.run([*args, "--dump-dom", page.as_uri()], capture_output=True, text=True, check=False, timeout=120)
    m = re.search(r"images (\d+) loaded (\d+) summary (\d)", dom.stdout)
    # Chromium reserves far more address space than it uses: under `ulimit -v` it cannot start.
    assert m, f"chromium exited {dom.returncode} without the check's line: {dom.stderr[-2000:]}"
    n, loaded, summary = map(int, m.groups())
    assert n == 7 and loaded == n and summary == 1
    shot = tmp_path / "shot.png"
    subprocess.run([*args, f"--screenshot={shot}", result_page.as_uri()], capture_output=True, check=False, timeout=120)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
