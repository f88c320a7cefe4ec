import Fleet
import Foundation
import TestKit
import Testing

/// The hand-written reading parser against the JSON grammar and against Foundation's JSONSerialization.
@Suite("reading JSON parser")
struct ReadingJSONTests {
    func read(_ text: String) throws(ESPresenseReading.Invalid) -> ESPresenseReading {
        try ESPresenseReading(json: Array(text.utf8))
    }

    @Test func jsonItselfIsRead() throws {
        let reading = try read(
            #" { "id" : "a\"b\\c\u00e9\ud83d\ude00\/" ,"distance":1.5e1, "skip":{"x":[1,{"y":null},"}"]},"rssi":-0, "name":null } "#)
        #expect(reading.id == "a\"b\\cé😀/" && reading.distance == 15 && reading.rssi == 0 && reading.name == nil)
        #expect(try read(#"{"id":"x","distance":1,"distance":2}"#).distance == 2)
        #expect(try read(#"{"distance":123456789012345678901234567890,"id":"x"}"#).distance == 1.2345678901234568e29)
        #expect(try read(#"{"id":"x","distance":0.1}"#).distance == 0.1)
        #expect(try read(#"{"id":"x","distance":-65.50}"#).distance == -65.5)
    }

    @Test(arguments: [
        "{", "}", #"{"id":"x","distance":1"#, #"{"id":"x","distance":1,}"#, #"{"id":"x" "distance":1}"#, #"{id:"x"}"#,
        #"{"id":"x","distance":01}"#, #"{"id":"x","distance":1.}"#, #"{"id":"x","distance":.5}"#, #"{"id":"x","distance":+1}"#,
        #"{"id":"x","distance":1e}"#, #"{"id":"x","distance":nul}"#, #"{"id":"x\q","distance":1}"#, "{\"id\":\"x\ny\",\"distance\":1}",
        #"{"id":"\ud83d\u0041","distance":1}"#, #"{"id":"x","distance":1} x"#, #"{"id":"x","distance":[1,]}"#, "",
    ])
    func invalidJSONIsNotJSON(text: String) {
        #expect(throws: ESPresenseReading.Invalid.notJSON, "\(text)") { try read(text) }
    }

    /// Found by the espresense fuzz target: Foundation converts only the value a key ends with, so a number beyond
    /// Double's range in a repeated key's earlier value is accepted, and one in the last value (or inside an array)
    /// refused. Ours does the same.
    @Test func numbersBeyondDoubleAreRefusedOnlyWhereFoundationConvertsThem() throws {
        #expect(try read(#"{"id":"x","distance":2,"speed":1e99999,"speed":0.01}"#).distance == 2)
        #expect(try read(#"{"id":"x","distance":1e400,"distance":2}"#).distance == 2)
        for text in [
            #"{"id":"x","distance":2,"speed":1e400}"#, #"{"id":"x","distance":2,"speed":0.01,"speed":1e400}"#,
            #"{"id":"x","distance":2,"skip":[1,1e400]}"#, "[1e400]",
        ] {
            #expect(throws: ESPresenseReading.Invalid.notJSON, "\(text)") { try read(text) }
            #expect((try? JSONSerialization.jsonObject(with: Data(text.utf8))) == nil, "Foundation reads \(text)")
        }
        for text in [#"{"id":"x","distance":2,"speed":1e99999,"speed":0.01}"#, #"{"id":"x","distance":1e400,"distance":2}"#] {
            #expect((try? JSONSerialization.jsonObject(with: Data(text.utf8))) != nil, "Foundation refuses \(text)")
        }
    }

    @Test func deepNestingIsRefusedNotRecursedWithoutEnd() {
        let deep = #"{"id":"x","distance":1,"n":"# + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + "}"
        #expect(throws: ESPresenseReading.Invalid.notJSON) { try read(deep) }
        let fine = #"{"id":"x","distance":1,"n":"# + String(repeating: "[", count: 50) + String(repeating: "]", count: 50) + "}"
        #expect((try? read(fine)) != nil)
    }

    /// Mutations of real readings: whatever JSONSerialization accepts as an object, ours reads to the same values;
    /// whatever it refuses, ours refuses.
    @Test func agreesWithJSONSerializationOnMutatedReadings() throws {
        var random = SplitMix64(state: 0xBEAC0D)
        let seeds = [
            #"{"mac":"c1d2e3f4a5b6","id":"iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2","#
                + #""rssi@1m":-59,"rssi":-65.50,"rxAdj":0,"rssiVar":1.20,"distance":1.41,"var":0.05,"int":1020}"#,
            #"{"id":"iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2","idType":180,"rssi":-70,"raw":2.51,"distance":2.2,"speed":0.01}"#,
        ].map { Array($0.utf8) }
        let alphabet = Array(#"{}[]",:-.0123456789eE+ \"\\/uantrfl"#.utf8)
        var agreed = 0
        for round in 0..<20_000 {
            var bytes = seeds[round % seeds.count]
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let position = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[position] = alphabet.randomElement(using: &random)!
                case 1: bytes.remove(at: position)
                default: bytes.insert(alphabet.randomElement(using: &random)!, at: position)
                }
                if bytes.isEmpty { bytes = [0x7B] }
            }
            let foundation = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
            let ours = Result { () throws(ESPresenseReading.Invalid) in try ESPresenseReading(json: bytes) }
            let text = String(decoding: bytes, as: UTF8.self)
            guard let object = foundation else {
                #expect(ours == .failure(.notJSON), "JSONSerialization refused, ours: \(ours) for \(text)")
                continue
            }
            guard let dictionary = object as? [String: Any] else {
                #expect(ours == .failure(.notAnObject), "\(text)")
                continue
            }
            guard case .success(let reading) = ours else { continue } // a type or key refusal: checked elsewhere
            #expect(reading.id == dictionary["id"] as? String, "\(text)")
            #expect(reading.distance == (dictionary["distance"] as? NSNumber)?.doubleValue, "\(text)")
            agreed += 1
        }
        #expect(agreed > 100)
    }
}
