"""A threaded HTTP/1.1 server on 127.0.0.1 for fake APIs: JSON, chunked streams, abrupt closes."""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast
from urllib.parse import urlsplit


class LocalHTTPServer:
    """Calls `dispatch(exchange)` for every request, each in its own daemon thread."""

    def __init__(self, dispatch: Callable[[Exchange], None], name: str = "fake-http") -> None:
        self.dispatch = dispatch
        self.name = name
        #: Set by stop(); handlers that wait on it (hangs, latency) return promptly.
        self.stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        """Whether the server is listening."""
        return self._server is not None

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:PORT`."""
        if self._server is None:
            raise RuntimeError(f"{self.name} is not running; call start() first")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> None:
        """Listen on a free port and serve in a background thread."""
        if self._server is not None:
            raise RuntimeError(f"{self.name} is already running")
        self.stopping.clear()
        self._server = _Server(self)
        # A short poll interval keeps stop() fast: tests start and stop a server each.
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.02,), name=self.name, daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop serving, wake waiting handlers and close every open connection."""
        server, self._server = self._server, None
        if server is None:
            return
        self.stopping.set()
        server.shutdown()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:  # idle keep-alive connections would otherwise linger
            shutdown_socket(connection)
        server.server_close()
        if self._thread is not None:
            self._thread.join()

    def _track(self, connection: socket.socket, *, alive: bool) -> None:
        with self._lock:
            if alive:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def __init__(self, owner: LocalHTTPServer) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), Exchange)

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that closed its connection (a cancelled or hedged request does) is what
        a real server sees too: not worth a traceback. Anything else is printed."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


class Exchange(BaseHTTPRequestHandler):
    """One connection's request handler, with helpers to answer in the ways a fake needs."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # each SSE event is its own write: send it at once

    @property
    def owner(self) -> LocalHTTPServer:
        """The server this exchange belongs to."""
        return cast(_Server, self.server).owner

    @property
    def route(self) -> str:
        """The request path without the query string."""
        return urlsplit(self.path).path

    def setup(self) -> None:
        super().setup()
        #: Headers added to every response of this exchange (e.g. a request id).
        self.response_headers: dict[str, str] = {}
        self.owner._track(self.connection, alive=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.owner._track(self.connection, alive=False)

    def handle_request(self) -> None:
        """Hand the request to the server's dispatch function."""
        self.response_headers = {}
        self.owner.dispatch(self)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_request

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet; fakes record requests instead."""

    def read_body(self) -> bytes:
        """The request body (Content-Length framed)."""
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def begin(self, status: int, content_type: str, headers: dict[str, str]) -> None:
        """Send the status line and headers."""
        self.send_response(status)
        self.send_header("content-type", content_type)
        for name, value in {**self.response_headers, **headers}.items():
            self.send_header(name, value)
        self.end_headers()

    def send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        """A complete JSON response."""
        data = json.dumps(payload).encode()
        self.begin(
            status, "application/json", {"content-length": str(len(data)), **(headers or {})}
        )
        self.wfile.write(data)

    def send_text(self, status: int, text: str) -> None:
        """A complete plain-text response (a web framework's own error page)."""
        data = text.encode()
        self.begin(status, "text/plain; charset=utf-8", {"content-length": str(len(data))})
        self.wfile.write(data)

    def start_stream(self, content_type: str = "text/event-stream; charset=utf-8") -> None:
        """Start a 200 response whose body follows in chunks."""
        self.begin(200, content_type, {"cache-control": "no-cache", "transfer-encoding": "chunked"})

    def write_chunk(self, data: bytes) -> None:
        """Send one chunk of a chunked body, immediately."""
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def end_stream(self) -> None:
        """Send the terminating zero-length chunk."""
        self.wfile.write(b"0\r\n\r\n")

    def abort(self) -> None:
        """Close the connection now, leaving any response unfinished."""
        self.close_connection = True
        shutdown_socket(self.connection)


def shutdown_socket(connection: socket.socket) -> None:
    """Shut a socket down both ways (FIN, not RST), ignoring one already closed."""
    with contextlib.suppress(OSError):
        connection.shutdown(socket.SHUT_RDWR)
