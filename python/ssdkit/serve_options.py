"""The NBD server's option values and defaults, apart from the server so that the command
line can offer them without importing it."""

#: `--clock`: "real" paces completions to the simulated time, "fast" answers at once.
CLOCKS = ("real", "fast")
#: The in-memory store's default limit: beyond it writes to new ranges get ENOSPC.
DEFAULT_MEMORY_LIMIT = 1 << 30
#: Queue pairs, and so connections at once, by default.
DEFAULT_QUEUES = 16
