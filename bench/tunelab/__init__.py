"""Research switches of iolab tune and the replay harness that judges them, for the bench
scripts (bench/tune_variants, bench/tune_efficiency, bench/tune_btio), never for
``iolab tune`` itself: it runs :class:`iolab.tune.policy.Policy` and
:class:`iolab.tune.search.Tuner` as they are.

- :mod:`tunelab.rules`: the winner statistics the product does not use;
- :mod:`tunelab.policy`: ResearchPolicy (every switch) and ResearchTuner (the Tuner that
  obeys them);
- :mod:`tunelab.replay`: searches replayed from exhaustive measurements, CPU only.

A bench script finds this package because a script's own directory (bench/) is on sys.path;
tests import it the same way (tests/tune/conftest.py).
"""
