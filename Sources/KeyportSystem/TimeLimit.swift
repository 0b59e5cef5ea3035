/// What `body` returns, or `nil` when `limit` passes first; `body` is cancelled then and must end
/// when it is (as every wait of `ChildProcess`, `Latch` and a Varlink connection does).
package func within<Value: Sendable>(
    _ limit: Duration,
    _ body: @escaping @Sendable () async -> Value?
) async -> Value? {
    await withTaskGroup(of: Value?.self) { group in
        group.addTask { await body() }
        group.addTask {
            try? await Task.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        return await group.next() ?? nil
    }
}
