"""One module per command of the ``miner`` command line, each a library function the command
calls: ``build`` (the pipeline over the stages), ``audit``, ``materialize``, ``calibrate``,
``explain``, ``refresh``, ``review``, ``score``, ``export`` and ``report``. The public names are
in ``miner.__all__``."""
