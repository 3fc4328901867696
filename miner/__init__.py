"""miner: mine git history into bug and clean fixtures for evaluating AI code reviewers.

The public API, for tools and people building on miner's fixture sets::

    import miner

    result = miner.build([Path("repo")], Path("fixtures_out"), miner.load_config())
    fixtures = miner.open_output("fixtures_out")
    for fixture in fixtures:                       # miner.Fixture: .id .kind .split .visible .answer
        ...

Names are imported when first used, so ``import miner`` (and ``python -m miner``) stays quick.
``miner.build`` (``audit``, ``calibrate``, ``explain``, ``materialize``) is the function; its module
is ``importlib.import_module("miner.build")``, or ``from miner.build import ...``. What the stages
say goes to the ``miner`` logger (``logging``); the command line prints it on stderr.
"""

from __future__ import annotations

import importlib
import sys
import types
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

try:
    __version__ = version("miner")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"

_WHERE = {
    "build": "miner.build",
    "BuildResult": "miner.build",
    "Window": "miner.build",
    "audit": "miner.audit",
    "AuditReport": "miner.audit",
    "materialize": "miner.materialize",
    "Materialized": "miner.materialize",
    "calibrate": "miner.calibrate",
    "Calibration": "miner.calibrate",
    "explain": "miner.explain",
    "load_config": "miner.config",
    "Config": "miner.config",
    "open_output": "miner.output",
    "FixtureSet": "miner.output",
    "Manifest": "miner.output",
    "Entry": "miner.output",
    "RepositoryReport": "miner.output",
    "Fixture": "miner.records",
    "Visible": "miner.records",
    "VisibleFile": "miner.records",
    "Answer": "miner.records",
    "Defect": "miner.records",
    "Evidence": "miner.records",
    "Verdict": "miner.records",
    "Repo": "miner.git",
    "MinerError": "miner.errors",
}
__all__ = ["__version__", *_WHERE]


class _Package(types.ModuleType):
    """The package, with one rule more: importing the module ``miner.build`` does not bind it over
    the function ``miner.build`` (the same for audit, calibrate, explain and materialize), which
    ``__getattr__`` hands out. Modules stay reachable as ``sys.modules`` and ``from ... import``
    find them."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _WHERE and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        value = getattr(importlib.import_module(_WHERE[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'miner' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:
    from miner.audit import AuditReport, audit
    from miner.build import BuildResult, Window, build
    from miner.calibrate import Calibration, calibrate
    from miner.config import Config, load_config
    from miner.errors import MinerError
    from miner.explain import explain
    from miner.git import Repo
    from miner.materialize import Materialized, materialize
    from miner.output import Entry, FixtureSet, Manifest, RepositoryReport, open_output
    from miner.records import Answer, Defect, Evidence, Fixture, Verdict, Visible, VisibleFile
