"""The bounds of an eval's runner options: the most cases at once, retries and repetitions.

A module of its own so that the CLI can declare its options' bounds without importing the
runner (and the models with it) before the eval starts its agent processes' fork server.
"""

#: the most cases at once (each an agent process in replay), retries and repetitions
MAX_CONCURRENCY = 256
MAX_RETRIES = 100
MAX_REPEAT = 1000
