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

It also holds a locked-out address's login requests before answering them
(``settings.UNPACK_LOGIN_LOCKED_HOLD_SECONDS``, 1 s). Each refused guess costs the server little
(``LoginLockoutMiddleware`` answers it before sessions, CSRF and templates), but a guessing
script sends the next one as soon as it has the answer, so four of them still took a share of
the 2 CPUs from annotators (docs/security.md). A thread reads the request and asks the throttle
(``login_throttle.address_locked``); a locked one waits here, in the loop's list, using no
thread, and is then handed to Django like any request, which answers the 429. At most
``HOLD_MAX`` wait per process: past that a request is answered at once, so a client opening
many connections cannot use this to take up the process's connection slots.
"""

from __future__ import annotations

import contextlib
import errno
import selectors
import socket
import time
from collections import deque
from functools import partial

from django.conf import settings
from gunicorn import util
from gunicorn.http.errors import NoMoreData
from gunicorn.workers import gthread

from annotation import login_throttle

#: gunicorn's own bounds for the lingering close (``gunicorn.util.close_graceful``).
LINGER_SECONDS = 2.0
LINGER_MAX_BYTES = 65536
#: Login requests of locked addresses held at once per process, at most.
HOLD_MAX = 100


class _Held:
    """A thread's answer for a login request from a locked address: answer it later."""

    __slots__ = ("due", "request")

    def __init__(self, request):
        self.request = request
        self.due = 0.0


def _remote_address(client) -> str:
    """REMOTE_ADDR as gunicorn sets it (``gunicorn.http.wsgi.create``)."""
    if isinstance(client, str):
        return client
    if isinstance(client, bytes):
        return client.decode()
    return client[0]


class ThreadWorker(gthread.ThreadWorker):
    """gthread whose closing connections linger on the poller instead of in the loop."""

    def init_process(self):
        # Connections half-closed and waiting for the client's EOF, oldest first (every one
        # waits LINGER_SECONDS, so the deque stays ordered by deadline). They still count in
        # nr_conns, so worker_connections bounds them as it bounds every connection.
        self.lingering: deque = deque()
        # Held login requests of locked addresses (connection, _Held), by due time: every
        # one waits the same time, so appending keeps the order.
        self.held: deque = deque()
        super().init_process()

    def handle_request(self, req, conn):
        """In a thread: a login request from a locked address is not answered now (see the
        module's docstring); any other goes to Django as gunicorn's does."""
        if req.path in login_throttle.LOGIN_PATHS and self._address_locked(conn.client):
            return _Held(req)
        return super().handle_request(req, conn)

    def _address_locked(self, client) -> bool:
        if settings.UNPACK_LOGIN_LOCKED_HOLD_SECONDS <= 0:
            return False
        try:
            return login_throttle.address_locked(_remote_address(client))
        except Exception:  # the cache unreachable: Django's own check decides, at once
            self.log.exception("login throttle: could not read the lock")
            return False

    def _keepalive_after(self, conn, keepalive):
        if isinstance(keepalive, _Held):
            return keepalive
        return super()._keepalive_after(conn, keepalive)

    def _answer_held(self, conn, req):
        """In a thread: a held request's time is up; Django answers it (the 429), as
        gthread's ``handle`` would have."""
        try:
            return self._keepalive_after(conn, super().handle_request(req, conn))
        except (StopIteration, NoMoreData):
            pass
        except OSError as error:  # the client gave up meanwhile
            if error.errno not in (errno.EPIPE, errno.ECONNRESET, errno.ENOTCONN):
                self.log.exception("Socket error processing request.")
        except Exception as error:
            self.handle_error(req, conn.sock, conn.client, error)
        return False

    def _release_held(self, force=False):
        """Hand the held requests whose time is up (all, with ``force``) back to the threads."""
        now = time.monotonic()
        while self.held and (force or self.held[0][1].due <= now):
            conn, held = self.held.popleft()
            self._answer_later(conn, held.request)

    def _answer_later(self, conn, req):
        """Queue a held request for a thread, as gthread's ``enqueue_req`` does a new one."""
        future = self.tpool.submit(self._answer_held, conn, req)
        future.add_done_callback(
            lambda fut: self.method_queue.defer(self.finish_request, conn, fut))

    def wait_for_and_dispatch_events(self, timeout):
        if self.held:  # wake up when the first held request is due
            timeout = max(0.0, min(timeout, self.held[0][1].due - time.monotonic()))
        super().wait_for_and_dispatch_events(timeout)

    def finish_request(self, conn, fs):
        if not fs.cancelled() and fs.exception() is None and isinstance(fs.result(), _Held):
            held = fs.result()
            if len(self.held) >= HOLD_MAX or not self.alive:
                self._answer_later(conn, held.request)  # i.e. now, on the next free thread
                return
            held.due = time.monotonic() + settings.UNPACK_LOGIN_LOCKED_HOLD_SECONDS
            self.held.append((conn, held))
            return
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
        self._release_held(force=not self.alive)
        now = time.monotonic()
        while self.lingering and self.lingering[0].timeout <= now:
            self._stop_lingering(self.lingering[0])

    def murder_keepalived(self, force=False):
        super().murder_keepalived(force)
        if force:  # the worker is stopping
            while self.lingering:
                self._stop_lingering(self.lingering[0])
