"""A scripted Bluetooth LE controller on /dev/vhci, for the system test (Tests/System/run.sh, in the QEMU guest).

BlueZ's btvirt reports an advert once per scan enable with RSSI 127 (unknown); beacond's ranging, its "a beacon
that keeps advertising never exits" promise and its handling of malformed input need a controller that keeps
reporting, with chosen RSSI values, on a schedule. This is that controller:

- it opens /dev/vhci and asks the kernel for a primary controller (vendor packet `ff 00`; the kernel answers
  `ff 00 <index le16>`), then answers the kernel's HCI initialisation with well-formed Command Complete events.
  It claims an LE-only Bluetooth 4.2 controller (HCI version 8, no extended advertising or scanning features),
  so the kernel scans with the legacy LE Set Scan Parameters / Enable commands and the controller sends legacy
  LE Advertising Reports (LE Meta event 0x3E, subevent 0x02), as most deployed controllers do;
- while the host has LE scanning enabled, it reports every beacon of its `beacons` table at the beacon's own
  rate and RSSI (changed at any time by the script), and `inject` sends raw events (malformed reports).

Packets on /dev/vhci are H4-framed: a type byte (01 command, 04 event) before the HCI packet. The values it
answers with follow BlueZ's emulator/btdev.c and the Core spec (Vol 4 Part E 7.4, 7.8).

Use it from Python (`Controller`, as Tests/System/guest/vhci_test.py does) or alone, for a manual look:
    python3 Tests/System/vhci_controller.py E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 1 2 --rssi -60 --hz 10
"""
import argparse
import errno
import os
import select
import struct
import sys
import threading
import time
import uuid as uuidlib

H4_COMMAND = 0x01
H4_EVENT = 0x04
H4_VENDOR = 0xFF
COMMAND_COMPLETE = 0x0E
LE_META = 0x3E
LE_ADVERTISING_REPORT = 0x02
ADV_NONCONN_IND = 0x03
RANDOM_ADDRESS = 0x01

LE_SET_SCAN_ENABLE = 0x200C
RESET = 0x0C03


def _supported_commands():
    """The Read Local Supported Commands bitmap (64 octets, Core Vol 4 Part E 6.27): what the kernel may send.
    Only the LE essentials, so the kernel's init stays short and every command it sends is answered."""
    octets = bytearray(64)

    def set_bit(octet, bit):
        octets[octet] |= 1 << bit
    set_bit(5, 6)   # Set Event Mask
    set_bit(5, 7)   # Reset
    set_bit(14, 3)  # Read Local Version Information
    set_bit(14, 5)  # Read Local Supported Features
    set_bit(14, 7)  # Read Buffer Size
    set_bit(15, 1)  # Read BD_ADDR
    set_bit(25, 0)  # LE Set Event Mask
    set_bit(25, 1)  # LE Read Buffer Size
    set_bit(25, 2)  # LE Read Local Supported Features
    set_bit(25, 4)  # LE Set Random Address
    set_bit(26, 2)  # LE Set Scan Parameters
    set_bit(26, 3)  # LE Set Scan Enable
    set_bit(26, 6)  # LE Read Filter Accept List Size
    set_bit(26, 7)  # LE Clear Filter Accept List
    set_bit(27, 0)  # LE Add Device To Filter Accept List
    set_bit(27, 1)  # LE Remove Device From Filter Accept List
    set_bit(28, 3)  # LE Read Supported States
    return bytes(octets)


SUPPORTED_COMMANDS = _supported_commands()
# LMP features: byte 4 bit 5 "BR/EDR Not Supported", bit 6 "LE Supported (Controller)".
LMP_FEATURES = bytes([0, 0, 0, 0, 0x60, 0, 0, 0])


def _return_parameters(address):
    """Command Complete return parameters (after the status byte) per opcode; anything else gets the status only."""
    return {
        0x1001: struct.pack("<BHBHH", 0x08, 0x0000, 0x08, 0x05F1, 0x0000),  # version 4.2, Linux Foundation
        0x1002: SUPPORTED_COMMANDS,
        0x1003: LMP_FEATURES,
        0x1005: struct.pack("<HBHH", 251, 0, 10, 0),  # ACL MTU and packets; no SCO
        0x1009: address,
        0x2002: struct.pack("<HB", 251, 10),  # LE ACL MTU and packets
        0x2003: bytes(8),  # no LE features: legacy advertising and scanning, no privacy
        0x200F: bytes([8]),  # filter accept list size
        0x201C: bytes([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x03, 0x00, 0x00]),  # supported states
        0x0C14: bytes(248),  # local name
        0x2007: bytes([0]),  # advertising TX power
    }


