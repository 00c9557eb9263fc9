#!/usr/bin/env python3
"""The lab's applications: each one a small socket program with the knobs a
scenario needs. Run one as `apps.py NAME [options]` inside a host's namespace.

- rr-server: answers each request with a response after a think time; the
  response can be written in chunks with pauses, with or without TCP_NODELAY,
  and the server can stall every few seconds.
- rr-client: sends requests (optionally in several writes) and reads the
  responses, over one or many connections.
- sink: reads an upload, optionally slowly, with a small receive buffer, or
  only once a whole record has arrived.
- source: sends a download of a given size.
- upload: sends a given number of bytes to a sink.
- slow-accept: listens with a tiny backlog and accepts slowly.
- front: a front tier that answers each request by calling the back tier
  through a connection pool that grows by at most one connection a second.
- app-server: fails at the application's level: HTTP on --port answers
  /missing with 404 and /broken with 500 and resets the connection on
  /reset; TLS on --port + 1 with a certificate no client trusts; TLS 1.3
  only on --port + 2.
- app-client: one request of each kind to app-server, each on its own
  connection, TLS at most 1.2 so the alerts travel in the clear.
"""

import argparse
import fcntl
import os
import socket
import ssl
import struct
import subprocess
import tempfile
import threading
import time

TIOCOUTQ = 0x5411


def listener(port, backlog=128, rcvbuf=None):
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if rcvbuf:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    server.bind(("0.0.0.0", port))
    server.listen(backlog)
    return server


def read_request(connection, size):
    received = b""
    while len(received) < size:
        piece = connection.recv(size - len(received))
        if not piece:
            return None
        received += piece
    return received


def serve_requests(connection, args, started):
    if args.nodelay:
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    chunks = [int(c) for c in args.chunks.split(",")]
    served = 0
    while args.close_after == 0 or served < args.close_after:
        if not read_request(connection, args.request_size):
            break
        served += 1
        if args.stall_every_s:
            phase = (time.monotonic() - started) % args.stall_every_s
            if phase > args.stall_every_s - args.stall_ms / 1000:
                time.sleep(args.stall_every_s - phase)
        time.sleep(args.think_ms / 1000)
        for index, size in enumerate(chunks):
            if index:
                time.sleep(args.chunk_pause_ms / 1000)
            connection.sendall(b"r" * size)
    connection.close()


def rr_server(args):
    server = listener(args.port)
    started = time.monotonic()
    while True:
        connection, _ = server.accept()
        threading.Thread(target=serve_requests, args=(connection, args, started),
                         daemon=True).start()


def rr_client(args):
    workers = [threading.Thread(target=rr_client_connections, args=(args, index * args.stagger_ms))
               for index in range(args.parallel)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()


def rr_client_connections(args, delay_ms=0.0):
    time.sleep(delay_ms / 1000)
    response_size = sum(int(c) for c in args.chunks.split(","))
    pieces = [int(p) for p in args.pieces.split(",")]
    for _ in range(args.connections):
        try:
            connection = socket.create_connection((args.server, args.port),
                                                  timeout=args.connect_timeout)
        except OSError:
            continue
        connection.settimeout(30)
        if args.nodelay:
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for _ in range(args.requests):
            for piece in pieces:
                connection.sendall(b"q" * piece)
            if read_request(connection, response_size) is None:
                break
            time.sleep(args.client_think_ms / 1000)
        if args.read_to_close:
            # Close only once the server has: the server alone then holds TIME_WAIT.
            while connection.recv(4096):
                pass
        connection.close()
        time.sleep(args.between_connections_ms / 1000)


class Pool:
    """Back-tier connections: a request waits for a free one; a new one is
    opened only when none is free and a second has passed since the last."""

    def __init__(self, address, size):
        self.address, self.size = address, size
        self.free, self.opened, self.last_open = [], 0, 0.0
        self.changed = threading.Condition()

    def take(self):
        with self.changed:
            while True:
                if self.free:
                    return self.free.pop()
                if self.opened < self.size and time.monotonic() - self.last_open >= 1.0:
                    self.opened += 1
                    self.last_open = time.monotonic()
                    return socket.create_connection(self.address)
                self.changed.wait(0.05)

    def give_back(self, connection):
        with self.changed:
            self.free.append(connection)
            self.changed.notify()


def front(args):
    server = listener(args.port)
    pool = Pool((args.back, args.back_port), args.pool_size)
    response_size = sum(int(c) for c in args.chunks.split(","))

    def serve(connection):
        while (request := read_request(connection, args.request_size)) is not None:
            back = pool.take()
            back.sendall(request)
            response = read_request(back, response_size)
            pool.give_back(back)
            connection.sendall(response)
        connection.close()

    while True:
        connection, _ = server.accept()
        threading.Thread(target=serve, args=(connection,), daemon=True).start()


def sink(args):
    server = listener(args.port, rcvbuf=args.rcvbuf)
    while True:
        connection, _ = server.accept()
        if args.rcvlowat:
            # Reads wait for this much data, as an application reading whole records would.
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVLOWAT, args.rcvlowat)
        while connection.recv(args.read_size):
            time.sleep(args.read_pause_ms / 1000)
        connection.close()


