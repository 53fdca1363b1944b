"""Shared by the Python package's tests: the repository root (configs/, pretrained/) and the
C++ reference binary, both given by ctest (tests/CMakeLists.txt)."""
import os
import pathlib

import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("DIFFLOCO_SOURCE_DIR",
                                         pathlib.Path(__file__).resolve().parents[2]))


@pytest.fixture
def source_dir():
    return SOURCE_DIR
