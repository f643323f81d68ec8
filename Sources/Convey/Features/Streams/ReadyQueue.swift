/// Items that a parser produced from one chunk, handed out one at a time: the array keeps its
/// storage from one chunk to the next, so a stream of many small items allocates once.
struct ReadyQueue<Element> {
    private var items: [Element] = []
    private var nextIndex = 0

    mutating func append(_ item: Element) {
        items.append(item)
    }

    /// The next item, or `nil` once every item was handed out (and the queue is empty again).
    mutating func popFirst() -> Element? {
        if nextIndex < items.count {
            defer { nextIndex += 1 }
            return items[nextIndex]
        }
        items.removeAll(keepingCapacity: true)
        nextIndex = 0
        return nil
    }
}
