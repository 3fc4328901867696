"""Leakage-safe splits: families, stable assignment, the ledger, refreshes, cutoffs and --since."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import Sample, every_clean_config
from samples import build_repo

from miner.cli import main
from miner.commands.build import BuildOptions, Window, build
from miner.core.config import Config, load_config
from miner.stages.ledger import Ledger, refresh
from miner.stages.split import assign, families


def manifest(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text())


def placements(out: Path) -> dict[str, str]:
    return {e["id"]: e["split"] for e in manifest(out)["fixtures"]}


def answers(out: Path) -> dict[str, dict]:
    return {e["id"]: json.loads((out / e["answer"]).read_text()) for e in manifest(out)["fixtures"]}


def heldout(config: Config, *names: str) -> Config:
    return config.with_overrides(split={"heldout": list(names)})


# -- pure -------------------------------------------------------------------------------------


def test_families_join_fixtures_sharing_any_key() -> None:
    fam = families({"c": ["fix:1"], "a": ["fix:1", "patch:9"], "b": ["patch:9"], "d": ["fix:2"]})
    assert fam == {"a": "a", "b": "a", "c": "a", "d": "d"}


def test_heldout_wins_within_a_family_and_the_ledger_wins_over_config() -> None:
    fam = {"a": "a", "b": "a", "c": "c"}
    splits, moved = assign({"a": ("dev", "r1"), "b": ("heldout", "r2"), "c": ("dev", "r1")}, fam, Ledger())
    assert splits == {"a": "heldout", "b": "heldout", "c": "dev"} and moved == 1
    from miner.stages.ledger import Placement

    ledger = Ledger(placements={"c": Placement(split="heldout", repository="r1", family="c")})
    splits, _ = assign({"c": ("dev", "r1")}, {"c": "c"}, ledger)
    assert splits == {"c": "heldout"}


def test_refresh_moves_whole_families_and_records_the_event() -> None:
    from miner.stages.ledger import Placement

    ledger = Ledger(
        placements={
            "a": Placement(split="heldout", repository="r", family="a"),
            "b": Placement(split="heldout", repository="r", family="a"),
            "c": Placement(split="heldout", repository="r", family="c"),
        }
    )
    new = refresh(ledger, {"b"}, dt.date(2026, 11, 30), "exposed in a blog post")
    assert {f: p.split for f, p in new.placements.items()} == {"a": "dev", "b": "dev", "c": "heldout"}
    assert new.refreshes[-1].retired == ("a", "b") and new.refreshes[-1].reason == "exposed in a blog post"


# -- on built outputs -------------------------------------------------------------------------------


TWIN = """
author: Ann <ann@example.com>
commits:
  - id: import
    date: 2022-01-03T10:00:00Z
    message: Import {name}
    changes:
      - {{write: src/{name}.py, content: "def main():\\n    return 0\\n"}}
  - id: shared
    date: 2022-03-01T10:00:00Z
    message: Add a helper to parse sizes
    changes:
      - {{write: src/sizes.py, content: "def parse(text):\\n    return int(text.strip())\\n"}}
  - id: later
    date: 2022-06-01T10:00:00Z
    message: Add a flag to {name}
    changes:
      - {{edit: src/{name}.py, append: "FLAG = 1\\nLIMIT = 2\\n"}}
  - id: readme
    date: 2024-06-01T10:00:00Z
    message: Describe {name}
    changes:
      - {{write: README.md, content: "{name}\\n"}}
