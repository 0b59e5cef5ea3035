import Crypto
import Foundation

/// What a relying party asks of WebAuthn's `prf` extension in an assertion: inputs for any
/// passkey, or by credential id.
public struct ASAuthorizationPublicKeyCredentialPRFAssertionInput: Sendable {
    /// One or two inputs, as the relying party gave them (not yet salted: the authenticator
    /// salts each with SHA-256 of `"WebAuthn PRF"`, a zero byte and the input).
    public struct InputValues: Hashable, Sendable {
        /// The first input.
        public var saltInput1: Data
        /// The second input, when the relying party gave two.
        public var saltInput2: Data?

        /// One or two inputs.
        public init(saltInput1: Data, saltInput2: Data? = nil) {
            self.saltInput1 = saltInput1
            self.saltInput2 = saltInput2
        }

        /// One or two inputs.
        public static func saltInput1(_ saltInput1: Data, saltInput2: Data? = nil) -> InputValues {
            InputValues(saltInput1: saltInput1, saltInput2: saltInput2)
        }
    }

    /// The inputs for whichever passkey answers.
    public let inputValues: InputValues?
    /// The inputs by credential id, for the passkeys the relying party allows.
    public let perCredentialInputValues: [Data: InputValues]?

    /// Inputs for any passkey, and perhaps some by credential id.
    public static func inputValues(
        _ inputValues: InputValues,
        perCredentialInputValues: [Data: InputValues]? = nil
    ) -> Self {
        Self(inputValues: inputValues, perCredentialInputValues: perCredentialInputValues)
    }

    /// Inputs by credential id only.
    public static func perCredentialInputValues(_ values: [Data: InputValues]) -> Self {
        Self(inputValues: nil, perCredentialInputValues: values)
    }

    /// The inputs for the passkey `credentialID`: its own, else those for any passkey.
    func values(for credentialID: Data) -> InputValues? {
        perCredentialInputValues?[credentialID] ?? inputValues
    }
}

/// What a relying party asks of `prf` when it registers a passkey: whether it is supported, and
/// perhaps outputs at once.
public struct ASAuthorizationPublicKeyCredentialPRFRegistrationInput: Sendable {
    /// One or two inputs.
    public typealias InputValues = ASAuthorizationPublicKeyCredentialPRFAssertionInput.InputValues

    /// Inputs to evaluate with the new passkey.
    public let inputValues: InputValues?
    /// Whether the relying party only asks if PRF is supported.
    public let shouldCheckForSupport: Bool

    /// Evaluate `inputValues` with the new passkey.
    public static func inputValues(_ inputValues: InputValues) -> Self {
        Self(inputValues: inputValues, shouldCheckForSupport: false)
    }

    /// Only say whether the new passkey supports PRF.
    public static var checkForSupport: Self { Self(inputValues: nil, shouldCheckForSupport: true) }
}

/// The outputs of `prf` in an assertion: 32 bytes for each input.
public struct ASAuthorizationPublicKeyCredentialPRFAssertionOutput: Sendable {
    /// The output for the first input.
    public let first: SymmetricKey
    /// The output for the second input.
    public let second: SymmetricKey?

    /// Outputs for one or two inputs.
    public init(first: SymmetricKey, second: SymmetricKey? = nil) {
        self.first = first
        self.second = second
    }
}

/// What `prf` says when a passkey is registered.
public struct ASAuthorizationPublicKeyCredentialPRFRegistrationOutput: Sendable {
    /// Whether the new passkey supports PRF.
    public let isSupported: Bool
    /// The output for the first input, when inputs were given.
    public let first: SymmetricKey?
    /// The output for the second input.
    public let second: SymmetricKey?

    /// A supported PRF's outputs for the inputs given.
    public init(first: SymmetricKey, second: SymmetricKey? = nil) {
        isSupported = true
        self.first = first
        self.second = second
    }

    private init(isSupported: Bool) {
        self.isSupported = isSupported
        first = nil
        second = nil
    }

    /// The passkey supports PRF (no inputs were given).
    public static var supported: Self { Self(isSupported: true) }
    /// The passkey does not support PRF.
    public static var unsupported: Self { Self(isSupported: false) }
}

/// The extensions of an assertion request a provider is given.
public struct ASPasskeyAssertionCredentialExtensionInput: Sendable {
    /// `prf`'s inputs.
    public var prf: ASAuthorizationPublicKeyCredentialPRFAssertionInput?

    /// Extension inputs (Keyport passes `prf`; `largeBlob` is not supported).
    public init(prf: ASAuthorizationPublicKeyCredentialPRFAssertionInput? = nil) {
        self.prf = prf
    }
}

/// The extensions of a registration request a provider is given.
public struct ASPasskeyRegistrationCredentialExtensionInput: Sendable {
    /// `prf`'s inputs.
    public var prf: ASAuthorizationPublicKeyCredentialPRFRegistrationInput?

    init(prf: ASAuthorizationPublicKeyCredentialPRFRegistrationInput?) {
        self.prf = prf
    }
}

/// The extension outputs a provider answers an assertion with.
public struct ASPasskeyAssertionCredentialExtensionOutput: Sendable {
    /// `prf`'s outputs.
    public var prf: ASAuthorizationPublicKeyCredentialPRFAssertionOutput?

    /// Extension outputs.
    public init(prf: ASAuthorizationPublicKeyCredentialPRFAssertionOutput? = nil) {
        self.prf = prf
    }
}

/// The extension outputs a provider answers a registration with.
public struct ASPasskeyRegistrationCredentialExtensionOutput: Sendable {
    /// `prf`'s answer.
    public var prf: ASAuthorizationPublicKeyCredentialPRFRegistrationOutput?

    /// Extension outputs.
    public init(prf: ASAuthorizationPublicKeyCredentialPRFRegistrationOutput? = nil) {
        self.prf = prf
    }
}

/// Which extension inputs a passkey request carries.
public enum ASPasskeyCredentialExtensionInput: Sendable {
    /// None.
    case none
    /// An assertion's.
    case assertion(ASPasskeyAssertionCredentialExtensionInput)
    /// A registration's.
    case registration(ASPasskeyRegistrationCredentialExtensionInput)
}
