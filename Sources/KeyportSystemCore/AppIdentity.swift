/// How the desktop names the app a process belongs to, read from what the process's surroundings
/// say about it: the systemd user unit a desktop launched it in, or the `.flatpak-info` file
/// Flatpak puts at the root of its sandbox. The rules are xdg-desktop-portal's, so keyportd and the
/// portals name an app alike. Pure text in, text out; ``PinnedProcess`` reads the files.
package enum AppIdentity {
    /// The systemd user unit (a scope or service) that a `/proc/PID/cgroup` file places the process
    /// in, as `sd_pid_get_user_unit` finds it: below the user manager (`user@UID.service`), past any
    /// slices, the first unit. `nil` for a process outside a user manager (a system service, a login
    /// session's own scope, a container without systemd).
    ///
    /// The path comes from systemd's own hierarchy: the `name=systemd` line on a legacy or hybrid
    /// cgroup setup, else the unified (`0::`) line.
    package static func userUnit(fromCgroupFile text: String) -> String? {
        var unified: Substring?
        var named: Substring?
        for line in text.split(whereSeparator: \.isNewline) {
            // ID:CONTROLLERS:PATH, where the path may hold ':' itself.
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            if fields[0] == "0" && fields[1].isEmpty {
                unified = fields[2]
            } else if fields[1].split(separator: ",").contains("name=systemd") {
                named = fields[2]
            }
        }
        guard let path = named ?? unified else { return nil }
        var components = path.split(separator: "/")[...]
        func skipSlices() {
            while components.first?.hasSuffix(".slice") == true { components.removeFirst() }
        }
        skipSlices()
        guard let manager = components.popFirst(), manager.hasPrefix("user@"), manager.hasSuffix(".service") else {
            return nil
        }
        skipSlices()
        guard let unit = components.first else { return nil }
        // systemd prefixes a cgroup name with "_" when the unit's name could be taken for a
        // kernel file of the cgroup filesystem ("cpu.service").
        return String(unit.hasPrefix("_") ? unit.dropFirst() : unit)
    }

    /// The app id in the name of a unit a desktop started an app in, by the naming scheme of
    /// systemd's "Desktop Environment Integration": `app[-LAUNCHER]-APPID-RANDOM.scope` (or
    /// `.slice`) and `app[-LAUNCHER]-APPID[@RANDOM].service` (or the older `-autostart.service`),
    /// where LAUNCHER and RANDOM are letters and digits and APPID is escaped as unit names are
    /// (`-` becomes `\x2d`). `nil` for any other name.
    ///
    /// Where a name reads two ways, the portal's choice is made: a LAUNCHER is taken when what
    /// follows it still holds an app id, and the app id is the shortest that leaves a valid
    /// RANDOM. The id is not validated further, as the portal does not: a host app picks the
    /// unit it runs in, so this names it, it does not prove it.
    package static func appID(fromUnitName unit: String) -> String? {
        guard unit.hasPrefix("app-") else { return nil }
        let name = unit.dropFirst("app-".count)
        let body: Substring
        let appID: (Substring) -> Substring?
        if let scope = name.dropping(suffix: ".scope") ?? name.dropping(suffix: ".slice") {
            body = scope
            appID = scopeAppID
        } else if let service = name.dropping(suffix: ".service") {
            body = service
            appID = serviceAppID
        } else {
            return nil
        }
        if let dash = body.firstIndex(of: "-"), dash > body.startIndex, body[..<dash].allSatisfy(isAlphanumeric),
            let escaped = appID(body[body.index(after: dash)...])
        {
            return unescaped(escaped)
        }
        return appID(body).flatMap(unescaped)
    }

    /// The app id a `.flatpak-info` file gives: `name` in its `[Application]` group, or in its
    /// `[Runtime]` group when it has one (a runtime run on its own, as the portal reads it). `nil`
    /// when that name is missing or not a valid app id (``isValidAppID(_:)``).
    ///
    /// The file is a GLib key file; only what finding the name needs is read: `[group]` lines,
    /// `key=value` lines (spaces around `=` ignored, the last of a repeated key counting), comments.
    package static func flatpakAppID(fromInfo text: String) -> String? {
        var group = ""
        var names: [String: String] = [:]
        var groups: Set<String> = []
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.drop { $0 == " " || $0 == "\t" }
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") {
                let header = line.trimmingSpaces()
                guard header.hasSuffix("]") else { continue }
                group = String(header.dropFirst().dropLast())
                groups.insert(group)
            } else if let equals = line.firstIndex(of: "="), line[..<equals].trimmingSpaces() == "name" {
                names[group] = String(line[line.index(after: equals)...].drop { $0 == " " || $0 == "\t" })
            }
        }
        let name = groups.contains("Runtime") ? names["Runtime"] : names["Application"]
        guard let name, isValidAppID(name) else { return nil }
        return name
    }

    /// Whether `id` is an app id as the portal accepts one: at most 255 bytes in at least two
    /// non-empty elements separated by `.`, made of ASCII letters, digits and `_`, with `-` allowed
    /// in the last element only (`org.example.App`, `com.example.my-app`).
    package static func isValidAppID(_ id: String) -> Bool {
        let elements = id.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard id.utf8.count <= 255, elements.count >= 2 else { return false }
        for (index, element) in elements.enumerated() {
            let isLast = index == elements.count - 1
            guard !element.isEmpty,
                element.allSatisfy({
                    isAlphanumeric($0) || $0 == UInt8(ascii: "_") || (isLast && $0 == UInt8(ascii: "-"))
                })
            else { return false }
        }
        return true
    }

    /// `APPID-RANDOM` → APPID.
    private static func scopeAppID(_ body: Substring) -> Substring? {
        guard let dash = body.lastIndex(of: "-"), dash > body.startIndex,
            body[body.index(after: dash)...].allSatisfy(isAlphanumeric)
        else { return nil }
        return body[..<dash]
    }

    /// `APPID`, `APPID@RANDOM` or `APPID-autostart` → APPID.
    private static func serviceAppID(_ body: Substring) -> Substring? {
        var shortest = body
        if let autostart = body.dropping(suffix: "-autostart") {
            shortest = autostart
        } else if let at = body.lastIndex(of: "@"), body[body.index(after: at)...].allSatisfy(isAlphanumeric) {
            shortest = body[..<at]
        }
        if !shortest.isEmpty { return shortest }
        return body.isEmpty ? nil : body
    }

    /// Undoes unit-name escaping: each `\xHH` is the byte HH (systemd writes no other escape into
    /// a unit name; any other backslash is kept). `nil` when the bytes are not UTF-8 or hold NUL.
    private static func unescaped(_ escaped: Substring) -> String? {
        var bytes: [UInt8] = []
        var rest = escaped.utf8[...]
        while let byte = rest.popFirst() {
            if byte == UInt8(ascii: "\\"), rest.first == UInt8(ascii: "x") {
                let digits = rest.dropFirst().prefix(2).compactMap(hexadecimalValue)
                if digits.count == 2 {
                    bytes.append(digits[0] << 4 | digits[1])
                    rest = rest.dropFirst(3)
                    continue
                }
            }
            bytes.append(byte)
        }
        guard !bytes.contains(0) else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexadecimalValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func isAlphanumeric(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber)
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}

extension Substring {
    /// The text without `suffix`, or `nil` when it does not end with it.
    fileprivate func dropping(suffix: String) -> Substring? {
        hasSuffix(suffix) ? dropLast(suffix.count) : nil
    }

    /// The text without spaces and tabs at either end.
    fileprivate func trimmingSpaces() -> Substring {
        var trimmed = self
        while trimmed.first == " " || trimmed.first == "\t" { trimmed.removeFirst() }
        while trimmed.last == " " || trimmed.last == "\t" { trimmed.removeLast() }
        return trimmed
    }
}
