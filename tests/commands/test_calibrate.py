"""``miner calibrate`` on a small repository whose trailer fixes have known right and wrong answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from samples import build_repo

from miner.cli import main
from miner.commands.calibrate import CalibrateOptions, Calibration, TooFewTrailersError, calibrate, table
from miner.core.config import load_config
from miner.git import Repo

SPEC = """
author: Ann <ann@example.com>
commits:
  - id: root
    date: 2024-01-02T10:00:00Z
    message: Import
    changes:
      - {write: app.py, content: "def head(xs):\\n    return xs[0]\\n"}
      - {write: README.md, content: "app\\n"}
  - id: c_parse
    message: Add parse
    changes:
      - {edit: app.py, append: "\\n\\ndef parse(text):\\n    return int(text)\\n"}
  - id: c_total
    message: Add total
    changes:
      - {edit: app.py, append: "\\n\\ndef total(xs):\\n    return sum(xs) - 1\\n"}
  - id: c_wrap
    message: Wrap the total in parentheses
    changes:
      - {edit: app.py, replace: "    return sum(xs) - 1", with: "    return (sum(xs) - 1)"}
  - id: fix_parse
    message: "parse: accept blanks\\n\\nFixes: {short:c_parse} (\\"Add parse\\")\\n"
    changes:
      - {edit: app.py, replace: "    return int(text)", with: "    return int(text.strip())"}
  - id: fix_total
    message: "total: do not subtract one\\n\\nFixes: {short:c_total}\\n"
    changes:
      - {edit: app.py, replace: "    return (sum(xs) - 1)", with: "    return sum(xs)"}
  - id: c_scale
    message: Add scale
    changes:
      - {write: scale.py, content: "def scale(x):\\n    factor = 2\\n    return x * factor\\n"}
  - id: c_clip
    message: Add clip
    changes:
      - {edit: scale.py, append: "\\n\\ndef clip(x):\\n    return min(x, 10)\\n"}
  - id: fix_mixed
    message: "scale: right factor and bound\\n\\nFixes: {short:c_scale}\\n"
    changes:
      - {edit: scale.py, replace: "    factor = 2\\n    return x * factor", with: "    factor = 3\\n    return factor * x"}
      - {edit: scale.py, replace: "    return min(x, 10)", with: "    return min(x, 100)"}
  - id: fix_docs
    message: "Describe parse\\n\\nFixes: {short:c_parse}\\n"
    changes:
      - {edit: README.md, replace: "app", with: "app parses"}
  - id: fix_unknown
    message: "head: empty lists\\n\\nFixes: 0123456789ab\\n"
    changes:
      - {edit: app.py, replace: "    return xs[0]", with: "    return xs[0] if xs else None"}
  - id: c_a
    message: Add A
    changes:
      - {write: consts.py, content: "A = 1\\n"}
  - id: c_b
    message: Add B
    changes:
      - {edit: consts.py, append: "B = 2\\n"}
  - id: fix_tie
    message: "consts: swap\\n\\nFixes: {short:c_a}\\n"
    changes:
      - {edit: consts.py, replace: "A = 1\\nB = 2", with: "A = 2\\nB = 1"}
