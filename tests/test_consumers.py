"""Every export loaded by the tool it is made for: inspect_ai, the datasets library (JSON Lines and
Parquet). promptfoo, an npm package, is run by scripts/promptfoo_check.py."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from conftest import every_clean_config
from samples import build_repo

import miner
from miner.commands.build import build
from miner.commands.export import Selection, export, visible_record
from miner.core.records import iso


def test_inspect_loads_the_samples_and_scores_them_with_miners_scorer(two_splits: Path, tmp_path: Path) -> None:
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import json_dataset
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.solver import generate

    from miner.inspect_scorer import miner_findings

    export(two_splits, "inspect", tmp_path / "inspect")
    samples = json_dataset(str(tmp_path / "inspect" / "samples.jsonl"))
    fixtures = miner.open_output(two_splits)
    assert [s.id for s in samples] == [f.id for f in fixtures]
    assert {s.id for s in samples if s.target} == {f.id for f in fixtures if f.split == "dev"}
    targeted = [s for s in samples if s.target]
    outputs = []
    for _ in targeted:
        output = ModelOutput.from_content(model="mockllm/model", content="[]")
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tokenizer download
        outputs.append(output)
    (log,) = inspect_eval(
        Task(dataset=targeted, solver=generate(), scorer=miner_findings()),
        model=get_model("mockllm/model", custom_outputs=outputs),
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success" and log.samples
    for sample in log.samples:
        value = next(iter(sample.scores.values())).value if sample.scores else None
        assert value == (1.0 if json.loads(str(sample.target))["kind"] == "clean" else 0.0)


@pytest.mark.parametrize("parquet", [False, True])
def test_datasets_loads_the_hub_folder(two_splits: Path, tmp_path: Path, parquet: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    import datasets

    export(two_splits, "hf", tmp_path / "hf", parquet=parquet)
    fixtures = miner.open_output(two_splits)
    visible = datasets.load_dataset(str(tmp_path / "hf"), "visible", cache_dir=str(tmp_path / "cache"))
    answers = datasets.load_dataset(str(tmp_path / "hf"), "answers", cache_dir=str(tmp_path / "cache"))
    assert {split: len(part) for split, part in visible.items()} == {
        s: sum(f.split == s for f in fixtures) for s in ("dev", "heldout")
    }
    assert set(answers) == {"dev"}
    assert not {"kind", "defects", "head", "base", "family"} & set(visible["dev"].column_names)


# A file renamed in a later change than the first fixture's; cutoffs so that answers hold freshness.
RENAMED_LATE = r"""
author: Ann <ann@example.com>
commits:
  - id: import
    date: 2021-01-04T10:00:00Z
    message: Import the tool
    changes:
      - {write: tool/main.py, content: "def main():\n    return 0\n"}
  - id: sizes
    date: 2021-02-01T10:00:00Z
    message: Add a parser for sizes
    changes:
      - {write: tool/sizes.py, content: "def parse(text):\n    return int(text.strip())\n"}
  - id: units
    date: 2021-03-01T10:00:00Z
    message: Add unit names
    changes:
      - write: tool/units.py
        content: "UNITS = {\n    'k': 1000,\n    'm': 1000000,\n}\n\n\ndef unit(name):\n    return UNITS[name]\n"
  - id: ratio
    date: 2021-04-01T10:00:00Z
    message: Add a ratio helper
    changes:
      - {write: tool/ratio.py, content: "def ratio(a, b):\n    return a / b\n"}
  - id: move-units
    date: 2021-05-03T10:00:00Z
    message: Keep unit names beside the sizes, with larger units
    changes:
      - {rename: tool/units.py, to: tool/sizes_units.py}
      - edit: tool/sizes_units.py
        replace: "    'm': 1000000,\n"
        with: "    'm': 1000000,\n    'g': 1000000000,\n    't': 1000000000000,\n"
      - {edit: tool/sizes_units.py, append: "\n\ndef units():\n    return sorted(UNITS)\n"}
  - id: fix-ratio
    date: 2021-06-01T10:00:00Z
    message: Fix a crash in ratio when b is zero
    changes:
      - {edit: tool/ratio.py, replace: "    return a / b\n", with: "    return a / b if b else 0.0\n"}
  - id: later
    date: 2023-06-01T10:00:00Z
    message: Describe the tool
    changes:
      - {write: README.md, content: "tool\n"}
"""


@pytest.fixture(scope="module")
def renamed_late(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("renamed-late")
    (root / "spec").mkdir()
    (root / "spec" / "spec.yaml").write_text(RENAMED_LATE)
    build_repo(root / "spec", root / "repo")
    config = every_clean_config().with_overrides(split={"cutoffs": {"model-a": "2021-04-15", "model-b": "2022-01-01"}})
    build([root / "repo"], root / "out", config, progress=False)
    return root / "out"


@pytest.mark.parametrize("parquet", [False, True])
def test_datasets_loads_every_row_whatever_the_first_rows_hold(
    renamed_late: Path, tmp_path: Path, parquet: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Told no types, the loader takes them from the first batch it reads (of JSON Lines, the first 10 MB):
    there ``old_path`` is null, and a later renamed file's old path fails the load. Batches of one line
    (``chunksize=1``) make a small fixture set hold the same case: its first fixture renames nothing."""
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import datasets

    fixtures = list(miner.open_output(renamed_late))
    first, *later = fixtures
    assert not any(f.old_path for f in first.visible.files)
    assert [f.old_path for g in later for f in g.visible.files if f.old_path] == ["tool/units.py"]
    assert {f.kind for f in fixtures} == {"bug", "clean"}
    assert {fresh for f in fixtures for fresh in f.answer.fresh.values()} == {True, False}
    done = export(renamed_late, "hf", tmp_path / "hf", Selection(with_answers=True), parquet=parquet)
    small = {} if parquet else {"chunksize": 1}
    cache = str(tmp_path / "cache")
    visible = datasets.load_dataset(str(tmp_path / "hf"), "visible", cache_dir=cache, **small)["dev"]
    answers = datasets.load_dataset(str(tmp_path / "hf"), "answers", cache_dir=cache, **small)["dev"]
    assert list(visible) == [visible_record(f, done.canary) for f in fixtures]  # every row, every value
    pairs_back = [{**a, "fresh": {p["name"]: p["fresh"] for p in a["fresh"]}} for a in answers]
    as_written = [json.loads(json.dumps(a, default=iso)) for a in pairs_back]  # times as miner writes them
    assert as_written == [{**f.answer.model_dump(mode="json"), "canary": done.canary} for f in fixtures]
    assert answers[0]["head_date"] == dt.datetime.fromisoformat(fixtures[0].answer.head_date)  # a time, in UTC
    string, whole, share = datasets.Value("string"), datasets.Value("int64"), datasets.Value("float64")
    assert answers.features["defects"].feature["fix_date"] == datasets.Value("timestamp[s, tz=UTC]")
    assert visible.features["files"].feature["old_path"] == string
    assert visible.features["files"].feature["omitted"] == string
    assert answers.features["fresh"].feature == {"name": string, "fresh": datasets.Value("bool")}
    assert answers.features["survival"] == share and answers.features["observed_days"] == whole
    assert answers.features["defects"].feature["evidence"]["judge"]["reason"] == string  # a struct, though always null
