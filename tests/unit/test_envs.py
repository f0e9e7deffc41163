"""The environment the package runs in: the conda environment pins exactly what
requirements.lock pins, and the installed package's version is `ingestbench.__version__`."""

import importlib.metadata
import tomllib

import yaml

import ingestbench
from ingestbench.dev.lockfile import CONDA_ENV, conda_env_text
from ingestbench.ingest.pins import locked_versions, normalise


def test_conda_env_is_generated_from_the_lock():
    assert CONDA_ENV.read_text() == conda_env_text(), "run `make lock` to regenerate envs/"


def test_every_conda_pin_matches_the_lock():
    env = yaml.safe_load(CONDA_ENV.read_text())
    pins = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    locked = locked_versions()
    assert pins
    for pin in pins:
        name, version = pin.split("==")
        assert locked[normalise(name)] == version, pin


def test_the_version_has_one_home():
    project = tomllib.loads((ingestbench.CHECKOUT / "pyproject.toml").read_text())["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert importlib.metadata.version("ingestbench") == ingestbench.__version__
