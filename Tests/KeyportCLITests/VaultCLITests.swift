import Foundation
import KeyportTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The pids of keyport-vault keepers whose environment names `socket`: the ones a test started.
private func keepers(listeningOn socket: String) -> [pid_t] {
    Started.processes(running: "keyport-vault", withEnvironment: "KEYPORT_VAULT_SOCKET=\(socket)")
}

/// A vault of the tests' own: its directory, the keeper's socket in it, the environment that
/// points `keyport vault` there; keepers started there are stopped by ``remove()``.
private struct VaultCLISandbox {
    let directory: TemporaryDirectory
    let socket: String
    let environment: [String: String]

    init(_ name: String = "kp-vault-cli") throws {
        directory = try TemporaryDirectory(name)
        socket = directory.url.appendingPathComponent("run/vault.sock").path
        var environment = ProcessInfo.processInfo.environment
        environment["KEYPORT_VAULT_SOCKET"] = socket
        environment["XDG_DATA_HOME"] = directory.url.appendingPathComponent("data").path
        self.environment = environment
    }

    /// `keyport vault ARGUMENTS`, with `input` on standard input.
    func keyport(_ arguments: [String], _ input: String? = nil) async throws -> CLI.Result {
        try await runProgram(
            CLI.executable.path,
            ["vault"] + arguments,
            environment: environment,
            input: input.map { Data($0.utf8) }
        )
    }

    /// `PROGRAM vault ARGUMENTS` for another program than the `keyport` front: keyport-cli
    /// itself, or a copy of the front.
    func run(_ program: String, _ arguments: [String]) async throws -> CLI.Result {
        try await runProgram(program, ["vault"] + arguments, environment: environment, input: nil)
    }

    func remove() {
        for pid in keepers(listeningOn: socket) { kill(pid, SIGTERM) }
        directory.remove()
    }
}

