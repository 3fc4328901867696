"""Every export loaded by the tool it is made for: inspect_ai, the datasets library (JSON Lines and
Parquet). promptfoo, an npm package, is run by scripts/promptfoo_check.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import miner
from miner.commands.export import export


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
