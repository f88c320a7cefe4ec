#!/usr/bin/env python3
"""Writes the fuzz targets' seed inputs, derived at run time from Tests/Fixtures/corpus.

Usage: scripts/fuzz-seeds.py CORPUS_DIR OUT_DIR

OUT_DIR/<target>/ gets one file per seed, in the shape that target's LLVMFuzzerTestOneInput takes
(Fuzzing/Sources/fuzz-*/FuzzTarget.swift). Nothing here is committed: the vectors and captures in
the corpus are the source, so seeds follow the corpus as it grows.

  hci        H4 packets: every hex vector that is an HCI event, and every event in the btsnoop capture
  ad         advertising data: adv_data vectors, manufacturer data wrapped in its AD structure, and
             the AD data of every legacy and extended report
  linklayer  advertising PDUs: the link-layer vectors, the pcapng capture's advertising packets, and
             the AD data above wrapped in ADV_IND / ADV_NONCONN_IND PDUs
  btsnoop    btsnoop files (without the 8-byte magic): slices of the real capture, and the events
             as datalink 1001, 1002 and 2001
  pcap       selector byte + pcap file without its magic: events as LINKTYPE 201, PDUs as 256
  pcapng     pcapng files without the first 4 bytes: slices of the real capture, and both link types
  hexlines   slices of the vector files
  capture    every whole file above (magic included)
"""
import hashlib
import pathlib
import struct
import sys

BTSNOOP_EPOCH = 0x00DCDDB30F2F8000
SLICE = 8  # records per capture slice: small inputs fuzz fast, and every record shape still appears
PER_SOURCE = 40  # slices and synthetic files per source


