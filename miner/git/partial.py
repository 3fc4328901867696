"""A partial clone (``git clone --filter=blob:none``): the objects its history lacks, fetched from its
promisor remote into an object directory of miner's own, so that the repository is never written."""

from __future__ import annotations

import logging
from pathlib import Path

from tqdm import tqdm

from miner.core.errors import PromisorUnreachableError
from miner.git.reader import Repo

_LOG = logging.getLogger(__name__)

FETCH_BATCH = 10000  # objects asked of a promisor remote in one git process


def with_promised(repo: Repo, head: str, where: Path, allow_missing: bool, progress: bool) -> Repo:
    """A partial clone with the objects its history at ``head`` lacks fetched from its promisor
    remote, in batches, into an object directory of miner's own (the repository is never written).
    A full clone, or a partial one that lacks nothing, is returned as it is."""
    if repo.promisor is None:
        return repo
    missing = repo.missing_objects(head)
    if not missing:
        return repo
    objects = Path(repo.overlay) if repo.overlay and (Path(repo.overlay) / "info").is_dir() else where / "objects"
    (objects / "pack").mkdir(parents=True, exist_ok=True)
    (objects / "info").mkdir(exist_ok=True)
    _LOG.info("%s: a partial clone lacking %d objects; fetching them from %r", repo.path, len(missing), repo.promisor)
    fetched = 0
    try:
        with tqdm(total=len(missing), desc=f"{repo.path.name}: fetch", disable=not progress, unit="object", leave=False) as bar:
            for start in range(0, len(missing), FETCH_BATCH):
                batch = missing[start : start + FETCH_BATCH]
                repo.fetch_objects(batch, objects)
                fetched += len(batch)
                bar.update(len(batch))
    except PromisorUnreachableError as exc:
        if not allow_missing:
            raise PromisorUnreachableError(
                f"{repo.path} is a partial clone lacking {len(missing)} objects, and its remote {repo.promisor!r} "
                f"could not give them ({exc}); run `git -C {repo.top} fetch --refetch {repo.promisor}` or mine a "
                "full clone, or pass --allow-missing-objects to mine without them"
            ) from None
        _LOG.warning(
            "%s: %d of %d missing objects could not be fetched (%s); mining without them: the paths they belong to are left out",
            repo.path,
            len(missing) - fetched,
            len(missing),
            exc,
        )
    return Repo(repo.git_dir, repo.exclude, str(objects)) if fetched else repo
