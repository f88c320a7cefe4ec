"""The package's version is beacond's: one value, `BeacondVersion.current` in Sources/BeacondAPI, which the build
reads (pyproject.toml, `[tool.hatch.version]`) and `__version__` reads back from the installed package's metadata."""
import importlib.metadata
import os
import re

import beacon_location

from conftest import REPOSITORY


def test_the_package_version_is_beacond_s():
    with open(os.path.join(REPOSITORY, "Sources", "BeacondAPI", "BeacondVersion.swift")) as file:
        beacond = re.search(r'static let current = "([^"]+)"', file.read()).group(1)
    assert importlib.metadata.version("beacon-location") == beacond
    assert beacon_location.__version__ == beacond
