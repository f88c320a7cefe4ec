/// What one record holds, decided once at load time so decoding is a plain switch.
public enum CapturePacket: Sendable, Hashable {
    /// An HCI event from the controller: event code, parameter length, parameters (no H4 type byte).
    /// Goes to `HCIEventDecoder.decode(event:)`.
    case hciEvent
    /// An advertising-channel link-layer PDU (header and payload; no access address, no CRC).
    /// Goes to `LinkLayerDecoder`; `rssi` is the pseudo-header's signal power when it is marked valid.
    case linkLayerAdvertisement(rssi: Int8?)
    /// Anything else: commands, ACL/SCO/ISO data, sent packets, monitor notes, data-channel PDUs,
    /// packets on interfaces whose link type this module does not read.
    case other
}
