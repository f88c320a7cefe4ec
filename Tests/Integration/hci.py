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


# MARK: Other beacon kinds and phones (docs/devices.md)

def advertising_event(data, rssi=-56, address="C0:FF:EE:00:00:01", address_type=0x01, event_type=ADV_NONCONN_IND):
    """One H4 LE Advertising Report carrying `data` (AD structures) from `address`."""
    address_bytes = bytes(reversed(bytes.fromhex(address.replace(":", ""))))
    report = bytes([event_type, address_type]) + address_bytes + bytes([len(data)]) + data + bytes([rssi & 0xFF])
    parameters = bytes([LE_ADVERTISING_REPORT, 0x01]) + report
    return bytes([0x04, LE_META_EVENT, len(parameters)]) + parameters


def line(event):
    return " ".join("%02X" % byte for byte in event) + "\n"


FLAGS = bytes([0x02, 0x01, 0x06])


def altbeacon_data(id1, id2, id3, reference_rssi=-59, company=0x0118):
    """AltBeacon: manufacturer data of `company`, beacon code BE AC, id1 (16 bytes), id2, id3, reference RSSI,
    one reserved byte (AD length 0x1B)."""
    payload = (company.to_bytes(2, "little") + bytes([0xBE, 0xAC]) + uuidlib.UUID(id1).bytes + id2.to_bytes(2, "big")
               + id3.to_bytes(2, "big") + bytes([reference_rssi & 0xFF, 0x00]))
    return FLAGS + bytes([len(payload) + 1, 0xFF]) + payload


def eddystone_data(frame):
    """Flags, the complete list of 16-bit service UUIDs (FEAA) and the Eddystone service data."""
    service = bytes([0xAA, 0xFE]) + frame
    return FLAGS + bytes([0x03, 0x03, 0xAA, 0xFE]) + bytes([len(service) + 1, 0x16]) + service


def eddystone_uid_data(namespace, instance, tx_power_at_zero=-18):
    return eddystone_data(bytes([0x00, tx_power_at_zero & 0xFF]) + bytes.fromhex(namespace) + bytes.fromhex(instance)
                          + bytes(2))


def eddystone_tlm_data(millivolts, temperature, advertisements=0, uptime_tenths=0):
    raw = int(round(temperature * 256)) & 0xFFFF
    return eddystone_data(bytes([0x20, 0x00]) + millivolts.to_bytes(2, "big") + raw.to_bytes(2, "big")
                          + advertisements.to_bytes(4, "big") + uptime_tenths.to_bytes(4, "big"))


def phone_data(tx_power_level=None):
    """What a phone's advertisement carries that beacond reads: nothing but flags and maybe its TX Power Level."""
    return FLAGS + (bytes([0x02, 0x0A, tx_power_level & 0xFF]) if tx_power_level is not None else b"")


def resolvable_private_address(irk_hex, random_bits):
    """A resolvable private address the key makes (Bluetooth Core Vol 3 Part H 2.4.2.2 and the ah function), with
    Python's own AES (python3-cryptography), independent of the daemon's. `irk_hex`: most significant byte first."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    prand = 0x400000 | (random_bits & 0x3FFFFF)
    encryptor = Cipher(algorithms.AES(bytes.fromhex(irk_hex)), modes.ECB()).encryptor()
    hash_bytes = (encryptor.update(bytes(13) + prand.to_bytes(3, "big")) + encryptor.finalize())[13:]
    value = prand.to_bytes(3, "big") + hash_bytes
    return ":".join("%02X" % byte for byte in value)
