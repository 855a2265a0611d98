"""``iolab compare A B``: two stored runs, sweeps, tunes or studies, or two logs, as B/A."""
