"""Shared fixtures: paths to the bundled test data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests assert values, never speed (speed is shown by benchmarks/): no example may fail
# for having taken longer than Hypothesis's default 200 ms on a loaded machine.
settings.register_profile("rankwise", deadline=None)
settings.load_profile("rankwise")

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


CLUSTERS = {"spark": "spark", "dask_client": "dask"}
"""The fixtures that start a cluster in a worker process (a Spark JVM, a Dask LocalCluster of two
processes), and the name of each cluster."""


def cluster_of(item: pytest.Item) -> str | None:
    """The cluster a test starts or shares: through a fixture of ``CLUSTERS``, an ``engine``
    parameter naming one (the test asks for the cluster itself) or the ``cluster`` mark."""
    used = set(getattr(item, "fixturenames", ()))
    params = getattr(getattr(item, "callspec", None), "params", {})
    for fixture, cluster in CLUSTERS.items():
        if fixture in used or params.get("engine") == cluster:
            return cluster
    marks = [mark.args[0] for mark in item.iter_markers("cluster")]
    return marks[0] if marks else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The cluster tests first, Spark's then Dask's, each in collection order; then the rest.

    xdist's schedule (``--dist worksteal``, pyproject.toml) gives the first half of the tests to
    the first worker and lets an idle worker take half of what another has left, from its end:
    so the cluster tests all run on the first worker, at the start (one JVM and one
    LocalCluster per run, not one per worker at the same time), and no worker is left alone with
    them at the end.
    (``--dist loadgroup`` would say this with marks, but its group names are lost under pytest
    9.2, which keeps a test's id elsewhere.)"""
    order = {cluster: rank for rank, cluster in enumerate(CLUSTERS.values())}
    items.sort(key=lambda item: order.get(cluster_of(item) or "", len(order)))


MYPY_TEST = "tests/test_types.py::test_src_passes_mypy"
"""mypy over src/ takes about a minute: it starts once per test run, in the process that starts
the run (the xdist controller, or the one process), when the run may include this test, and
writes its report to a folder the workers find through ``MYPY_DIR``; the test waits for it."""

MYPY_DIR = "RANKWISE_MYPY_DIR"
MYPY_ELSEWHERE = "RANKWISE_MYPY_ELSEWHERE"
"""Set by CI, which runs mypy on its own line (``.ci/run``): the test run leaves it out."""
MYPY: dict[str, object] = {}


def start_mypy(folder: str) -> object:
    """mypy over src/ in the background: its report in ``folder/report``, its exit status in
    ``folder/status`` once it ends."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    script = (f"import subprocess, sys; out = open({str(Path(folder) / 'report')!r}, 'w'); "
              f"code = subprocess.call([sys.executable, '-m', 'mypy', '--config-file', "
              f"{str(root / 'pyproject.toml')!r}, '--cache-dir', {str(Path(folder) / 'cache')!r}], "
              f"cwd={str(root)!r}, stdout=out, stderr=out); "
              f"out.close(); open({str(Path(folder) / 'status.part')!r}, 'w').write(str(code)); "
              f"import os; os.replace({str(Path(folder) / 'status.part')!r}, {str(Path(folder) / 'status')!r})")
    return subprocess.Popen([sys.executable, "-c", script])


def _may_run_mypy(config: pytest.Config) -> bool:
    given = [str(a) for a in config.args]
    return not given or any("test_types" in a or Path(a).resolve() == Path(__file__).resolve().parent or
                            Path(a).name in ("tests", ".") for a in given)


def pytest_configure(config: pytest.Config) -> None:
    import os
    import tempfile

    if hasattr(config, "workerinput") or os.environ.get(MYPY_DIR) or os.environ.get(MYPY_ELSEWHERE) \
            or not _may_run_mypy(config):
        return   # a worker (its controller started mypy), or a run without the test
    folder = tempfile.mkdtemp(prefix="rankwise-mypy-")
    os.environ[MYPY_DIR] = folder   # the workers, spawned after this, inherit it
    MYPY["process"] = start_mypy(folder)
    MYPY["folder"] = folder


def pytest_unconfigure(config: pytest.Config) -> None:
    import os
    import shutil

    process = MYPY.pop("process", None)
    if process is not None and process.poll() is None:   # type: ignore[attr-defined]
        process.kill()   # type: ignore[attr-defined]
    folder = MYPY.pop("folder", None)
    if folder is not None:
        os.environ.pop(MYPY_DIR, None)
        shutil.rmtree(str(folder), ignore_errors=True)


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


RANX_RECORDINGS = DATA / "ranx"
RANX_RECORD = "RANKWISE_RANX_RECORD"


class RanxReference:
    """ranx's output for a differential test, live or as recorded from ranx.

    ranx compiles every function with numba on its first call: about 200 CPU seconds in a
    fresh environment, 54 s for its first Bayesfuse alone. So each ranx comparison runs twice:
    by default against ranx's output recorded in ``tests/data/ranx/<test>.json`` (no ranx
    import), and with the slow tests against ranx itself, which must also equal the recording
    exactly. ``RANKWISE_RANX_RECORD=1 python -m pytest -m slow -n 0 -k ranx`` rewrites the
    recordings from the installed ranx.
    """

    def __init__(self, live: bool, test: str) -> None:
        self.live, self.path = live, RANX_RECORDINGS / f"{test}.json"

    def __call__(self, key: str, compute):
        """The JSON value ``compute(ranx)`` returns (nested dicts and lists of floats)."""
        import json

        recorded = json.loads(self.path.read_text()) if self.path.exists() else {}
        if not self.live:
            assert key in recorded, (f"no recorded ranx output for {key!r} in {self.path.name}: "
                                     f"run {RANX_RECORD}=1 python -m pytest -m slow -n 0 -k ranx")
            return recorded[key]
        ranx = pytest.importorskip("ranx")
        value = json.loads(json.dumps(compute(ranx), default=float))  # what the recording holds
        if os.environ.get(RANX_RECORD) == "1":
            recorded[key] = value
            RANX_RECORDINGS.mkdir(exist_ok=True)
            self.path.write_text(json.dumps(recorded, indent=0, sort_keys=True) + "\n")
        else:
            assert recorded.get(key) == value, f"ranx's output for {key!r} differs from {self.path.name}"
        return value


@pytest.fixture(params=["recorded", pytest.param("ranx", marks=pytest.mark.slow)])
def ranx_reference(request: pytest.FixtureRequest) -> RanxReference:
    """ranx's output recorded (default run) or live (the slow run); see :class:`RanxReference`."""
    return RanxReference(request.param == "ranx", request.function.__name__)
