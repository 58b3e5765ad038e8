"""Finding the ispsim binary and its data, and calling it."""
import os
import shutil
import subprocess
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


class IspsimError(RuntimeError):
    """The CLI failed: `exit_code` and its `stderr`; the message is its last line."""

    def __init__(self, message, exit_code, stderr):
        super().__init__(message)
        self.exit_code = exit_code
        self.stderr = stderr


class BadInput(IspsimError, ValueError):
    """Exit code 2: an option, file or parameter was refused."""


class OutOfMemory(IspsimError):
    """Exit code 3: the platform cannot hold the request."""


def _installed(name):
    """A path recorded by the install step (_location.py), relative to this package."""
    try:
        from . import _location
    except ImportError:
        return None
    return (_PACKAGE / getattr(_location, name)).resolve()


def binary():
    """The ispsim executable: $ISPSIM_BINARY, else the one installed with this
    package, else `ispsim` on PATH."""
    env = os.environ.get("ISPSIM_BINARY")
    if env:
        return env
    installed = _installed("BINARY")
    if installed is not None and installed.is_file():
        return str(installed)
    found = shutil.which("ispsim")
    if found:
        return found
    raise IspsimError("ispsim: no binary found (set ISPSIM_BINARY or install ispsim)", 127, "")


def data_path(relative):
    """A file of ispsim's data (platforms/, assets/, traces/samples/): the
    installed copy, or the source tree's when the package is used from there."""
    installed = _installed("DATA")
    root = installed if installed is not None else _PACKAGE.parents[2]
    return str(root / relative)


_ERRORS = {2: BadInput, 3: OutOfMemory}


def invoke(args):
    """Runs `ispsim ARGS` and returns its stdout; raises on a non-zero exit."""
    command = [binary(), *map(str, args)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError as e:
        raise IspsimError(f"{command[0]}: cannot run: {e.strerror}", 127, "") from e
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        message = lines[-1] if lines else f"ispsim exited with code {done.returncode}"
        raise _ERRORS.get(done.returncode, IspsimError)(message, done.returncode, done.stderr)
    return done.stdout
