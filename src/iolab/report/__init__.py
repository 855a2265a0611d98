"""``iolab report``: one self-contained HTML page (inline SVG plots, no network) per stored
run, sweep, tune, study, profile or Darshan log. The verb only; the pages and plots are
:mod:`iolab.pages`'s.
"""
