"""The host-latency measurement's analysis (ccfair.devtools.host_latency) on captures written here, whose
latencies are known by construction."""

from __future__ import annotations

import struct
from pathlib import Path

from ccfair.devtools.host_latency import (
    PCAP_NS_MAGIC,
    ack_sizes,
    read_pcap,
    receiver_latencies,
    sender_latencies,
)

MSS = 1448
SENDER, RECEIVER = 40000, 20000


def frame(sport: int, dport: int, seq: int, ack: int, payload: int, sack: bool = False) -> bytes:
    options = b"\x01\x01\x08\x0a" + bytes(8)  # NOP NOP timestamps
    if sack:
        options += b"\x01\x01\x05\x0a" + bytes(8)  # NOP NOP one SACK block
    doff = 20 + len(options)
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, (doff // 4) << 4, 0x10, 1000, 0, 0) + options
    total = 20 + doff + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 0, 0, 64, 6, 0, bytes(4), bytes(4))
    return bytes(12) + b"\x08\x00" + ip + tcp  # payload bytes are not captured (snap length)


def write_pcap(path: Path, records: list[tuple[int, bytes]]) -> None:
    out = struct.pack("<IHHiIII", PCAP_NS_MAGIC, 2, 4, 0, 0, 96, 1)
    for t_ns, data in records:
        out += struct.pack("<IIII", t_ns // 1_000_000_000, t_ns % 1_000_000_000, len(data), len(data) + 1448)
        out += data
    path.write_bytes(out)


def data(seq_segments: int) -> bytes:
    return frame(SENDER, RECEIVER, 1 + seq_segments * MSS, 1, MSS)


def ack(acked_segments: int, sack: bool = False) -> bytes:
    return frame(RECEIVER, SENDER, 1, 1 + acked_segments * MSS, 0, sack)


def test_receiver_latency_is_the_time_from_the_segment_an_ack_ends_to_that_ack(tmp_path: Path) -> None:
    t = 1_000_000_000
    records = [
        (t, data(0)),
        (t + 100_000, data(1)),
        (t + 112_000, ack(2)),  # 12 us after the segment it ends
        (t + 200_000, data(2)),
        (t + 40_200_000, ack(3)),  # the delayed-ACK timer, 40 ms later
    ]
    write_pcap(tmp_path / "r0.pcap", records)
    segments = list(read_pcap(tmp_path / "r0.pcap"))
    assert [s.payload for s in segments] == [MSS, MSS, 0, MSS, 0]
    assert receiver_latencies(segments, 0) == [12_000, 40_000_000]
    # Samples before the window's start are left out.
    assert receiver_latencies(segments, t + 1_000_000) == [40_000_000]


def test_sender_latency_counts_new_data_after_an_ack_and_skips_retransmissions(tmp_path: Path) -> None:
    t = 2_000_000_000
    records = [
        (t, data(0)),
        (t + 1_000_000, ack(1)),
        (t + 1_009_000, data(1)),  # 9 us after the ACK
        (t + 1_010_000, data(2)),  # not the first after it: no sample
        (t + 2_000_000, ack(1)),
        (t + 2_005_000, data(0)),  # a retransmission: no sample
        (t + 2_020_000, data(3)),  # new data 20 us after the ACK
    ]
    write_pcap(tmp_path / "s0.pcap", records)
    assert sender_latencies(list(read_pcap(tmp_path / "s0.pcap")), 0) == {SENDER: [9_000, 20_000]}


def test_ack_sizes_leave_out_acks_next_to_sack_blocks(tmp_path: Path) -> None:
    t = 3_000_000_000
    records = [
        (t, ack(2)),
        (t + 1, ack(4)),  # 2 segments
        (t + 2, ack(5)),  # 1 segment
        (t + 3, ack(5, sack=True)),  # recovery: a duplicate ACK with a SACK block
        (t + 4, ack(40)),  # fills the hole: covers what was SACKed, left out
        (t + 5, ack(46)),  # a stretch ACK of 6 segments
    ]
    write_pcap(tmp_path / "r0.pcap", records)
    sizes = ack_sizes(list(read_pcap(tmp_path / "r0.pcap")), 0, MSS)
    assert sizes == {SENDER: {2: 1, 1: 1, 6: 1}}


def test_a_capture_cut_mid_record_ends_at_its_last_whole_record(tmp_path: Path) -> None:
    path = tmp_path / "s0.pcap"
    write_pcap(path, [(1, data(0)), (2, data(1))])
    path.write_bytes(path.read_bytes()[:-10])
    assert len(list(read_pcap(path))) == 1
