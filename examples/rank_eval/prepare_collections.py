"""Turn the Cranfield and NPL (Vaswani) test collections into what `rankwise rank-eval` reads:
a JSONL corpus, TREC qrels and a spec with two systems (query templates).

    python examples/rank_eval/prepare_collections.py cranfield DATA/cranfield OUT/
    python examples/rank_eval/prepare_collections.py npl DATA/vaswani_npl OUT/

Cranfield quirks handled (see the collection's notes): fields may repeat (text is appended), the
qrels' query column is the query's position in cran.qry (not its .I number), label -1 marks the
query's source paper (dropped), and labels run 1 (complete answer) to 4 (minimum interest), so
the rating is 5 - label (4 = best). NPL: queries are upper case (the analyzer lowercases).
NPL's two systems run the same query on two indexes, plain and English-stemmed
(`--system-index stemmed=DIR`).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path


def cranfield_documents(path: Path) -> list[dict[str, str]]:
    docs: list[dict[str, str]] = []
    current: dict[str, str] | None = None
    field = None
    names = {".T": "title", ".A": "authors", ".B": "source", ".W": "body"}
    for line in path.read_text(encoding="ascii").splitlines():
        if line.startswith(".I "):
            current = {"id": line[3:].strip(), "title": "", "authors": "", "source": "", "body": ""}
            docs.append(current)
            field = None
        elif line.strip() in names:
            field = names[line.strip()]
        elif current is not None and field is not None:
            current[field] = (current[field] + " " + line.strip()).strip()
    return docs


def cranfield_queries(path: Path) -> list[str]:
    """Query texts in file order (position 1..225 is the id the qrels use)."""
    text = path.read_text(encoding="ascii").replace("\r\n", "\n")
    return [" ".join(block.split(".W", 1)[1].split()) for block in text.split(".I ")[1:]]


def cranfield_qrels(path: Path) -> list[tuple[str, str, int]]:
    out = []
    for line in path.read_text(encoding="ascii").splitlines():
        if line.strip():
            q, d, label = line.split()
            if int(label) > 0:  # -1 is the question's source paper, not a judgment
                out.append((q, d, 5 - int(label)))
    return out


def npl_documents(path: Path) -> list[dict[str, str]]:
    text = path.read_text(encoding="ascii")
    return [{"id": m.group(1), "body": " ".join(m.group(2).split())}
            for m in re.finditer(r"<DOC>\s*<DOCNO>(\d+)</DOCNO>(.*?)</DOC>", text, re.S)]


def npl_queries(path: Path) -> list[tuple[str, str]]:
    text = path.read_text(encoding="ascii")
    return [(m.group(1), " ".join(m.group(2).split()))
            for m in re.finditer(r"<num>(\d+)</num><title>(.*?)</title>", text, re.S)]


def npl_qrels(path: Path) -> list[tuple[str, str, int]]:
    return [(q, d, int(label)) for q, _, d, label in (line.split() for line in path.read_text().splitlines() if line)]


def spec(queries: list[tuple[str, str]], qrels: list[tuple[str, str, int]], index: str,
         systems: dict[str, dict], metrics: list) -> dict:
    by_query: dict[str, list[dict]] = {}
    for q, d, rating in qrels:
        by_query.setdefault(q, []).append({"_index": index, "_id": d, "rating": rating})
    return {
        "requests": [{"id": q, "template_id": "search", "params": {"query": text}, "ratings": by_query.get(q, [])}
                     for q, text in queries],
        "metric": {"dcg": {"k": 10, "normalize": True}},
        "metrics": metrics,
        "templates": [{"id": "search", "template": {"source": next(iter(systems.values()))}}],
        "systems": {name: {"templates": [{"id": "search", "template": {"source": body}}]}
                    for name, body in systems.items()},
        "max_concurrent_searches": 8,
    }


def prepare(kind: str, data: Path, out: Path) -> dict[str, Path]:
    """Write corpus.jsonl, qrels.txt and spec.json for one collection; returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    if kind == "cranfield":
        docs = cranfield_documents(data / "cran.all.1400")
        queries = [(str(i), text) for i, text in enumerate(cranfield_queries(data / "cran.qry"), start=1)]
        qrels = cranfield_qrels(data / "cranqrel")
        systems = {
            "title": {"query": {"match": {"title": "{{query}}"}}},
            "title_body": {"query": {"multi_match": {"query": "{{query}}", "fields": ["title^2", "body"],
                                                     "type": "most_fields"}}},
        }
        metrics = ["ndcg@10", "P@10", "mrr", {"expected_reciprocal_rank": {"k": 10, "maximum_relevance": 4}}, "map"]
    elif kind == "npl":
        docs = npl_documents(data / "corpus" / "doc-text.trec")
        queries = npl_queries(data / "query-text.trec")
        qrels = npl_qrels(data / "qrels")
        systems = {
            "plain": {"query": {"match": {"body": "{{query}}"}}},
            "stemmed": {"query": {"match": {"body": "{{query}}"}}},  # run against an index built with en_stem
        }
        metrics = ["ndcg@10", "P@10", "mrr", {"expected_reciprocal_rank": {"k": 10, "maximum_relevance": 1}}, "map"]
    else:
        raise SystemExit(f"unknown collection {kind!r}; expected cranfield or npl")
    paths = {"corpus": out / "corpus.jsonl", "qrels": out / "qrels.txt", "spec": out / "spec.json"}
    with paths["corpus"].open("w", encoding="utf-8") as f:
        for doc in docs:
            f.write(json.dumps(doc) + "\n")
    paths["qrels"].write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in qrels), encoding="utf-8")
    paths["spec"].write_text(json.dumps(spec(queries, qrels, kind, systems, metrics), indent=1) + "\n",
                             encoding="utf-8")
    return paths


if __name__ == "__main__":
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    for name, p in prepare(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])).items():
        print(f"{name}: {p}")
