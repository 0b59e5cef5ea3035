import KeyportSystem
import Testing

/// The naming rules, as text in and text out.
@Suite("App identity rules")
struct AppIdentityTests {
    @Test(
        "an app id from a systemd unit name, by the portal's rule",
        arguments: [
            ("app-org.example.App-1234.scope", "org.example.App"),
            ("app-gnome-org.example.App-1234.scope", "org.example.App"),
            ("app-flatpak-org.example.App-1234.scope", "org.example.App"),
            ("app-kde-org.example.App-ab12.slice", "org.example.App"),
            ("app-org.example.App.service", "org.example.App"),
            ("app-org.example.App@xyz.service", "org.example.App"),
            ("app-gnome-org.example.App@12ab.service", "org.example.App"),
            ("app-gnome-org.example.App-autostart.service", "org.example.App"),
            // Escaped as unit names are: "-" in an app id is \x2d, other bytes too.
            (#"app-gnome-org.gnome.Evolution\x2dalarm\x2dnotify-2437.scope"#, "org.gnome.Evolution-alarm-notify"),
            (#"app-org.example.my\x2dapp-1234.scope"#, "org.example.my-app"),
            (#"app-org.\xc3\xa9t\xc3\xa9.App-1.scope"#, "org.été.App"),
            (#"app-org.ex\ample-1.scope"#, #"org.ex\ample"#),
            // A launcher is taken only when what follows still holds an app id and a RANDOM.
            ("app-firefox-1234.scope", "firefox"),
            ("app-gnome-firefox-1234.scope", "firefox"),
            // The shortest app id that leaves a RANDOM of letters and digits.
            ("app-gnome-org.example.App-1234-5678.scope", "org.example.App-1234"),
        ]
    )
    func unitNames(unit: String, appID: String) {
        #expect(AppIdentity.appID(fromUnitName: unit) == appID)
    }

    @Test(
        "units that are not an app's name none",
        arguments: [
            "session-2.scope", "init.scope", "app.slice", "gnome-terminal-server.service",
            "vte-spawn-0c5e2f0e-b8d5-4d62-9b5d-1f6e0b3c1a2d.scope", "app-org.example.App.scope",
            "app-org.example.App-12.34.scope", "app-org.example.App-1234.socket", "app-.scope", "app-.service",
            "app--1.scope", #"app-org.example.App\x00-1.scope"#, #"app-org.\xff.App-1.scope"#, "",
        ]
    )
    func notAppUnits(unit: String) {
        #expect(AppIdentity.appID(fromUnitName: unit) == nil)
    }

    @Test(
        "the user unit of a /proc/PID/cgroup file",
        arguments: [
            (
                "0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-org.example.App-1234.scope\n",
                "app-gnome-org.example.App-1234.scope"
            ),
            (
                "0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-org.example.App-1234.scope/worker",
                "app-gnome-org.example.App-1234.scope"
            ),
            (
                "0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-org.example.App@ab12.service\n",
                "app-org.example.App@ab12.service"
            ),
            ("0::/user.slice/user-1000.slice/user@1000.service/init.scope\n", "init.scope"),
            ("0::/user.slice/user-1000.slice/user@1000.service/_cpu.service\n", "cpu.service"),
            (
                "12:name=systemd:/user.slice/user-1000.slice/user@1000.service/app.slice/app-x-1.scope\n4:memory:/\n0::/\n",
                "app-x-1.scope"
            ),
        ]
    )
    func cgroupFiles(file: String, unit: String) {
        #expect(AppIdentity.userUnit(fromCgroupFile: file) == unit)
    }

    @Test(
        "no user unit outside a user manager",
        arguments: [
            "0::/user.slice/user-1000.slice/session-2.scope\n", "0::/system.slice/keyportd.service\n", "0::/\n",
            "9:name=systemd:/\n4:memory:/process_api/3e25\n0::/\n",
            "0::/user.slice/user-1000.slice/user@1000.service\n",
            "",
        ]
    )
    func noUserUnit(file: String) {
        #expect(AppIdentity.userUnit(fromCgroupFile: file) == nil)
    }

    @Test(
        "the app id of a .flatpak-info file",
        arguments: [
            (
                "[Application]\nname=org.example.App\nruntime=runtime/org.gnome.Platform/x86_64/47\n\n[Instance]\ninstance-id=1\n",
                "org.example.App"
            ),
            ("# a comment\n[Application]\nname[de]=org.example.Anders\nname = org.example.App\n", "org.example.App"),
            ("[Application]\nname=org.example.First\nname=org.example.Second\n", "org.example.Second"),
            // A runtime run on its own names itself; the portal reads the runtime's name then.
            ("[Runtime]\nname=org.gnome.Sdk\n", "org.gnome.Sdk"),
            ("[Application]\nname=org.example.App\n[Runtime]\nname=org.gnome.Platform\n", "org.gnome.Platform"),
        ]
    )
    func flatpakInfo(file: String, appID: String) {
        #expect(AppIdentity.flatpakAppID(fromInfo: file) == appID)
    }

    @Test(
        "no app id from a .flatpak-info that names none or an invalid one",
        arguments: [
            "[Instance]\nname=org.example.App\n", "[Application]\nname=../../etc/passwd\n", "[Application]\nname=org\n",
            "[Application]\nname=org.example.App \n", "[Runtime]\nruntime=org.gnome.Platform\n",
            "name=org.example.App\n",
            "",
        ]
    )
    func noFlatpakInfo(file: String) {
        #expect(AppIdentity.flatpakAppID(fromInfo: file) == nil)
    }

    @Test("valid app ids: dotted, two elements or more, '-' only in the last")
    func appIDs() {
        for valid in ["org.example.App", "com.example.my-app", "org.example.App_2", "snap.foo", "0ad.example.Game"] {
            #expect(AppIdentity.isValidAppID(valid), "\(valid)")
        }
        let invalid = [
            "", "org", ".org.example", "org..example", "org.example.", "org.my-example.App", "org.example.App!",
            "org.exämple.App", "org.example." + String(repeating: "a", count: 244),
        ]
        for id in invalid {
            #expect(!AppIdentity.isValidAppID(id), "\(id)")
        }
        #expect(AppIdentity.isValidAppID("org.example." + String(repeating: "a", count: 243)))
    }
}
