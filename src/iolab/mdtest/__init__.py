"""``iolab mdtest``: an mdtest (IOR 4) command line on iolab's engine, with mdtest's report."""
