"""Asks an X11 window to close the way a window manager does when the user
clicks its close button: a WM_DELETE_WINDOW client message. No window
manager runs under Xvfb, and xdotool cannot send this message.

Usage: /usr/bin/python3 wm_close.py WINDOW_ID...  (needs python3-xlib)
"""

import sys

from Xlib import X, display, protocol


def main(window_ids):
    screen = display.Display()
    protocols = screen.intern_atom("WM_PROTOCOLS")
    delete = screen.intern_atom("WM_DELETE_WINDOW")
    for window_id in window_ids:
        window = screen.create_resource_object("window", int(window_id))
        message = protocol.event.ClientMessage(
            window=window, client_type=protocols, data=(32, [delete, X.CurrentTime, 0, 0, 0])
        )
        window.send_event(message, event_mask=X.NoEventMask)
    screen.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
