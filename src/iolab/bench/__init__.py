"""``iolab bench``: drive the iolab-bench engine and store what it measures.

:mod:`.options` (the engine's option table as argparse options, IOR aliases), :mod:`.jobs`
(the user's case or the default job), :mod:`.engine` (run one launch: progress, JSON,
interruptions), :mod:`.cli` (the verb).
"""
