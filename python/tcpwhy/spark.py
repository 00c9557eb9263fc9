"""The tcpwhy analysis on Apache Spark, for captures too large for one machine.

``analyze(spark, paths)`` runs the stages of ``tcpwhy.analyze`` across a
cluster without splitting a connection between tasks:

1. each file is decoded by one task into segment records (one row per TCP
   segment, with its file, frame number, flow key and header fields);
2. the files are placed in time as the command line merges them, so every
   frame takes the number the command line gives it; the rows are grouped
   by flow key (the same both ways of a connection) and sorted by frame, and
   each group runs the per-connection stages (tracker, transactions, time
   ledger) in Rust;
3. the driver joins the groups' results and diagnoses the whole capture, so
   periodicity, load and port reuse see every connection.

The tables returned are those of ``tcpwhy.analyze`` on the same files.
Executors need the ``tcpwhy`` package installed, as the driver does: on a
``local`` master they are given the driver's Python, and elsewhere a
missing package is named in one sentence before any work starts.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Iterable, Iterator, List, Optional, Union

import pyarrow as pa
import pyarrow.ipc

from . import Analysis, Path, _analysis, capture_paths
from ._tcpwhy import FileDecoder, PartAnalyzer, conclude_to_ipc, plan_files, segment_schema

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["analyze", "local_session"]

# Segment records per batch a decoding task hands to Spark.
RECORDS_PER_BATCH = 65536

_PART = pa.schema([pa.field("part", pa.binary())])


def analyze(
    spark: "SparkSession",
    paths: Union[Path, Iterable[Path]],
    *,
    partitions: Optional[int] = None,
    memory_bytes: Optional[int] = None,
) -> Analysis:
    """Analyses the files of one capture (a rotating capture's files) on ``spark``.

    The files may be given in any order, except that where one ends at the
    very time the next begins, the earlier written must come first, as the
    command line would then read it first (``ring9`` before ``ring10``).

    ``partitions`` is how many groups of connections are analysed apart (the
    cluster's default parallelism unless given); ``memory_bytes`` is each
    group's memory budget. A file that cannot be read to its end stops at its
    error and is listed in ``failures``; when no file can be read,
    ``CaptureError`` is raised. Files whose frames interleave in time (from
    several capture points) raise ``CaptureError``: merge those in one
    process with ``tcpwhy.analyze``.
    """
    from pyspark.sql import functions as F
    from pyspark.storagelevel import StorageLevel

    _executors_import_tcpwhy(spark)
    names = capture_paths(paths)
    files = spark.sparkContext.parallelize(list(enumerate(names)), len(names)).toDF("file int, path string")
    decoded = files.mapInArrow(_decode_files, _spark_schema(_decoded_schema()))
    decoded = decoded.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        surveys = _surveys(decoded)
        frame_offsets, first_segment_ns = plan_files(surveys)
        offset_of_file = F.element_at(F.array(*[F.lit(offset) for offset in frame_offsets]), F.col("file") + 1)
        segments = (
            decoded.where(F.col("survey").isNull())
            .drop("survey")
            .withColumn("frame", F.col("frame") + offset_of_file)
        )
        analyze_part = functools.partial(_analyze_part, first_segment_ns, len(names), memory_bytes)
        parts = (
            segments.repartition(partitions or spark.sparkContext.defaultParallelism, "flow")
            .sortWithinPartitions("frame")
            .mapInArrow(analyze_part, "part binary")
            .collect()
        )
    finally:
        decoded.unpersist()
    return _analysis(*conclude_to_ipc(surveys, [bytes(row.part) for row in parts], memory_bytes))


def _executors_import_tcpwhy(spark: "SparkSession") -> None:
    """Makes sure Spark's executors can import tcpwhy. On this machine
    (a ``local`` master) they are given this Python, which has it;
    elsewhere, says in one sentence what to set."""
    import sys

    def cannot_import(_):
        # Defined here, so that Spark ships it by value to a Python that may lack tcpwhy.
        try:
            import tcpwhy._tcpwhy  # noqa: F401

            return []
        except ImportError as error:
            import sys as executor_sys

            return [f"{executor_sys.executable}: {error}"]

    context = spark.sparkContext
    problems = context.parallelize([0], 1).mapPartitions(cannot_import).collect()
    if problems and context.master.startswith("local"):
        context.pythonExec = sys.executable
        problems = context.parallelize([0], 1).mapPartitions(cannot_import).collect()
    if problems:
        raise RuntimeError(
            f"Spark's executors cannot import tcpwhy ({problems[0]}): install it where they run, "
            f"or set PYSPARK_PYTHON to a Python that has it (here {sys.executable}) "
            "before the session starts"
        )


def local_session(cores: int = 2) -> "SparkSession":
    """A Spark session on this machine with ``cores`` executor cores, its
    tasks run by this Python: to try the analysis without a cluster."""
    import os
    import sys

    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = (
        SparkSession.builder.master(f"local[{cores}]")
        .appName("tcpwhy")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    return session


def _decoded_schema() -> pa.Schema:
    """The segment records' schema, every field nullable, with each file's survey as one more row."""
    records = pa.ipc.open_stream(pa.py_buffer(segment_schema())).schema
    fields = [field.with_nullable(True) for field in records]
    return pa.schema(fields + [pa.field("survey", pa.binary())])


def _spark_schema(schema: pa.Schema):
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(schema)


def _surveys(decoded) -> List[bytes]:
    """Each file's survey, in the order the files were given."""
    rows = decoded.where("survey IS NOT NULL").select("file", "survey").collect()
    return [bytes(row.survey) for row in sorted(rows, key=lambda row: row.file)]


def _decode_files(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Each file named in ``batches`` as segment records, then its survey."""
    schema = _decoded_schema()
    for batch in batches:
        for source, path in zip(batch.column("file").to_pylist(), batch.column("path").to_pylist()):
            decoder = FileDecoder(path, source)
            while (stream := decoder.next_batch(RECORDS_PER_BATCH)) is not None:
                for records in pa.ipc.open_stream(pa.py_buffer(stream)):
                    no_survey = pa.nulls(records.num_rows, pa.binary())
                    yield pa.RecordBatch.from_arrays(records.columns + [no_survey], schema=schema)
            yield pa.RecordBatch.from_pylist([{"file": source, "survey": decoder.survey()}], schema=schema)


def _analyze_part(
    first_segment_ns: Optional[int],
    files: int,
    memory_bytes: Optional[int],
    batches: Iterator[pa.RecordBatch],
) -> Iterator[pa.RecordBatch]:
    """The per-connection stages over one group's records, in frame order."""
    analyzer = PartAnalyzer(first_segment_ns, files, memory_bytes)
    for batch in batches:
        analyzer.add(_stream_bytes(batch))
    yield pa.RecordBatch.from_pylist([{"part": analyzer.finish()}], schema=_PART)


def _stream_bytes(batch: pa.RecordBatch) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    return sink.getvalue().to_pybytes()
