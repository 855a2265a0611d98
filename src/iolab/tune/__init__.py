"""iolab tune: search, measure and prove the fastest I/O settings."""
