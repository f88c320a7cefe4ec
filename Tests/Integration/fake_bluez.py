"""Just enough of bluetoothd (org.bluez) for beacond's bluez scanner, on the test's private bus: ObjectManager,
one adapter (hci0) with the discovery methods, and devices that advertise an iBeacon through Device1
PropertiesChanged (ManufacturerData and RSSI, as bluetoothd does with DuplicateData). It is served by the
GLib main loop the harness pumps; `close` makes it vanish from the bus like a stopped bluetoothd.
"""
import dbus
import dbus.service

ADAPTER_PATH = "/org/bluez/hci0"
OBJECT_MANAGER = "org.freedesktop.DBus.ObjectManager"
PROPERTIES = "org.freedesktop.DBus.Properties"


def ibeacon_payload(uuid, major, minor, tx_power=-59):
    """Apple's manufacturer data after the company id: 02 15, UUID, major, minor, measured power."""
    data = bytes([0x02, 0x15]) + bytes.fromhex(uuid.replace("-", "")) + major.to_bytes(2, "big") + minor.to_bytes(2, "big")
    return data + (tx_power & 0xFF).to_bytes(1, "big")


class Root(dbus.service.Object):
    def __init__(self, fake, bus):
        super().__init__(bus, "/")
        self.fake = fake

    @dbus.service.method(OBJECT_MANAGER, out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        adapter = {"Address": "00:AA:01:00:00:00", "Powered": dbus.Boolean(self.fake.powered),
                   "Discovering": dbus.Boolean(self.fake.discovering)}
        return {dbus.ObjectPath(ADAPTER_PATH): {"org.bluez.Adapter1": adapter}}

    @dbus.service.signal(OBJECT_MANAGER, signature="oa{sa{sv}}")
    def InterfacesAdded(self, path, interfaces):
        pass


class Adapter(dbus.service.Object):
    def __init__(self, fake, bus):
        super().__init__(bus, ADAPTER_PATH)
        self.fake = fake

    @dbus.service.method("org.bluez.Adapter1", in_signature="a{sv}")
    def SetDiscoveryFilter(self, filter):
        self.fake.filters.append({str(key): value for key, value in filter.items()})

    @dbus.service.method("org.bluez.Adapter1")
    def StartDiscovery(self):
        self.fake.discovering = True
        self.fake.starts += 1
        self.PropertiesChanged("org.bluez.Adapter1", {"Discovering": dbus.Boolean(True)}, [])

    @dbus.service.method("org.bluez.Adapter1")
    def StopDiscovery(self):
        self.fake.discovering = False
        self.fake.stops += 1
        self.PropertiesChanged("org.bluez.Adapter1", {"Discovering": dbus.Boolean(False)}, [])

    @dbus.service.signal(PROPERTIES, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass


class Device(dbus.service.Object):
    def __init__(self, bus, path):
        super().__init__(bus, path)

    @dbus.service.signal(PROPERTIES, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass


class FakeBluez:
    def __init__(self, address):
        self.bus = dbus.bus.BusConnection(address)
        self.filters = []
        self.starts = 0
        self.stops = 0
        self.powered = True
        self.discovering = False
        self.root = Root(self, self.bus)
        self.adapter = Adapter(self, self.bus)
        self.devices = {}
        self.name = dbus.service.BusName("org.bluez", self.bus)

    def advertise(self, uuid, major, minor, rssi, address="C4:7C:8D:6A:5B:4C"):
        """One advertisement heard: InterfacesAdded the first time, PropertiesChanged after (only while discovering,
        as bluetoothd reports devices only then)."""
        if not self.discovering:
            return False
        path = ADAPTER_PATH + "/dev_" + address.replace(":", "_")
        manufacturer = dbus.Dictionary({dbus.UInt16(0x004C): dbus.ByteArray(ibeacon_payload(uuid, major, minor))},
                                       signature="qv")
        if path not in self.devices:
            self.devices[path] = Device(self.bus, path)
            self.root.InterfacesAdded(dbus.ObjectPath(path), {"org.bluez.Device1": {
                "Address": address, "AddressType": "random", "RSSI": dbus.Int16(rssi), "ManufacturerData": manufacturer}})
        else:
            self.devices[path].PropertiesChanged("org.bluez.Device1",
                                                 {"RSSI": dbus.Int16(rssi), "ManufacturerData": manufacturer}, [])
        return True

    def close(self):
        """bluetoothd stops: its connection (and org.bluez) leaves the bus."""
        self.bus.close()
