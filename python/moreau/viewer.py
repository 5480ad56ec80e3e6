"""Watch a simulator live in a browser while your own loop steps it (docs/viewer.md).

    import moreau, moreau.viewer
    sim = moreau.Sim(moreau.World("scenes/b9_solo_trot.yaml"))
    with moreau.viewer.launch(sim) as viewer:   # prints the page's address
        while sim.time < 10:
            viewer.sync()   # show the last step, apply the page's commands, keep real time
            sim.step()

The viewer is passive: the loop steps the simulator; the page shows it (bodies, contacts and
forces, scrolling plots) and sends commands that sync() applies between steps: pause (sync()
then returns only when the page runs again or asks for a single step), reset (the simulator is
reset, sync() goes on), speed (a multiple of real time, or as fast as possible), and the drag
of a body (Ctrl + drag on the page: a spring force set with the simulator's wrench on that
body while the drag lasts). By default the first sync() waits until a page has drawn the
initial state, so that nothing is missed (wait=False starts at once).

The server runs on its own thread inside the library (include/moreau/live.h) and listens on
127.0.0.1 only unless host says otherwise; a page that stops reading never slows the loop.
"""

import ctypes
import time

from . import _lib as _core

__all__ = ["launch", "Viewer"]

_STEP, _WAIT, _RESET = 0, 1, 2


class _Options(ctypes.Structure):
    """mr_live_options (live.h)"""
    _fields_ = [("host", ctypes.c_char_p), ("port", ctypes.c_int), ("fps", ctypes.c_double),
                ("realtime", ctypes.c_int), ("speed", ctypes.c_double), ("paused", ctypes.c_int),
                ("wait_for_viewer", ctypes.c_int), ("perturb_frequency", ctypes.c_double),
                ("perturb_damping", ctypes.c_double), ("title", ctypes.c_char_p)]


class _Stats(ctypes.Structure):
    """mr_live_stats (live.h)"""
    _fields_ = [("viewers", ctypes.c_int), ("connections", ctypes.c_long),
                ("frames_published", ctypes.c_long), ("frames_sent", ctypes.c_long),
                ("commands", ctypes.c_long), ("paused", ctypes.c_int),
                ("perturb_body", ctypes.c_int), ("perturb_anchor", ctypes.c_double * 3),
                ("perturb_target", ctypes.c_double * 3), ("latency_count", ctypes.c_long),
                ("latency_ms", ctypes.c_double * 4096)]


_Error = _core._Error


