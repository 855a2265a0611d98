"""``iolab report``: one self-contained HTML page (inline SVG plots, no network) per stored
run, sweep, tune, study, profile or Darshan log.

Data preparation (``prep_*``: tables and plot series, unit-tested) is kept apart from drawing
(:mod:`iolab.report.plots`: matplotlib, only draws) and from the page (:mod:`iolab.report.page`).
"""
