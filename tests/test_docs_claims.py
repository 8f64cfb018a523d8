"""The claims ledger: every paragraph of the README and the docs that promises an error
behaviour, an equality with a peer or a speed ratio points to the test or the benchmark that
shows it (in the paragraph or in its section), and every test file, test and benchmark a page
points to exists. A new promise without its proof fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
CLAIM = re.compile(r"(equal(s)? to|equals\b|byte for byte|bit for bit|to 1e-\d+|\b\d+(\.\d+)?x\b|times (as )?fast|"
                   r"faster than|is refused|are refused|an error naming|is an error|gets? an error)", re.I)
PROOF = re.compile(r"(tests/[\w/]+\.py|benchmarks/[\w/]+\.py|\btest_\w+)")
GENERATED = {"plugins.md", "metrics.md"}   # generated from the registries: each entry cites its reference


def _prose(text: str) -> str:
    """The page without its fenced code blocks (a ``# comment`` there is no heading)."""
    return re.sub(r"```.*?```", "", text, flags=re.S)


def _claims(page: Path) -> list[tuple[str, str]]:
    """(section heading, paragraph) of every paragraph that makes a claim and has no proof."""
    out = []
    for section in re.split(r"\n(?=#{1,4} )", _prose(page.read_text())):
        heading = section.strip().splitlines()[0] if section.strip() else ""
        if PROOF.search(section):
            continue
        for paragraph in re.split(r"\n\s*\n", section):
            if CLAIM.search(paragraph):
                out.append((heading, paragraph.strip()[:200]))
    return out


@pytest.mark.parametrize("page", [p for p in PAGES if p.name not in GENERATED], ids=lambda p: p.name)
def test_every_claim_points_to_its_proof(page: Path) -> None:
    unproven = _claims(page)
    assert not unproven, "claims without the test or benchmark that shows them:\n" + "\n".join(
        f"{page.name} {heading!r}: {text}" for heading, text in unproven)


def test_every_proof_a_page_names_exists() -> None:
    tests = "\n".join(p.read_text() for p in (ROOT / "tests").rglob("*.py"))
    missing = []
    for page in PAGES:
        text = page.read_text()
        for path in sorted(set(re.findall(r"(?:tests|benchmarks)/[\w/]+\.py", text))):
            if not (ROOT / path).is_file():
                missing.append(f"{page.name}: {path}")
        for name in sorted(set(re.findall(r"`(test_\w+)`", text))):
            if f"def {name}" not in tests:
                missing.append(f"{page.name}: {name}")
    assert not missing, "pages name proofs that do not exist:\n" + "\n".join(missing)


def test_the_ledger_can_fail() -> None:
    """A paragraph that promises equality with a peer and names no proof is caught."""
    page = ROOT / "tests" / "data" / "claims_probe.md"
    try:
        page.write_text("# Probe\n\nThe values are equal to ranx to 1e-12.\n")
        assert _claims(page) == [("# Probe", "The values are equal to ranx to 1e-12.")]
        page.write_text("# Probe\n\nThe values are equal to ranx (`tests/test_fusion.py`).\n")
        assert _claims(page) == []
    finally:
        page.unlink(missing_ok=True)


def test_every_benchmark_measures_by_the_shared_protocol() -> None:
    """Each ``benchmarks/bench_*.py`` takes ``--repeat`` (rounds, each tool in turn, medians) and
    prints CPU seconds, peak memory and the load average (benchmarks/README.md, "How every
    benchmark measures")."""
    lacking = []
    for path in sorted((ROOT / "benchmarks").glob("bench_*.py")):
        text = path.read_text()
        shared = "print_table(" in text   # benchmarks/_measure.py's table: medians, CPU, peak memory
        needs = {"--repeat": "--repeat" in text,
                 "CPU seconds": shared or re.search(r"\bcpu\b", text, re.I) is not None,
                 "peak memory": shared or re.search(r"peak|maxrss", text) is not None,
                 "the load average": re.search(r"load_average|getloadavg", text) is not None,
                 "medians": shared or "median" in text}
        lacking += [f"{path.name}: {need}" for need, present in needs.items() if not present]
    assert not lacking, "benchmarks that do not measure as the others do:\n" + "\n".join(lacking)
