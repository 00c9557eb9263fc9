from typing import List, Optional, Tuple

class CaptureError(Exception):
    """A capture could not be read to its end; the message names the file and byte offset."""

Outcome = Tuple[List[Tuple[str, bytes]], List[Tuple[str, int, int, str]]]

def analyze_to_ipc(
    paths: List[str], memory_bytes: Optional[int] = None, threads: Optional[int] = None
) -> Outcome:
    """Each table by name as Arrow IPC stream bytes, and each failed file as (path, offset, frames read, message)."""

def segment_schema() -> bytes:
    """An empty Arrow IPC stream of the segment records' schema."""

def plan_files(surveys_bytes: List[bytes]) -> Tuple[List[int], Optional[int]]:
    """The frames to add to each file's numbers, by file, and the first frame's time."""

def conclude_to_ipc(
    surveys_bytes: List[bytes], parts_bytes: List[bytes], memory_bytes: Optional[int] = None
) -> Outcome:
    """Every table of the analysis the parts make together, and the files that failed."""

class FileDecoder:
    """One file decoded into segment records, a batch at a time."""

    def __init__(self, path: str, source: int) -> None: ...
    def next_batch(self, at_most: int) -> Optional[bytes]:
        """Up to `at_most` segment records as Arrow IPC stream bytes; None once the file is over."""
    def survey(self) -> bytes:
        """What the file held, once it is over."""

class PartAnalyzer:
    """The per-connection stages over segment records in frame order."""

    def __init__(self, first_segment_ns: Optional[int], files: int, memory_bytes: Optional[int] = None) -> None: ...
    def add(self, stream: bytes) -> None:
        """Segment records as Arrow IPC stream bytes."""
    def finish(self) -> bytes:
        """What the stages found, as bytes for `conclude_to_ipc`."""
