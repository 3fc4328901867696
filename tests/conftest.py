"""Shared fixtures: isolated git config, and the sample repositories built once per session."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from samples import build_repo, spec_dirs

from miner.commands.build import build
from miner.core.config import Config, load_config

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_repos"


def tree(out: Path) -> dict[str, bytes]:
    """Every file under ``out`` and its bytes: two outputs are the same when their trees are."""
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


@pytest.fixture(autouse=True, scope="session")
def _isolated_git(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Neither the user's git config nor their time zone may change what a test sees."""
    home = tmp_path_factory.mktemp("home")
    saved = dict(os.environ)
    os.environ.update(
        {"HOME": str(home), "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "TZ": "America/Los_Angeles"}
    )
    yield
    os.environ.clear()
    os.environ.update(saved)


@dataclass(frozen=True)
class Sample:
    name: str
    path: Path
    shas: dict[str, str]  # commit id in the spec -> SHA
    truth: dict  # truth.yaml as loaded

    def sha(self, cid: str) -> str:
        return self.shas[cid]

    def show(self, cid: str, path: str) -> bytes:
        return subprocess.run(
            ["git", "-C", str(self.path), "show", f"{self.sha(cid)}:{path}"], capture_output=True, check=True
        ).stdout

    def truth_lines(self, defect: dict) -> list[int]:
        """The 1-based line numbers of a truth defect in its introducing commit."""
        if "line_numbers" in defect:
            return sorted(defect["line_numbers"])
        text = self.show(defect["introduced_by"], defect["path"]).decode("utf-8", "replace").split("\n")
        found = []
        for wanted in defect["lines"]:
            hits = [n for n, line in enumerate(text, 1) if line.strip() == wanted.strip()]
            assert len(hits) == 1, f"{self.name}: truth line {wanted!r} occurs {len(hits)} times"
            found += hits
        return sorted(found)


@pytest.fixture(scope="session")
def samples(tmp_path_factory: pytest.TempPathFactory, _isolated_git: None) -> dict[str, Sample]:
    dest = tmp_path_factory.mktemp("samples")
    out: dict[str, Sample] = {}
    for spec in spec_dirs(SAMPLES):
        shas = build_repo(spec, dest / spec.name)
        truth = yaml.safe_load((spec / "truth.yaml").read_text(encoding="utf-8"))
        out[spec.name] = Sample(spec.name, dest / spec.name, shas, truth)
    assert len(out) >= int(os.environ.get("MINER_MIN_SAMPLES", "4")), "expected at least four sample repositories"
    return out


def every_clean_config() -> Config:
    """All tiers kept and every eligible clean commit taken: the strongest check against the truth.

    The truth's clean lists follow the blame-based rules (sample_repos/README.md); the extra
    layer that distrusts changes a fix soon followed in the same files is tested on its own.
    """
    return load_config().with_overrides(
        labels={"min_tier": "heuristic"}, clean={"ratio": 100.0, "min_count": 1000, "fix_window_days": 0}
    )


@pytest.fixture(scope="session")
def two_splits(samples: dict[str, Sample], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two sample repositories built with half of them held out: a fixture set with both splits."""
    out = tmp_path_factory.mktemp("two-splits") / "out"
    config = load_config().with_overrides(split={"heldout_fraction": 0.5})
    build([samples["pyledger"].path, samples["gokv"].path], out, config, progress=False)
    return out


@pytest.fixture(scope="session")
def full_build(samples: dict[str, Sample], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each sample mined once with every tier and every clean commit kept."""
    outs: dict[str, Path] = {}
    for name, sample in samples.items():
        out = tmp_path_factory.mktemp("full") / name
        build([sample.path], out, every_clean_config(), progress=False)
        outs[name] = out
    return outs


@pytest.fixture(scope="session")
def default_build(samples: dict[str, Sample], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """All samples mined together with the shipped defaults."""
    out = tmp_path_factory.mktemp("default") / "out"
    build([s.path for s in samples.values()], out, load_config(), progress=False)
    return out
