"""iolab: measure, characterise, diagnose and fix HPC parallel I/O."""

__version__ = "0.1.0"