@Suite("keyport vault", .serialized)
struct VaultCLITests {
    @Test(
        "an item id that looks like options (as `list` prints one) is refused with the way to write it, never help with exit 0"
    )
    func optionLikeIDs() async throws {
        let sandbox = try VaultCLISandbox("kp-vault-dash")
        defer { sandbox.remove() }
        // `h` among the letters: the parser read a cluster of short flags, -h among them.
        for arguments in [
            ["show", "-8mUR1Lh2kQ"], ["rm", "-8mUR1Lh2kQ"], ["export", "-8mUR1Lh2kQ"], ["show", "--reveal", "-xh"],
            // `--` and a name no option has: a capital, a digit.
            ["show", "--8BAgMEBQYHCAkKCwwNDg"], ["edit", "--Router1"],
        ] {
            let ran = try await sandbox.keyport(arguments)
            #expect(ran.status == 2, "\(arguments): \(ran.status) \(ran.stdout)")
            #expect(ran.stdout.isEmpty && !ran.stderr.contains("USAGE"), "\(arguments): \(ran.stdout)")
            #expect(
                ran.stderr.contains("follows `--`: keyport vault \(arguments[0]) -- \(arguments.last!)"),
                "\(ran.stderr)"
            )
        }
        // After `--` it is an id (no vault here: the keeper's refusal, not the parser's).
        let named = try await sandbox.keyport(["show", "--", "-8mUR1Lh2kQ"])
        #expect(!named.stderr.contains("follows `--`") && !named.stdout.contains("USAGE"), "\(named.stderr)")
        // An option's own name is still the option's.
        let option = try await sandbox.keyport(["show", "--revea", "x"])
        #expect(option.stderr.contains("Unknown option '--revea'"), "\(option.stderr)")
    }

    @Test(
        "init, unlock (starting the keeper), add, list, show, import a KeePassXC export, export, lock; clear refusals"
    )
    func workflow() async throws {
        let sandbox = try VaultCLISandbox("kp-vault-cli")
        defer { sandbox.remove() }
        let directory = sandbox.directory
        let socket = sandbox.socket
        let environment = sandbox.environment
        func keyport(_ arguments: [String], _ input: String? = nil) async throws -> CLI.Result {
            try await sandbox.keyport(arguments, input)
        }

        let created = try await keyport(["init", "--passphrase-stdin"], "open sesame\n")
        #expect(created.status == 0 && created.stdout.contains("vault.keyport"), "\(created.stderr)")
        let again = try await keyport(["init", "--passphrase-stdin"], "open sesame\n")
        #expect(again.status == 1 && again.stderr.contains("exists already"))
        let notRunning = try await keyport(["list"])
        #expect(notRunning.status == 2 && notRunning.stderr.contains("keyport vault unlock"), "\(notRunning.stderr)")

        let wrong = try await keyport(["unlock", "--passphrase-stdin"], "open says me\n")
        #expect(wrong.status == 1 && wrong.stderr.contains("[wrong-passphrase]"), "\(wrong.stderr)")
        #expect(keepers(listeningOn: socket).count == 1, "unlock started one keeper")
        let unlocked = try await keyport(["unlock", "--passphrase-stdin"], "open sesame\n")
        #expect(unlocked.status == 0 && unlocked.stdout.contains("0 items"), "\(unlocked.stderr)")
        #expect(keepers(listeningOn: socket).count == 1, "and used it again")

        let added = try await keyport(
            [
                "add", "--passphrase-stdin", "--title", "Example", "--url", "https://example.com/", "--user", "alice",
                "--otp",
            ],
            "hunter2\nJBSWY3DPEHPK3PXP\n"
        )
        #expect(added.status == 0, "\(added.stderr)")
        let hidden = try await keyport(["show", "www.example.com"])
        #expect(
            hidden.stdout.contains("user: alice") && !hidden.stdout.contains("hunter2")
                && hidden.stdout.contains("hidden")
        )
        let revealed = try await keyport(["show", "example.com", "--reveal"])
        #expect(revealed.stdout.contains("password: hunter2") && revealed.stdout.contains("JBSWY3DPEHPK3PXP"))

        // What keepassxc-cli exports comes in; the same file again adds nothing.
        let cli = try Peers.require("/usr/bin/keepassxc-cli", "keepassxc-cli (Debian's keepassxc)")
        let database = directory.url.appendingPathComponent("kp.kdbx").path
        _ = try await Program.run(
            cli,
            ["db-create", "-p", database],
            input: Data("pw\npw\n".utf8),
            timeout: .seconds(60)
        )
        _ = try await Program.run(
            cli,
            ["add", "-u", "bob", "--url", "https://example.org/", "-p", database, "Intranet"],
            input: Data("pw\nbobs password\n".utf8),
            timeout: .seconds(60)
        )
        let csv = try await Program.run(
            cli,
            ["export", "-f", "csv", database],
            input: Data("pw\n".utf8),
            timeout: .seconds(60)
        )
        let export = directory.url.appendingPathComponent("kp.csv").path
        try csv.standardOutput.write(toFile: export, atomically: true, encoding: .utf8)
        let imported = try await keyport(["import", export])
        #expect(
            imported.stdout.contains("(KeePassXC CSV): 1 new, 0 merged into items the vault had, 0 it had already"),
            "\(imported.stdout)\(imported.stderr)"
        )
        #expect(
            try await keyport(["import", export]).stdout.contains(
                "0 new, 0 merged into items the vault had, 1 it had already"
            )
        )

        let listed = try await keyport(["list"])
        #expect(listed.stdout.split(separator: "\n").count == 2, "\(listed.stdout)")
        #expect(try await keyport(["list", "intra"]).stdout.contains("\tbob\t"))
        // search: every word, in any case, accents or not; never in secrets.
        let found = try await keyport(["search", "EXÁMPLE", "alice"])
        #expect(found.status == 0 && found.stdout.hasSuffix("\tExample\talice\thttps://example.com/\n"), "\(found)")
        #expect(found.stdout.split(separator: "\n").count == 1)
        #expect(try await keyport(["search", "intranet", "example.org"]).stdout.contains("\tbob\t"))
        for secret in ["hunter2", "JBSWY3DPEHPK3PXP", "bobs"] {
            let none = try await keyport(["search", secret])
            #expect(
                none.status == 1 && none.stdout.isEmpty && none.stderr.contains("nothing in the vault has \(secret)")
            )
        }
        #expect(try await keyport(["search", "intranet", "alice"]).status == 1, "every word, not any")
        let otpauth = try await keyport(["export", "--format", "otpauth"])
        #expect(otpauth.stdout.hasPrefix("otpauth://totp/Example:alice?secret=JBSWY3DPEHPK3PXP"), "\(otpauth.stdout)")
        let cxf = directory.url.appendingPathComponent("out.cxf.json").path
        // An export holds every secret: 0600, even over a file others could read.
        try "old".write(toFile: cxf, atomically: true, encoding: .utf8)
        #expect(chmod(cxf, 0o644) == 0)
        #expect(try await keyport(["export", "-o", cxf]).status == 0)
        var info = stat()
        #expect(stat(cxf, &info) == 0 && info.st_mode & 0o777 == 0o600)
        let validated = try await runProgram(CLI.executable.path, ["cxf", "validate", cxf], environment: environment)
        #expect(validated.status == 0 && validated.stdout.contains("2 items"), "\(validated.stdout)")

        let refusedChange = try await keyport(["passwd", "--passphrase-stdin"], "not it\nnew one\n")
        #expect(
            refusedChange.status == 1 && refusedChange.stderr.contains("[wrong-passphrase]"),
            "\(refusedChange.stderr)"
        )
        #expect(try await keyport(["passwd", "--passphrase-stdin"], "open sesame\nnew sesame\n").status == 0)
        #expect(try await keyport(["lock"]).status == 0)
        let old = try await keyport(["unlock", "--passphrase-stdin"], "open sesame\n")
        #expect(old.status == 1 && old.stderr.contains("[wrong-passphrase]"))
        #expect(try await keyport(["unlock", "--passphrase-stdin"], "new sesame\n").stdout.contains("2 items"))
        #expect(try await keyport(["lock"]).status == 0)
        let locked = try await keyport(["list"])
        #expect(locked.status == 1 && locked.stderr.contains("locked"), "\(locked.stderr)")
    }

    @Test(
        "show, edit and rm name an item by id, else by site as AutoFill fits it, else by title; several are listed, never dumped; show prints the current code; a read given the passphrase unlocks"
    )
    func resolution() async throws {
        let sandbox = try VaultCLISandbox("kp-vault-names")
        defer { sandbox.remove() }
        func keyport(_ arguments: [String], _ input: String? = nil) async throws -> CLI.Result {
            try await sandbox.keyport(arguments, input)
        }
        #expect(try await keyport(["init", "--passphrase-stdin"], "open sesame\n").status == 0)
        #expect(try await keyport(["unlock", "--passphrase-stdin"], "open sesame\n").status == 0)
        // Logins under one registrable domain, and two accounts on one site.
        for (title, url, user) in [
            ("Site one", "https://site1.example.com", "alice"), ("Site two", "https://site2.example.com", "alice"),
            ("Wiki", "https://wiki.example.org", "alice"), ("Wiki admin", "https://wiki.example.org", "root"),
            ("Intranet", "http://intranet.example.com:8080", "bob"), ("Mail", "https://mail.example.net", "carol"),
        ] {
            let added = try await keyport(
                ["add", "--passphrase-stdin", "--title", title, "--url", url, "--user", user, "--otp"],
                "pw-\(title)\nJBSWY3DPEHPK3PXP\n"
            )
            #expect(added.status == 0, "\(added.stderr)")
        }
        // The exact site: that item alone, never the domain's others.
        let one = try await keyport(["show", "site2.example.com"])
        #expect(one.status == 0 && one.stdout.contains("title: Site two") && !one.stdout.contains("Site one"))
        // Its current code, as oathtool computes it, with the secret hidden.
        let oathtool = try Peers.require("/usr/bin/oathtool", "oathtool")
        let now = Int(Date().timeIntervalSince1970)
        var codes: Set<String> = []
        for time in [now - 30, now, now + 30] {
            let ran = try await Program.run(oathtool, ["--totp", "--base32", "--now", "@\(time)", "JBSWY3DPEHPK3PXP"])
            codes.insert(ran.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let code = one.stdout.split(separator: "\n").first { $0.hasPrefix("code: ") }.map {
            String($0.dropFirst(6).prefix(6))
        }
        #expect(codes.contains(code ?? "none"), "\(one.stdout)")
        #expect(!one.stdout.contains("JBSWY3DPEHPK3PXP") && one.stdout.contains("secret hidden"))
        // The scheme and port count: http on 8080 is the intranet's.
        #expect(
            try await keyport(["show", "http://intranet.example.com:8080/login"]).stdout.contains("title: Intranet")
        )
        // Two accounts on one site: listed one per line, exit 1, nothing dumped.
        let two = try await keyport(["show", "https://wiki.example.org/"])
        #expect(
            two.status == 1 && two.stderr.contains("2 items are saved for https://wiki.example.org"),
            "\(two.stderr)"
        )
        #expect(two.stdout.split(separator: "\n").count == 2 && !two.stdout.contains("title:"), "\(two.stdout)")
        // list's lines, their fields apart by tabs.
        #expect(two.stdout.split(separator: "\n").allSatisfy { $0.split(separator: "\t").count == 4 }, "\(two.stdout)")
        // No exact fit: the wider ones (other hosts of the site), listed the same way.
        let wider = try await keyport(["show", "www.example.com"])
        #expect(wider.status == 1 && wider.stderr.contains("saved for other sites of https://www.example.com"))
        #expect(wider.stdout.split(separator: "\n").count == 3, "\(wider.stdout)")
        // A title, in any case.
        #expect(try await keyport(["show", "wiki ADMIN"]).stdout.contains("user: root"))
        // Ids shorter than Keyport's, as other managers' exports bring them: `cm91dGVyMQ` names
        // its item, as `list` prints it; `Wiki`, an imported item's id that is also the title of
        // an item, names both, and `rm` changes nothing.
        let short = sandbox.directory.url.appendingPathComponent("short-ids.cxf.json").path
        let document = #"""
            {"version":{"major":1,"minor":0},"exporterRpId":"other.example","exporterDisplayName":"Other",
             "timestamp":1731000000,"accounts":[{"id":"YQ","username":"u","email":"u@example.com","collections":[],
             "items":[{"id":"cm91dGVyMQ","title":"Router","credentials":[{"type":"note",
                       "content":{"fieldType":"string","value":"admin on 192.168.1.1"}}]},
                      {"id":"Wiki","title":"Evil","scope":{"urls":["https://evil.example/"],"androidApps":[]},
                       "credentials":[{"type":"basic-auth","username":{"fieldType":"string","value":"eve"},
                                       "password":{"fieldType":"concealed-string","value":"x"}}]}]}]}
            """#
        try Data(document.utf8).write(to: URL(fileURLWithPath: short))
        let importedShort = try await keyport(["import", short])
        #expect(importedShort.status == 0, "\(importedShort.stderr)")
        let listedShort = try await keyport(["list"])
        #expect(listedShort.stdout.contains("cm91dGVyMQ\tRouter"), "\(listedShort.stdout)")
        let byShortID = try await keyport(["show", "cm91dGVyMQ"])
        #expect(byShortID.status == 0 && byShortID.stdout.contains("admin on 192.168.1.1"), "\(byShortID.stderr)")
        let both = try await keyport(["show", "Wiki"])
        #expect(
            both.status == 1 && both.stderr.contains("2 items are with the id Wiki or titled Wiki"),
            "\(both.stdout) \(both.stderr)"
        )
        #expect(both.stdout.contains("Wiki\tEvil") && both.stdout.contains("\tWiki\t"), "\(both.stdout)")
        let notRemoved = try await keyport(["rm", "--yes", "Wiki"])
        #expect(notRemoved.status == 1 && notRemoved.stderr.contains("nothing was removed"), "\(notRemoved.stderr)")
        // The `keyport` front answers `vault show` itself, in keyport-cli's words: the same output
        // and status for one item, hidden or revealed, several, wider fits, a title and nothing
        // (the code's line aside: its seconds left move on between the two runs).
        let build = CLI.executable.deletingLastPathComponent()
        func withoutCode(_ text: String) -> String {
            text.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("code: ") }
                .joined(separator: "\n")
        }
        for arguments in [
            ["show", "site2.example.com"], ["show", "--reveal", "site2.example.com"],
            ["show", "https://wiki.example.org/"],
            ["show", "www.example.com"], ["show", "wiki ADMIN"], ["show", "nothing.example"], ["show", "--", "Mail"],
        ] {
            let front = try await keyport(arguments)
            let cli = try await sandbox.run(build.appendingPathComponent("keyport-cli").path, arguments)
            #expect(
                front.status == cli.status && withoutCode(front.stdout) == withoutCode(cli.stdout)
                    && front.stderr == cli.stderr,
                "\(arguments): front \(front.status) \(front.stdout) \(front.stderr); keyport-cli \(cli.status) \(cli.stdout) \(cli.stderr)"
            )
        }
        // And by itself: a copy of the front with the keeper's program beside it and no
        // keyport-cli shows the item, and hands every other command to the keyport-cli it lacks.
        let alone = sandbox.directory.url.appendingPathComponent("front-alone")
        try FileManager.default.createDirectory(at: alone, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: CLI.executable, to: alone.appendingPathComponent("keyport"))
        try FileManager.default.createSymbolicLink(
            at: alone.appendingPathComponent("keyport-vault"),
            withDestinationURL: build.appendingPathComponent("keyport-vault")
        )
        let front = alone.appendingPathComponent("keyport").path
        let shownAlone = try await sandbox.run(front, ["show", "site2.example.com"])
        #expect(shownAlone.status == 0 && shownAlone.stdout.contains("title: Site two"), "\(shownAlone.stderr)")
        let handedOver = try await sandbox.run(front, ["list"])
        #expect(handedOver.status == 2 && handedOver.stderr.contains("keyport-cli"), "\(handedOver.stderr)")
        // A write that fails (a full disk) is said, with status 2, by both: never an item cut short.
        for program in [CLI.executable.path, build.appendingPathComponent("keyport-cli").path] {
            let full = try await runProgram(
                "/bin/sh",
                ["-c", #"exec "$0" vault show site2.example.com > /dev/full"#, program],
                environment: sandbox.environment,
                input: nil
            )
            #expect(
                full.status == 2
                    && full.stderr == "keyport: cannot write to standard output: No space left on device\n",
                "\(program): \(full.status) \(full.stderr)"
            )
        }
        // edit and rm name items the same way; several change nothing.
        // A wider fit is only shown: edit and rm want the item named, even when it is the only one.
        let onlyWider = try await keyport(["rm", "example.net"])
        #expect(
            onlyWider.status == 1
                && onlyWider.stderr.contains("1 item is saved for other sites of https://example.net"),
            "\(onlyWider.stderr)"
        )
        #expect(try await keyport(["show", "example.net"]).stdout.contains("title: Mail"))
        let ambiguous = try await keyport(["edit", "https://wiki.example.org", "--title", "x"])
        #expect(ambiguous.status == 1 && ambiguous.stderr.contains("nothing changed"))
        let edited = try await keyport(["edit", "site1.example.com", "--title", "Site 1"])
        #expect(edited.status == 0 && edited.stdout.contains("changed Site 1"), "\(edited.stderr)")
        // rm asks first; with no terminal to ask on it removes nothing unless given --yes.
        let unasked = try await keyport(["rm", "Site 1"])
        #expect(
            unasked.status == 1 && unasked.stderr.contains("give --yes")
                && unasked.stderr.contains("nothing was removed"),
            "\(unasked.stderr)"
        )
        #expect(try await keyport(["show", "Site 1"]).status == 0)
        let removed = try await keyport(["rm", "--yes", "Site 1"])
        #expect(removed.status == 0 && removed.stdout.contains("removed Site 1"), "\(removed.stderr)")
        let missing = try await keyport(["rm", "--yes", "no such thing"])
        #expect(missing.status == 1 && missing.stderr.contains("nothing was removed"), "\(missing.stderr)")

        // Locked, a command that reads the vault and is given the passphrase opens it with it.
        #expect(try await keyport(["lock"]).status == 0)
        let refused = try await keyport(["show", "site2.example.com"])
        #expect(refused.status == 1 && refused.stderr.contains("locked"), "\(refused.stderr)")

        let mistyped = try await keyport(["list", "--passphrase-stdin"], "open says me\n")
        #expect(mistyped.status == 1 && mistyped.stderr.contains("[wrong-passphrase]"), "\(mistyped.stderr)")
        let listed = try await keyport(["list", "--passphrase-stdin"], "open sesame\n")
        #expect(listed.status == 0 && listed.stdout.contains("Site two"), "\(listed.stderr)")
        #expect(try await keyport(["lock"]).status == 0)
        let shown = try await keyport(["show", "site2.example.com", "--passphrase-stdin", "--reveal"], "open sesame\n")
        #expect(shown.status == 0 && shown.stdout.contains("password: pw-Site two"), "\(shown.stderr)")
        // Unlocked already, the line is read all the same: a script's input means one thing.
        let again = try await keyport(["show", "site2.example.com", "--passphrase-stdin"], "open sesame\n")
        #expect(again.status == 0, "\(again.stderr)")
        // add reads the item's secrets from standard input, so a locked vault stays locked.
        #expect(try await keyport(["lock"]).status == 0)
        let adding = try await keyport(["add", "--passphrase-stdin", "--title", "x"], "open sesame\nsecret\n")
        #expect(
            adding.status == 1 && adding.stderr.contains("is locked; unlock it with `keyport vault unlock`"),
            "\(adding.stderr)"
        )
    }

    @Test("KeePassXC's XML export and then its CSV export of the same entries come in once, the outcome named plainly")
    func sameEntriesTwoFormats() async throws {
        let sandbox = try VaultCLISandbox("kp-vault-merge")
        defer { sandbox.remove() }
        func keyport(_ arguments: [String], _ input: String? = nil) async throws -> CLI.Result {
            try await sandbox.keyport(arguments, input)
        }
        #expect(try await keyport(["init", "--passphrase-stdin"], "open sesame\n").status == 0)
        #expect(try await keyport(["unlock", "--passphrase-stdin"], "open sesame\n").status == 0)
        // A KeePassXC database made by keepassxc-cli from two entries (one with a TOTP secret),
        // exported by it both ways.
        let cli = try Peers.require("/usr/bin/keepassxc-cli", "keepassxc-cli (Debian's keepassxc)")
        let database = sandbox.directory.url.appendingPathComponent("kp.kdbx").path
        let made = try await Program.run(
            cli,
            ["import", "-p", Peers.file("Tests/KeyportCLITests/Fixtures/keepass-two-entries.xml"), database],
            input: Data("pw\npw\n".utf8),
            timeout: .seconds(60)
        )
        #expect(made.status == 0, "\(made.standardError)")
        var exports: [String] = []
        for format in ["xml", "csv"] {
            let exported = try await Program.run(
                cli,
                ["export", "-f", format, database],
                input: Data("pw\n".utf8),
                timeout: .seconds(60)
            )
            let path = sandbox.directory.url.appendingPathComponent("kp.\(format)").path
            try exported.standardOutput.write(toFile: path, atomically: true, encoding: .utf8)
            exports.append(path)
        }
        let fromXML = try await keyport(["import", exports[0]])
        #expect(
            fromXML.stdout.contains("(KeePass XML): 2 new, 0 merged into items the vault had, 0 it had already"),
            "\(fromXML.stdout)\(fromXML.stderr)"
        )
        let fromCSV = try await keyport(["import", exports[1]])
        #expect(
            fromCSV.stdout.contains("(KeePassXC CSV): 0 new, 0 merged into items the vault had, 2 it had already"),
            "\(fromCSV.stdout)\(fromCSV.stderr)"
        )
        #expect(try await keyport(["list"]).stdout.split(separator: "\n").count == 2)
        let shown = try await keyport(["show", "github.com", "--reveal"])
        #expect(shown.stdout.contains("one-time code: JBSWY3DPEHPK3PXP"), "\(shown.stdout)")
        #expect(shown.stdout.components(separatedBy: "one-time code:").count == 2, "one TOTP secret: \(shown.stdout)")

        // All or nothing: a file with one row that cannot be read imports none of its rows.
        let broken = sandbox.directory.url.appendingPathComponent("broken.csv").path
        try
            (try String(contentsOfFile: exports[1], encoding: .utf8)
            + "\"Root/Work\",\"New\",\"carol\",\"c\",\"https://new.example\",\"\",\"\",\"0\",\"\",\"\"\n"
            + "\"Root/Work\",\"Short\",\"dan\"\n").write(toFile: broken, atomically: true, encoding: .utf8)
        let refused = try await keyport(["import", broken])
        #expect(refused.status == 1, "\(refused.stdout)")
        #expect(refused.stderr.contains("line 5: it has 3 fields where the header has 10"), "\(refused.stderr)")
        #expect(refused.stderr.contains("nothing was imported"), "\(refused.stderr)")
        #expect(try await keyport(["list"]).stdout.split(separator: "\n").count == 2)
    }

    @Test(
        "add a note and a card, edit a login: secrets from standard input, hidden until --reveal; an unknown id changes nothing"
    )
    func itemsByHand() async throws {
        let sandbox = try VaultCLISandbox("kp-vault-items")
        defer { sandbox.remove() }
        func keyport(_ arguments: [String], _ input: String? = nil) async throws -> CLI.Result {
            try await sandbox.keyport(arguments, input)
        }
        #expect(try await keyport(["init", "--passphrase-stdin"], "open sesame\n").status == 0)
        #expect(try await keyport(["unlock", "--passphrase-stdin"], "open sesame\n").status == 0)

        let note = try await keyport(["add", "--note", "--title", "Wi-Fi"], "the code is 42\nsecond line\n")
        #expect(note.status == 0 && note.stdout.hasPrefix("added Wi-Fi ("), "\(note.stderr)")
        let card = try await keyport(
            ["add", "--passphrase-stdin", "--card", "--title", "Visa", "--holder", "Alice", "--expiry", "04/30"],
            "4111 1111 1111 1111\n123\n"
        )
        #expect(card.status == 0, "\(card.stderr)")
        let badCard = try await keyport(["add", "--passphrase-stdin", "--card", "--title", "x"], "12\n\n")
        #expect(badCard.status == 1 && badCard.stderr.contains("8 to 19 digits"), "\(badCard.stderr)")
        #expect(try await keyport(["add", "--note", "--card", "--title", "x"]).status == 2)

        func id(_ title: String) async throws -> String {
            let listed = try await keyport(["list", title])
            return try #require(listed.stdout.split(separator: "\t").first.map(String.init))
        }
        let shownNote = try await keyport(["show", try await id("Wi-Fi")])
        #expect(
            shownNote.stdout.contains("note: the code is 42\n  second line\n"),
            "\(shownNote.status) \(shownNote.stdout)\(shownNote.stderr)"
        )
        let cardID = try await id("Visa")
        let hidden = try await keyport(["show", cardID])
        #expect(
            hidden.stdout.contains("card: Alice, expires 2030-04") && hidden.stdout.contains("ending 1111"),
            "\(hidden.stdout)\(hidden.stderr)"
        )
        #expect(!hidden.stdout.contains("4111111111111111") && !hidden.stdout.contains("123"), "\(hidden.stdout)")
        let revealed = try await keyport(["show", cardID, "--reveal"])
        #expect(
            revealed.stdout.contains("number: 4111111111111111") && revealed.stdout.contains("security code: 123"),
            "\(revealed.stdout)\(revealed.stderr)"
        )

        // edit: the login keeps its id; what is not named stays.
        _ = try await keyport(
            ["add", "--passphrase-stdin", "--title", "Example", "--url", "https://example.com/", "--user", "alice"],
            "old password\n"
        )
        let login = try await id("Example")
        let edited = try await keyport(
            ["edit", "--passphrase-stdin", login, "--title", "Example (work)", "--password", "--otp", "--notes"],
            "new password\nJBSWY3DPEHPK3PXP\nthe notes,\non two lines\n"
        )
        #expect(edited.status == 0 && edited.stdout.contains("revision 2"), "\(edited.stderr)")
        let shown = try await keyport(["show", login, "--reveal"])
        #expect(shown.stdout.contains("title: Example (work)") && shown.stdout.contains("password: new password"))
        #expect(shown.stdout.contains("user: alice") && shown.stdout.contains("url: https://example.com/"))
        #expect(shown.stdout.contains("one-time code: JBSWY3DPEHPK3PXP"), "\(shown.stdout)")
        #expect(shown.stdout.contains("note: the notes,\n  on two lines\n"), "\(shown.stdout)")
        #expect(try await keyport(["show", "example.com"]).stdout.contains("title: Example (work)"))
        let unknown = try await keyport(["edit", "bm9uZQ", "--title", "x"])
        #expect(
            unknown.status == 1 && unknown.stderr.contains("no item with the id bm9uZQ")
                && unknown.stderr.contains("nothing changed")
        )
        let nothing = try await keyport(["edit", login])
        #expect(nothing.status == 1 && nothing.stderr.contains("say what to change"))
        #expect(try await keyport(["list"]).stdout.split(separator: "\n").count == 3)
    }

    @Test("a keeper started for another file on the vault's socket is refused before it gets a passphrase or an item")
    func agentOfAnotherVault() async throws {
        let sandbox = try VaultCLISandbox()
        defer { sandbox.remove() }
        let directory = sandbox.directory
        let environment = sandbox.environment
        let other = directory.url.appendingPathComponent("other.keyport").path
        #expect(try await sandbox.keyport(["init", "--passphrase-stdin"], "open sesame\n").status == 0)
        #expect(try await sandbox.keyport(["init", "--vault", other, "--passphrase-stdin"], "theirs\n").status == 0)
        // Another process's keeper, for its own file, where the person's vault's keeper would be.
        let intruder = try Program(
            CLI.executable.deletingLastPathComponent().appendingPathComponent("keyport-vault").path,
            ["keeper", "--vault", other],
            environment: environment
        )
        defer { intruder.stop() }
        _ = try await intruder.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("listening") }
        for attempt in [
            try await sandbox.keyport(["unlock", "--passphrase-stdin"], "open sesame\n"),
            try await sandbox.keyport(["add", "--passphrase-stdin", "--title", "Bank", "--user", "me"], "hunter2\n"),
            try await sandbox.keyport(["status"]),
        ] {
            #expect(attempt.status == 2, "\(attempt.stderr)")
            #expect(attempt.stderr.contains("serves \(other), not "), "\(attempt.stderr)")
        }
    }

    @Test(
        "a program that takes the vault keeper's socket and says it serves the vault is told apart, and hears nothing"
    )
    func impostorOnTheSocket() async throws {
        let sandbox = try VaultCLISandbox()
        defer { sandbox.remove() }
        let directory = sandbox.directory
        let socket = sandbox.socket
        #expect(try await sandbox.keyport(["init", "--passphrase-stdin"], "open sesame\n").status == 0)
        let vault = directory.url.appendingPathComponent("data/keyport/vault.keyport").path
        let heard = directory.url.appendingPathComponent("heard").path
        // A Varlink server in Python that answers Status as the vault's keeper would, and writes
        // down every message it gets.
        let impostor = try Program(
            try await Peers.python(importing: ["json"]),
            [
                "-c",
                """
                import json, os, socket, sys
                path, vault, heard = sys.argv[1:4]
                os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
                server = socket.socket(socket.AF_UNIX)
                server.bind(path)
                server.listen()
                print("listening", flush=True)
                while True:
                    connection, _ = server.accept()
                    data = b""
                    while True:
                        chunk = connection.recv(65536)
                        if not chunk:
                            break
                        data += chunk
                        while b"\\0" in data:
                            message, data = data.split(b"\\0", 1)
                            with open(heard, "ab") as f:
                                f.write(message + b"\\n")
                            reply = {"parameters": {"path": vault, "unlocked": False}}
                            connection.sendall(json.dumps(reply).encode() + b"\\0")
                    connection.close()
                """,
                socket, vault, heard,
            ]
        )
        defer { impostor.stop() }
        _ = try await impostor.waitForLine(timeout: .seconds(30)) { $0 == "listening" }
        let unlock = try await sandbox.keyport(["unlock", "--passphrase-stdin"], "open sesame\n")
        #expect(unlock.status == 2)
        #expect(unlock.stderr.contains("not Keyport Vault's keeper"), "\(unlock.stderr)")
        #expect(
            !FileManager.default.fileExists(atPath: heard),
            "the impostor heard: \((try? String(contentsOfFile: heard, encoding: .utf8)) ?? "")"
        )
    }

    @Test(
        "Ctrl-C while the keeper imports: the keeper rolls the import back and the command says nothing was imported"
    )
    func interruptedImport() async throws {
        let script = try Peers.require("/usr/bin/script", "script (util-linux)")
        let sandbox = try VaultCLISandbox("kp-vault-sigint")
        defer { sandbox.remove() }
        func keyport(_ arguments: [String], _ input: String? = nil) async throws -> CLI.Result {
            try await sandbox.keyport(arguments, input)
        }
        #expect(try await keyport(["init", "--passphrase-stdin"], "open sesame\n").status == 0)
        #expect(try await keyport(["unlock", "--passphrase-stdin"], "open sesame\n").status == 0)
        let list = sandbox.directory.url.appendingPathComponent("codes.txt").path
        try (0..<30000).map { "otpauth://totp/Site%20\($0):user\($0)?secret=JBSWY3DPEHPK3PXP&issuer=Site%20\($0)" }
            .joined(separator: "\n").write(toFile: list, atomically: true, encoding: .utf8)

        // On a terminal of its own, as a person runs it (unlocked there, as the keeper lets only the
        // terminal that unlocked it import without asking): its bar shows the keeper's first counts.
        let passphrase = sandbox.directory.url.appendingPathComponent("passphrase").path
        try "open sesame\n".write(toFile: passphrase, atomically: true, encoding: .utf8)
        let command =
            "\(CLI.executable.path) vault unlock --passphrase-stdin < \(passphrase) >/dev/null && "
            + [CLI.executable.path, "vault", "import", list].joined(separator: " ")
        let running = try Program(script, ["-qefc", command, "/dev/null"], environment: sandbox.environment)
        let deadline = ContinuousClock.now + .seconds(120)
        while !running.standardOutput.contains("] 1000/30000"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let importing = Started.processes(
            running: "keyport-cli",
            arguments: ["vault", "import"],
            withEnvironment: "KEYPORT_VAULT_SOCKET=\(sandbox.socket)"
        )
        try #require(importing.count == 1, "the import did not get under way: \(running.standardOutput)")
        // The real signal, to the command alone (a terminal's Ctrl-C reaches its process group).
        kill(importing[0], SIGINT)
        let ran = try await running.finish(timeout: .seconds(120))
        #expect(ran.status != 0, "\(ran.standardOutput)")
        #expect(
            ran.standardOutput.contains(
                "keyport: interrupted by SIGINT; the vault's keeper cancelled the import: nothing was imported"
            ),
            "\(ran.standardOutput.debugDescription)"
        )
        #expect(!ran.standardOutput.contains("new, "), "\(ran.standardOutput.debugDescription)")

        // A change waits for the keeper's import to end: after it, the vault holds that item alone.
        let added = try await keyport(["add", "--passphrase-stdin", "--title", "after", "--user", "u"], "pw\n")
        #expect(added.status == 0, "\(added.stderr)")
        let listed = try await keyport(["list"])
        #expect(listed.stdout.split(separator: "\n").count == 1, "\(listed.stdout.prefix(500))")
    }

    @Test("a long import or export shows a progress bar on a terminal, cleared before the report; none when piped")
    func progressBars() async throws {
        let script = try Peers.require("/usr/bin/script", "script (util-linux)")
        let sandbox = try VaultCLISandbox("kp-vault-progress")
        defer { sandbox.remove() }
        let directory = sandbox.directory
        let environment = sandbox.environment
        func keyport(_ arguments: [String], _ input: String? = nil) async throws -> CLI.Result {
            try await sandbox.keyport(arguments, input)
        }
        /// `keyport vault ARGUMENTS` on a terminal of its own (script(1)'s), its output and errors
        /// as the terminal showed them. The vault is unlocked on that terminal first: the keeper
        /// lets only the terminal session that unlocked it import and export without asking.
        let passphrase = directory.url.appendingPathComponent("passphrase").path
        try "open sesame\n".write(toFile: passphrase, atomically: true, encoding: .utf8)
        func onTerminal(_ arguments: [String]) async throws -> CLI.Result {
            let command =
                "\(CLI.executable.path) vault unlock --passphrase-stdin < \(passphrase) >/dev/null && "
                + ([CLI.executable.path, "vault"] + arguments).joined(separator: " ")
            return try await runProgram(script, ["-qefc", command, "/dev/null"], environment: environment)
        }
        #expect(try await keyport(["init", "--passphrase-stdin"], "open sesame\n").status == 0)
        #expect(try await keyport(["unlock", "--passphrase-stdin"], "open sesame\n").status == 0)
        let list = directory.url.appendingPathComponent("codes.txt").path
        try (0..<2500).map { "otpauth://totp/Site%20\($0):user\($0)?secret=JBSWY3DPEHPK3PXP&issuer=Site%20\($0)" }
            .joined(separator: "\n").write(toFile: list, atomically: true, encoding: .utf8)

        // The keeper's counts come every 1 000 items; the last one fills the bar.
        let imported = try await onTerminal(["import", list])
        #expect(imported.status == 0, "\(imported.stdout)")
        let screen = imported.stdout
        #expect(screen.contains("\rimporting [") && screen.contains("] 2500/2500 100%"), "\(screen.debugDescription)")
        #expect(screen.contains("\r\u{1B}[K\(list) (otpauth URI list): 2500 new"), "\(screen.debugDescription)")
        let exported = try await onTerminal(["export", "-o", directory.url.appendingPathComponent("all.json").path])
        #expect(
            exported.status == 0 && exported.stdout.contains("] 2500/2500 100%"),
            "\(exported.stdout.debugDescription)"
        )

        // Piped, the same commands write only what they report.
        let piped = try await keyport(["import", list])
        #expect(
            piped.status == 0
                && piped.stdout
                    == "\(list) (otpauth URI list): 0 new, 0 merged into items the vault had, 2500 it had already\n"
        )
        #expect(piped.stderr.isEmpty, "\(piped.stderr.debugDescription)")
        let pipedExport = try await keyport(["export", "-o", directory.url.appendingPathComponent("again.json").path])
        #expect(pipedExport.status == 0 && pipedExport.stdout.isEmpty && pipedExport.stderr.isEmpty)
    }
}
