"""Checks polyc explain --format=json output against facts stated independently for each example."""
import json
import sys


def common(doc):
    for key in ("file", "params", "paramValues", "context", "statements", "dependences", "schedule",
                "allocation", "legality"):
        assert key in doc, f"missing top-level key {key}"
    assert doc["legality"]["verified"] is True
    for s in doc["statements"]:
        for key in ("name", "array", "equation", "line", "dims", "repeatDims", "domain", "write", "reads",
                    "reductions", "update", "watched", "scatter"):
            assert key in s, f"statement lacks {key}"
    for d in doc["dependences"]:
        assert d["kind"] in ("flow", "anti", "output")
        assert d["class"] in ("uniform", "affine", "non-uniform")
        assert d["distanceVectors"] is None or all(len(v) == d["sharedDims"] for v in d["distanceVectors"])
    names = {s["name"] for s in doc["statements"]}
    for b in doc["schedule"]["bands"]:
        assert len(b["dims"]) == len(b["coincident"])
        assert set(b["statements"]) <= names
    assert len(doc["allocation"]) == len(doc["schedule"]["bands"])
    kinds = {"sequential", "data-parallel", "reduction", "fixed-wavefront", "flexible-wavefront"}
    for a in doc["allocation"]:
        assert a["kind"] in kinds and a["reason"]


def iir(doc):
    assert doc["params"] == ["H", "W", "M"] and doc["paramValues"] == {"M": 3}
    # The FIR sum is hoisted out of the recurrence (HoistInputTerms): S1 writes y_in, S0 reads it.
    assert [(s["name"], s["array"]) for s in doc["statements"]] == [("S0", "y"), ("S1", "y_in")]
    dep, hoisted = doc["dependences"]
    assert (dep["kind"], dep["source"], dep["target"], dep["array"], dep["class"]) == \
        ("flow", "S0", "S0", "y", "uniform")
    window = sorted([k1, k2] for k1 in range(3) for k2 in range(3) if (k1, k2) != (0, 0))
    assert dep["distanceVectors"] == window, dep["distanceVectors"]
    assert (hoisted["kind"], hoisted["source"], hoisted["target"], hoisted["array"]) == ("flow", "S1", "S0", "y_in")
    assert hoisted["distanceVectors"] == [[0, 0]], hoisted["distanceVectors"]
    first, band = doc["schedule"]["bands"]
    assert first["statements"] == ["S1"] and first["coincident"] == [True, True]
    assert band["statements"] == ["S0"]
    assert band["hyperplane"] == [1, 1] and band["hyperplaneCount"] == "H + W - 1"
    assert band["coincident"] == [False, True]
    parallel, alloc = doc["allocation"]
    assert parallel["band"] == 0 and parallel["kind"] == "data-parallel"
    assert alloc["band"] == 1
    assert alloc["kind"] == "flexible-wavefront" and "runtimeCondition" not in alloc
    assert alloc["wavefront"]["column"] == "i" and alloc["wavefront"]["row"] == "j"
    assert alloc["wavefront"]["window"] == "3"


def iir_free(doc):
    dep = doc["dependences"][0]
    assert (dep["source"], dep["target"]) == ("S0", "S0")
    assert dep["distanceVectors"] is None  # M is free: the window is not a finite set
    alloc = doc["allocation"][1]
    assert alloc["kind"] == "flexible-wavefront" and alloc["otherwise"] == "fixed-wavefront"
    assert alloc["runtimeCondition"] == "M > 1"


def ratenet(doc):
    s1 = doc["statements"][1]
    may = [r for r in s1["reads"] if r["may"]]
    assert [r["array"] for r in may] == ["r"], may
    assert any(r["array"] == "pre" and not r["may"] for r in s1["reads"])
    assert doc["schedule"]["folded"] == [{"array": "r", "dim": 0, "window": "2", "windowValue": 2}]
    reductions = [a for a in doc["allocation"] if a["kind"] == "reduction"]
    # 100 terms per output, each neuron reading a row of its own (w[j, c]): 128 threads per output at
    # compile time, for any number of outputs (no run-time condition on N)
    assert len(reductions) == 1 and reductions[0]["reductionGroupSize"] == 128, reductions[0]
    assert "runtimeCondition" not in reductions[0], reductions[0]
    assert reductions[0]["reductionLength"] == "100"


def lkflow(doc):
    groups = [g["statements"] for g in doc["schedule"]["fusionGroups"]]
    arrays = {s["name"]: s["array"] for s in doc["statements"]}
    convolutions = [[arrays[n] for n in g] for g in groups]
    sums = ["Sxx", "Syy", "Sxy", "Sxt", "Syt"]
    # The window sums and the spatial sums that FactorSums and PointTerms make are one loop nest each.
    assert sums in convolutions, convolutions
    assert [s + "_pt" for s in sums] in convolutions, convolutions
    packages = [[arrays[n] for n in p] for p in doc["schedule"]["packages"]]
    assert packages == [[s + "_pt" for s in sums], sums], packages
    rewrites = {s["array"]: s["rewrites"] for s in doc["statements"]}
    assert rewrites["Sxx"] == ["sum factored: a, then b, then c",
                               "term computed once per point: Sxx_pt[t - a, y, x]"], rewrites["Sxx"]
    assert rewrites["Ix"] == [], rewrites["Ix"]
    folded = {(f["array"], f["dim"]): f["windowValue"] for f in doc["schedule"]["folded"]}
    for derivative in ("Ix", "Iy", "It"):
        assert folded[(derivative, 0)] == 1, folded
    for spatial in sums:
        assert folded[(spatial + "_pt", 0)] == 20, folded


checks = {"iir": iir, "iir-free": iir_free, "ratenet": ratenet, "lkflow": lkflow}
with open(sys.argv[2]) as f:
    document = json.load(f)
common(document)
checks[sys.argv[1]](document)
print("ok")
