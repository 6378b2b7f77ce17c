"""The table, sans I/O: a pure core that takes commands with ``now`` and returns effects
(:mod:`.core`, :mod:`.io`), its stored events (:mod:`.events`) and its parts (:mod:`.seats`)."""
