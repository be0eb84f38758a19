"""The two shells' watch transports against a local HTTP server (the official client's ApiClients underneath):
each line of a 2xx stream while it lasts, with the query as given; one last Reply with the status and body of
a refusal; one Reply without a status when the call's timeout ends a silent stream; and the stream closed at
once when the caller stops reading."""

import asyncio
import threading
import time
from collections.abc import Iterator
from contextlib import aclosing, closing
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest
from kubernetes import client as k8s
from kubernetes.aio import client as k8s_aio

from sandbox_operator_client._aio import AsyncTransport
from sandbox_operator_client._protocol import Call, Reply
from sandbox_operator_client._sync import Transport

LINES = ['{"type":"ADDED","object":{"metadata":{"resourceVersion":"1"}}}', '{"type":"BOOKMARK","object":{}}']


class Server:
    def __init__(self) -> None:
        self.queries: list[dict[str, list[str]]] = []
        self.released = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            # As the API server streams a watch: HTTP/1.1, chunked, one chunk per event.
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                url = urlsplit(self.path)
                server.queries.append(parse_qs(url.query))
                if url.path.endswith("/refused"):
                    body = b'{"kind":"Status","code":403,"message":"cannot watch"}'
                    self.send_response(403)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                lines = LINES if url.path.endswith("/ok") else LINES[:1]
                for line in lines:
                    chunk = f"{line}\n".encode()
                    self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                    self.wfile.flush()
                if url.path.endswith("/silent"):
                    server.released.wait(5)
                self.wfile.write(b"0\r\n\r\n")
                self.close_connection = True

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        self.host = f"http://127.0.0.1:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, args=(0.05,), daemon=True).start()

    def stop(self) -> None:
        self.released.set()
        self.http.shutdown()
        self.http.server_close()


@pytest.fixture
def server() -> Iterator[Server]:
    running = Server()
    yield running
    running.stop()


def call(path: str, timeout: float = 5.0) -> Call:
    query = {"watch": "true", "fieldSelector": "metadata.name=c-1", "resourceVersion": "10"}
    return Call("Watch", "sandboxclaim ns/c-1", "GET", path, query=query, timeout=timeout)


def watched_sync(
    server: Server, path: str, timeout: float = 5.0, stop_after: int | None = None
) -> list[object]:
    transport = Transport(k8s.ApiClient(k8s.Configuration(host=server.host)))
    items: list[object] = []
    with closing(transport.watch(call(path, timeout))) as stream:
        for item in stream:
            items.append(item)
            if stop_after is not None and len(items) == stop_after:
                break
    return items


def watched_async(
    server: Server, path: str, timeout: float = 5.0, stop_after: int | None = None
) -> list[object]:
    async def watch() -> list[object]:
        async with k8s_aio.ApiClient(k8s_aio.Configuration(host=server.host)) as api:
            items: list[object] = []
            async with aclosing(AsyncTransport(api).watch(call(path, timeout))) as stream:
                async for item in stream:
                    items.append(item)
                    if stop_after is not None and len(items) == stop_after:
                        break
            return items

    return asyncio.run(watch())


WATCHED = {"sync": watched_sync, "async": watched_async}


def test_a_stream_yields_its_lines_until_it_ends(server: Server, shell_kind: str) -> None:
    assert WATCHED[shell_kind](server, "/ok") == LINES
    assert server.queries == [
        {"watch": ["true"], "fieldSelector": ["metadata.name=c-1"], "resourceVersion": ["10"]}
    ]


def test_a_refusal_is_one_reply_with_its_status_and_body(server: Server, shell_kind: str) -> None:
    [refused] = WATCHED[shell_kind](server, "/refused")
    assert isinstance(refused, Reply)
    assert refused.status == 403
    assert b"cannot watch" in refused.body


def test_the_calls_timeout_ends_a_silent_stream_with_a_reply_without_status(
    server: Server, shell_kind: str
) -> None:
    started = time.monotonic()
    first, ended = WATCHED[shell_kind](server, "/silent", timeout=0.3)
    assert first == LINES[0]
    assert isinstance(ended, Reply) and ended.status is None and ended.error is not None
    assert time.monotonic() - started < 2.0


def test_the_caller_stops_reading_and_the_stream_closes_at_once(server: Server, shell_kind: str) -> None:
    started = time.monotonic()
    assert WATCHED[shell_kind](server, "/silent", stop_after=1) == LINES[:1]
    assert time.monotonic() - started < 2.0
