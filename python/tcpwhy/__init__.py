"""Reads packet captures and tells why the TCP traffic in them is slow.

``analyze(paths)`` runs the Rust analysis of the ``tcpwhy`` command line and
returns every table as a ``pyarrow.Table``, with the schemas ``tcpwhy export``
writes to Parquet. ``tcpwhy.spark.analyze(spark, paths)`` runs the same
analysis on a Spark cluster and returns the same tables.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable, List, Optional, Sequence, Tuple, Union

import pyarrow as pa
import pyarrow.ipc

from ._tcpwhy import CaptureError, analyze_to_ipc

__all__ = ["Analysis", "CaptureError", "FileFailure", "analyze"]

Path = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class FileFailure:
    """A file that could not be read to its end: the frames before ``offset`` were analysed."""

    path: str
    offset: int
    frames_read: int
    message: str


@dataclass(frozen=True)
class Analysis:
    """Every table of one analysis; ``.to_pandas()`` on any of them gives a DataFrame.

    ``failures`` names each file that could not be read to its end; every
    other file was read whole.
    """

    connections: pa.Table
    transactions: pa.Table
    events: pa.Table
    timeline: pa.Table
    findings: pa.Table
    ledger: pa.Table
    failures: Tuple[FileFailure, ...] = ()

    def __repr__(self) -> str:
        tables = ", ".join(f"{name}={getattr(self, name).num_rows} rows" for name in TABLES)
        failed = f", failures={[failure.path for failure in self.failures]}" if self.failures else ""
        return f"Analysis({tables}{failed})"


TABLES = ("connections", "transactions", "events", "timeline", "findings", "ledger")


def analyze(
    paths: Union[Path, Iterable[Path]], *, memory_bytes: Optional[int] = None, threads: Optional[int] = None
) -> Analysis:
    """Reads the capture files once, merged by time as the command line merges them.

    The GIL is released while the files are read. The connections are split
    across ``threads`` threads (the number of cores unless given), as the
    command line's ``--threads`` splits them; the tables are the same for any
    number. A file that cannot be read
    to its end stops at its error and is listed in ``failures``, the others
    are read on; when no file can be, ``CaptureError`` is raised with the
    command line's message, which names the file and byte offset, unless the
    first ends inside a record: as on the command line, what came before it
    is analysed.
    """
    return _analysis(*analyze_to_ipc(capture_paths(paths), memory_bytes, threads))


def capture_paths(paths: Union[Path, Iterable[Path]]) -> List[str]:
    """The paths as strings; one path alone is a list of one."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    names = [os.fspath(path) for path in paths]
    if not names:
        raise ValueError("no capture files given")
    return names


def _analysis(
    streams: Sequence[Tuple[str, bytes]], failures: Sequence[Tuple[str, int, int, str]]
) -> Analysis:
    tables = {name: _table(stream) for name, stream in streams}
    return Analysis(**tables, failures=tuple(FileFailure(*failure) for failure in failures))


def _table(stream: bytes) -> pa.Table:
    return pa.ipc.open_stream(pa.py_buffer(stream)).read_all()
