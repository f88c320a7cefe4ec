extension BeaconPipeline {
    /// One captured packet into the pipeline: the one place a packet's kind decides its decoder, for the `replay`
    /// command, the `replay:` and `fifo:` scanners and the HCI socket alike. Packets that carry no advertisement
    /// (`other`) are skipped. Inlinable so that `replay`, which calls it for every record, gets it specialised.
    @inlinable
    public mutating func ingest(_ packet: CapturePacket, payload: Span<UInt8>, at time: Timestamp, into events: inout [Event]) {
        switch packet {
        case .hciEvent:
            ingest(hciEvent: payload, at: time, into: &events)
        case .linkLayerAdvertisement(let rssi):
            ingest(linkLayerPDU: payload, rssi: rssi, at: time, into: &events)
        case .other:
            break
        }
    }
}
