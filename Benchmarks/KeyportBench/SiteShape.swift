import Foundation

/// How a benchmark's items are spread over sites: each on a registrable domain of its own
/// (`site-N.example`), or nearly all under one (`siteN.corp.example`, a company's sites), the
/// shape in which work that grows with a domain's items shows.
enum SiteShape: String, CaseIterable {
    case spread
    case oneDomain = "one-domain"

    /// The host of item `number`.
    func host(_ number: Int) -> String {
        switch self {
        case .spread: "site-\(number).example"
        case .oneDomain: "site\(number).corp.example"
        }
    }

    /// The shape a command line names (`spread` when none).
    static func named(_ argument: String?) -> SiteShape {
        guard let argument else { return .spread }
        guard let shape = SiteShape(rawValue: argument) else {
            print("the sites' shape is spread or one-domain, not '\(argument)'")
            exit(2)
        }
        return shape
    }
}
