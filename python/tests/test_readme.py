"""The first example of python/README.md runs and gives what its comments say."""

import re

import numpy as np

from conftest import REPO


def test_readme_example_runs():
    text = (REPO / "python" / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "python/README.md has no python example"
    scope = {}
    exec(compile(blocks[0], "python/README.md", "exec"), scope)
    np.testing.assert_allclose([scope["dx"], scope["dy"]], [2 * np.cos(1.0), np.sin(1.0)])
    assert scope["m"].dot(np.arange(3.0), np.ones(3)) == 3.0
