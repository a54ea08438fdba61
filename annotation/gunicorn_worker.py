"""gunicorn's threaded worker (gthread) with an event loop that never waits for a client.

``gunicorn.conf.py`` serves with :class:`ThreadWorker`. It differs from gunicorn's in one
place: how a connection that is not kept alive gets closed. gunicorn (27) closes it "gracefully"
(RFC 9112 §9.6): it sends FIN, then reads whatever the client still sends until the client
closes too (at most 2 s and 64 KiB), so that request bytes the app left unread do not turn the
close into a reset that can cut the response short. It does this in the worker's **main
thread**, the one loop that accepts connections and hands every kept-alive connection's next
request to the threads — and it blocks there until the client has read the answer and closed.

A client that opens a connection per request (``Connection: close``: a password-guessing script,
``curl``, health checks) so stalls the whole process for a round trip to that client per
request. While it stalls, the annotators' kept-alive connections get nothing dispatched and
the threads run out of work, and a wait past the 2 s keep-alive made the loop close kept-alive
connections with their request unread. On a machine whose CPUs the server keeps busy (the
embedded SQLite default) the guessing client waits for a CPU before it reads and closes:
measured with 4 guessing clients against locked-out logins (load average 8–13), 2.7–18.8 ms a
close on average, up to 2.1 s, the loop blocked 11–18 % of the attack's time
(docs/security.md, docs/performance-log.md). Here the same close is driven by the loop's
poller: FIN at once, then the socket is read when it is readable and closed at the client's
EOF, at 64 KiB, or after 2 s.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import time
from collections import deque
from functools import partial

from gunicorn import util
from gunicorn.workers import gthread

#: gunicorn's own bounds for the lingering close (``gunicorn.util.close_graceful``).
LINGER_SECONDS = 2.0
LINGER_MAX_BYTES = 65536


class ThreadWorker(gthread.ThreadWorker):
    """gthread whose closing connections linger on the poller instead of in the loop."""

    def init_process(self):
        # Connections half-closed and waiting for the client's EOF, oldest first (every one
        # waits LINGER_SECONDS, so the deque stays ordered by deadline). They still count in
        # nr_conns, so worker_connections bounds them as it bounds every connection.
        self.lingering: deque = deque()
        super().init_process()

    def finish_request(self, conn, fs):
        closing = fs.cancelled() or (fs.exception() is None and not fs.result())
        if not closing:  # kept alive, deferred, or failed (closed at once): as gunicorn does
            super().finish_request(conn, fs)
            return
        sock = conn.sock
        try:
            sock.shutdown(socket.SHUT_WR)
            sock.setblocking(False)
            self.poller.register(sock, selectors.EVENT_READ, partial(self._drain, conn))
        except (OSError, ValueError):  # the client is gone already
            self._close(conn)
            return
        conn.timeout = time.monotonic() + LINGER_SECONDS
        conn.drained = 0
        self.lingering.append(conn)

    def _drain(self, conn, sock):
        """The socket is readable: take what the client sent; close at EOF or at the cap."""
        try:
            while conn.drained < LINGER_MAX_BYTES:
                data = sock.recv(4096)
                if not data:
                    break
                conn.drained += len(data)
        except BlockingIOError:
            return  # read all there was; the client has not closed yet
        except OSError:
            pass
        self._stop_lingering(conn)

    def _stop_lingering(self, conn):
        with contextlib.suppress(KeyError, ValueError, OSError):
            self.poller.unregister(conn.sock)
        with contextlib.suppress(ValueError):
            self.lingering.remove(conn)
        self._close(conn)

    def _close(self, conn):
        self.nr_conns -= 1
        util.close(conn.sock)

    def murder_pending(self):
        """gunicorn's loop calls this on every turn: also close lingering connections whose
        client has not closed within LINGER_SECONDS."""
        super().murder_pending()
        now = time.monotonic()
        while self.lingering and self.lingering[0].timeout <= now:
            self._stop_lingering(self.lingering[0])

    def murder_keepalived(self, force=False):
        super().murder_keepalived(force)
        if force:  # the worker is stopping
            while self.lingering:
                self._stop_lingering(self.lingering[0])
