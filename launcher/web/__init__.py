"""The web panel: a page for a phone, served by the unit, that owns no hardware.

Every request becomes a console command on the reactor's queue (the console's registry and
sessions), so the web and the console cannot disagree; a phone is let in by a token, got by
pairing on the launcher's own button (``launcher.firmware.pairing``) and kept hashed in the
state folder (``tokens``).
"""
