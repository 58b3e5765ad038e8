"""ispsim from Python: run, compare and sweep through the `ispsim` command line.

Each call starts the CLI in a subprocess (the SystemC kernel elaborates one system
per process) and returns what the CLI wrote as JSON, as plain dicts and lists,
unchanged; rows() gives a result's runs and frame() a pandas DataFrame of them.
See README.md beside this package.
"""
from ._cli import BadInput, IspsimError, OutOfMemory, binary, data_path
from ._commands import compare, frame, rows, run, sweep

__all__ = ["run", "compare", "sweep", "rows", "frame", "binary", "data_path", "IspsimError", "BadInput", "OutOfMemory"]
