"""The HTML report: one self-contained page, rendered in headless Chromium when it is installed."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from conftest import GOLDEN

from rankwise.report.html import write_report

QRELS = GOLDEN / "qrels.dl19-passage.txt"
RUNS = {"bm25": GOLDEN / "BM25.dl19.trec", "splade": GOLDEN / "SPLADE_P_P_ENSEMBLE_DISTIL.dl19.trec"}


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "report.html"
    write_report(QRELS, RUNS, ["ndcg@10", "map"], path, rel_level=2, k=30)
    return path


def test_page_is_self_contained(page) -> None:
    text = page.read_text()
    assert "<table id='summary'>" in text and "<table id='pairs'>" in text
    assert text.count("data:image/png;base64,") == 4
    assert not re.search(r"(src|href)=['\"]https?://", text)  # nothing to fetch: opens offline
    assert "nDCG@10|gain=linear|ties=trec|rel=2" in text


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def test_page_renders_in_headless_chromium(page, tmp_path) -> None:
    browser = _chromium()
    if browser is None:
        pytest.skip("headless Chromium not installed (Debian: apt-get install chromium); "
                    "the HTML report was checked as text only")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([browser, *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True,
                         timeout=120).stdout
    assert "<table id=\"summary\">" in dom and "<table id=\"pairs\">" in dom
    assert dom.count("<img") == 4 and "splade" in dom
    shot = tmp_path / "shot.png"
    subprocess.run([browser, *flags, f"--screenshot={shot}", "--window-size=1200,2400", page.as_uri()],
                   capture_output=True, timeout=120)
    assert shot.exists() and shot.stat().st_size > 20_000


def test_ab_page_draws_the_lift_plot_across_the_page(tmp_path) -> None:
    """The A/B page's cumulative lift plot fills the page's width in a real browser (it was a
    narrow image in a wide page), and the page shows the table, the sequential test and the
    plot."""
    from pathlib import Path

    from rankwise import experiments
    from rankwise.report.ab import ab_html

    data = Path(__file__).parent / "data" / "online" / "events.csv"
    result = experiments.analyze(data, unit="user_id", metrics={"ctr": "count(click) / count(impression)"},
                            timestamp="timestamp", sequential="always-valid")
    page = tmp_path / "ab.html"
    page.write_text(ab_html(result))
    text = page.read_text()
    assert "<img class='lift' alt='cumulative lift'" in text and "img.lift{display:block;width:100%" in text
    browser = _chromium()
    if browser is None:
        pytest.skip("headless Chromium not installed (Debian: apt-get install chromium); the page was checked as text")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1400,1600"]
    # the browser measures the image against the body: a script writes both widths into the DOM
    probe = tmp_path / "probe.html"
    probe.write_text(text.replace("</body>", "<script>document.body.setAttribute('data-widths', "
                                  "document.querySelector('img.lift').getBoundingClientRect().width + ' ' + "
                                  "document.querySelector('table').parentElement.getBoundingClientRect().width)"
                                  "</script></body>"))
    dom = subprocess.run([browser, *flags, "--virtual-time-budget=2000", "--dump-dom", probe.as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    widths = re.search(r'data-widths="([\d.]+) ([\d.]+)"', dom)
    assert widths is not None, dom[-500:]
    image, body = map(float, widths.groups())
    assert image == pytest.approx(body, rel=0.01) and image > 1000
    shot = tmp_path / "ab.png"
    subprocess.run([browser, *flags, f"--screenshot={shot}", page.as_uri()], capture_output=True, timeout=120)
    assert shot.exists() and shot.stat().st_size > 20_000