"""

# (labels, correct, precision, recall, yield, f1) over 4 in-scope fixes, 4 pairs:
# fix_parse -> c_parse (right, blame: it wrote the line from scratch); fix_total -> c_wrap (wrong: a later
# rewrite carried the line; plurality, because the line it rewrote was written only just before, by c_total);
# fix_mixed -> c_scale (right, plurality 2 of 3 lines); fix_tie -> c_b (wrong: a tie goes to the newer, weak).
EXPECTED = {
    "explicit": (0, 0, None, 0.0, 0.0, None),
    "blame": (1, 1, 1.0, 0.25, 0.25, 0.4),
    "plurality": (2, 1, 0.5, 0.25, 0.5, 0.3333),
    "weak": (1, 0, 0.0, 0.0, 0.25, 0.0),
    "heuristic": (0, 0, None, 0.0, 0.0, None),
}


@pytest.fixture(scope="module")
def trailers(tmp_path_factory: pytest.TempPathFactory, _isolated_git: None) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("calibrate")
    spec = root / "spec"
    spec.mkdir()
    (spec / "spec.yaml").write_text(SPEC)
    shas = build_repo(spec, root / "trailers")
    return root / "trailers", shas


@pytest.fixture(scope="module")
def result(trailers: tuple[Path, dict[str, str]]) -> Calibration:
    return calibrate(Repo(trailers[0]), "trailers", load_config(), CalibrateOptions(min_fixes=4))


def figures(s: dict[str, object]) -> tuple[object, ...]:
    return tuple(s[k] for k in ("labels", "correct", "precision", "recall", "yield", "f1"))


def test_scope_keeps_only_trailers_that_can_be_scored(result: Calibration, trailers: tuple[Path, dict[str, str]]) -> None:
    shas = trailers[1]
    assert set(result.truths) == {shas[f] for f in ("fix_parse", "fix_total", "fix_mixed", "fix_tie")}
    assert result.truths[shas["fix_total"]].named == (shas["c_total"],)
    assert dict(result.out_of_scope) == {"fix_out_of_scope": 2, "trailer_no_shared_changed_file": 1, "trailer_unknown_commit": 1}
    assert result.trailer_fixes == 6


def test_labels_are_made_blind_to_the_trailers(result: Calibration, trailers: tuple[Path, dict[str, str]]) -> None:
    shas = trailers[1]
    got = {lab.fix: (lab.intro, lab.tier) for lab in result.labels}
    assert got == {
        shas["fix_parse"]: (shas["c_parse"], "blame"),
        shas["fix_total"]: (shas["c_wrap"], "plurality"),
        shas["fix_mixed"]: (shas["c_scale"], "plurality"),
        shas["fix_tie"]: (shas["c_b"], "weak"),
    }


def test_exact_figures_per_tier_default_and_best(result: Calibration) -> None:
    report = result.to_json()
    assert report["in_scope"]["fixes"] == 4 and report["in_scope"]["pairs"] == 4
    for tier, expected in EXPECTED.items():
        assert figures(report["tiers"][tier]) == expected, tier
    assert figures(report["default"]) == EXPECTED["blame"]
    assert report["default"]["tiers"] == ["explicit", "blame"]
    assert figures(report["cumulative"]["plurality"]) == (3, 2, 0.6667, 0.5, 0.75, 0.5714)
    assert figures(report["cumulative"]["weak"]) == (4, 2, 0.5, 0.5, 1.0, 0.5)
    assert report["best"]["tiers"] == ["explicit", "blame", "plurality"]


def test_ceiling_bounds_what_any_gate_on_these_answers_could_reach(result: Calibration) -> None:
    # blame reached a named commit for fix_parse, fix_mixed and fix_tie (c_a is among its candidates),
    # not for fix_total (the line was rewritten by c_wrap); answers are right for fix_parse and fix_mixed.
    # Two right answers allow no wrong one at precision .9: yield 2 of 4. Keeping only the right ones
    # gives precision 1, recall 2 of 4 pairs.
    c = result.ceiling()
    assert (c.in_reach, c.answered_right, c.answered_wrong, c.right_pairs) == (3, 2, 2, 2)
    assert result.to_json()["ceiling"] == {
        "in_reach": 0.75,
        "answered_right": 0.5,
        "precision_bar": 0.9,
        "yield_at_bar": 0.5,
        "f1_gated": 0.6667,
    }
    assert c.yield_at(0.5) == 1.0  # at precision .5, each right answer allows one wrong one


def test_too_few_trailers_is_a_clear_error(trailers: tuple[Path, dict[str, str]]) -> None:
    with pytest.raises(TooFewTrailersError, match="4 in-scope trailer fixes"):
        calibrate(Repo(trailers[0]), "trailers", load_config())
    run = CliRunner().invoke(main, ["calibrate", str(trailers[0])])
    assert run.exit_code == 2
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("error: ") and "at least 20" in run.stderr


def test_cli_json_and_table(trailers: tuple[Path, dict[str, str]]) -> None:
    run = CliRunner().invoke(main, ["calibrate", str(trailers[0]), "--min-fixes", "4", "--json", "-q"])
    assert run.exit_code == 0, run.stderr
    report = json.loads(run.stdout)
    assert {"in_scope", "default", "tiers"} <= set(report)
    assert {"precision", "recall", "yield", "f1"} <= set(report["default"])
    run = CliRunner().invoke(main, ["calibrate", str(trailers[0]), "--min-fixes", "4", "-q"])
    assert run.exit_code == 0
    assert "default (up to blame)" in run.stdout and "0.500" in run.stdout
    assert "blame reached a named commit for 3 of 4 fixes" in run.stdout


def test_pydriller_baseline_is_scored_beside_the_labels(trailers: tuple[Path, dict[str, str]]) -> None:
    """PyDriller blames every line each fix deleted and names whoever last touched them: on this
    history it names every commit blame reaches, so it is right on fix_parse and fix_mixed and wrong on
    the rest. It runs on a copy: the repository is not written."""
    repo, shas = trailers
    before = sorted((p.relative_to(repo), p.stat().st_mtime_ns) for p in (repo / ".git").rglob("*") if p.is_file())
    with_baseline = calibrate(Repo(repo), "trailers", load_config(), CalibrateOptions(min_fixes=4, baseline="pydriller"))
    assert with_baseline.baseline is not None
    named = {fix: sorted(found) for fix, found in with_baseline.baseline.items()}
    assert named[shas["fix_parse"]] == [shas["c_parse"]]
    assert named[shas["fix_total"]] == [shas["c_wrap"]]
    base = with_baseline.to_json()["baseline"]["pydriller"]
    right = sum(sha in with_baseline.truths[fix].named for fix, found in named.items() for sha in found)
    assert base["labels"] == sum(len(found) for found in named.values()) and base["correct"] == right
    assert "PyDriller SZZ (baseline)" in table(with_baseline)
    assert calibrate(Repo(repo), "trailers", load_config(), CalibrateOptions(min_fixes=4)).to_json()["baseline"] is None
    after = sorted((p.relative_to(repo), p.stat().st_mtime_ns) for p in (repo / ".git").rglob("*") if p.is_file())
    assert after == before


CODE_SPEC = """
author: Ann <ann@example.com>
commits:
  - id: root
    date: 2024-01-02T10:00:00Z
    message: Import
    changes:
      - {write: app.py, content: "def head(xs):\\n    return xs[0]\\n"}
      - {write: tests/test_app.py, content: "from app import head\\n"}
  - id: c_parse
    message: Add parse
    changes:
      - {edit: app.py, append: "\\n\\ndef parse(text):\\n    return int(text)\\n"}
      - {edit: tests/test_app.py, append: "\\n\\ndef test_parse():\\n    assert parse('1') == 2\\n"}
  - id: fix_code
    message: "parse: accept blanks\\n\\nFixes: {short:c_parse}\\n"
    changes:
      - {edit: app.py, replace: "    return int(text)", with: "    return int(text.strip())"}
  - id: fix_test
    message: "parse: expect the right number\\n\\nFixes: {short:c_parse}\\n"
    changes:
      - {edit: tests/test_app.py, replace: "== 2", with: "== 1"}
"""


def test_yield_is_also_given_over_the_fixes_that_change_code(tmp_path: Path, _isolated_git: None) -> None:
    """A trailer fix that changes only tests is in scope, but the vet stage refuses it on its paths (the
    rubric counts no test-only fix as a bug fix): the default output's yield is also given over the
    in-scope fixes that change a source file."""
    spec = tmp_path / "spec"
    spec.mkdir()
    (spec / "spec.yaml").write_text(CODE_SPEC)
    shas = build_repo(spec, tmp_path / "repo")
    cal = calibrate(Repo(tmp_path / "repo"), "code", load_config(), CalibrateOptions(min_fixes=2))
    assert set(cal.truths) == {shas["fix_code"], shas["fix_test"]}
    assert cal.dropped["fix_only_tests"] == 1
    report = cal.to_json()
    assert report["in_scope"]["fixes"] == 2 and report["in_scope"]["code_fixes"] == 1
    assert (report["default"]["yield"], report["default"]["yield_over_code_fixes"]) == (0.5, 1.0)
    assert "default yield over the in-scope fixes that change a source file, not only tests, docs or config (1): 1.000" in table(
        cal
    )
