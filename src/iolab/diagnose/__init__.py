"""``iolab diagnose``: Darshan logs (or iolab profiles) -> model -> rules -> findings."""
