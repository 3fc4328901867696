"""``miner explain``: one fixture's evidence chain, grouped by the fix that labelled it."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from conftest import Sample

from miner.cli import main
from miner.commands.explain import explain


def fixture_of(out: Path, head: str) -> str:
    for path in (out / "answers").glob("*.json"):
        answer = json.loads(path.read_text())
        if answer["head"] == head:
            return str(answer["id"])
    raise AssertionError(f"no fixture for {head}")


def test_each_fix_once_with_its_lines_link_and_evidence(samples: dict[str, Sample], full_build: dict[str, Path]) -> None:
    pyledger, out = samples["pyledger"], full_build["pyledger"]
    text = explain(out, fixture_of(out, pyledger.sha("cache-balances")))
    fixes = [line for line in text.splitlines() if line.startswith("fix ")]
    # Named by its revert (every line), and blamed by a later fix through the re-land.
    assert len(fixes) == 2
    assert {pyledger.sha("revert-cache-balances"), pyledger.sha("fix-stale-balance-cache")} == {line.split()[2] for line in fixes}
    assert "link revert, tier explicit" in text
    assert "tier because: unanimous" in text and "reapplied" in text
    assert f"re-lands of a reverted change): {pyledger.sha('reland-cache-balances')[:12]}" in text
    assert "  defect lines: pyledger/ledger.py " in text
    assert text.count("<- this change") == 2


def test_a_whitespace_commit_looked_through_is_named(samples: dict[str, Sample], full_build: dict[str, Path]) -> None:
    pyledger, out = samples["pyledger"], full_build["pyledger"]
    text = explain(out, fixture_of(out, pyledger.sha("add-balance-report")))
    assert pyledger.sha("normalize-spacing")[:12] in text.split("looked through", 1)[1]


def test_clean_fixture_and_unknown_id(full_build: dict[str, Path]) -> None:
    out = full_build["pyledger"]
    manifest = json.loads((out / "manifest.json").read_text())
    clean = next(f["id"] for f in manifest["fixtures"] if f["kind"] == "clean")
    run = CliRunner().invoke(main, ["explain", str(out), clean])
    assert run.exit_code == 0 and "clean: observed for" in run.stdout and "fix 1:" not in run.stdout
    run = CliRunner().invoke(main, ["explain", str(out), "fx-nosuchfixture000"])
    assert run.exit_code == 2 and run.stderr.count("\n") == 1 and "no fixture 'fx-nosuchfixture000'" in run.stderr
