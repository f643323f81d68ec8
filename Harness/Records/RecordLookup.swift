@_spi(Transport) @_spi(Tools) import Convey

/// Finds a record by its number in `recorded list` (1 is the newest) or by its ID.
enum RecordLookup {
    static func find(_ text: String, in recorder: TaskRecorder) async throws(LocalFailure) -> (number: Int, record: RecordedTask) {
        let records = await recorder.records()
        if let number = Int(text) {
            guard number >= 1, number <= records.count else {
                let count = records.count == 1 ? "is 1 record" : "are \(records.count) records"
                throw LocalFailure(message: "no record \(number): there \(count) in \(recorder.folder.path(percentEncoded: false)) ('recorded list' shows them)")
            }
            return (number, records[number - 1])
        }
        guard let index = records.firstIndex(where: { $0.id == text }) else {
            throw LocalFailure(message: "no readable record with ID '\(text)' in \(recorder.folder.path(percentEncoded: false))")
        }
        return (index + 1, records[index])
    }
}
