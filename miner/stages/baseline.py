"""PyDriller's SZZ, the baseline miner's labels are measured beside (``miner calibrate --baseline
pydriller``, and the bench scripts).

PyDriller's ``Git.get_commits_last_modified_lines`` blames, at a fix's parent, every line the fix
deleted or changed, and names the commits that last touched them: the SZZ most mining pipelines use.
PyDriller writes into the repository it opens (it checks out), so it runs on a bare copy in a
temporary directory: the repository mined is never written.
"""

from __future__ import annotations

import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from miner.core.errors import MinerError


def pydriller_szz(
    path: Path, fixes: Iterable[str], timed: Callable[[str, float], None] = lambda fix, seconds: None
) -> dict[str, set[str]]:
    """fix -> the commits PyDriller names for it (an empty set where PyDriller fails on the commit:
    a binary file, a submodule). ``timed`` hears how long each fix took."""
    try:
        from pydriller import Git
    except ImportError as exc:  # a declared dependency; only a broken install lacks it
        raise MinerError("PyDriller is not installed; reinstall miner (pip install -e .)") from exc
    found: dict[str, set[str]] = {}
    with tempfile.TemporaryDirectory(prefix="miner-pydriller-") as tmp:
        copy = Path(tmp) / "copy.git"
        proc = subprocess.run(["git", "clone", "-q", "--bare", "--no-hardlinks", str(path), str(copy)], capture_output=True)
        if proc.returncode != 0:
            raise MinerError(f"cannot copy {path} for PyDriller: {proc.stderr.decode(errors='replace').strip()}")
        git = Git(str(copy))
        for fix in fixes:
            start = time.perf_counter()
            try:
                named = git.get_commits_last_modified_lines(git.get_commit(fix))
                found[fix] = {sha for shas in named.values() for sha in shas}
            except Exception:  # noqa: BLE001 - PyDriller fails on some commits: no answer, as a user would see
                found[fix] = set()
            timed(fix, time.perf_counter() - start)
        git.clear()
    return found
