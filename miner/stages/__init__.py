"""The stages of ``miner build``, one module each, in the order they run: ``walk`` (fix
candidates from history), ``vet`` (does the fix repair behaviour), ``blame`` (back to the
introducing commit, with ``anchors`` to start blame late), ``bug`` (which introducing commits
become bug fixtures, and their lines), ``clean`` (a sample of changes nothing
fixed), ``judge`` (an optional command asked about candidates), ``fixture`` (the visible and answer
parts, with ``strip`` removing hints), ``split`` (dev or held out, by family, kept in the
``ledger``), ``write`` (the output, atomically). ``baseline`` is PyDriller's SZZ, which ``miner
calibrate`` measures beside the blame stage. Each stage counts what it drops and why."""
