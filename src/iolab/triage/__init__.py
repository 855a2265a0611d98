"""``iolab triage``: many logs -> a Parquet store -> node-hours wasted, ranked, with fixes."""
