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
    "BuildOptions": "miner.build",
    "Workers": "miner.build",
    "JudgeCommand": "miner.build",
    "audit": "miner.audit",
    "AuditReport": "miner.audit",
    "materialize": "miner.materialize",
    "Materialized": "miner.materialize",
    "calibrate": "miner.calibrate",
    "Calibration": "miner.calibrate",
    "CalibrateOptions": "miner.calibrate",
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
    "CommitMeta": "miner.records",
    "FixCommit": "miner.records",
    "Label": "miner.records",
    "Repo": "miner.git",
    "decode": "miner.fixture",
    "repository_name": "miner.build",
    "fix_link": "miner.classify",
    "trailer_shas": "miner.classify",
    "tier_allowed": "miner.blame",
    "benchmark": "miner.calibrate",
    "Benchmark": "miner.calibrate",
    "Truth": "miner.calibrate",
    "label_fix": "miner.calibrate",
    "pydriller_szz": "miner.baseline",
    "export": "miner.export",
    "Selection": "miner.export",
    "miner_findings": "miner.inspect_scorer",
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
    from miner.baseline import pydriller_szz
    from miner.blame import tier_allowed
    from miner.build import BuildOptions, BuildResult, JudgeCommand, Window, Workers, build, repository_name
    from miner.calibrate import Benchmark, CalibrateOptions, Calibration, Truth, benchmark, calibrate, label_fix
    from miner.classify import fix_link, trailer_shas
    from miner.config import Config, load_config
    from miner.errors import MinerError
    from miner.explain import explain
    from miner.export import Selection, export
    from miner.fixture import decode
    from miner.git import Repo
    from miner.inspect_scorer import miner_findings
    from miner.materialize import Materialized, materialize
    from miner.output import Entry, FixtureSet, Manifest, RepositoryReport, open_output
    from miner.records import Answer, CommitMeta, Defect, Evidence, FixCommit, Fixture, Label, Verdict, Visible, VisibleFile
