"""The embedded default backend: a Tantivy index built from JSONL/CSV documents, searched with
Elasticsearch query DSL translated by ``rankwise.rankeval.dsl`` (BM25, k1 = 1.2, b = 0.75)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rankwise._version import __version__
from rankwise.errors import RankwiseError
from rankwise.rankeval.backends import BackendError, Hit
from rankwise.rankeval.corpus import read_documents
from rankwise.rankeval.dsl import Target, translate

META = "rankwise-index.json"
IDS = "rankwise-ids.txt"
"""Document ids in corpus order; a u64 fast field holds each document's position, so hits map to
ids without fetching stored documents."""
ORD = "_rankwise_ord"
ANALYZERS = ("default", "en_stem")
"""``default``: Tantivy's default (split on non-alphanumerics, drop tokens over 40 bytes,
lowercase); ``en_stem``: the same plus the English Snowball stemmer."""


def _analyzer(name: str) -> Any:
    import tantivy

    builder = (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
               .filter(tantivy.Filter.remove_long(40)).filter(tantivy.Filter.lowercase()))
    if name == "en_stem":
        builder = builder.filter(tantivy.Filter.stemmer("english"))
    return builder.build()


def build_index(corpus: str | Path, out: str | Path, id_field: str, fields: list[str],
                analyzer: str = "default", overwrite: bool = False) -> dict[str, Any]:
    """Index the documents of ``corpus`` (JSONL or CSV/TSV) into the directory ``out``.

    Returns the index's description (also written to ``out/rankwise-index.json``): fields,
    analyzer, number of documents and how many had an empty or missing field.

    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); corpus = os.path.join(d, "docs.jsonl")
    >>> with open(corpus, "w") as f:
    ...     _ = f.write('{"id": "1", "title": "heat flow"}\\n{"id": "2", "title": "wing flutter"}\\n')
    >>> build_index(corpus, os.path.join(d, "index"), "id", ["title"])["documents"]
    2
    """
    if analyzer not in ANALYZERS:
        raise RankwiseError(f"analyzer {analyzer!r}: expected one of {', '.join(ANALYZERS)}")
    if not fields:
        raise RankwiseError("give at least one text field to index (--fields title,body)")
    if id_field in fields:
        raise RankwiseError(f"the id field {id_field!r} cannot also be a text field")
    out = Path(out)
    from rankwise.data.atomic import atomic_directory

    if out.is_dir() and any(out.iterdir()) and (out / META).is_file() and not overwrite:
        raise RankwiseError(f"{out} exists and is not empty; pass overwrite=True (--overwrite) to replace it")
    with atomic_directory(out, META, "rankwise index") as building:   # whole or not at all
        return _build(corpus, building, id_field, fields, analyzer)


def _build(corpus: str | Path, out: Path, id_field: str, fields: list[str], analyzer: str) -> dict[str, Any]:
    """Build the index in the (new, empty) directory ``out``."""
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_text_field(id_field, stored=True, tokenizer_name="raw")
    builder.add_unsigned_field(ORD, fast=True)
    for name in fields:
        builder.add_text_field(name, stored=False, tokenizer_name="rankwise")
    schema = builder.build()
    index = tantivy.Index(schema, path=str(out))
    index.register_tokenizer("rankwise", _analyzer(analyzer))
    writer = index.writer(heap_size=256_000_000, num_threads=1)  # one segment, in file order: reproducible ties
    try:
        empty, ids = _add_documents(tantivy, writer, corpus, id_field, fields)
    except BaseException:
        writer.rollback()   # its threads write no more into the directory about to be removed
        writer.wait_merging_threads()
        raise
    writer.commit()
    writer.wait_merging_threads()
    count = len(ids)
    meta = {"id_field": id_field, "fields": fields, "analyzer": analyzer, "documents": count,
            "empty_fields": {k: v for k, v in empty.items() if v}, "corpus": Path(corpus).name,
            "rankwise": __version__}
    (out / IDS).write_text("".join(i + "\n" for i in ids), encoding="utf-8")
    (out / META).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return meta


def _add_documents(tantivy: Any, writer: Any, corpus: str | Path, id_field: str, fields: list[str]
                   ) -> tuple[dict[str, int], list[str]]:
    """Add each document of ``corpus`` to ``writer``; the documents with an empty or missing
    field, by field, and the ids in file order."""
    empty = dict.fromkeys(fields, 0)
    ids: list[str] = []
    for _, doc_id, texts in read_documents(corpus, id_field, fields):
        if "\n" in doc_id:
            raise RankwiseError(f"document id {doc_id!r} contains a line break")
        document = tantivy.Document()
        document.add_text(id_field, doc_id)
        document.add_unsigned(ORD, len(ids))
        ids.append(doc_id)
        for name, text in texts.items():
            if not text:
                empty[name] += 1
            document.add_text(name, text or "")
        writer.add_document(document)
    return empty, ids


_META_KEYS: dict[str, type] = {
    "id_field": str, "fields": list, "analyzer": str, "documents": int, "empty_fields": dict, "corpus": str,
    "rankwise": str,
}
"""The keys of ``META`` and the type of each value (``build_index`` writes every one)."""


def read_index_meta(path: str | Path) -> dict[str, Any]:
    """The metadata ``build_index`` wrote (``META``), checked as a saved artefact: valid JSON
    with each key once, every key of ``_META_KEYS`` and no other, each value of its type
    (``fields`` a non-empty list of names, ``documents`` a count, ``analyzer`` one of
    ``ANALYZERS``); anything else is an error naming the file and the key.

    >>> import tempfile, json, os
    >>> path = os.path.join(tempfile.mkdtemp(), META)
    >>> _ = open(path, "w").write(json.dumps({"id_field": "id", "fields": "title", "analyzer": "default",
    ...     "documents": 2, "empty_fields": {}, "corpus": "c.jsonl", "rankwise": "0.1.0"}))
    >>> read_index_meta(path)
    Traceback (most recent call last):
    ...
    rankwise.errors.InputError: ...: field 'fields': expected a non-empty list of field names, got 'title'; ...
    """
    from rankwise.data.documents import read_document
    from rankwise.errors import InputError

    source = str(path)
    meta = read_document(path)
    if not isinstance(meta, dict):
        raise InputError(f"expected a JSON object, got {type(meta).__name__}; rebuild the index", source=source)
    unknown = sorted(set(meta) - set(_META_KEYS))
    missing = [k for k in _META_KEYS if k not in meta]
    said = ([f"unknown key(s) {', '.join(map(repr, unknown))}"] if unknown else []) + \
        ([f"missing key(s) {', '.join(map(repr, missing))}"] if missing else [])
    if said:
        raise InputError(f"{'; '.join(said)}; expected {', '.join(_META_KEYS)}; rebuild the index", source=source)
    for key, kind in _META_KEYS.items():
        value = meta[key]
        bad = not isinstance(value, kind) or isinstance(value, bool)
        if key == "fields":
            bad = bad or not value or not all(isinstance(f, str) and f for f in value)
            what = "a non-empty list of field names"
        elif key == "documents":
            bad = bad or value < 0
            what = "a count of documents"
        elif key == "analyzer":
            bad = bad or value not in ANALYZERS
            what = f"one of {', '.join(ANALYZERS)}"
        else:
            what = f"a {kind.__name__}"
        if bad:
            raise InputError(f"expected {what}, got {value!r}; rebuild the index", source=source, field=key)
    return meta


class TantivyBackend:
    """Search a directory built by ``build_index`` with Elasticsearch query DSL.

    Hits come back in Tantivy's order (score descending); ``name`` is reported as each hit's
    ``_index`` (the directory's name unless given).
    """

    def __init__(self, path: str | Path, name: str | None = None) -> None:
        import tantivy

        path = Path(path)
        meta_path = path / META
        if not meta_path.exists():
            raise RankwiseError(f"{path}: not a rankwise index (no {META}); build one with `rankwise index build`")
        self.meta = read_index_meta(meta_path)
        self.name = name or path.name
        try:
            self.index = tantivy.Index.open(str(path))
        except ValueError as error:   # the index files themselves damaged or missing
            raise RankwiseError(f"{path}: cannot open the index ({error}); rebuild it") from None
        self.index.register_tokenizer("rankwise", _analyzer(self.meta["analyzer"]))
        self.searcher = self.index.searcher()
        if not (path / IDS).exists():
            raise RankwiseError(f"{path}: no {IDS} (built by an older rankwise); rebuild the index")
        self.ids = (path / IDS).read_text(encoding="utf-8").splitlines()
        if len(self.ids) != self.meta["documents"]:
            raise RankwiseError(f"{path}: {IDS} lists {len(self.ids)} ids for {self.meta['documents']} documents; "
                                "rebuild the index")
        analyzer = _analyzer(self.meta["analyzer"])
        self.target = Target(tuple(self.meta["fields"]), self.meta["id_field"], analyzer.analyze,
                             self.index.schema, self.index.parse_query)

    def search(self, request: dict[str, Any], size: int) -> list[Hit]:
        query = translate(request, self.target)
        try:
            result = self.searcher.search(query, limit=size, count=False)
        except ValueError as err:
            raise BackendError(f"tantivy: {err}") from None
        if not result.hits:
            return []
        order = self.searcher.fast_field_values(ORD, [address for _, address in result.hits])
        return [Hit(self.name, self.ids[int(o or 0)], float(score))
                for (score, _), o in zip(result.hits, order, strict=True)]
