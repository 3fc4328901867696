"""Exports: what a model may see holds no answer, held-out answers stay out by default, bundles hold
only the change and its past."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

import miner
from miner.cli import main
from miner.commands.export import Selection, export

ANSWER_KEYS = {
    "kind",
    "defects",
    "base",
    "head",
    "head_date",
    "author_date",
    "fresh",
    "family",
    "observed_days",
    "clean_confidence",
    "survival",
    "stratum",
    "judge",
    "blanked",
    "wait_days",
}


@pytest.fixture
def built(two_splits: Path) -> Path:
    return two_splits


def leaks(record: dict, fixture: miner.Fixture) -> list[str]:
    """Answer facts that appear in a record a model may see."""
    text = json.dumps(record)
    found = sorted(ANSWER_KEYS & set(record))
    for d in fixture.answer.defects or ():
        found += [what for what in (d.fix, d.fix[:12], d.summary) if what in text]
    return found


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_jsonl_keeps_answers_apart_and_held_out_answers_out(built: Path, tmp_path: Path) -> None:
    fixtures = miner.open_output(built)
    splits = {f.id: f.split for f in fixtures}
    assert set(splits.values()) == {"dev", "heldout"}
    done = export(built, "jsonl", tmp_path / "jsonl")
    visible = lines(tmp_path / "jsonl" / "visible.jsonl")
    assert [v["id"] for v in visible] == [f.id for f in fixtures]
    for record in visible:
        assert not leaks(record, fixtures[record["id"]]), record["id"]
        assert record["canary"] == done.canary
    answers = lines(tmp_path / "jsonl" / "answers.jsonl")
    assert {a["id"] for a in answers} == {i for i, s in splits.items() if s == "dev"}
    assert done.canary in (tmp_path / "jsonl" / "README.md").read_text()
    every = export(built, "jsonl", tmp_path / "all", Selection(with_answers=True))
    assert every.answers == len(splits)
    assert export(built, "jsonl", tmp_path / "none", Selection(with_answers=False)).answers == 0
    deep = export(built, "jsonl", tmp_path / "new" / "deep" / "dir")  # parents made, staged beside it
    assert (deep.to / "visible.jsonl").is_file() and not list((tmp_path / "new" / "deep").glob(".miner-export-*"))
    held = export(built, "jsonl", tmp_path / "held", Selection(split="heldout"))
    assert held.answers == 0 and held.fixtures == sum(s == "heldout" for s in splits.values())


def test_inspect_samples_put_answers_in_target_only(built: Path, tmp_path: Path) -> None:
    fixtures = miner.open_output(built)
    export(built, "inspect", tmp_path / "inspect")
    for sample in lines(tmp_path / "inspect" / "samples.jsonl"):
        fixture = fixtures[sample["id"]]
        assert set(sample) <= {"id", "input", "target", "metadata"}
        assert not leaks({"input": sample["input"], **sample["metadata"]}, fixture)
        assert fixture.visible.diff.rstrip("\n") in sample["input"]
        if fixture.split == "dev":
            target = json.loads(sample["target"])
            assert target["kind"] == fixture.kind and len(target["defects"]) == len(fixture.answer.defects or ())
        else:
            assert "target" not in sample


def test_hf_folder_has_a_card_that_names_its_configurations(built: Path, tmp_path: Path) -> None:
    export(built, "hf", tmp_path / "hf")
    card = (tmp_path / "hf" / "README.md").read_text()
    header = yaml.safe_load(card.split("---\n")[1])
    names = {c["config_name"]: c["data_files"] for c in header["configs"]}
    assert set(names) == {"visible", "answers"}
    for files in names.values():
        for entry in files:
            assert (tmp_path / "hf" / entry["path"]).is_file()
    assert not (tmp_path / "hf" / "answers" / "heldout.jsonl").exists()  # held-out answers are left out
    assert [e["split"] for e in names["answers"]] == ["dev"]
    for info in header["dataset_info"]:  # every configuration declares its columns: those its rows hold
        first = lines(tmp_path / "hf" / info["config_name"] / "dev.jsonl")[0]
        assert [f["name"] for f in info["features"]] and {f["name"] for f in info["features"]} == set(first)
    assert [i["config_name"] for i in header["dataset_info"]] == list(names)


def test_bundles_hold_the_change_and_nothing_later(
    built: Path, samples: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each fixture is bundled from the repository it was mined from, one --repo for each; a --to
    relative to where the command runs works (git runs elsewhere, in the materialized repository)."""
    fixtures = miner.open_output(built)
    repos = {"pyledger": samples["pyledger"].path, "gokv": samples["gokv"].path}
    assert {f.answer.repository for f in fixtures} == set(repos)
    monkeypatch.chdir(tmp_path)
    run = CliRunner().invoke(main, ["export", str(built), "--format", "bundle", "--to", "b"])
    assert run.exit_code == 2 and "needs --repo" in run.output
    run = CliRunner().invoke(main, ["export", str(built), "--format", "bundle", "--to", "b", "--repo", str(repos["gokv"])])
    assert run.exit_code == 2 and "none is given for 'pyledger'" in run.output and not Path("b").exists()
    run = CliRunner().invoke(
        main, ["export", str(built), "--format", "bundle", "--to", "b", *(a for p in repos.values() for a in ("--repo", str(p)))]
    )
    assert run.exit_code == 0, run.output
    assert sorted(p.name for p in Path("b", "bundles").iterdir()) == sorted(
        f"{f.id}.{suffix}" for f in fixtures for suffix in ("bundle", "needs")
    )
    assert sorted(p.name for p in Path("b", "history").iterdir()) == sorted(repos)
    for f in fixtures:
        clone = Path("clones", f.id)  # relative, as the script is told where to build
        subprocess.run(["sh", "b/materialize.sh", f.id, str(clone)], check=True, capture_output=True)
        shas = subprocess.run(
            ["git", "-C", str(clone), "rev-list", "--all"], capture_output=True, text=True, check=True
        ).stdout.split()
        assert f.answer.base in shas and not {f.answer.head, *(d.fix for d in f.answer.defects or ())} & set(shas)
    # From Python: ``repo`` (one path) and ``repos`` (paths or (name, path) pairs) together.
    done = export(built, "bundle", tmp_path / "py", repo=repos["pyledger"], repos=[("gokv", repos["gokv"])])
    assert done.fixtures == len(fixtures) == len(list((tmp_path / "py" / "bundles").glob("*.bundle")))
    assert "materialize.sh" in (tmp_path / "py" / "README.md").read_text()


