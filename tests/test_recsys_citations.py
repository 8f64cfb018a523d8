"""Definitions true to their citations: where a recommender metric cites a peer, a named option
reproduces that peer. The peers' formulas are written out here independently, as their sources
define them (Elliot 0.3: EPC, ARP, APLT; TREC Fair Ranking 2021-22's evaluation: AWRF), and
compared with rankwise on seeded data; the defaults stay the papers' (stated in docs/recsys.md)."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from rankwise.recsys import beyond_accuracy


@pytest.fixture(scope="module")
def seeded() -> dict:
    rng = np.random.default_rng(2026)
    items = [f"i{j}" for j in range(30)]
    popular = rng.dirichlet(np.full(30, 0.3))
    train = [(f"u{u}", items[j]) for u in range(40) for j in set(rng.choice(30, 8, p=popular).tolist())]
    train += [("u0", train[0][1])] * 3 + [("u5", "i3")] * 2   # repeated interactions: users differ from counts
    test = [(f"u{u}", items[j]) for u in range(40) for j in rng.choice(30, 3, replace=False).tolist()]
    lists = {f"u{u}": [items[j] for j in rng.choice(30, 10, replace=False)] for u in range(40)}
    lists["u1"] = ["i29", "i28", "x_never_trained"] + lists["u1"][:7]
    return {"train": train, "test": test, "lists": lists}


def _frame(pairs):
    return pd.DataFrame(pairs, columns=["user", "item"])


def _elliot_epc(train, test, lists, k):
    users = {u for u, _ in train}
    count = Counter(i for u, i in set(train))
    novelty = {i: 1 - c / len(users) for i, c in count.items()}
    relevant = {}
    for u, i in test:
        relevant.setdefault(u, set()).add(i)
    values = []
    for u, ranked in lists.items():
        if not relevant.get(u):
            continue
        nov = norm = 0.0
        for r, i in enumerate(ranked[:k]):
            disc = 1 / math.log2(r + 2)
            nov += (i in relevant[u]) * disc * novelty.get(i, 1)
            norm += disc
        values.append(nov / norm)
    return float(np.mean(values))


def _elliot_popularity(train):
    return Counter(i for u, i in set(train))   # distinct users per item (Elliot's sparse matrix as bools)


def _elliot_arp(train, lists, k):
    pop = _elliot_popularity(train)
    return float(np.mean([sum(pop.get(i, 0) for i in ranked[:k]) / len(ranked[:k]) for ranked in lists.values()]))


def _elliot_aplt(train, lists, k, ratio=0.8):
    pop = _elliot_popularity(train)
    transactions = len(set(train))
    ordered = sorted(pop, key=lambda i: (-pop[i], i))   # rankwise orders ties by item code, Elliot by its index
    head, limit = [], transactions * ratio
    for i in ordered:
        head.append(i)
        limit -= pop[i]
        if limit <= 0:
            break
    tail = set(ordered) - set(head)
    return float(np.mean([len(set(ranked[:k]) & tail) / len(ranked[:k]) for ranked in lists.values()]))


def test_epc_arp_aplt_as_elliot_defines_them(seeded) -> None:
    train, test, lists = seeded["train"], seeded["test"], seeded["lists"]
    train_once = sorted(set(train))   # Elliot's training matrix holds each (user, item) once
    out = beyond_accuracy(lists, ["epc(convention=elliot)@10", "arp(popularity=users)@10",
                                  "aplt(popularity=users,head_share=0.8)@10", "epc@10", "arp@10"],
                          train=_frame(train), test=_frame(test))
    values = dict(zip(out.table["metric"], out.table["value"], strict=True))
    assert values["epc(convention=elliot)@10"] == pytest.approx(_elliot_epc(train_once, test, lists, 10), abs=1e-12)
    assert values["arp(popularity=users)@10"] == pytest.approx(_elliot_arp(train_once, lists, 10), abs=1e-12)
    assert values["aplt(popularity=users,head_share=0.8)@10"] == pytest.approx(
        _elliot_aplt(train_once, lists, 10), abs=1e-12)
    # the defaults are the papers': EPC without relevance, ARP by interactions (repeats count)
    assert values["epc@10"] != pytest.approx(values["epc(convention=elliot)@10"])
    interactions = Counter(i for _, i in train)
    arp = np.mean([np.mean([interactions.get(i, 0) for i in ranked[:10]]) for ranked in lists.values()])
    assert values["arp@10"] == pytest.approx(arp, abs=1e-12)


def test_awrf_as_trec_fair_ranking_evaluates_it() -> None:
    from scipy.spatial.distance import jensenshannon

    rng = np.random.default_rng(7)
    items = [f"d{j}" for j in range(20)]
    groups = {i: ("A" if j < 6 else "B" if j < 14 else "C") for j, i in enumerate(items)}
    lists = {f"q{u}": [items[j] for j in rng.choice(20, 10, replace=False)] for u in range(12)}
    out = beyond_accuracy(lists, ["awrf(convention=trec_fair,target=equal)@10"], catalogue=items, groups=groups)
    expected = []
    for ranked in lists.values():   # TREC Fair 2021-22: disc = 1/log2(max(r, 2)); 1 - JS distance^2 (nats)
        disc = 1 / np.log2(np.maximum(np.arange(1, len(ranked) + 1), 2))
        align = np.array([[groups[d] == g for g in "ABC"] for d in ranked], dtype=float)
        dist = (align * disc[:, None]).sum(axis=0) / disc.sum()
        expected.append(1 - jensenshannon(dist, np.full(3, 1 / 3)) ** 2)
    assert out.table["value"].iloc[0] == pytest.approx(float(np.mean(expected)), abs=1e-12)
    default = beyond_accuracy(lists, ["awrf(target=equal)@10"], catalogue=items, groups=groups)
    assert default.table["value"].iloc[0] != pytest.approx(out.table["value"].iloc[0])   # bits, geometric
