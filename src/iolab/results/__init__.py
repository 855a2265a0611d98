"""The results database: every measurement iolab makes is stored here first.

:mod:`iolab.results.db` owns the SQLite file (schema, migrations, store, query);
:mod:`iolab.results.render` turns stored runs into a result tree and renders it as text, JSON
or CSV; :mod:`iolab.results.cli` is the ``iolab results`` verb.
"""
