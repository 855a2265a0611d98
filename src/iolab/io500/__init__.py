"""``iolab io500 config.ini``: the IO500 benchmark on iolab's engine (see docs/io500.md)."""
