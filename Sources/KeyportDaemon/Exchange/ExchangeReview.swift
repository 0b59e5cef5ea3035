import CredentialExchangeFormat
import KeyportEncoding
import KeyportInterfaces
import KeyportSystem
import Varlink

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The review of an exchanged document for keyportd's log, in a process of its own
/// (`org.keyport.Review`): keyportd starts its own program with ``argument`` and the sealed memory
/// file as descriptor 3; the process decodes and validates it with the CXF codec and writes one
/// `Review.Verdict`. keyportd reads the verdict with the same generated type, so a change to
/// either side is a change to the definition both are built from.
package enum ExchangeReview {
    /// The argument that makes keyportd's program review descriptor 3 and exit.
    package static let argument = "--review"

    /// Reviews the memory file on descriptor 3 and writes the verdict on standard output: the
    /// process's whole work when started with ``argument``. Exits 0 when a verdict was written.
    package static func run() -> Never {
        // It holds an exchanged document: not to be read through /proc or dumped, as keyportd.
        _ = Memory.makeUndumpable()
        let verdict: Review.Verdict
        do {
            let file = try MemoryFile(checking: 3, maximumSize: CXF.DecodingOptions().maxDocumentSize)
            verdict = try file.withBytes { bytes in
                do {
                    let decoded = try CXF.Decoder().decode(bytes)
                    let findings = decoded.diagnostics + CXF.Validator().validate(decoded.document)
                    let errors = findings.count { $0.severity == .error }
                    return Review.Verdict(errors: errors, warnings: findings.count - errors)
                } catch {
                    return Review.Verdict(errors: 0, warnings: 0, unreadable: "\(error)")
                }
            }
        } catch {
            let message = Array("keyportd --review: the document cannot be read: \(error)\n".utf8)
            _ = message.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
            exit(1)
        }
        var line: [UInt8] = []
        verdict.write(varlink: &line)
        line.append(UInt8(ascii: "\n"))
        let written = line.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        exit(written == line.count ? 0 : 1)
    }

    /// What a review process that ended as `termination`, having written `output` and
    /// `errors`, came to: its verdict, or why there is none (for the log).
    package enum Outcome: Equatable {
        case verdict(Review.Verdict)
        case notReviewed(String)
    }

    package static func outcome(of termination: ChildProcess.Termination?, output: [UInt8], errors: [UInt8]) -> Outcome
    {
        guard case .exited(0)? = termination else {
            let said =
                String(decoding: errors, as: UTF8.self).split(separator: "\n").last.map { ": \(shown($0))" } ?? ""
            return .notReviewed("the review \(termination.map { "\($0)" } ?? "did not end")\(said)")
        }
        var line = output[...]
        if line.last == UInt8(ascii: "\n") { line = line.dropLast() }
        do {
            var verdict = try Review.Verdict(json: RawJSON(bytes: Array(line)))
            verdict.unreadable = verdict.unreadable.map { shown(Substring($0)) }
            return .verdict(verdict)
        } catch {
            return .notReviewed("the review's verdict does not read as one: \(shown(Substring("\(error)")))")
        }
    }

    /// What the review process says, as the log shows it: it read a document nobody vouches for
    /// (the process a flaw in the decoder would reach), so its words are escaped and cut short.
    private static func shown(_ text: Substring) -> String {
        DisplayText.escaping(DisplayText.excerpt(String(text), bytes: 200))
    }
}
