"""``miner split refresh``: rotate the held-out set after it has been exposed.

Retired fixtures (and the rest of their families) move from held-out to dev; the ledger
records the date, the reason and every fixture moved. The output is rewritten in a copy
and swapped into place, so a failure leaves the old output as it was.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from pathlib import Path

from miner.core.errors import MinerError
from miner.core.output import MANIFEST, dumps, open_output
from miner.stages.ledger import LEDGER, Ledger, refresh
from miner.stages.write import Written, assemble_manifest, write_atomic


def _read_ids(path: Path) -> set[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise MinerError(f"cannot read --retire file {path}: {exc.strerror}; give a file of fixture ids, one a line") from exc
    return {line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")}


def refresh_output(
    out: Path, *, reason: str, date: dt.date, retire_before: dt.datetime | None = None, retire_file: Path | None = None
) -> list[str]:
    """Retire held-out fixtures of the output at ``out``; return the ids moved to dev."""
    fixtures = open_output(out)
    try:
        ledger = Ledger.model_validate_json((out / LEDGER).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise MinerError(f"{out / LEDGER} is missing or damaged; rebuild the output with `miner build --force`") from exc
    answers = {answer.id: answer for answer in fixtures.answers()}
    retire: set[str] = set()
    if retire_file is not None:
        ids = _read_ids(retire_file)
        unknown = sorted(ids - set(answers))
        if unknown:
            raise MinerError(f"--retire names fixtures not in {out}: {', '.join(unknown[:3])}; check the file")
        retire |= ids
    if retire_before is not None:
        cutoff = retire_before.strftime("%Y-%m-%dT%H:%M:%SZ")
        retire |= {fid for fid, a in answers.items() if a.split == "heldout" and a.head_date < cutoff}
    new = refresh(ledger, retire, date, reason)
    moved = list(new.refreshes[-1].retired)
    staging = out.parent / f".miner-refresh-{out.name}"
    if staging.exists():
        shutil.rmtree(staging)
    shutil.copytree(out, staging)
    try:
        for fid in moved:
            answers[fid] = answers[fid].model_copy(update={"split": "dev"})
            write_atomic(staging / "answers" / f"{fid}.json", dumps(answers[fid].model_dump(mode="json")))
        entries = [e.model_copy(update={"split": "dev"}) if e.id in moved else e for e in fixtures.manifest.fixtures]
        fields = fixtures.manifest.model_dump(mode="json", exclude={"fixtures", "fresh"})
        written = (Written(e.model_dump(mode="json"), answers[e.id].fresh) for e in entries)
        write_atomic(staging / MANIFEST, assemble_manifest(fields, fixtures.manifest.fresh, written).json_text())
        write_atomic(staging / LEDGER, dumps(new.model_dump(mode="json")))
        old = out.parent / f".miner-old-{out.name}"
        if old.exists():
            shutil.rmtree(old)
        os.replace(out, old)
        os.replace(staging, out)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return moved
