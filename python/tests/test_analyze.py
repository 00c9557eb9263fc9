"""tcpwhy.analyze gives, table for table, what the command line's JSON lines
say on the lab captures; `tcpwhy export` Parquet loads in pandas and DuckDB;
bad input raises CaptureError with the command line's message, and a
capture cut inside its last record gives what came before it, as the command line does."""

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import duckdb
import pandas
import pyarrow as pa
import pytest

import tcpwhy
from tcpwhy._tcpwhy import analyze_to_ipc

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = sorted((ROOT / "tests" / "captures").glob("*.pcap"))
TCPWHY = os.environ.get("TCPWHY_BIN", str(ROOT / "target" / "release" / "tcpwhy"))

# The command line's JSON objects behind each table: (command, line type).
JSON_OF_TABLE = {
    "connections": ("connections", "connection"),
    "transactions": ("transactions", "transaction"),
    "events": ("events", "event"),
    "timeline": ("timeline", "tick"),
    "findings": ("diagnose", "finding"),
    "ledger": ("transactions", "connection_ledger"),
}


def cli_objects(command, capture, kind):
    output = subprocess.run(
        [TCPWHY, command, "--format", "json", "--quiet", str(capture)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    lines = [json.loads(line) for line in output.splitlines()]
    return [{k: v for k, v in line.items() if k != "type"} for line in lines if line["type"] == kind]


def plain_type(data_type):
    """The type with timestamps as int64 nanoseconds, as the JSON writes them."""
    if pa.types.is_timestamp(data_type):
        return pa.int64()
    if pa.types.is_struct(data_type):
        return pa.struct([field.with_type(plain_type(field.type)) for field in data_type])
    if pa.types.is_list(data_type):
        return pa.list_(data_type.value_field.with_type(plain_type(data_type.value_type)))
    return data_type


def rows(table):
    schema = pa.schema([field.with_type(plain_type(field.type)) for field in table.schema])
    return table.cast(schema).to_pylist()


def differences(path, json_value, row_value, found):
    """Every JSON field must be a column with the same value, and every
    column a JSON field."""
    if isinstance(json_value, dict):
        if isinstance(row_value, list):  # a map column: (key, value) pairs
            row_value = dict(row_value)
        for key, value in json_value.items():
            if key not in row_value:
                found.append(f"{path}.{key}: no such column")
            else:
                differences(f"{path}.{key}", value, row_value[key], found)
        for key in row_value:
            if key not in json_value:
                found.append(f"{path}.{key}: a column the JSON leaves out")
    elif isinstance(json_value, list):
        if len(json_value) != len(row_value):
            found.append(f"{path}: {json_value} in JSON, {row_value} in the table")
        for index, (j, r) in enumerate(zip(json_value, row_value)):
            differences(f"{path}[{index}]", j, r, found)
    elif isinstance(json_value, float) or isinstance(row_value, float):
        if abs(json_value - row_value) > 5e-4 + abs(json_value) * 1e-12:
            found.append(f"{path}: {json_value} in JSON, {row_value} in the table")
    elif json_value != row_value:
        found.append(f"{path}: {json_value!r} in JSON, {row_value!r} in the table")


def test_the_lab_captures_are_there():
    assert len(CAPTURES) >= 15


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda path: path.stem)
def test_every_table_holds_what_the_json_lines_say(capture):
    result = tcpwhy.analyze(capture)
    for table, (command, kind) in JSON_OF_TABLE.items():
        expected = cli_objects(command, capture, kind)
        actual = rows(getattr(result, table))
        assert len(actual) == len(expected), table
        found = []
        for index, (json_row, row) in enumerate(zip(expected, actual)):
            differences(f"{table}[{index}]", json_row, row, found)
        assert not found, found[:20]


def test_several_files_are_merged_by_time_as_the_command_line_merges_them():
    files = [ROOT / "tests" / "captures" / name for name in ("loss_upstream-client.pcap", "loss_upstream-server.pcap")]
    result = tcpwhy.analyze(files)
    output = subprocess.run(
        [TCPWHY, "connections", "--format", "json", "--quiet", *map(str, files)],
        check=True, capture_output=True, text=True,
    ).stdout
    ids = [json.loads(line)["id"] for line in output.splitlines() if '"type":"connection"' in line]
    assert result.connections.column("id").to_pylist() == ids


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda path: path.stem)
def test_the_tables_are_the_same_on_one_thread_and_on_four(capture):
    one = tcpwhy.analyze(capture, threads=1)
    four = tcpwhy.analyze(capture, threads=4)
    for table in tcpwhy.TABLES:
        assert getattr(one, table).equals(getattr(four, table)), table


def test_tables_become_dataframes_with_real_timestamps():
    result = tcpwhy.analyze(ROOT / "examples" / "demo.pcap")
    connections = result.connections.to_pandas()
    assert len(connections) == result.connections.num_rows > 0
    assert str(connections["first_ns"].dtype) == "datetime64[ns, UTC]"
    assert (connections["last_ns"] >= connections["first_ns"]).all()


