"""``iolab study``: the CUG'17 method on this machine, stored as sweeps of one study."""