def source(args):
    server = listener(args.port)
    while True:
        connection, _ = server.accept()
        if args.sndbuf:
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, args.sndbuf)
        connection.sendall(b"d" * args.bytes)
        connection.close()


def upload(args):
    connection = socket.socket()
    if args.rcvbuf:
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, args.rcvbuf)
    if args.sndbuf:
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, args.sndbuf)
    connection.connect((args.server, args.port))
    write = b"u" * args.write_size
    for _ in range(args.bytes // args.write_size):
        connection.sendall(write)
        if args.wait_acked:
            wait_until_acknowledged(connection)
    connection.shutdown(socket.SHUT_WR)
    connection.recv(1)
    connection.close()


def wait_until_acknowledged(connection):
    """Like a send-and-wait application: the next write only once the peer
    has acknowledged everything sent."""
    while struct.unpack("i", fcntl.ioctl(connection.fileno(), TIOCOUTQ, b"\0" * 4))[0]:
        time.sleep(0.0002)


def download(args):
    connection = socket.socket()
    if args.rcvbuf:
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, args.rcvbuf)
    connection.connect((args.server, args.port))
    while connection.recv(65536):
        time.sleep(args.read_pause_ms / 1000)
    connection.close()


def slow_accept(args):
    server = listener(args.port, backlog=args.backlog)
    started = time.monotonic()
    while True:
        time.sleep(args.accept_every_s)
        connection, _ = server.accept()
        threading.Thread(target=serve_requests, args=(connection, args, started),
                         daemon=True).start()


HTTP_ANSWERS = {b"/missing": b"404 Not Found", b"/broken": b"500 Internal Server Error"}


def serve_http(connection):
    request = connection.recv(4096)
    path = request.split(b" ")[1] if request.count(b" ") >= 2 else b"/"
    if path == b"/reset":
        # SO_LINGER with a zero timeout: close() sends a reset, not a FIN.
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        connection.close()
        return
    status = HTTP_ANSWERS.get(path, b"200 OK")
    connection.sendall(b"HTTP/1.1 " + status + b"\r\nContent-Length: 2\r\n\r\nok")
    connection.recv(4096)
    connection.close()


def self_signed_certificate(directory):
    key, certificate = os.path.join(directory, "key.pem"), os.path.join(directory, "cert.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=twlab.invalid", "-keyout", key, "-out", certificate],
                   check=True, capture_output=True)
    return certificate, key


def serve_tls(server, context):
    while True:
        connection, _ = server.accept()
        try:
            with context.wrap_socket(connection, server_side=True) as tls:
                tls.recv(4096)
        except (ssl.SSLError, OSError):
            pass


