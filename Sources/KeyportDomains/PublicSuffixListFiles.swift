import Foundation
@_exported import KeyportDomainsCore

// Where the Public Suffix List comes from: the system's copy or the snapshot in this module's
// resources. The list itself (its rules, registrable domains) is in KeyportDomainsCore, which
// needs no Foundation.
extension PublicSuffixList {
    /// Where Debian's `publicsuffix` package puts the list.
    package static let systemPath = "/usr/share/publicsuffix/public_suffix_list.dat"

    /// The newer of the system's list and ``bundled``, as libpsl chooses: a distribution that
    /// keeps its list current wins, and an old one (Debian 12's is from February 2023) does not
    /// hold back the snapshot shipped here.
    package static let current: PublicSuffixList = {
        let system = try? String(contentsOfFile: systemPath, encoding: .utf8)
        let modified = (try? FileManager.default.attributesOfItem(atPath: systemPath))?[.modificationDate] as? Date
        return newer(system: system, modified: modified, bundled: bundledText)
    }()

    /// The copy in this package: a snapshot of publicsuffix.org's list (its `VERSION` line says
    /// when), for machines without a newer one.
    package static let bundled = PublicSuffixList(text: bundledText)

    /// `Resources/public_suffix_list.dat`, embedded in the code by the EmbedText plugin (no
    /// resource bundle is read: installed programs run without the build tree).
    private static let bundledText: String = {
        guard let text = EmbeddedText.texts["public_suffix_list"] else {
            preconditionFailure("public_suffix_list.dat was not embedded in the module")
        }
        return text
    }()

    /// The list from `system` (a list's text, last changed at `modified`) when it has rules and is
    /// at least as new as `bundled`, else the list from `bundled`. A list's date is its
    /// `// VERSION: YYYY-MM-DD_…` line (publicsuffix.org writes one; Debian's copy has none), else
    /// when its file was last changed.
    package static func newer(system: String?, modified: Date?, bundled: String) -> PublicSuffixList {
        if let system {
            let list = PublicSuffixList(text: system)
            let systemDate = version(of: system) ?? modified.map(day)
            if list.count > 0, let systemDate, systemDate >= (version(of: bundled) ?? "") { return list }
        }
        return PublicSuffixList(text: bundled)
    }

    /// Which list ``current`` is, and of when, as `keyport doctor` says it.
    package static var currentOrigin: String {
        let bundledDate = version(of: bundledText) ?? "an unknown date"
        let system = try? String(contentsOfFile: systemPath, encoding: .utf8)
        let modified = (try? FileManager.default.attributesOfItem(atPath: systemPath))?[.modificationDate] as? Date
        let systemDate = system.flatMap { version(of: $0) ?? modified.map(day) }
        guard let system, let systemDate else {
            return "Keyport's snapshot of \(bundledDate) (\(systemPath) is absent)"
        }
        if PublicSuffixList(text: system).count > 0, systemDate >= bundledDate {
            return "the system's, \(systemPath), of \(systemDate)"
        }
        return "Keyport's snapshot of \(bundledDate) (the system's, of \(systemDate), is older)"
    }

    private static func day(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }
}
