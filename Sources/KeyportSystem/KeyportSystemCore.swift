// KeyportSystem is KeyportSystemCore (what needs only the standard library and libc) with the
// parts that use Foundation; users of KeyportSystem see both.
@_exported import KeyportSystemCore
