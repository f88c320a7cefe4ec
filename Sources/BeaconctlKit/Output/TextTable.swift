import BeacondAPI

/// Columns of text for terminals: left-aligned words, right-aligned numbers, two spaces between columns,
/// no trailing spaces.
public struct TextTable: Sendable {
    public struct Column: Sendable {
        public var header: String
        public var alignRight: Bool

        public init(_ header: String, alignRight: Bool = false) {
            self.header = header
            self.alignRight = alignRight
        }
    }

    public var columns: [Column]
    public var rows: [[String]]

    public init(columns: [Column], rows: [[String]] = []) {
        self.columns = columns
        self.rows = rows
    }

    /// The header line and one line per row (rows shorter than the header are padded with ""). Cells are laid out
    /// escaped (`UntrustedText`): escaping the line afterwards would widen a cell past its column.
    public func lines(indent: String = "") -> [String] {
        let cells =
            [columns.map(\.header)]
            + rows.map { row in
                (0..<columns.count).map { $0 < row.count ? UntrustedText.escaped(row[$0]) : "" }
            }
        let widths = (0..<columns.count).map { column in cells.map { $0[column].count }.max() ?? 0 }
        return cells.map { row in
            var line = ""
            for (index, cell) in row.enumerated() {
                let padding = String(repeating: " ", count: widths[index] - cell.count)
                if index > 0 { line += "  " }
                line += columns[index].alignRight ? padding + cell : cell + padding
            }
            while line.hasSuffix(" ") { line.removeLast() }
            return indent + line
        }
    }
}