def test_exported_parquet_loads_in_pandas_and_duckdb(tmp_path):
    capture = ROOT / "examples" / "demo.pcap"
    subprocess.run([TCPWHY, "export", "--quiet", "-o", str(tmp_path), str(capture)], check=True)
    for table, (command, kind) in JSON_OF_TABLE.items():
        count = len(cli_objects(command, capture, kind))
        path = tmp_path / f"{table}.parquet"
        assert len(pandas.read_parquet(path)) == count, table
        assert duckdb.sql(f"select count(*) from '{path}'").fetchall()[0][0] == count, table
    retransmitted = duckdb.sql(
        f"select sum(client_to_server.retransmissions.total) from '{tmp_path}/connections.parquet'"
    ).fetchall()[0][0]
    assert retransmitted == sum(
        c["client_to_server"]["retransmissions"]["total"] for c in cli_objects("connections", capture, "connection")
    )


def test_a_corrupt_capture_raises_the_command_lines_message(tmp_path):
    data = (ROOT / "tests" / "captures" / "zero_window.pcap").read_bytes()
    first_record_length = int.from_bytes(data[32:36], "little")
    second_record = 24 + 16 + first_record_length
    # The second record claims more bytes than any capture holds.
    corrupt = tmp_path / "corrupt.pcap"
    corrupt.write_bytes(data[: second_record + 8] + (0x7FFFFFFF).to_bytes(4, "little") + data[second_record + 12 :])
    cli = subprocess.run([TCPWHY, "connections", "--quiet", str(corrupt)], capture_output=True, text=True)
    assert cli.returncode == 2
    with pytest.raises(tcpwhy.CaptureError) as raised:
        tcpwhy.analyze(corrupt)
    assert f"tcpwhy: {raised.value}" == cli.stderr.strip()
    assert "corrupt.pcap" in str(raised.value) and "at byte" in str(raised.value)


def test_a_capture_cut_inside_its_last_record_gives_what_came_before_as_the_command_line_does(tmp_path):
    data = (ROOT / "tests" / "captures" / "zero_window.pcap").read_bytes()
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(data[: len(data) - 7])
    cli = subprocess.run(
        [TCPWHY, "connections", "--format", "json", "--quiet", str(cut)], capture_output=True, text=True
    )
    assert cli.returncode == 3
    listed = [line for line in map(json.loads, cli.stdout.splitlines()) if line["type"] == "connection"]
    result = tcpwhy.analyze(cut)
    assert [Path(failure.path).name for failure in result.failures] == ["cut.pcap"]
    assert result.failures[0].frames_read > 0
    assert result.connections.num_rows == len(listed) > 0


def test_no_files_is_a_value_error():
    with pytest.raises(ValueError):
        tcpwhy.analyze([])


def test_other_threads_run_while_a_capture_is_read():
    """With thread switches left to voluntary releases, another thread can
    only see the read under way if the read released the GIL. The native call
    is made directly: pyarrow, which releases the GIL itself, plays no part."""
    state = {"reading": False, "seen_reading": False, "stop": False}

    def watch():
        while not state["stop"]:
            if state["reading"]:
                state["seen_reading"] = True
            os.sched_yield()
            threading.Event().wait(0)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1000)
    try:
        watcher = threading.Thread(target=watch)
        watcher.start()
        state["reading"] = True
        analyze_to_ipc([str(ROOT / "examples" / "demo.pcap")])
        state["reading"] = False
        state["stop"] = True
        watcher.join()
    finally:
        sys.setswitchinterval(interval)
    assert state["seen_reading"]


def test_a_bad_file_among_several_is_named_and_the_others_are_read(tmp_path):
    captures = ROOT / "tests" / "captures"
    data = (captures / "zero_window.pcap").read_bytes()
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(data[: len(data) - 7])
    text = tmp_path / "notes.txt"
    text.write_text("not a capture\n")
    whole = captures / "pool_queueing.pcap"
    result = tcpwhy.analyze([whole, cut, text])
    failed = {Path(failure.path).name: failure for failure in result.failures}
    assert set(failed) == {"cut.pcap", "notes.txt"}
    assert failed["cut.pcap"].offset > 24 and failed["cut.pcap"].frames_read > 0
    assert "cut.pcap" in failed["cut.pcap"].message and "at byte" in failed["cut.pcap"].message
    alone = tcpwhy.analyze(whole)
    with_cut = tcpwhy.analyze([whole, cut])
    # Every connection of the whole file is there, and those of the cut file before its end.
    servers = set(result.connections.column("server").to_pylist())
    assert set(alone.connections.column("server").to_pylist()) <= servers
    assert result.connections.num_rows == with_cut.connections.num_rows > alone.connections.num_rows
    with pytest.raises(tcpwhy.CaptureError):
        tcpwhy.analyze([text, text])


def test_an_analysis_prints_as_the_size_of_each_table():
    capture = ROOT / "tests" / "captures" / "pool_queueing.pcap"
    result = tcpwhy.analyze(capture)
    listed = cli_objects("connections", capture, "connection")
    text = repr(result)
    assert text.startswith(f"Analysis(connections={len(listed)} rows, transactions=")
    assert "failures" not in text and len(text) < 200