class Beacon:
    """One advertiser the controller reports: an iBeacon (or any advertising data) at `rssi`, `hz` times a
    second. The script may change rssi/hz/data at any time; `active` false makes it silent."""

    def __init__(self, address, data, rssi=-60, hz=10.0):
        self.address = address
        self.data = data
        self.rssi = rssi
        self.hz = hz
        self.active = True
        self.next_due = 0.0
        self.sent = 0


def ibeacon_data(beacon_uuid, major, minor, tx_power=-59):
    """Advertising data of an iBeacon: Flags, then Apple manufacturer data 02 15 UUID major minor power."""
    frame = (bytes([0x4C, 0x00, 0x02, 0x15]) + uuidlib.UUID(beacon_uuid).bytes + major.to_bytes(2, "big")
             + minor.to_bytes(2, "big") + bytes([tx_power & 0xFF]))
    return bytes([0x02, 0x01, 0x06, len(frame) + 1, 0xFF]) + frame


def random_static_address(number):
    """A random static address (top two bits set) numbered `number`, as the 6 bytes sent on air (little-endian)."""
    text = "C0:%02X:%02X:00:00:%02X" % ((number >> 16) & 0xFF, (number >> 8) & 0xFF, number & 0xFF)
    return bytes(reversed(bytes.fromhex(text.replace(":", "")))), text


def advertising_report(beacon):
    """H4 LE Meta event with one legacy LE Advertising Report for `beacon`."""
    report = (bytes([ADV_NONCONN_IND, RANDOM_ADDRESS]) + beacon.address + bytes([len(beacon.data)]) + beacon.data
              + bytes([beacon.rssi & 0xFF]))
    parameters = bytes([LE_ADVERTISING_REPORT, 1]) + report
    return bytes([H4_EVENT, LE_META, len(parameters)]) + parameters