def test_promptfoo_tests_keep_the_answer_in_the_assertion_and_it_scores(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixtures = miner.open_output(built)
    export(built, "promptfoo", tmp_path / "pf")
    tests = lines(tmp_path / "pf" / "tests.jsonl")
    assert (tmp_path / "pf" / "promptfooconfig.yaml").is_file()
    monkeypatch.syspath_prepend(str(tmp_path / "pf"))
    from miner_assert import get_assert  # the shipped assertion file, as promptfoo runs it

    for test in tests:
        fixture = fixtures[test["metadata"]["fixture_id"]]
        assert not leaks(test["vars"], fixture)
        if fixture.split != "dev":
            assert "assert" not in test
            continue
        config = test["assert"][0]["config"]
        silent = get_assert("[]", {"config": config})
        if fixture.kind == "clean":
            assert silent["pass"] and get_assert('[{"path": "x", "line_start": 1}]', {"config": config})["score"] == 0
        else:
            assert silent["score"] == 0
            oracle = json.dumps([{"path": d.path, "line_start": d.line_start} for d in fixture.answer.defects or ()])
            assert get_assert(oracle, {"config": config})["score"] == 1.0
    assert get_assert("no findings here", {"config": {"kind": "clean", "defects": []}})["pass"] is False


def test_parquet_is_for_the_hub_folder_and_needs_pyarrow(built: Path, tmp_path: Path) -> None:
    run = CliRunner().invoke(main, ["export", str(built), "--format", "jsonl", "--parquet", "--to", str(tmp_path / "x")])
    assert run.exit_code == 2 and "--parquet is for --format hf" in run.output
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        run = CliRunner().invoke(main, ["export", str(built), "--format", "hf", "--parquet", "--to", str(tmp_path / "y")])
        assert run.exit_code == 2 and "needs pyarrow" in run.output and "Traceback" not in run.output
    assert not (tmp_path / "x").exists()
