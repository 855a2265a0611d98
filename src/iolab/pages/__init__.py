"""HTML pages and their plots: the library that ``report``, ``diagnose --html``, ``compare``,
``study``, ``sweep`` and ``triage`` build their one self-contained page with (inline SVG, no
network).

Data preparation (``prep_*``: tables and plot series of engine documents and job models,
unit-tested) is kept apart from drawing (:mod:`iolab.pages.plots`: matplotlib, only draws)
and from the page (:mod:`iolab.pages.page`). It imports no verb: the verbs import it.
"""
