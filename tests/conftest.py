"""Shared fixtures: paths to the bundled test data."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
GOLDEN = DATA / "golden"


@pytest.fixture
def data_dir() -> Path:
    return DATA


@pytest.fixture(scope="session")
def oracle(tmp_path_factory: pytest.TempPathFactory):
    """trec_eval 10.0 (``oracle.TrecEval``): built from source (``stock`` prints as released,
    ``precise`` with %.17g) where it can be, else its committed golden outputs; with
    ``RANKWISE_REQUIRE_ORACLE`` set (CI), a binary that cannot be built fails the tests."""
    import os

    from oracle import RECORD, REQUIRE, TrecEval, build, why_unavailable

    reason = why_unavailable()
    if reason is not None:
        if os.environ.get(REQUIRE):
            pytest.fail(f"{REQUIRE} is set and the trec_eval 10.0 oracle cannot be built: {reason}")
        yield TrecEval(None, reason)
        return
    root = tmp_path_factory.mktemp("trec_eval")
    found = TrecEval({"stock": build(root / "stock"), "precise": build(root / "precise", precise=True)}, None)
    yield found
    if os.environ.get(RECORD):
        found.save()


@pytest.fixture(scope="session")
def ndeval(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """ndeval 4.5 compiled from pyndeval's source distribution."""
    import os

    from oracle import REQUIRE
    from oracle.ndeval import build

    binary, reason = build(tmp_path_factory.mktemp("ndeval"))
    if binary is None:
        if os.environ.get(REQUIRE):
            pytest.fail(f"{REQUIRE} is set and the ndeval oracle cannot be built: {reason}")
        pytest.skip(f"the ndeval oracle cannot be built: {reason}")
    return binary


collect_ignore_glob = ["data/*"]
"""Test data (and the scripts that regenerated it with other environments) is not collected."""


@pytest.fixture(scope="session")
def dask_client():
    """A LocalCluster of 2 single-threaded worker processes, shared by the Dask tests."""
    pytest.importorskip("distributed")
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        yield client


MYPY_TEST = "tests/test_types.py::test_src_passes_mypy"
"""mypy over src/ takes about a minute: when this test is selected, it starts in a process of
its own as soon as collection ends, on another core while the other tests run, and the test
reads its result."""
MYPY: dict[str, object] = {}


def start_mypy() -> object:
    import subprocess
    import sys
    import tempfile

    root = Path(__file__).resolve().parents[1]
    return subprocess.Popen([sys.executable, "-m", "mypy", "--config-file", str(root / "pyproject.toml"),
                             "--cache-dir", tempfile.mkdtemp(prefix="rankwise-mypy-")], cwd=root,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def pytest_collection_finish(session: pytest.Session) -> None:
    if any(item.nodeid.endswith(MYPY_TEST.split("/")[-1]) for item in session.items):
        MYPY["process"] = start_mypy()


def pytest_sessionfinish(session: pytest.Session) -> None:
    process = MYPY.pop("process", None)
    if process is not None and process.poll() is None:   # type: ignore[attr-defined]
        process.kill()   # type: ignore[attr-defined]


@pytest.fixture
def rankwise_cli(monkeypatch: pytest.MonkeyPatch):
    """``rankwise_cli(argv) -> exit status``: a command line through the console entry point
    (``rankwise.cli.entry.main``, the door every command goes through), in this process."""
    import sys

    from rankwise.cli import entry, quick

    def exit_now(code: int) -> None:
        raise SystemExit(code)

    monkeypatch.setattr(quick, "exit_now", exit_now)

    def run(argv: list[str]) -> int:
        monkeypatch.setattr(sys, "argv", ["rankwise", *argv])
        try:
            entry.main()
        except SystemExit as done:
            return int(done.code or 0)
        return 0

    return run
