"""run, compare, sweep: the CLI commands with the same options, JSON results."""
import json
import os
import tempfile

from ._cli import invoke


def _text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _set_options(overrides):
    """{"nand.t_read_us": 20} -> ["--set", "nand.t_read_us=20"]."""
    options = []
    for path, value in (overrides or {}).items():
        options += ["--set", f"{path}={_text(value)}"]
    return options


def _optional(flag, value):
    return [] if value is None else [flag, _text(value)]


def run(platform, trace, set=None, stats=None, timeline=None):
    """`ispsim run --format json`: one platform on one trace. Returns the JSON
    summary as a dict; `stats` and `timeline` name files to write as well."""
    args = ["run", "--platform", platform, "--trace", trace, "--format", "json"]
    args += _set_options(set) + _optional("--stats", stats) + _optional("--timeline", timeline)
    return json.loads(invoke(args))


def compare(trace, platforms=None, set=None, baseline=None, jobs=None, timeline_dir=None):
    """`ispsim compare --format json`: several platforms on one trace (default:
    the CLI's). Returns the JSON table as a dict."""
    args = ["compare", "--trace", trace, "--format", "json"]
    if platforms is not None:
        args += ["--platforms", ",".join(platforms)]
    args += _set_options(set) + _optional("--baseline", baseline) + _optional("--jobs", jobs)
    args += _optional("--timeline-dir", timeline_dir)
    return json.loads(invoke(args))


def sweep(spec=None, out=None, jobs=None, text=None):
    """`ispsim sweep SPEC --out OUT`: a sweep file (`spec`, a path) or its `text`.
    Runs what `out` does not hold yet and returns its results.json as a dict."""
    if (spec is None) == (text is None):
        raise ValueError("sweep: give either spec (a file) or text")
    if out is None:
        raise ValueError("sweep: give out, the output folder")
    with tempfile.TemporaryDirectory(prefix="ispsim-sweep-") as scratch:
        if text is not None:
            spec = os.path.join(scratch, "sweep.txtpb")
            with open(spec, "w", encoding="utf-8") as f:
                f.write(text)
        invoke(["sweep", spec, "--out", out] + _optional("--jobs", jobs))
    with open(os.path.join(out, "results.json"), encoding="utf-8") as f:
        return json.load(f)


def rows(result):
    """The rows of a result, one dict per run: the one list of dicts the result
    holds, whatever the CLI names it (a list of dicts is returned as is)."""
    if isinstance(result, list):
        return result
    tables = [v for v in result.values() if isinstance(v, list) and v and all(isinstance(r, dict) for r in v)]
    if len(tables) != 1:
        raise ValueError(f"frame: expected one list of rows in the result, found {len(tables)}")
    return tables[0]


def frame(result):
    """A pandas DataFrame of a result's rows, one row per run; nested dicts become
    dotted columns ("metrics.latency_s"). Needs pandas (Debian: python3-pandas)."""
    try:
        import pandas
    except ImportError as e:
        raise ImportError("ispsim.frame needs pandas (apt-get install python3-pandas)") from e
    return pandas.json_normalize(rows(result), sep=".")
