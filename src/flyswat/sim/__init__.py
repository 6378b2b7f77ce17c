"""The simulators: the reference one (:mod:`.reference`, the engine itself) and the fast one
(:mod:`.fast`, a numba kernel held to the engine by golden transcripts), one round driver
(:mod:`.driver`, also the environments') and one summary of results (:mod:`.summary`)."""
