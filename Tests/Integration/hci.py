"""HCI events for the fifo scanner: one H4 LE Advertising Report carrying an iBeacon, as a hex line.

The bytes follow the Bluetooth Core spec (Vol 4 Part E 7.7.65.2) and Apple's iBeacon layout:

    04                      H4 packet type: HCI event
    3E LL                   LE Meta event, parameter length LL
    02                      subevent: LE Advertising Report
    01                      one report
    03                      event type ADV_NONCONN_IND
    TT AA AA AA AA AA AA    address type, address (little-endian)
    DL <AD structures>      data length, data
    RR                      RSSI (signed)

AD structures: flags `02 01 06`, then manufacturer data `1A FF 4C 00 02 15 <UUID 16> <major BE 2>
<minor BE 2> <measured power 1>`.
"""
import uuid as uuidlib

LE_META_EVENT = 0x3E
LE_ADVERTISING_REPORT = 0x02
ADV_NONCONN_IND = 0x03


def ibeacon_event(beacon_uuid, major, minor, tx_power=-59, rssi=-56,
                  address="C0:FF:EE:00:00:01", address_type=0x01):
    """The bytes of one H4 HCI event (packet type byte included)."""
    if not (0 <= major <= 0xFFFF and 0 <= minor <= 0xFFFF):
        raise ValueError("major and minor are 16-bit unsigned")
    if not (-128 <= tx_power <= 127 and -128 <= rssi <= 127):
        raise ValueError("tx_power and rssi are signed bytes")
    frame = (bytes([0x4C, 0x00, 0x02, 0x15]) + uuidlib.UUID(beacon_uuid).bytes
             + major.to_bytes(2, "big") + minor.to_bytes(2, "big") + bytes([tx_power & 0xFF]))
    data = bytes([0x02, 0x01, 0x06]) + bytes([len(frame) + 1, 0xFF]) + frame
    address_bytes = bytes(reversed(bytes.fromhex(address.replace(":", ""))))
    if len(address_bytes) != 6:
        raise ValueError("an address has 6 bytes")
    report = (bytes([ADV_NONCONN_IND, address_type]) + address_bytes + bytes([len(data)]) + data
              + bytes([rssi & 0xFF]))
    parameters = bytes([LE_ADVERTISING_REPORT, 0x01]) + report
    return bytes([0x04, LE_META_EVENT, len(parameters)]) + parameters


def ibeacon_line(beacon_uuid, major, minor, **options):
    """The same event as replay's text format: spaced hex, newline-terminated."""
    return " ".join("%02X" % byte for byte in ibeacon_event(beacon_uuid, major, minor, **options)) + "\n"
