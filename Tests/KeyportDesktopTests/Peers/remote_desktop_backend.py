#!/usr/bin/python3
"""A RemoteDesktop portal backend for Keyport's tests: behind the real xdg-desktop-portal, it stands
in for what a headless machine lacks, the compositor that presses the keys and the person who
answers the dialog.

usage: remote_desktop_backend.py ANSWER_FILE LOG_FILE

Owns org.freedesktop.impl.portal.desktop.keyporttest on the session bus and prints "ready". Start
answers as ANSWER_FILE says when it is asked ("allow", else the dialog is cancelled); every call
and every character pressed is logged to LOG_FILE, a line each ("create", "select types=1",
"start allow", "key K", "close").
"""
import sys

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

NAME = "org.freedesktop.impl.portal.desktop.keyporttest"
REMOTE_DESKTOP = "org.freedesktop.impl.portal.RemoteDesktop"
answer_file, log_file = sys.argv[1], sys.argv[2]


def log(line):
    with open(log_file, "a", encoding="utf-8") as log:
        log.write(line + "\n")


class Session(dbus.service.Object):
    @dbus.service.method("org.freedesktop.impl.portal.Session", in_signature="", out_signature="")
    def Close(self):
        log("close")
        self.remove_from_connection()


class RemoteDesktop(dbus.service.Object):
    def __init__(self, bus):
        super().__init__(bus, "/org/freedesktop/portal/desktop")
        self.bus = bus
        self.started = set()

    @dbus.service.method(REMOTE_DESKTOP, in_signature="oosa{sv}", out_signature="ua{sv}")
    def CreateSession(self, handle, session_handle, app_id, options):
        Session(self.bus, session_handle)
        log("create")
        return (dbus.UInt32(0), {"session_id": dbus.String("keyporttest", variant_level=1)})

    @dbus.service.method(REMOTE_DESKTOP, in_signature="oosa{sv}", out_signature="ua{sv}")
    def SelectDevices(self, handle, session_handle, app_id, options):
        log(f"select types={int(options.get('types', 0))}")
        return (dbus.UInt32(0), {})

    @dbus.service.method(REMOTE_DESKTOP, in_signature="oossa{sv}", out_signature="ua{sv}")
    def Start(self, handle, session_handle, app_id, parent_window, options):
        with open(answer_file, encoding="utf-8") as file:
            allowed = file.read().strip() == "allow"
        log("start " + ("allow" if allowed else "cancel"))
        if not allowed:
            return (dbus.UInt32(1), {})
        self.started.add(str(session_handle))
        return (dbus.UInt32(0), {"devices": dbus.UInt32(1, variant_level=1)})

    @dbus.service.method(REMOTE_DESKTOP, in_signature="oa{sv}iu", out_signature="")
    def NotifyKeyboardKeysym(self, session_handle, options, keysym, state):
        if str(session_handle) not in self.started:
            raise dbus.exceptions.DBusException("not started", name="org.freedesktop.portal.Error.Failed")
        if state == 1:
            code = int(keysym)
            log("key " + chr(code - 0x01000000 if code >= 0x01000000 else code))

    @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        return self.GetAll(interface)[name]

    @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return {"AvailableDeviceTypes": dbus.UInt32(1 | 2), "version": dbus.UInt32(1)}


DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()
portal = RemoteDesktop(bus)
name = dbus.service.BusName(NAME, bus)
print("ready", flush=True)
GLib.MainLoop().run()
