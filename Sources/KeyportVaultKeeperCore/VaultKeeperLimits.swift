// What the vault's programs add to VaultKeeper.varlink (org.keyport.Vault, which Keyport Vault's
// keeper serves). Items travel as raw CXF item objects, read and written by the CXF codec.
extension VaultKeeper {
    /// The longest message the keeper takes. An import is one message, so that it is one
    /// transaction: this is the largest import, as CXF. `keyport vault import` reads files of up
    /// to 256 MB, and their CXF is about as large (larger for an otpauth list), so 512 MB; larger
    /// ones are refused before they are sent. Only this user's processes can connect.
    package static let maximumMessageSize = 512 << 20

    /// The longest target `Find` and `Show` take, in bytes of UTF-8: an id, a URL or a title is
    /// far shorter; a longer one is refused before the person is asked or the vault read.
    package static let maximumTargetLength = 2048
}
