"""The sample-repository builder: stable SHAs from readable specs."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import SAMPLES, Sample
from samples import build_repo

from miner.core.errors import SpecError

SPEC = """
author: Ann <ann@example.com>
commits:
  - id: one
    date: 2024-01-02T10:00:00Z
    message: Start
    changes:
      - {write: a.py, content: "x = 1\\n"}
  - id: side
    branch: topic
    from: one
    message: Side work
    changes:
      - {edit: a.py, append: "y = 2\\n"}
  - id: two
    message: Main work
    changes:
      - {write: b.py, content: "z = 3\\n"}
  - id: merge
    merge: [topic]
    message: Merge topic
  - id: named
    message: "Names {short:side}"
    changes:
      - {rename: b.py, to: c.py}
"""


def write_spec(root: Path, text: str) -> Path:
    spec = root / "s"
    spec.mkdir()
    (spec / "spec.yaml").write_text(text)
    return spec


def test_same_spec_same_shas(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, SPEC)
    first = build_repo(spec, tmp_path / "a")
    second = build_repo(spec, tmp_path / "b")
    assert first == second
    assert list(first) == ["one", "side", "two", "merge", "named"]


def test_merge_takes_the_branch_changes_and_names_resolve(tmp_path: Path) -> None:
    import subprocess

    spec = write_spec(tmp_path, SPEC)
    shas = build_repo(spec, tmp_path / "r")
    show = subprocess.run(["git", "-C", str(tmp_path / "r"), "show", "HEAD:a.py"], capture_output=True, text=True)
    assert show.stdout == "x = 1\ny = 2\n"
    log = subprocess.run(
        ["git", "-C", str(tmp_path / "r"), "log", "-1", "--format=%s%n%P", shas["merge"]], capture_output=True, text=True
    ).stdout.split("\n")
    assert log[1].split() == [shas["two"], shas["side"]]
    subject = subprocess.run(
        ["git", "-C", str(tmp_path / "r"), "log", "-1", "--format=%s"], capture_output=True, text=True
    ).stdout.strip()
    assert subject == f"Names {shas['side'][:12]}"


@pytest.mark.parametrize(
    "bad,words",
    [
        ("commits:\n  - id: a\n    message: m\n    changes:\n      - {edit: nope.py, append: x}\n", "does not exist"),
        ("commits:\n  - id: a\n    message: m\n    date: yesterday\n", "bad date"),
        ("commits:\n  - id: a\n    message: '{sha:zzz}'\n", "unknown earlier commit"),
    ],
)
def test_spec_errors_name_the_commit(tmp_path: Path, bad: str, words: str) -> None:
    with pytest.raises(SpecError, match=words):
        build_repo(write_spec(tmp_path, bad), tmp_path / "r")


def test_every_sample_has_truth_covering_the_required_cases(samples: dict[str, Sample]) -> None:
    required = {"plain", "reformat", "rename", "merge", "added-only", "revert", "trailer", "comment-blank", "fixme"}
    covered: set[str] = set()
    for sample in samples.values():
        cases = {d["case"] for d in sample.truth["defects"]}
        covered |= cases
        for cid in [*sample.truth["clean"], *sample.truth["never"]]:
            assert cid in sample.shas, f"{sample.name}: truth names unknown commit {cid}"
        assert len(sample.shas) >= 25, sample.name
    assert required <= covered
    assert (SAMPLES / "README.md").is_file()
