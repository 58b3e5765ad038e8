"""The Python package against the CLI it wraps (run by ctest: tests/python/CMakeLists.txt,
with ISPSIM_BINARY naming the build's CLI and the package on PYTHONPATH)."""
import os

import pytest

import ispsim

TRACE = ispsim.data_path("traces/samples/blend_small.trace")


def test_run_is_compare_of_one_platform():
    # Two CLI commands, one simulation: the row run() returns is compare()'s row
    # of that platform when no baseline makes speedups.
    alone = ispsim.rows(ispsim.run("memllm", TRACE))
    together = ispsim.rows(ispsim.compare(TRACE, platforms=["gpu_fullcompute", "memllm"], baseline=""))
    assert len(alone) == 1 and len(together) == 2
    assert alone[0] == together[1]
    assert together[0] != together[1]


def test_set_reaches_the_simulation():
    default = ispsim.rows(ispsim.run("memllm", TRACE))[0]
    slower = ispsim.rows(ispsim.run("memllm", TRACE, set={"nand.t_read_us": 200}))[0]
    assert slower != default
    compared = ispsim.rows(ispsim.compare(TRACE, platforms=["memllm"], baseline="", set={"nand.t_read_us": 200}))
    assert compared == [slower]


def test_bad_input_is_an_exception_with_the_cli_line():
    with pytest.raises(ispsim.BadInput) as e:
        ispsim.run("memllm", TRACE, set={"nand.t_read_us": -1})
    assert e.value.exit_code == 2
    assert "nand.t_read_us" in str(e.value)
    with pytest.raises(ispsim.BadInput, match="no_such_platform"):
        ispsim.run("no_such_platform", TRACE)


def test_missing_binary_is_named(monkeypatch):
    monkeypatch.setenv("ISPSIM_BINARY", "/nonexistent/ispsim")
    with pytest.raises(ispsim.IspsimError, match="/nonexistent/ispsim: cannot run"):
        ispsim.run("memllm", TRACE)


def test_sweep_from_text_and_again_from_its_folder(tmp_path):
    text = (f'name: "py"\naxis {{ name: "trace.file" values: "{TRACE}" }}\n'
            'axis { name: "platform" values: "memllm" values: "gpu_fullcompute" }\n')
    out = str(tmp_path / "sweep")
    first = ispsim.sweep(text=text, out=out, jobs=1)
    assert len(ispsim.rows(first)) == 2
    spec = tmp_path / "py.txtpb"
    spec.write_text(text)
    again = ispsim.sweep(str(spec), out=out)
    # Nothing left to run: the same table; only the recorded command line differs.
    assert again["provenance"]["command_line"] != first["provenance"]["command_line"]
    again["provenance"].pop("command_line")
    first["provenance"].pop("command_line")
    assert again == first
    with pytest.raises(ValueError):
        ispsim.sweep(str(spec), out=out, text=text)


def test_rows_needs_exactly_one_table():
    assert ispsim.rows([{"a": 1}]) == [{"a": 1}]
    with pytest.raises(ValueError):
        ispsim.rows({"x": [{"a": 1}], "y": [{"b": 2}]})
    with pytest.raises(ValueError):
        ispsim.rows({"x": 1})


def test_frame_has_a_column_per_flattened_field():
    pandas = pytest.importorskip("pandas")
    result = ispsim.compare(TRACE, platforms=["gpu_fullcompute", "memllm"])
    table = ispsim.frame(result)
    assert isinstance(table, pandas.DataFrame)
    assert len(table) == 2
    expected = set()
    for row in ispsim.rows(result):
        for key, value in row.items():
            if isinstance(value, dict):
                expected |= {f"{key}.{sub}" for sub in value}
            else:
                expected.add(key)
    assert set(table.columns) == expected


def test_data_path_is_the_source_tree_here():
    assert os.path.isfile(TRACE)
    assert os.path.isfile(ispsim.data_path("platforms/memllm.textproto"))
