"""The example in examples/python/ runs: it fits its model (the loss goes
down) and writes the loss curve as a PNG. Needs matplotlib."""

import importlib.util

from conftest import REPO


def test_fit_example_reduces_the_loss_and_writes_a_png(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("fit_example", REPO / "examples/python/fit.py")
    fit = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fit)
    out = tmp_path / "loss.png"
    assert fit.main(["--steps", "100", "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    printed = capsys.readouterr().out
    assert "after 100 steps" in printed
    assert ("agrees with jax.grad" in printed) or ("JAX is not installed" in printed)
