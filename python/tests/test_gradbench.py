"""A GradBench evaluation through the Python package: the gmm program
(`gradbench/gmm.fut`) on every stored gmm input in `testdata/gradbench/gmm/`,
compared with the stored reference output under GradBench's rule (floats
within |x - y| / max(1, |x| + |y|) <= 1e-4, integers equal). A missing data
file fails the test."""

import json

import numpy as np
import pytest

import nabla

from conftest import REPO

DATA = REPO / "testdata" / "gradbench" / "gmm"
TOLERANCE = 1e-4
CASES = [
    f"{function}-{size}.json"
    for function in ("objective", "jacobian")
    for size in ("2_5_1000", "10_10_1000", "20_25_1000")
]


def assert_close(actual, expected, where="output"):
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and set(actual) == set(expected), where
        for k in expected:
            assert_close(actual[k], expected[k], f"{where}.{k}")
        return
    if isinstance(expected, list):
        actual = np.asarray(actual)
        exp = np.asarray(expected, dtype=np.float64)
        assert actual.shape == exp.shape, f"{where}: shape {actual.shape} != {exp.shape}"
        err = np.abs(actual - exp) / np.maximum(1.0, np.abs(actual) + np.abs(exp))
        assert np.all(err <= TOLERANCE), f"{where}: largest relative error {err.max()}"
        return
    assert abs(actual - expected) / max(1.0, abs(actual) + abs(expected)) <= TOLERANCE, where


@pytest.fixture(scope="module")
def gmm():
    return nabla.compile(REPO / "gradbench" / "gmm.fut")


@pytest.mark.parametrize("case", CASES)
def test_gmm_matches_the_reference(gmm, case):
    path = DATA / case
    assert path.is_file(), f"missing GradBench data file {path}"
    pair = json.loads(path.read_text())
    assert pair["eval"] == "gmm"
    inp = pair["input"]
    args = (
        np.array(inp["x"], dtype=np.float64),
        float(inp["gamma"]),
        int(inp["m"]),
        np.array(inp["alpha"], dtype=np.float64),
        np.array(inp["mu"], dtype=np.float64),
        np.array(inp["q"], dtype=np.float64),
        np.array(inp["l"], dtype=np.float64),
    )
    if pair["function"] == "objective":
        assert_close(float(gmm.objective(*args)), pair["output"])
    else:
        assert pair["function"] == "jacobian"
        alpha, mu, q, l = gmm.jacobian(*args)
        assert_close({"alpha": alpha, "mu": mu, "q": q, "l": l}, pair["output"])
