"""tcpwhy.spark.analyze, under Spark local[2], gives the tables tcpwhy.analyze
gives on a lab capture rotated into many files, numbers frames as the command
line does, and names a bad file while analysing the others."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import tcpwhy
import tcpwhy.spark

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = ROOT / "tests" / "captures"
TCPWHY = os.environ.get("TCPWHY_BIN", str(ROOT / "target" / "release" / "tcpwhy"))
TABLES = ["connections", "transactions", "events", "timeline", "findings", "ledger"]


@pytest.fixture(scope="module")
def spark():
    session = tcpwhy.spark.local_session(2)
    session.conf.set("spark.sql.shuffle.partitions", "2")
    yield session
    session.stop()


def rotate(capture, frames_per_file, directory):
    """The capture cut into files of `frames_per_file` frames, as a rotating capture writes them."""
    directory.mkdir()
    subprocess.run(["editcap", "-c", str(frames_per_file), str(capture), str(directory / "ring.pcap")], check=True)
    return sorted(directory.iterdir())


@pytest.fixture(scope="module")
def rotated(tmp_path_factory):
    files = rotate(CAPTURES / "pool_queueing.pcap", 50, tmp_path_factory.mktemp("rotated") / "ring")
    assert len(files) >= 30
    return files


def assert_same_tables(got, expected):
    for name in TABLES:
        got_table, expected_table = getattr(got, name), getattr(expected, name)
        assert got_table.schema == expected_table.schema, name
        assert got_table.to_pylist() == expected_table.to_pylist(), name


def test_spark_gives_the_tables_of_one_process_on_rotated_files(spark, rotated):
    # Given in reverse, as a listing may give them: both place them in time.
    result = tcpwhy.spark.analyze(spark, list(reversed(rotated)))
    expected = tcpwhy.analyze(rotated)
    assert_same_tables(result, expected)
    assert result.failures == ()
    assert result.findings.num_rows > 0 and result.transactions.num_rows > 0
    # Connections span the files' boundaries.
    spans = [last - first for first, last in zip(
        result.connections.column("first_frame").to_pylist(), result.connections.column("last_frame").to_pylist()
    )]
    assert max(spans) >= 50
    cli = subprocess.run(
        [TCPWHY, "connections", "--format", "json", "--quiet", *map(str, rotated)],
        check=True, capture_output=True, text=True,
    ).stdout
    connections = [json.loads(line) for line in cli.splitlines() if '"type":"connection"' in line]
    assert [(c["id"], c["first_frame"], c["last_frame"]) for c in connections] == list(zip(
        result.connections.column("id").to_pylist(),
        result.connections.column("first_frame").to_pylist(),
        result.connections.column("last_frame").to_pylist(),
    ))
    whole = tcpwhy.analyze(CAPTURES / "pool_queueing.pcap")
    assert result.connections.column("first_frame") == whole.connections.column("first_frame")


def test_a_bad_file_fails_alone_with_its_name(spark, rotated, tmp_path):
    files = [tmp_path / path.name for path in rotated]
    for source, copy in zip(rotated, files):
        shutil.copy(source, copy)
    cut = files[10]
    cut.write_bytes(cut.read_bytes()[:-5])
    text = tmp_path / "notes.txt"
    text.write_text("not a capture\n")
    files.insert(3, text)
    result = tcpwhy.spark.analyze(spark, files)
    failed = {Path(failure.path).name: failure for failure in result.failures}
    assert set(failed) == {cut.name, "notes.txt"}
    assert cut.name in failed[cut.name].message and "at byte" in failed[cut.name].message
    assert failed[cut.name].offset > 24
    expected = tcpwhy.analyze(files)
    assert result.failures == expected.failures
    assert_same_tables(result, expected)
    assert result.connections.num_rows > 0


def test_files_from_two_capture_points_are_refused(spark):
    both = [CAPTURES / "loss_upstream-client.pcap", CAPTURES / "loss_upstream-server.pcap"]
    with pytest.raises(tcpwhy.CaptureError, match="overlap in time"):
        tcpwhy.spark.analyze(spark, both)


def test_a_session_built_the_ordinary_way_runs_its_executors_on_a_python_with_tcpwhy(rotated, monkeypatch):
    from pyspark.sql import SparkSession

    # The executors would run a Python without tcpwhy, as the system's python3 is.
    monkeypatch.setenv("PYSPARK_PYTHON", str(Path(sys.base_prefix) / "bin" / "python3"))
    session = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
    try:
        got = tcpwhy.spark.analyze(session, rotated[:5])
    finally:
        session.stop()
    assert_same_tables(got, tcpwhy.analyze(rotated[:5]))
