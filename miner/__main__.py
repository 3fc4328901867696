"""``python -m miner`` and the ``miner`` command: the command line, answering Ctrl-C and SIGTERM
from its first moment (importing the libraries it uses takes a few tenths of a second; the
command line installs its own handlers once they are in)."""

import os
import signal

from miner.core.errors import INTERRUPTED


def _stopped_early(signum: int, frame: object) -> None:
    os.write(2, INTERRUPTED.encode() + b"\n")
    os._exit(130)


def main() -> None:
    signal.signal(signal.SIGINT, _stopped_early)
    signal.signal(signal.SIGTERM, _stopped_early)
    from miner.cli import main as command_line

    try:
        command_line()
    finally:  # the work is done and said: a signal now would only turn a finished run's exit into a failure
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)


if __name__ == "__main__":
    main()
