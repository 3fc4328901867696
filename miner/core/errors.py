"""Every error miner raises on purpose: one base class, and a message fit for a person.

The message names the cause and the fix; the CLI prints it on one line and exits 2.
"""

INTERRUPTED = "interrupted: nothing was written to the output directory; run the same command again to resume"


class MinerError(Exception):
    """Base of all errors that are the user's to fix (bad input), not bugs in miner."""


class NotARepositoryError(MinerError):
    pass


class EmptyRepositoryError(MinerError):
    pass


class UnknownRevisionError(MinerError):
    pass


class ConfigError(MinerError):
    pass


class OutputDirError(MinerError):
    pass


class SpecError(MinerError):
    """A sample-repository spec is malformed."""


class MissingObjectError(MinerError):
    """The repository lacks an object its history names (partial clone, damaged store)."""


class PromisorUnreachableError(MinerError):
    """A partial clone's promisor remote could not give the objects the clone lacks."""


class TransientGitError(MinerError):
    """git failed for a reason of this run (killed by a signal, an object it could not read yet holds):
    never kept in the cache as an answer; the next run asks again."""


class WorkerLostError(MinerError):
    """A worker process of the build died (killed, or out of memory)."""


class OutputLockedError(MinerError):
    """Another build is writing the same output."""


class TargetDirError(MinerError):
    """The directory ``miner materialize`` was asked to create exists and holds something."""


class RepositoryMismatchError(MinerError):
    """The repository given is not the one the fixture was mined from."""


class JudgeError(MinerError):
    """``miner judge`` could not ask its model, or the model's reply is not the rubric's answer."""