def _library():
    lib = _core.lib
    P = ctypes.c_void_p
    sigs = {
        "mr_live_options_default": (_Options, []),
        "mr_live_create": (P, [P, ctypes.POINTER(_Options), ctypes.POINTER(_Error)]),
        "mr_live_url": (ctypes.c_char_p, [P]), "mr_live_port": (ctypes.c_int, [P]),
        "mr_live_publish": (None, [P]), "mr_live_poll": (ctypes.c_int, [P, ctypes.c_double]),
        "mr_live_end": (None, [P, ctypes.c_char_p]), "mr_live_free": (None, [P]),
        "mr_live_get_stats": (None, [P, ctypes.POINTER(_Stats)]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    return lib


_lib = _library()


def _sim_pointer(sim):
    ptr = getattr(sim, "_ptr", None)
    if not ptr:
        raise TypeError(f"launch(sim): sim must be a live moreau.Sim, got {type(sim).__name__}")
    return ptr


class Viewer:
    """A live viewer on a simulator; see launch(). url is the page's address."""

    def __init__(self, sim, host="127.0.0.1", port=0, realtime=True, speed=1.0, wait=True,
                 paused=False, fps=60.0, title=None, quiet=False):
        for name, value, lo in (("speed", speed, 0.0), ("fps", fps, 0.0)):
            if not isinstance(value, (int, float)) or not value > lo:
                raise ValueError(f"{name} = {value!r}: expected a positive number")
        if not isinstance(port, int) or not 0 <= port <= 65535:
            raise ValueError(f"port = {port!r}: expected an integer in [0, 65535]")
        opt = _lib.mr_live_options_default()
        self._host = host.encode()
        self._title = (title or "python").encode()
        opt.host, opt.port, opt.fps = self._host, port, float(fps)
        opt.realtime, opt.speed, opt.paused = int(bool(realtime)), float(speed), int(bool(paused))
        opt.wait_for_viewer, opt.title = int(bool(wait)), self._title
        err = _Error()
        self.sim = sim  # kept alive as long as the viewer
        self._ptr = _lib.mr_live_create(_sim_pointer(sim), ctypes.byref(opt), ctypes.byref(err))
        if not self._ptr:
            _core._raise(err)
        self.url = _lib.mr_live_url(self._ptr).decode()
        self.port = _lib.mr_live_port(self._ptr)
        if not quiet:
            print(f"live viewer: {self.url}" +
                  (" (the first sync() waits for a page)" if wait else ""), flush=True)

    @property
    def running(self):
        """True until close()."""
        return bool(getattr(self, "_ptr", None))

    def sync(self, timeout=None):
        """Publish the simulator's state to the pages, apply their commands, and return True
        when the loop may step: at once when running as fast as possible, when the simulated
        time is due in real time (times speed), or, while paused, when the page runs again or
        asks for one step. A reset from a page resets the simulator here. With a timeout (s),
        returns False when it ran out first (paused, or waiting for a page): call again before
        stepping. Ctrl-C interrupts the wait."""
        if not self.running:
            raise RuntimeError("sync() on a closed viewer")
        if timeout is not None and not timeout >= 0:
            raise ValueError(f"timeout = {timeout!r}: expected a number >= 0 s, or None")
        _lib.mr_live_publish(self._ptr)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            wait = 0.1 if deadline is None else max(0.0, min(0.1, deadline - time.monotonic()))
            if _lib.mr_live_poll(self._ptr, wait) == _STEP:
                return True
            if deadline is not None and time.monotonic() >= deadline:
                return False

    def stats(self):
        """Counters: viewers, connections, frames_published, frames_sent, commands, paused,
        perturb_body (-1: none), perturb_anchor, perturb_target, latency_ms (the last reports of
        the pages: publication of a frame to its drawing, ms)."""
        st = _Stats()
        _lib.mr_live_get_stats(self._ptr, ctypes.byref(st))
        out = {k: getattr(st, k) for k, _ in _Stats._fields_
               if k not in ("perturb_anchor", "perturb_target", "latency_ms")}
        out["perturb_anchor"] = tuple(st.perturb_anchor)
        out["perturb_target"] = tuple(st.perturb_target)
        n = min(st.latency_count, 4096)
        out["latency_ms"] = list(st.latency_ms[:n])
        return out

    @property
    def paused(self):
        return bool(self.stats()["paused"])

    def close(self, status="done"):
        """End the session: the pages show status, then the server stops."""
        if self.running:
            _lib.mr_live_end(self._ptr, status.encode())
            _lib.mr_live_free(self._ptr)
            self._ptr = None

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        self.close("done" if kind is None else f"stopped: {kind.__name__}")

    def __del__(self):
        self.close()


def launch(sim, host="127.0.0.1", port=0, realtime=True, speed=1.0, wait=True, paused=False,
           fps=60.0, title=None, quiet=False):
    """Serve a live viewer of sim (a moreau.Sim) and return its Viewer; the loop that steps the
    simulator calls viewer.sync() between steps.

    host, port: where to listen (127.0.0.1, this machine only; port 0: a free port, see
    viewer.url). realtime, speed: pace sync() to speed x real time (False: as fast as
    possible); the page changes both. wait: the first sync() waits for a page to draw the
    initial state. paused: start paused. fps: most frames per second sent to a page. title:
    shown on the page. quiet: do not print the address."""
    return Viewer(sim, host=host, port=port, realtime=realtime, speed=speed, wait=wait,
                  paused=paused, fps=fps, title=title, quiet=quiet)
