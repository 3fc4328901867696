"""miner: mine git history into bug and clean fixtures for evaluating AI code reviewers.

The public API, for tools and people building on miner's fixture sets::

    import miner

    result = miner.build([Path("repo")], Path("fixtures_out"), miner.load_config())
    fixtures = miner.open_output("fixtures_out")
    for fixture in fixtures:                       # miner.Fixture: .id .kind .split .visible .answer
        ...

Names are imported when first used, so ``import miner`` (and ``python -m miner``) stays quick.
What the stages say goes to the ``miner`` logger (``logging``); the command line prints it on stderr.

The package's layout, for those who read it:

- ``miner.core``: the records, the config and its defaults, the errors, the shared rules;
- ``miner.git``: everything that runs git (the reader, its parsers, the overlay, the writer);
- ``miner.stages``: one module per stage of a build (walk, vet, blame, clean, fixture, split, write, ...);
- ``miner.runner``: the executors the expensive stages run on, and the cache;
- ``miner.commands``: one module per command (``miner.build`` is ``miner.commands.build.build``);
- ``miner.cli``: the command line, a thin shell over the commands.
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

try:
    __version__ = version("miner")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"

_WHERE = {
    "build": "miner.commands.build",
    "BuildResult": "miner.commands.build",
    "Window": "miner.commands.build",
    "BuildOptions": "miner.commands.build",
    "Workers": "miner.commands.build",
    "JudgeCommand": "miner.commands.build",
    "Keep": "miner.stages.judge",
    "Rate": "miner.commands.validity",
    "is_valid": "miner.commands.validity",
    "draw_order": "miner.commands.validity",
    "reading_page": "miner.commands.validity",
    "audit": "miner.commands.audit",
    "AuditReport": "miner.commands.audit",
    "materialize": "miner.commands.materialize",
    "Materialized": "miner.commands.materialize",
    "calibrate": "miner.commands.calibrate",
    "Calibration": "miner.commands.calibrate",
    "CalibrateOptions": "miner.commands.calibrate",
    "explain": "miner.commands.explain",
    "load_config": "miner.core.config",
    "Config": "miner.core.config",
    "open_output": "miner.core.output",
    "FixtureSet": "miner.core.output",
    "Manifest": "miner.core.output",
    "Entry": "miner.core.output",
    "RepositoryReport": "miner.core.output",
    "Fixture": "miner.core.records",
    "Visible": "miner.core.records",
    "VisibleFile": "miner.core.records",
    "Answer": "miner.core.records",
    "Defect": "miner.core.records",
    "Evidence": "miner.core.records",
    "Verdict": "miner.core.records",
    "CommitMeta": "miner.core.records",
    "FixCommit": "miner.core.records",
    "Label": "miner.core.records",
    "Repo": "miner.git",
    "decode": "miner.stages.fixture",
    "repository_name": "miner.commands.build",
    "fix_link": "miner.core.classify",
    "trailer_shas": "miner.core.classify",
    "tier_allowed": "miner.stages.blame",
    "benchmark": "miner.commands.calibrate",
    "Benchmark": "miner.commands.calibrate",
    "Truth": "miner.commands.calibrate",
    "label_fix": "miner.commands.calibrate",
    "pydriller_szz": "miner.stages.baseline",
    "export": "miner.commands.export",
    "Selection": "miner.commands.export",
    "miner_findings": "miner.inspect_scorer",
    "MinerError": "miner.core.errors",
}
__all__ = ["__version__", *_WHERE]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        value = getattr(importlib.import_module(_WHERE[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'miner' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:
    from miner.commands.audit import AuditReport, audit
    from miner.commands.build import BuildOptions, BuildResult, JudgeCommand, Window, Workers, build, repository_name
    from miner.commands.calibrate import Benchmark, CalibrateOptions, Calibration, Truth, benchmark, calibrate, label_fix
    from miner.commands.explain import explain
    from miner.commands.export import Selection, export
    from miner.commands.materialize import Materialized, materialize
    from miner.commands.validity import Rate, draw_order, is_valid, reading_page
    from miner.core.classify import fix_link, trailer_shas
    from miner.core.config import Config, load_config
    from miner.core.errors import MinerError
    from miner.core.output import Entry, FixtureSet, Manifest, RepositoryReport, open_output
    from miner.core.records import Answer, CommitMeta, Defect, Evidence, FixCommit, Fixture, Label, Verdict, Visible, VisibleFile
    from miner.git import Repo
    from miner.inspect_scorer import miner_findings
    from miner.stages.baseline import pydriller_szz
    from miner.stages.blame import tier_allowed
    from miner.stages.fixture import decode
    from miner.stages.judge import Keep
