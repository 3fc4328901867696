"""Everything that runs git or reads a repository's objects.

- ``reader``: ``Repo``, a repository opened for reading (git commands and pygit2);
- ``parse``: pure parsers of what git prints (log records, diffs, porcelain blame, quoted paths);
- ``overlay``: the commit-graph miner writes outside a repository to make blame faster;
- ``partial``: a partial clone's missing objects, fetched into an object directory of miner's own;
- ``writer``: ``NewRepo``, a new repository miner creates (``miner materialize``);
- ``env``: the configuration and environment every git command runs with.

Outside this package nothing opens a repository: every stage reads through ``Repo`` (the blame
anchors only catch pygit2's error for an anchor whose commit is gone), and nothing in miner writes
to a mined repository.
"""

from __future__ import annotations

from miner.git.parse import BlameHit, header_path, runs, squeeze, unquote
from miner.git.reader import Repo
from miner.git.writer import EMPTY_TREE, NewRepo

__all__ = ["EMPTY_TREE", "BlameHit", "NewRepo", "Repo", "header_path", "runs", "squeeze", "unquote"]