def app_server(args):
    # Listening first: clients that come while the certificate is made wait in the backlog.
    server, untrusted_server, modern_server = (listener(args.port + offset) for offset in range(3))
    directory = tempfile.mkdtemp(prefix="twlab-tls-")
    certificate, key = self_signed_certificate(directory)
    untrusted = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    untrusted.load_cert_chain(certificate, key)
    modern_only = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    modern_only.load_cert_chain(certificate, key)
    modern_only.minimum_version = ssl.TLSVersion.TLSv1_3
    for tls_server, context in ((untrusted_server, untrusted), (modern_server, modern_only)):
        threading.Thread(target=serve_tls, args=(tls_server, context), daemon=True).start()
    while True:
        connection, _ = server.accept()
        threading.Thread(target=serve_http, args=(connection,), daemon=True).start()


def app_client(args):
    for method, path in (("GET", "/"), ("GET", "/missing"), ("POST", "/broken"),
                         ("GET", "/reset")):
        with socket.create_connection((args.server, args.port), timeout=5) as connection:
            connection.sendall(f"{method} {path} HTTP/1.1\r\nHost: twlab\r\n\r\n".encode())
            try:
                connection.recv(4096)
            except ConnectionResetError:
                pass
        time.sleep(0.1)
    for offset in (1, 2):
        context = ssl.create_default_context()
        context.maximum_version = ssl.TLSVersion.TLSv1_2
        try:
            with socket.create_connection((args.server, args.port + offset), timeout=5) as raw:
                with context.wrap_socket(raw, server_hostname="twlab.invalid"):
                    pass
        except (ssl.SSLError, OSError):
            pass
        time.sleep(0.1)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("app", choices=["rr-server", "rr-client", "sink", "source", "upload",
                                        "download", "slow-accept", "front", "app-server",
                                        "app-client"])
    parser.add_argument("--server", default="10.77.0.2")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--think-ms", type=float, default=0)
    parser.add_argument("--chunks", default="100", help="response write sizes, e.g. 6,45")
    parser.add_argument("--chunk-pause-ms", type=float, default=0)
    parser.add_argument("--request-size", type=int, default=100)
    parser.add_argument("--pieces", default="100", help="request write sizes, e.g. 50,50")
    parser.add_argument("--nodelay", type=int, default=0)
    parser.add_argument("--requests", type=int, default=10)
    parser.add_argument("--connections", type=int, default=1)
    parser.add_argument("--read-to-close", type=int, default=0,
                        help="the client closes only after the server has")
    parser.add_argument("--client-think-ms", type=float, default=0)
    parser.add_argument("--between-connections-ms", type=float, default=0)
    parser.add_argument("--parallel", type=int, default=1, help="client connections at once")
    parser.add_argument("--stagger-ms", type=float, default=0, help="delay between parallel starts")
    parser.add_argument("--back", default="10.77.1.2")
    parser.add_argument("--back-port", type=int, default=9090)
    parser.add_argument("--pool-size", type=int, default=8)
    parser.add_argument("--connect-timeout", type=float, default=30)
    parser.add_argument("--close-after", type=int, default=0, help="requests before the server closes")
    parser.add_argument("--stall-every-s", type=float, default=0)
    parser.add_argument("--stall-ms", type=float, default=0)
    parser.add_argument("--rcvbuf", type=int, default=0)
    parser.add_argument("--sndbuf", type=int, default=0)
    parser.add_argument("--read-size", type=int, default=65536)
    parser.add_argument("--rcvlowat", type=int, default=0, help="bytes the sink's reads wait for")
    parser.add_argument("--read-pause-ms", type=float, default=0)
    parser.add_argument("--bytes", type=int, default=1_000_000)
    parser.add_argument("--write-size", type=int, default=65536)
    parser.add_argument("--wait-acked", type=int, default=0, help="each write waits until all is ACKed")
    parser.add_argument("--backlog", type=int, default=1)
    parser.add_argument("--accept-every-s", type=float, default=1.0)
    args = parser.parse_args()
    apps = {"rr-server": rr_server, "rr-client": rr_client, "sink": sink, "source": source,
            "upload": upload, "download": download, "slow-accept": slow_accept, "front": front,
            "app-server": app_server, "app-client": app_client}
    apps[args.app](args)


if __name__ == "__main__":
    main()
