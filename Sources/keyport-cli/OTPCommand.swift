import ArgumentParser
import Foundation
import KeyportCommandLine
import KeyportEncoding
import OneTimeCodes

struct OTPCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "otp",
        abstract: "Make and read one-time codes: HOTP, TOTP, Steam Guard; otpauth:// and Google Authenticator exports.",
        subcommands: [Fill.self, Code.self, Parse.self, Migration.self],
        defaultSubcommand: Fill.self
    )
}

/// Reads a secret or URI argument; `-` reads it from standard input, which keeps it out of the
/// process list (`/proc/PID/cmdline` is readable by every user).
func readSecretArgument(_ argument: String) throws(CommandError) -> String {
    guard argument == "-" else { return argument }
    let bytes = try readInput("-", limit: 1 << 20)
    return String(decoding: bytes, as: UTF8.self).trimmingWhitespace()
}

/// Parses a URI, or builds a TOTP account from a bare Base32 secret.
func account(from text: String) throws(CommandError) -> OTPAuthURI {
    do {
        let lower = text.lowercased()
        if lower.hasPrefix("otpauth://") || lower.hasPrefix("steam://") { return try OTPAuthURI(parsing: text) }
        return OTPAuthURI(secret: try OTPSecret(base32: text))
    } catch {
        throw .invalid(error.message)
    }
}

extension OTPCommand {
    struct Code: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the code for a secret or an otpauth:// URI.",
            discussion: """
                Options override what the URI says. Give - to read the secret or URI from standard input, \
                which keeps it out of the process list. Exit status: 0, 1 for a bad secret, URI or option \
                value, 2 for a usage error.
                """
        )

        @Argument(help: "A Base32 secret, an otpauth:// or steam:// URI, or - for standard input.")
        var secretOrURI: String

        @Option(help: "The Unix time to make the code for (default: now).")
        var at: Int64?
        @Option(help: "sha1, sha256 or sha512.")
        var algorithm: String?
        @Option(help: "Number of digits, 6 to 10.")
        var digits: Int?
        @Option(help: "Seconds per code.")
        var period: Int64?
        @Option(help: "The HOTP counter (implies --hotp).")
        var counter: UInt64?
        @Flag(help: "Counter-based codes (HOTP).")
        var hotp = false
        @Flag(help: "Steam Guard codes.")
        var steam = false

        func run() throws {
            var uri = try account(from: try readSecretArgument(secretOrURI))
            if let algorithm {
                guard let value = OTPAlgorithm(name: algorithm) else {
                    throw CommandError.invalid("--algorithm must be sha1, sha256 or sha512, not '\(algorithm)'")
                }
                uri.algorithm = value
            }
            if let digits { uri.format = .decimal(digits: digits) }
            if steam {
                uri.format = .steam
                uri.algorithm = .sha1
            }
            if hotp || counter != nil {
                guard let counter = counter ?? { if case .hotp(let c) = uri.kind { c } else { nil } }() else {
                    throw CommandError.invalid("--hotp needs --counter N")
                }
                uri.kind = .hotp(counter: counter)
            } else if let period {
                uri.kind = .totp(period: period)
            }
            let time = at ?? Int64(Date().timeIntervalSince1970)
            do {
                FileHandle.write(try uri.code(at: time) + "\n")
            } catch {
                throw CommandError.invalid(error.message)
            }
        }
    }

    struct Parse: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the normalised parameters of an otpauth:// URI (the secret as canonical Base32)."
        )

        @Argument(help: "An otpauth:// or steam:// URI, or - for standard input.")
        var uri: String

        @Flag(help: "Print JSON.")
        var json = false

        struct Parameters: Encodable {
            var type: String
            var issuer: String?
            var account: String
            var algorithm: String
            var digits: Int?
            var encoder: String?
            var period: Int64?
            var counter: UInt64?
            var secret: String
        }

        func run() throws {
            let parsed = try account(from: try readSecretArgument(uri))
            var p = Parameters(
                type: "totp",
                issuer: parsed.issuer,
                account: parsed.account,
                algorithm: parsed.algorithm.rawValue,
                secret: parsed.secret.base32EncodedSecret()
            )
            switch parsed.format {
            case .decimal(let digits): p.digits = digits
            case .steam: p.encoder = "steam"
            }
            switch parsed.kind {
            case .totp(let period): p.period = period
            case .hotp(let counter):
                p.type = "hotp"
                p.counter = counter
            }
            if json {
                FileHandle.write(encodeJSON(p))
            } else {
                // Issuer and account come from the URI: escaped, so neither can rewrite the terminal.
                let issuer = p.issuer.map { DisplayText.escaping($0) } ?? "(none)"
                var out =
                    "type: \(p.type)\nissuer: \(issuer)\naccount: \(DisplayText.escaping(p.account))\nalgorithm: \(p.algorithm)\n"
                out += p.digits.map { "digits: \($0)\n" } ?? "encoder: steam\n"
                out += p.period.map { "period: \($0)\n" } ?? p.counter.map { "counter: \($0)\n" } ?? ""
                out += "secret: \(p.secret)\n"
                FileHandle.write(out)
            }
        }
    }

    struct Migration: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Google Authenticator exports (otpauth-migration://).",
            subcommands: [Decode.self, Encode.self]
        )

        struct Decode: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Print one otpauth:// URI per account of an export (give every batch's URI).",
                discussion:
                    "Accounts that cannot be converted faithfully, and missing batches, are reported on standard error; the exit status is then 1."
            )

            @Argument(
                help:
                    "The otpauth-migration:// URIs of the export, or - to read them from standard input, one per line."
            )
            var uris: [String]

            func run() throws {
                var all: [String] = []
                for uri in uris {
                    if uri == "-" {
                        all += String(decoding: try readInput("-", limit: 16 << 20), as: UTF8.self).split(
                            whereSeparator: \.isNewline
                        ).map(String.init)
                    } else {
                        all.append(uri)
                    }
                }
                let decoded: GoogleAuthenticatorMigration.Decoded
                do {
                    decoded = try GoogleAuthenticatorMigration.decode(all)
                } catch {
                    throw CommandError.invalid(error.message)
                }
                FileHandle.write(decoded.accounts.map { $0.uriString + "\n" }.joined())
                for problem in decoded.problems {
                    FileHandle.write("keyport: \(DisplayText.escaping("\(problem)"))\n", to: .standardError)
                }
                if !decoded.problems.isEmpty { throw ExitCode(1) }
            }
        }

        struct Encode: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract:
                    "Read otpauth:// URIs on standard input, one per line; print Google Authenticator migration URIs."
            )

            @Option(help: "Accounts per migration URI (one QR code each).")
            var perBatch = 10

            func run() throws {
                let lines = String(decoding: try readInput("-", limit: 16 << 20), as: UTF8.self)
                    .split(whereSeparator: \.isNewline).map { $0.trimmingWhitespace(newlines: false) }.filter {
                        !$0.isEmpty
                    }
                var accounts: [OTPAuthURI] = []
                for (number, line) in lines.enumerated() {
                    do {
                        accounts.append(try OTPAuthURI(parsing: line))
                    } catch {
                        throw CommandError.invalid("line \(number + 1): \(error.message)")
                    }
                }
                do {
                    let batchID = Int32.random(in: Int32.min...Int32.max)
                    let uris = try GoogleAuthenticatorMigration.encode(accounts, perBatch: perBatch, batchID: batchID)
                    FileHandle.write(uris.map { $0 + "\n" }.joined())
                } catch {
                    throw CommandError.invalid(error.message)
                }
            }
        }
    }
}
