@testable import BeaconKit
import Testing

@Suite("Recency list")
struct RecencyListTests {
    @Test func touchMovesToMostRecent() {
        var list = RecencyList()
        #expect(list.oldest == nil)
        for element in [1, 2, 3] { list.touch(element) }
        #expect(list.elements == [1, 2, 3])
        list.touch(1)
        #expect(list.elements == [2, 3, 1])
        list.touch(1)
        #expect(list.elements == [2, 3, 1])
        list.touch(3)
        #expect(list.elements == [2, 1, 3])
        #expect(list.oldest == 2)
        #expect(list.count == 3)
    }

    @Test func removeFromAnyPosition() {
        var list = RecencyList()
        for element in 1...5 { list.touch(element) }
        list.remove(3)
        list.remove(1)
        list.remove(5)
        list.remove(42)
        #expect(list.elements == [2, 4])
        #expect(list.oldest == 2)
        list.touch(6)
        #expect(list.elements == [2, 4, 6])
        list.remove(2)
        list.remove(4)
        list.remove(6)
        #expect(list.elements.isEmpty)
        #expect(list.oldest == nil)
        list.touch(7)
        #expect(list.elements == [7])
        list.removeAll()
        #expect(list.count == 0)
    }
}
