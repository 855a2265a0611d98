"""``iolab sweep``: ``iolab bench`` over a grid of one or two parameters, each point stored
as it finishes (tables ``sweeps`` and ``sweep_points``), resumable."""
