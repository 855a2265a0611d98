"""``iolab profile``: run a program under libiolab-trace.so and write its profile.

:func:`iolab.sources.profile.load` turns a profile into the same RawJob a Darshan log becomes.
"""
