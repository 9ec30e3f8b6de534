"""Shared fixtures: a fresh compilation cache for the test session, the
repository root, and writing test programs to files."""

import os
from pathlib import Path

import pytest

#: The repository root (python/tests/ is two levels below it).
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session", autouse=True)
def fresh_cache(tmp_path_factory):
    """Every test session compiles into its own cache directory, so that
    the tests exercise the compiler and not a stale cache."""
    directory = tmp_path_factory.mktemp("nabla-cache")
    old = os.environ.get("NABLA_CACHE_DIR")
    os.environ["NABLA_CACHE_DIR"] = str(directory)
    yield directory
    if old is None:
        os.environ.pop("NABLA_CACHE_DIR", None)
    else:
        os.environ["NABLA_CACHE_DIR"] = old


@pytest.fixture(scope="session")
def write_program(tmp_path_factory):
    """Writes program text to NAME.fut in a session directory; returns the path."""
    directory = tmp_path_factory.mktemp("programs")

    def write(name: str, text: str) -> Path:
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    return write