class Controller:
    """The virtual controller: `open` creates it (returns the hci index), a thread answers commands and reports
    beacons while the host scans, `close` removes it from the kernel (as unplugging a dongle)."""

    def __init__(self, address_number=1, log=None):
        self.address, self.address_text = random_static_address(0xABC000 + address_number)
        self.log_file = log
        self.fd = None
        self.index = None
        self.scanning = False
        self.scan_enables = 0
        self.commands = []  # opcodes received, in order
        self.beacons = []
        self.lock = threading.Lock()
        self.thread = None
        self.stopping = False
        self.reports_sent = 0
        self.write_errors = 0
        self.returns = _return_parameters(self.address)

    def log(self, text):
        if self.log_file:
            self.log_file.write("%.3f vhci: %s\n" % (time.monotonic(), text))
            self.log_file.flush()

    # MARK: Lifecycle

    def open(self, timeout=10):
        """Creates the controller; returns its index (hciN)."""
        self.fd = os.open("/dev/vhci", os.O_RDWR)
        os.write(self.fd, bytes([H4_VENDOR, 0x00]))  # a primary controller
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("the kernel did not answer the vhci create request within %g s" % timeout)
            ready, _, _ = select.select([self.fd], [], [], remaining)
            if not ready:
                continue
            packet = os.read(self.fd, 4096)
            if len(packet) >= 4 and packet[0] == H4_VENDOR:
                self.index = packet[2] | packet[3] << 8
                break
            self.log("before the index: %s" % packet.hex())
        self.stopping = False
        self.scanning = False
        self.thread = threading.Thread(target=self._run, name="vhci", daemon=True)
        self.thread.start()
        self.log("created hci%d (%s)" % (self.index, self.address_text))
        return self.index

    def close(self):
        """Stops the thread and closes /dev/vhci: the kernel unregisters hciN."""
        self.stopping = True
        if self.thread is not None:
            self.thread.join(5)
            self.thread = None
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        self.log("closed hci%s" % self.index)
        self.scanning = False

    # MARK: The script's side

    def add_beacon(self, beacon):
        with self.lock:
            beacon.next_due = time.monotonic()
            self.beacons.append(beacon)
        return beacon

    def remove_beacon(self, beacon):
        with self.lock:
            if beacon in self.beacons:
                self.beacons.remove(beacon)

    def clear_beacons(self):
        with self.lock:
            self.beacons.clear()

    def inject(self, packet):
        """Writes one raw H4 packet (malformed events included) now, whether or not the host scans."""
        self._write(packet)

    # MARK: The controller's side

    def _write(self, packet):
        try:
            os.write(self.fd, packet)
        except OSError as error:
            self.write_errors += 1
            self.log("write failed (%s): %s" % (error, packet.hex()))

    def _command_complete(self, opcode, status=0, parameters=b""):
        body = struct.pack("<BH", 1, opcode) + bytes([status]) + parameters
        self._write(bytes([H4_EVENT, COMMAND_COMPLETE, len(body)]) + body)

    def _answer(self, packet):
        if len(packet) < 4 or packet[0] != H4_COMMAND:
            self.log("ignored packet %s" % packet.hex())
            return
        opcode = packet[1] | packet[2] << 8
        parameters = packet[4:4 + packet[3]]
        self.commands.append(opcode)
        if opcode == LE_SET_SCAN_ENABLE and parameters:
            self.scanning = parameters[0] == 1
            if self.scanning:
                self.scan_enables += 1
                now = time.monotonic()
                with self.lock:
                    for beacon in self.beacons:
                        beacon.next_due = now
            self.log("scan %s" % ("enabled" if self.scanning else "disabled"))
        elif opcode == RESET:
            self.scanning = False
        known = opcode in self.returns
        self.log("command 0x%04x %s%s" % (opcode, parameters.hex(), "" if known else " (status only)"))
        self._command_complete(opcode, 0, self.returns.get(opcode, b""))

    def _report_due(self):
        """Sends the reports that are due; returns seconds until the next one."""
        now = time.monotonic()
        wait = 0.05
        with self.lock:
            beacons = list(self.beacons)
        for beacon in beacons:
            if not beacon.active or beacon.hz <= 0:
                continue
            if now >= beacon.next_due:
                self._write(advertising_report(beacon))
                beacon.sent += 1
                self.reports_sent += 1
                period = 1.0 / beacon.hz
                # Keep the rate over time; after a stall, start afresh rather than bursting.
                beacon.next_due = beacon.next_due + period if beacon.next_due + period > now else now + period
            wait = min(wait, max(0.0, beacon.next_due - now))
        return wait

    def _run(self):
        while not self.stopping:
            wait = self._report_due() if self.scanning else 0.05
            try:
                ready, _, _ = select.select([self.fd], [], [], wait)
            except OSError as error:
                if error.errno == errno.EINTR:
                    continue
                raise
            if ready:
                try:
                    packet = os.read(self.fd, 4096)
                except OSError as error:
                    self.log("read failed: %s" % error)
                    time.sleep(0.05)
                    continue
                self._answer(packet)


def main():
    parser = argparse.ArgumentParser(description="A scripted LE controller on /dev/vhci reporting one iBeacon.")
    parser.add_argument("uuid")
    parser.add_argument("major", type=int)
    parser.add_argument("minor", type=int)
    parser.add_argument("--rssi", type=int, default=-60)
    parser.add_argument("--hz", type=float, default=10.0)
    parser.add_argument("--seconds", type=float, default=0, help="stop after this long (0: until interrupted)")
    options = parser.parse_args()
    controller = Controller(log=sys.stderr)
    index = controller.open()
    print("hci%d" % index, flush=True)
    address, _ = random_static_address(1)
    controller.add_beacon(Beacon(address, ibeacon_data(options.uuid, options.major, options.minor), options.rssi,
                                 options.hz))
    try:
        if options.seconds > 0:
            time.sleep(options.seconds)
        else:
            while True:
                time.sleep(3600)
    except KeyboardInterrupt:
        pass
    controller.close()


if __name__ == "__main__":
    main()
