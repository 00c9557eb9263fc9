"""Reads packet captures and tells why the TCP traffic in them is slow.

``analyze(paths)`` runs the Rust analysis of the ``tcpwhy`` command line and
returns every table as a ``pyarrow.Table``, with the schemas ``tcpwhy export``
writes to Parquet.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable, Optional, Union

import pyarrow as pa
import pyarrow.ipc

from ._tcpwhy import CaptureError, analyze_to_ipc

__all__ = ["Analysis", "CaptureError", "analyze"]

Path = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class Analysis:
    """Every table of one analysis; ``.to_pandas()`` on any of them gives a DataFrame."""

    connections: pa.Table
    transactions: pa.Table
    events: pa.Table
    timeline: pa.Table
    findings: pa.Table
    ledger: pa.Table


def analyze(paths: Union[Path, Iterable[Path]], *, memory_bytes: Optional[int] = None) -> Analysis:
    """Reads the capture files once, merged by time as the command line merges them.

    The GIL is released while the files are read. A file that cannot be read
    to its end raises ``CaptureError`` with the command line's message, which
    names the file and byte offset.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    names = [os.fspath(path) for path in paths]
    if not names:
        raise ValueError("no capture files given")
    streams = analyze_to_ipc(names, memory_bytes)
    return Analysis(**{name: _table(stream) for name, stream in streams})


def _table(stream: bytes) -> pa.Table:
    return pa.ipc.open_stream(pa.py_buffer(stream)).read_all()
