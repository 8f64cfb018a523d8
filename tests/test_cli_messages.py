"""One vocabulary, output that reads anywhere, inputs people have, papercuts: the experience issue."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import rankwise
from rankwise import streaming as rs
from rankwise.cli.main import app
from rankwise.errors import (
    BackendError,
    InputError,
    MetricInputError,
    Notice,
    OptionError,
    RankwiseDeprecationWarning,
    RankwiseError,
    SpecError,
    TemplateError,
    UnsupportedQuery,
)

DATA = Path(__file__).parent / "data"
QRELS, RUN = str(DATA / "qrels.test"), str(DATA / "results.test")
runner = CliRunner()


def test_plain_table_off_a_terminal_keeps_every_digit_and_name(tmp_path: Path) -> None:
    long_name = "SPLADE_PP_ENSEMBLE_DISTIL_A_VERY_LONG_RUN_NAME"
    out = runner.invoke(app, ["evaluate", QRELS, f"{long_name}={RUN}", "-m", "map", "-m", "P@10", "--digits", "6"])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    # trec_eval's own output for this run: map 0.1785, P_10 0.3000 (4 decimals); 6 decimals here
    assert lines[1].split() == ["run", "map", "P@10"]
    assert lines[3].split()[0] == long_name and lines[3].split()[2] == "0.300000"
    assert lines[3].split()[1].startswith("0.1785")
    assert "…" not in out.output


def test_compare_prints_bca_in_every_format() -> None:
    args = ["compare", QRELS, f"a={RUN}", f"b={DATA / 'results.trunc'}", "-m", "map", "--bootstrap-ci", "BCa",
            "--resamples", "200"]
    for fmt, needle in (("text", "95% CI (BCa)"), ("markdown", "95% CI (BCa)"), ("latex", "95\\% CI (BCa)"),
                        ("html", "95% CI (BCa)"), ("json", '"boot_low"'), ("csv", "boot_low")):
        out = runner.invoke(app, [*args, "-f", fmt])
        assert out.exit_code == 0, (fmt, out.output)
        assert needle in out.output, fmt
    text = runner.invoke(app, [*args, "-f", "text"]).output
    assert "d  W/T/L" in text and "p (holm)" in text  # effect size and corrected p are printed too


def test_report_and_plot_take_every_convention(tmp_path: Path) -> None:
    page = tmp_path / "r.html"
    out = runner.invoke(app, ["report", QRELS, RUN, str(DATA / "results.trunc"), "-o", str(page), "-m", "map",
                              "-l", "2", "--seed", "3", "--resamples", "100", "--bootstrap-ci", "percentile",
                              "-c"])
    assert out.exit_code == 0, out.output
    html = page.read_text()
    assert "rel=2" in html and "missing=zero" in html  # the signatures carry the conventions given
    assert "bootstrap_ci=None" not in html and "{'" not in html  # no Python reprs in the header
    png = tmp_path / "c.png"
    out = runner.invoke(app, ["plot", "curve", QRELS, RUN, "-o", str(png), "-m", "ndcg", "-k", "20", "-l", "2"])
    assert out.exit_code == 0 and png.stat().st_size > 0, out.output


def test_rel_level_reaches_the_numbers() -> None:
    # the same metric at relevance 1 and 2 differ, through the shared -l option of every command
    one = json.loads(runner.invoke(app, ["evaluate", QRELS, RUN, "-m", "map", "-f", "json"]).output)
    two = json.loads(runner.invoke(app, ["evaluate", QRELS, RUN, "-m", "map", "-f", "json", "-l", "2"]).output)
    assert one["runs"]["STANDARD"]["summary"]["map"] == pytest.approx(0.1785, abs=5e-5)
    assert two["runs"]["STANDARD"]["summary"]["map"] != one["runs"]["STANDARD"]["summary"]["map"]
    assert "rel=2" in two["metrics"]["map"]["signature"]


def test_stdin_and_named_runs() -> None:
    data = Path(RUN).read_bytes()
    out = subprocess.run([sys.executable, "-m", "rankwise", "evaluate", QRELS, "mine=-", "-m", "P@10", "-f", "csv"],
                         input=data, capture_output=True, check=True)
    assert out.stdout.decode().splitlines()[1] == "mine,all,0.3"


def test_swapped_qrels_and_run_are_named() -> None:
    out = runner.invoke(app, ["evaluate", RUN, QRELS])
    assert out.exit_code == 2
    assert "layout of a run file" in out.output and "wrong order" in out.output


def test_ranx_pyterrier_and_long_frames() -> None:
    # ranx qrels: q_id, doc_id, score; PyTerrier run: qid, docno, score; one frame, two systems
    qrels = pd.DataFrame({"q_id": ["1", "1", "2"], "doc_id": ["a", "b", "c"], "score": [1, 0, 1]})
    run = pd.DataFrame({"qid": ["1", "1", "2", "1", "2"], "docno": ["a", "b", "c", "b", "x"],
                        "score": [2.0, 1.0, 1.0, 2.0, 1.0], "system": ["bm25", "bm25", "bm25", "dense", "dense"]})
    res = rankwise.evaluate(qrels, run, "P@1")
    # bm25: q1 top a (rel) = 1, q2 top c (rel) = 1; dense: q1 top b (0), q2 top x (unjudged, 0)
    assert res.summary["P@1"].to_dict() == {"bm25": 1.0, "dense": 0.0}


def test_version_module_and_dir() -> None:
    out = subprocess.run([sys.executable, "-m", "rankwise", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"rankwise {rankwise.__version__}"
    assert {"evaluate", "compare", "Run", "load_qrels"} <= set(dir(rankwise))


def test_console_builds_only_the_invoked_command() -> None:
    # the console entry point hands Typer only the command it runs; help, groups and
    # suggestions for a mistyped command still see every command
    def console(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "rankwise", *args], capture_output=True, text=True)

    assert "compare" in console("--help").stdout and "rank-eval" in console("--help").stdout
    assert "build" in console("index", "--help").stdout
    assert "--bootstrap-ci" in console("compare", "--help").stdout
    typo = console("evaluat", QRELS, RUN)
    assert typo.returncode == 2 and "evaluate" in typo.stderr
    out = console("evaluate", QRELS, RUN, "-m", "P@5", "-f", "csv")
    assert out.returncode == 0 and out.stdout.splitlines()[0] == "run,query,P@5"


def test_command_modules_name_the_module_of_every_command() -> None:
    # the console imports only COMMAND_MODULES[command]: the map must cover the whole
    # application, each command in the module that registers it
    from typer.main import get_command_name

    from rankwise.cli.entry import COMMAND_MODULES
    from rankwise.cli.main import app

    registered = {(c.name or get_command_name(c.callback.__name__)): c.callback.__module__
                  for c in app.registered_commands}
    registered |= {g.name: (g.typer_instance.registered_commands[0].callback.__module__)
                   for g in app.registered_groups}
    assert {name: f"rankwise.cli.{module}" for name, module in COMMAND_MODULES.items()} == registered
    lean = subprocess.run([sys.executable, "-c", "import sys; from rankwise.cli.entry import application_for; "
                           "application_for(['evaluate']); print(sorted(m for m in sys.modules if m.startswith("
                           "'rankwise.cli.')))"], capture_output=True, text=True, check=True)
    assert "rankwise.cli.commands" in lean.stdout and "rankwise.cli.ab" not in lean.stdout


def test_every_error_is_a_rankwise_error() -> None:
    for cls in (InputError, MetricInputError, SpecError, TemplateError, UnsupportedQuery, OptionError):
        assert issubclass(cls, RankwiseError) and issubclass(cls, ValueError), cls
    assert issubclass(BackendError, RankwiseError) and not issubclass(BackendError, ValueError)
    with pytest.raises(OptionError):
        rankwise.compare(QRELS, [RUN, str(DATA / "results.trunc")], "map", test="nope")


def test_warnings_are_structured() -> None:
    res = rankwise.evaluate(QRELS, {"a": RUN}, "map", missing="zero", depth=5)
    res2 = rankwise.evaluate({"1": {"a": 1}}, {"1": {"a": 1.0}, "zz": {"d": 1.0}}, "map")
    notices = [w for w in res.warnings + res2.warnings if isinstance(w, Notice)]
    assert notices and all(isinstance(w, str) for w in notices)
    unjudged = next(w for w in res2.warnings if w.kind == "unjudged_queries")
    assert unjudged.count == 1 and unjudged.run == "run"
    assert res2.to_dict()["notices"][0]["kind"] in ("unjudged_queries", "missing_queries")


def test_streaming_vocabulary_and_full_depth_defaults() -> None:
    batch = {"predictions": [[0.9, 0.5, 0.1], [0.2, 0.1, 0.3]], "targets": [[0, 1, 1], [0, 0, 1]]}
    # q1: first relevant at rank 2 -> 1/2; q2: at rank 1 -> 1; MRR over the whole list = 0.75
    assert rs.MRR().update(**batch).compute() == 0.75
    assert rankwise.evaluate({"1": {"b": 1, "c": 1}, "2": {"f": 1}},
                             {"1": {"a": 0.9, "b": 0.5, "c": 0.1}, "2": {"d": 0.2, "e": 0.1, "f": 0.3}},
                             "mrr").summary["mrr"].iloc[0] == 0.75
    assert isinstance(rs.NDCG(k=10).update(**batch).compute(), float)
    assert isinstance(rs.NDCG(k=[10]).update(**batch).compute(), dict)
    with pytest.warns(RankwiseDeprecationWarning, match="'ks' is deprecated; write 'k'"):
        old = rs.NDCG(ks=[5, 10])
    with pytest.warns(RankwiseDeprecationWarning, match="is deprecated; write 'predictions'"), \
            pytest.warns(RankwiseDeprecationWarning, match="is deprecated; write 'targets'"):
        old.update(scores=batch["predictions"], labels=batch["targets"])
    assert old.compute() == rs.NDCG(k=[5, 10]).update(**batch).compute()


def test_clax_keyword_and_torch_weights_only() -> None:
    torch = pytest.importorskip("torch")
    logp = np.log([[0.5, 0.25]])
    a = rs.ConditionalPerplexity(positions=2).update(cond_log_probs=logp, clicks=[[1, 0]])
    b = rs.ConditionalPerplexity(positions=2).update(conditional_log_probs=logp, clicks=[[1, 0]])
    assert a.compute() == b.compute()
    m = rs.NDCG(k=[5, 10]).update(predictions=[[0.3, 0.2, 0.1]], targets=[[0, 1, 2]])
    buf = io.BytesIO()
    torch.save(m.state_dict(), buf)
    buf.seek(0)
    restored = rs.NDCG(k=[5, 10]).load_state_dict(torch.load(buf, weights_only=True))
    assert restored.compute() == m.compute()


def test_nan_error_reads_as_text() -> None:
    with pytest.raises(InputError) as err:
        rankwise.evaluate({"q": {"a": 1}}, {"q": {"a": float("nan")}}, "map")
    assert "np.float64" not in str(err.value) and "NaN" in str(err.value)


def test_deprecated_keywords_still_work() -> None:
    from rankwise.report import plots

    with pytest.warns(RankwiseDeprecationWarning, match="'max_k' is deprecated; write 'k'"):
        fig = plots.metric_at_k(QRELS, RUN, "P", max_k=3)
    assert list(fig.axes[0].lines[0].get_xdata()) == [1, 2, 3]
    with pytest.warns(RankwiseDeprecationWarning, match="'empty' is deprecated; write 'missing'"):
        assert rs.MRR(empty="skip").params["missing"] == "skip"


def test_cli_messages_name_the_options_to_type(tmp_path: Path) -> None:
    run = tmp_path / "dup.trec"
    run.write_text("301 Q0 D7 1 2.0 r\n301 Q0 D7 2 1.0 r\n")
    out = runner.invoke(app, ["evaluate", QRELS, str(run), "-m", "map"])
    assert out.exit_code == 2
    # the library's message says duplicates='first' or 'best'; the command line says what to type
    assert "--duplicates first (or 'best')" in out.output and "duplicates='first'" not in out.output


def test_standard_input_twice_in_one_process() -> None:
    data = Path(RUN).read_text()
    for _ in range(2):  # the temporary copy of the first call must not block the second
        out = runner.invoke(app, ["evaluate", QRELS, "-", "-m", "P@10", "-f", "csv"], input=data)
        assert out.exit_code == 0, out.output
        assert out.output.splitlines()[1] == "STANDARD,all,0.3"


def test_help_never_loses_a_bracketed_word_to_markup() -> None:
    """Typer renders help as rich markup, where ``[ibis]`` is a tag and vanishes (``pip install
    'rankwise'`` without its extra): every help text of every command escapes such brackets, and
    the rendered help of ``ab`` shows the extras."""
    import importlib
    import re

    import typer.main
    from typer.testing import CliRunner

    from rankwise.cli.entry import COMMAND_MODULES

    for module in set(COMMAND_MODULES.values()):
        importlib.import_module(f"rankwise.cli.{module}")
    from rankwise.cli.app import app

    tag = re.compile(r"(?<!\\)\[[a-z#/@][^\[\]]*\]")
    found = []

    def walk(command, prefix):
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*prefix, name])
        for text in [command.help or "", *(getattr(p, "help", "") or "" for p in getattr(command, "params", []))]:
            found.extend(f"{' '.join(prefix)}: {m}" for m in tag.findall(text))

    walk(typer.main.get_command(app), [])
    assert not found, found
    shown = CliRunner().invoke(app, ["ab", "--help"], env={"COLUMNS": "200"}).output
    assert "pip install 'rankwise[duckdb]'" in shown and "pip install 'rankwise[ibis]'" in shown


@pytest.mark.parametrize("metric,option", [("ndcg@5", "--held-out FILE"), ("serendipity@5", "--train FILE"),
                                           ("novelty@5", "--train FILE"), ("ild(similarity=cosine)@5",
                                                                           "--features FILE"),
                                           ("calibration@5", "--groups FILE")])
def test_beyond_names_the_options_the_user_types(metric: str, option: str) -> None:
    from typer.testing import CliRunner

    from rankwise.cli.main import app

    reco = Path(__file__).resolve().parent / "data" / "recsys" / "reco.csv"
    done = CliRunner().invoke(app, ["beyond", str(reco), "-m", metric])
    assert done.exit_code == 2 and option in done.output, done.output
    assert not re.search(r"\b(test|train|features|groups|catalogue)=(?!\w)", done.output), done.output
    assert "field 'test'" not in done.output and "field 'train'" not in done.output
