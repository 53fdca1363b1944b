"""Shared by the Python package's tests: the repository root (configs/, pretrained/) and the
C++ reference binary, both given by ctest (tests/CMakeLists.txt), and a tmp_path that goes when
its test ends (pytest's own keeps the last runs' folders in the temporary directory)."""
import os
import pathlib
import tempfile

import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("DIFFLOCO_SOURCE_DIR",
                                         pathlib.Path(__file__).resolve().parents[2]))


@pytest.fixture
def source_dir():
    return SOURCE_DIR


@pytest.fixture
def tmp_path():
    with tempfile.TemporaryDirectory(prefix="diffloco_pytest_") as d:
        yield pathlib.Path(d)
