from typing import List, Optional, Tuple

class CaptureError(Exception):
    """A capture could not be read to its end; the message names the file and byte offset."""

def analyze_to_ipc(paths: List[str], memory_bytes: Optional[int] = None) -> List[Tuple[str, bytes]]:
    """Each table by name, as Arrow IPC stream bytes."""
