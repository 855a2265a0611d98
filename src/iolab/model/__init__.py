"""The one job model: every source (Darshan logs, iolab profiles) loads into it; rules,
reports and ``tune --from-log`` read only it."""
