"""Captures with artefacts of their own, made from a clean one: every frame
recorded twice (as by a capture on two interfaces), or frames missing (as
when the capture itself drops them: data later acknowledged but never seen).

Reads and writes the classic pcap format tcpdump writes, Ethernet frames only.
"""

import struct

GLOBAL_HEADER_LENGTH = 24
RECORD_HEADER = struct.Struct("<IIII")  # seconds, microseconds, captured length, original length
ETHERTYPE_IPV4 = 0x0800
PROTOCOL_TCP = 6
SYN, FIN, RST = 0x02, 0x01, 0x04


class Record:
    def __init__(self, seconds, microseconds, original_length, data):
        self.seconds, self.microseconds = seconds, microseconds
        self.original_length, self.data = original_length, data

    def later_by(self, microseconds):
        total = self.seconds * 1_000_000 + self.microseconds + microseconds
        return Record(total // 1_000_000, total % 1_000_000, self.original_length, self.data)

    def is_plain_data(self):
        """A TCP segment with payload and no SYN, FIN or RST."""
        data = self.data
        if len(data) < 34 or struct.unpack("!H", data[12:14])[0] != ETHERTYPE_IPV4:
            return False
        ihl = (data[14] & 0x0F) * 4
        if data[23] != PROTOCOL_TCP or len(data) < 14 + ihl + 14:
            return False
        tcp = 14 + ihl
        payload = struct.unpack("!H", data[16:18])[0] - ihl - (data[tcp + 12] >> 4) * 4
        return payload > 0 and not data[tcp + 13] & (SYN | FIN | RST)


def read(path):
    """(the file's global header, its records)."""
    with open(path, "rb") as capture:
        content = capture.read()
    if content[:4] != b"\xd4\xc3\xb2\xa1":
        raise ValueError(f"{path}: not a little-endian microsecond pcap file")
    records, offset = [], GLOBAL_HEADER_LENGTH
    while offset + RECORD_HEADER.size <= len(content):
        seconds, microseconds, length, original = RECORD_HEADER.unpack_from(content, offset)
        offset += RECORD_HEADER.size
        records.append(Record(seconds, microseconds, original, content[offset:offset + length]))
        offset += length
    return content[:GLOBAL_HEADER_LENGTH], records


def write(path, header, records):
    with open(path, "wb") as capture:
        capture.write(header)
        for record in records:
            capture.write(RECORD_HEADER.pack(record.seconds, record.microseconds,
                                             len(record.data), record.original_length))
            capture.write(record.data)


def duplicate_every_frame(path, rng):
    """Each frame followed by an identical copy (same IP ID) 1 to 40 µs later."""
    header, records = read(path)
    doubled = []
    for record in records:
        doubled += [record, record.later_by(rng.randint(1, 40))]
    write(path, header, doubled)
    return len(records)


def remove_data_frames(path, rng, fraction):
    """Removes about `fraction` of the data segments (at least two), never
    the last fifth of the capture, so that their ACKs are still seen.
    Returns how many were removed."""
    header, records = read(path)
    candidates = [index for index, record in enumerate(records[:len(records) * 4 // 5])
                  if record.is_plain_data()]
    count = min(len(candidates), max(2, round(fraction * len(candidates))))
    removed = set(rng.sample(candidates, count))
    write(path, header, [record for index, record in enumerate(records) if index not in removed])
    return len(removed)