def vectors(corpus):
    """(bytes, description) of every hex vector line."""
    for path in sorted((corpus / "vectors").glob("*.txt")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.split("\t")
            try:
                data = bytes.fromhex(fields[0].replace(" ", ""))
            except ValueError:
                continue
            yield data, fields[1] if len(fields) > 1 else ""


def btsnoop_records(data):
    """(flags, packet) of each record of a btsnoop file."""
    offset = 16
    while offset + 24 <= len(data):
        _, included, flags, _, _ = struct.unpack_from(">IIIIQ", data, offset)
        yield flags, data[offset + 24:offset + 24 + included]
        offset += 24 + included


def pcapng_blocks(data):
    """Raw blocks of a little-endian pcapng file."""
    offset = 0
    while offset + 12 <= len(data):
        length = struct.unpack_from("<I", data, offset + 4)[0]
        if length < 12:
            break
        yield data[offset:offset + length]
        offset += length


def ad_data_of_event(event):
    """AD data of each report in an H4 LE advertising report event (legacy or extended)."""
    if len(event) < 6 or event[0] != 0x04 or event[1] != 0x3E:
        return
    params = event[3:3 + event[2]]
    if len(params) < 2 or params[0] not in (0x02, 0x0D):
        return
    header, length_at = (9, 8) if params[0] == 0x02 else (24, 23)
    offset = 2
    for _ in range(params[1]):
        if offset + header > len(params):
            return
        length = params[offset + length_at]
        yield params[offset + header:offset + header + length]
        offset += header + length + (1 if params[0] == 0x02 else 0)


def btsnoop(datalink, records):
    out = b"btsnoop\0" + struct.pack(">II", 1, datalink)
    for index, (flags, packet) in enumerate(records):
        out += struct.pack(">IIIIQ", len(packet), len(packet), flags, 0, BTSNOOP_EPOCH + index * 1000)
        out += packet
    return out


def pcap(link_type, packets, big_endian, nanoseconds):
    order = ">" if big_endian else "<"
    magic = 0xA1B23C4D if nanoseconds else 0xA1B2C3D4
    out = struct.pack(order + "IHHiIII", magic, 2, 4, 0, 0, 65535, link_type)
    for index, packet in enumerate(packets):
        out += struct.pack(order + "IIII", 1_700_000_000 + index, index * 1000, len(packet), len(packet)) + packet
    return out


def pcapng_block(block_type, body):
    body += b"\0" * (-len(body) % 4)
    return struct.pack("<II", block_type, len(body) + 12) + body + struct.pack("<I", len(body) + 12)


def pcapng(link_type, packets):
    out = pcapng_block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
    out += pcapng_block(1, struct.pack("<HHI", link_type, 0, 0) + struct.pack("<HHB3x", 9, 1, 6) + b"\0" * 4)
    for index, packet in enumerate(packets):
        out += pcapng_block(6, struct.pack("<IIIII", 0, 0, index, len(packet), len(packet)) + packet)
    return out


def ll_record(pdu, rssi=-60):
    """LINKTYPE 256 packet: RF pseudo-header (signal power valid), access address, PDU, CRC."""
    return struct.pack("<BbbBIH", 37, rssi, -90, 0, 0, 0x0002) + struct.pack("<I", 0x8E89BED6) + pdu + b"\x55\x55\x55"


def chunks(items, size):
    return [items[i:i + size] for i in range(0, len(items), size)]


def spread(items, count):
    """At most `count` items, spread over the whole list."""
    if len(items) <= count:
        return items
    return [items[i * len(items) // count] for i in range(count)]


def main():
    corpus, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    seeds = {name: set() for name in ("hci", "ad", "linklayer", "btsnoop", "pcap", "pcapng", "hexlines", "capture",
                                      "espresense", "kinds", "irk")}
    # Identity Resolving Keys in every format docs/devices.md lists (the specification's sample key, D.7).
    seeds["irk"].update(text.encode() for text in [
        "irk:ec0234a357c8ad05341010a60a397d9b", "EC0234A357C8AD05341010A60A397D9B", "0xec0234a357c8ad05341010a60a397d9b",
        "ec:02:34:a3:57:c8:ad:05:34:10:10:a6:0a:39:7d:9b", "bluez:9B7D390AA610103405ADC857A33402EC",
        "m305CqYQEDQFrchXozQC7A==", "irk:m305CqYQEDQFrchXozQC7A==", "bluez:9B7D390AA610103405ADC857A33402EC@5C:F3:70:12:34:56",
        "", "irk:", "=="])
    # ESPresense readings as v4 and v3 firmware write them, and the JSON shapes a parser must get right.
    beacon = "iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2"
    seeds["espresense"].update(text.encode() for text in [
        '{"mac":"c1d2e3f4a5b6","id":"%s","rssi@1m":-59,"rssi":-65.50,"rxAdj":0,"rssiVar":1.20,'
        '"distance":1.41,"var":0.05,"int":1020}' % beacon,
        '{"id":"%s","idType":180,"rssi@1m":-59,"rssi":-70,"raw":2.51,"distance":2.2,"speed":0.01,"interval":1000}' % beacon,
        '{"id":"a\\"b\\u00e9\\ud83d\\ude00","distance":1e2,"x":[{"y":null},true,false,"}"]}',
        beacon, "IBEACON:E2C56DB5-DFFB-48D2-B060-D0F5A71096E0-65535-0", "[1,2]", "42", "",
        "altBeacon:2f234454-cf6d-4a0f-adf2-f4911ba9ffa6-1-2", "eddy:edd1ebeac0c04e5defa017-0123456789ab",
        "eddy:edd1ebeac04e5defa017-0123456789ab", "irk:ec0234a357c8ad05341010a60a397d9b"])

    events, ads, pdus = [], [], []
    for data, description in vectors(corpus):
        kind = description.split(" ", 1)[0]
        if data[:2] == b"\x04\x3e":
            events.append(data)
        elif data[:1] == b"\x3e":
            events.append(b"\x04" + data)
        elif "LL_adv_PDU" in kind:
            pdus.append(data)
        elif "apple_mfr_data" in kind:
            ads.append(b"\x1a\xff\x4c\x00" + data)
            ads.append(data)
        elif "mfr_data" in kind:
            ads.append(bytes([len(data) + 1, 0xFF]) + data)
        else:
            ads.append(data)
        seeds["hci"].add(data)  # odd ones too (raw socket buffers, command parameters)

    snoop = (corpus / "btsnoop" / "csacca+horizon-74-at-ble.btsnoop_hci.log").read_bytes()
    snoop_records = list(btsnoop_records(snoop))
    events += [packet for _, packet in snoop_records if packet[:2] == b"\x04\x3e"]
    events = list(dict.fromkeys(events))
    seeds["hci"].update(events)
    for event in events:
        ads.extend(ad_data_of_event(event))
    ads = list(dict.fromkeys(ads))
    seeds["ad"].update(ads)
    # Every kind BeaconFrameParser reads, from the integration tests' encoder (the same bytes the specifications
    # lay out), beside the corpus' AD data (its AltBeacon included).
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "Tests" / "Integration"))
    import hci
    kinds = [hci.altbeacon_data("2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6", 1, 2),
             hci.altbeacon_data("2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6", 65535, 0, reference_rssi=-128, company=0x004C),
             hci.eddystone_uid_data("edd1ebeac04e5defa017", "0123456789ab"),
             hci.eddystone_uid_data("00000000000000000000", "ffffffffffff", tx_power_at_zero=-128),
             hci.eddystone_tlm_data(3000, 21.5, 100, 2000), hci.eddystone_tlm_data(0, -0.5),
             hci.phone_data(8), hci.phone_data(-20)]
    seeds["kinds"].update(kinds + ads)

    air = (corpus / "negative-boston-mesh-ble_all_adv_w_scan.pcapng").read_bytes()
    blocks = list(pcapng_blocks(air))
    header_blocks = [b for b in blocks if struct.unpack_from("<I", b)[0] in (0x0A0D0D0A, 1)]
    packet_blocks = [b for b in blocks if struct.unpack_from("<I", b)[0] == 6]
    for block in packet_blocks:
        captured = struct.unpack_from("<I", block, 20)[0]
        packet = block[28:28 + captured]
        if len(packet) > 17 and struct.unpack_from("<I", packet, 10)[0] == 0x8E89BED6:
            pdus.append(packet[14:-3])
    pdus += [bytes([kind, len(ad) + 6]) + b"\x11\x22\x33\x44\x55\x66" + ad
             for kind in (0x40, 0x42) for ad in ads if len(ad) <= 249]
    pdus = spread(list(dict.fromkeys(pdus)), 400)
    seeds["linklayer"].update(pdus)

    # Captures: real slices and synthetic files in every container and byte order.
    snoop_slices = spread(chunks(snoop_records, SLICE), PER_SOURCE)
    for records in snoop_slices:
        seeds["btsnoop"].add(btsnoop(1002, records))
    for group in spread(chunks(events, SLICE), PER_SOURCE // 2):
        seeds["btsnoop"].add(btsnoop(1001, [(3, e[1:]) for e in group] + [(2, b"\x01\x03\x0c\x00")]))
        seeds["btsnoop"].add(btsnoop(2001, [(3, e[1:]) for e in group] + [(0x10002, b"\x03\x0c\x00")]))
        for selector, (big, nano) in enumerate(((False, False), (True, False), (False, True), (True, True))):
            seeds["pcap"].add(bytes([selector]) + pcap(201, [b"\0\0\0\1" + e for e in group], big, nano)[4:])
        seeds["pcapng"].add(pcapng(201, [b"\0\0\0\1" + e for e in group]))
    pdu_groups = spread(chunks(pdus, SLICE), PER_SOURCE // 2)
    for index, group in enumerate(pdu_groups):
        big, nano = index % 2 == 1, index % 4 >= 2
        seeds["pcap"].add(bytes([int(big) + 2 * int(nano)]) + pcap(256, [ll_record(p) for p in group], big, nano)[4:])
    for group in spread(chunks(packet_blocks, SLICE), PER_SOURCE):
        seeds["pcapng"].add(b"".join(header_blocks[:2]) + b"".join(group))
    # A shape the fuzzer did not reach in 10 minutes: a description block too short for its fields
    # before a readable one (docs/reliability.md, findings).
    for group in spread(chunks(events, SLICE), 4):
        short = pcapng_block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1)) + pcapng_block(1, b"")
        short += pcapng(201, [b"\0\0\0\1" + e for e in group])[28:]
        seeds["pcapng"].add(short)
    for path in sorted((corpus / "vectors").glob("*.txt")):
        # Hex, then a short stub of the expectation: the reader stops at the TAB, and long text
        # only slows the fuzzer down.
        lines = [line.split(b"\t")[0] + (b"\t" + line.split(b"\t")[1][:16] if b"\t" in line else b"") + b"\n"
                 if not line.startswith(b"#") else line[:40] + b"\n"
                 for line in path.read_bytes().splitlines()]
        for group in spread(chunks(lines, SLICE), PER_SOURCE // 4):
            seeds["hexlines"].add(b"".join(group))

    seeds["capture"].update(b"btsnoop\0" + s for s in seeds["btsnoop"])
    magics = [b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d"]
    seeds["capture"].update(magics[s[0] & 3] + s[1:] for s in seeds["pcap"])
    seeds["capture"].update(seeds["pcapng"])
    seeds["capture"].update(seeds["hexlines"])
    seeds["btsnoop"] = {s[8:] for s in seeds["btsnoop"]}
    seeds["pcapng"] = {s[4:] for s in seeds["pcapng"]}

    for name, inputs in seeds.items():
        directory = out / name
        directory.mkdir(parents=True, exist_ok=True)
        for old in directory.iterdir():
            old.unlink()
        for data in inputs:
            (directory / hashlib.sha1(data).hexdigest()).write_bytes(data)
        print(f"{name}: {len(inputs)} seeds, largest {max(map(len, inputs), default=0)} bytes")


if __name__ == "__main__":
    main()