"""


def test_a_cherry_picked_change_never_straddles_splits(tmp_path: Path) -> None:
    repos = []
    for name in ("alpha", "beta"):
        spec = tmp_path / "specs" / name
        spec.mkdir(parents=True)
        (spec / "spec.yaml").write_text(TWIN.format(name=name))
        build_repo(spec, tmp_path / name)
        repos.append(tmp_path / name)
    out = tmp_path / "out"
    build(repos, out, heldout(every_clean_config(), "alpha"), progress=False)
    found = answers(out)
    shared = [
        a
        for a in found.values()
        if a["kind"] == "clean"
        and any(f["path"] == "src/sizes.py" for f in json.loads((out / "visible" / f"{a['id']}.json").read_text())["files"])
    ]
    assert len(shared) == 2 and shared[0]["family"] == shared[1]["family"]
    assert {a["split"] for a in shared} == {"heldout"}
    beta_only = [a for a in found.values() if a["repository"] == "beta" and a not in shared]
    assert beta_only and {a["split"] for a in beta_only} == {"dev"}


def test_assignment_does_not_depend_on_time_zone_or_argument_order(
    samples: dict[str, Sample], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repos = [s.path for s in samples.values()]
    config = load_config().with_overrides(split={"heldout_fraction": 0.5})
    build(repos, tmp_path / "one", config, progress=False)
    monkeypatch.setenv("TZ", "Asia/Kolkata")
    build(list(reversed(repos)), tmp_path / "two", config, progress=False)
    assert placements(tmp_path / "one") == placements(tmp_path / "two")
    assert set(placements(tmp_path / "one").values()) == {"dev", "heldout"}


def test_rebuild_keeps_every_assignment_even_when_config_changes(samples: dict[str, Sample], tmp_path: Path) -> None:
    sample = samples["pyledger"]
    out = tmp_path / "out"
    build([sample.path], out, heldout(load_config(), "pyledger"), progress=False)
    first = placements(out)
    assert first and set(first.values()) == {"heldout"}
    build([sample.path], out, load_config(), progress=False, force=True)
    assert placements(out) == first


def test_refresh_moves_exactly_the_exposed_fixtures(samples: dict[str, Sample], tmp_path: Path) -> None:
    sample = samples["gokv"]
    out = tmp_path / "out"
    build([sample.path], out, heldout(load_config(), "gokv"), progress=False)
    before = answers(out)
    dates = sorted(a["head_date"] for a in before.values())
    cut = dates[len(dates) // 2]
    expected = {f for f, a in before.items() if a["head_date"] < cut}
    result = CliRunner().invoke(
        main, ["split", "refresh", str(out), "--retire-before", cut, "--reason", "exposed", "--date", "2026-11-01"]
    )
    assert result.exit_code == 0, result.stderr
    after = answers(out)
    assert {f for f, a in after.items() if a["split"] == "dev"} == expected
    assert placements(out) == {f: a["split"] for f, a in after.items()}
    ledger = json.loads((out / "ledger.json").read_text())
    assert ledger["refreshes"] == [{"date": "2026-11-01", "reason": "exposed", "retired": sorted(expected)}]
    # A later rebuild keeps the refresh.
    build([sample.path], out, heldout(load_config(), "gokv"), progress=False, force=True)
    assert placements(out) == {f: a["split"] for f, a in after.items()}


def test_cutoffs_mark_freshness_in_answers_and_counts(samples: dict[str, Sample], tmp_path: Path) -> None:
    sample = samples["tsnotes"]
    config = load_config().with_overrides(split={"cutoffs": {"model-a": "2024-01-01", "model-b": "2030-01-01"}})
    build([sample.path], tmp_path / "out", config, progress=False)
    found = answers(tmp_path / "out")
    for a in found.values():
        assert a["fresh"] == {"model-a": a["head_date"] >= "2024-01-02", "model-b": False}
    counts = manifest(tmp_path / "out")["fresh"]
    assert counts["model-a"].get("dev", 0) == sum(a["fresh"]["model-a"] for a in found.values())
    assert manifest(tmp_path / "out")["cutoffs"] == {"model-a": "2024-01-01", "model-b": "2030-01-01"}


@pytest.mark.parametrize("name", ["pyledger", "cparse"])
def test_since_gives_the_full_build_filtered(samples: dict[str, Sample], tmp_path: Path, name: str) -> None:
    sample = samples[name]
    config = every_clean_config().with_overrides(clean={"admit_young": True})
    build([sample.path], tmp_path / "full", config, progress=False)
    since = dt.datetime(2024, 3, 1, tzinfo=dt.timezone.utc)
    build([sample.path], tmp_path / "window", config, BuildOptions(window=Window(since=since)), progress=False)
    full, window = answers(tmp_path / "full"), answers(tmp_path / "window")
    assert window and all(a["head_date"] >= "2024-03-01" for a in window.values())
    expected = {f: a for f, a in full.items() if a["head_date"] >= "2024-03-01"}
    assert {f for f, a in window.items() if a["kind"] == "bug"} == {f for f, a in expected.items() if a["kind"] == "bug"}
    for fid, a in window.items():
        if a["kind"] == "bug":
            assert a["defects"] == expected[fid]["defects"]
    assert {f for f, a in window.items() if a["kind"] == "clean"} <= {f for f, a in expected.items() if a["kind"] == "clean"}
    young = [a for a in window.values() if a["kind"] == "clean" and a["clean_confidence"] == "low"]
    assert all(a["observed_days"] < 365 for a in young)


def test_since_on_a_mined_output_reuses_it(samples: dict[str, Sample], tmp_path: Path) -> None:
    sample = samples["pyledger"]
    out = tmp_path / "out"
    build([sample.path], out, load_config(), progress=False)
    result = build(
        [sample.path],
        out,
        load_config(),
        BuildOptions(window=Window(since=dt.datetime(2024, 6, 1, tzinfo=dt.timezone.utc))),
        progress=False,
        force=True,
    )
    assert result.reports[0].reused_labels == result.reports[0].labelled > 0


def test_bad_dates_are_one_line_errors(samples: dict[str, Sample], tmp_path: Path) -> None:
    repo = str(samples["pyledger"].path)
    for args, words in [
        (["--since", "last tuesday"], "not a date"),
        (["--since", "2999-01-01"], "in the future"),
        (["--since", "2024-05-01", "--until", "2024-01-01"], "after --until"),
    ]:
        result = CliRunner().invoke(main, ["build", repo, "--out", str(tmp_path / "o"), *args])
        assert result.exit_code == 2 and words in result.stderr and len(result.stderr.strip().split("\n")) == 1
    assert not (tmp_path / "o").exists()


def test_the_repository_keeps_its_name_when_another_history_is_merged_in(tmp_path: Path) -> None:
    """Fixture ids and the repository's split hash its identity. Merging in an unrelated history
    whose root sorts first must not rename the repository; nor may 0.2.0 rename one an earlier
    build named after such a root."""
    from test_messy import merge_a_root_sorting_before, with_a_bug

    repo = tmp_path / "grows"
    repo.mkdir()
    first, _ = with_a_bug(repo)
    out = tmp_path / "out"
    build([repo], out, load_config(), progress=False)

    def named(out: Path) -> tuple[str, list[tuple[str, str]]]:
        manifest = json.loads((out / "manifest.json").read_text())
        return manifest["repositories"][0]["identity"], sorted((e["id"], e["split"]) for e in manifest["fixtures"])

    before = named(out)
    assert before[0] == first and before[1]
    other = merge_a_root_sorting_before(repo, first)
    build([repo], out, load_config(), progress=False, force=True)
    assert named(out) == before
    # An output an earlier miner named after the root that sorted first keeps that name.
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["repositories"][0]["identity"] = other
    (out / "manifest.json").write_text(json.dumps(manifest))
    build([repo], out, load_config(), progress=False, force=True)
    assert named(out)[0] == other


def test_a_fix_that_is_itself_a_fixture_keeps_both_in_one_family(tmp_path: Path) -> None:
    """Change X has a defect that F fixes; F brings its own defect, which G fixes. X's answer names
    F (its fix), so X and F's fixture are one family: retiring X from held-out moves F's too, or a
    published dev answer would describe a held-out change."""
    from test_messy import commit, git

    repo = tmp_path / "chain"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit(repo, {"calc.py": b"def one():\n    return 1\n"}, "Import", "2020-01-03T10:00:00Z")
    x = commit(repo, {"calc.py": b"def one():\n    return 1\n\n\ndef two():\n    return 3\n"}, "Add two", "2021-01-04T10:00:00Z")
    f = commit(
        repo,
        {"calc.py": b"def one():\n    return 1\n\n\ndef two():\n    return 2 + 1\n"},
        "Fix two returning the wrong value",
        "2022-01-05T10:00:00Z",
    )
    commit(
        repo,
        {"calc.py": b"def one():\n    return 1\n\n\ndef two():\n    return 2\n"},
        "Fix two adding one",
        "2023-01-06T10:00:00Z",
    )
    out = tmp_path / "out"
    config = load_config().with_overrides(split={"heldout": ["chain"]})
    build([repo], out, config, progress=False)
    heads = {json.loads(p.read_text())["head"]: json.loads(p.read_text()) for p in (out / "answers").glob("*.json")}
    assert {x, f} <= set(heads) and heads[x]["family"] == heads[f]["family"]
    result = CliRunner().invoke(main, ["split", "refresh", str(out), "--retire-before", "2021-06-01", "--reason", "t"])
    assert result.exit_code == 0, result.output
    splits = {json.loads(p.read_text())["head"]: json.loads(p.read_text())["split"] for p in (out / "answers").glob("*.json")}
    assert splits[x] == splits[f] == "dev"
    audit = CliRunner().invoke(main, ["audit", str(out), "--repo", str(repo)])
    assert audit.exit_code == 0, audit.output
