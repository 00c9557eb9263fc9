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
- download: reads a download from a source, with the same knobs as sink.
- slow-accept: listens with a tiny backlog and accepts slowly.
- front: a front tier that answers each request by calling the back tier
  through a connection pool that grows by at most one connection a second.
- relay: a proxy that terminates TCP: for each client connection it opens
  one to the back tier and copies bytes both ways as they come, each side
  with or without TCP_NODELAY, optionally with a small receive buffer
  toward its clients.
- haproxy: HAProxy in front of the back tier, keeping a pool of at most a
  few connections to it and sending every client's requests over them
  (`http-reuse always`), each with X-Forwarded-For.
- http-server, http-client: HTTP/1.1 with keep-alive, each request naming
  its client and its number in its path; clients may each leave from an
  address of their own.
- app-server: fails at the application's level: HTTP on --port answers
  /missing with 404 and /broken with 500 and resets the connection on
  /reset; TLS on --port + 1 with a certificate no client trusts; TLS 1.3
  only on --port + 2.
- app-client: one request of each kind to app-server, each on its own
  connection, TLS at most 1.2 so the alerts travel in the clear.

Bulk senders (source, upload, and rr-server given --tcp-info) can log their
socket's TCP_INFO while they send: the kernel's own account of what limited
them, the lab's ground truth.
"""

import argparse
import contextlib
import fcntl
import itertools
import json
import os
import socket
import ssl
import struct
import subprocess
import tempfile
import threading
import time

TIOCOUTQ = 0x5411
# Fields of struct tcp_info (linux/uapi/linux/tcp.h): byte offset and format.
# Times are in microseconds, rates in bytes per second.
TCP_INFO_FIELDS = {
    "snd_mss": (16, "I"), "unacked": (24, "I"), "rtt": (68, "I"), "snd_cwnd": (80, "I"),
    "total_retrans": (100, "I"), "bytes_acked": (120, "Q"), "min_rtt": (148, "I"),
    "delivery_rate": (160, "Q"), "busy_time": (168, "Q"), "rwnd_limited": (176, "Q"),
    "sndbuf_limited": (184, "Q"), "bytes_sent": (200, "Q"), "snd_wnd": (228, "I"),
}
TCP_INFO_LENGTH = 232


def tcp_info(connection):
    raw = connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_LENGTH)
    if len(raw) < TCP_INFO_LENGTH:
        raise RuntimeError(f"TCP_INFO is {len(raw)} bytes; this kernel is too old")
    return {name: struct.unpack_from(form, raw, offset)[0]
            for name, (offset, form) in TCP_INFO_FIELDS.items()}


class TcpInfoLog:
    """Samples a socket's TCP_INFO every `every_s` while the `with` block
    sends, and once more when all it sent is acknowledged; writes the
    samples, each with its time since the block began, to a file of its own
    in `directory`."""

    numbers = itertools.count()

    def __init__(self, connection, directory, every_s=0.05):
        self.connection, self.directory, self.every_s = connection, directory, every_s
        self.samples, self.done = [], threading.Event()

    def __enter__(self):
        self.started = time.monotonic()
        self.sampler = threading.Thread(target=self.sample_until_done, daemon=True)
        self.sampler.start()
        return self

    def sample_until_done(self):
        while not self.done.wait(self.every_s):
            self.sample()

    def sample(self):
        try:
            self.samples.append({"t": round(time.monotonic() - self.started, 4),
                                 **tcp_info(self.connection)})
        except OSError:
            pass  # the peer closed; the samples so far stand

    def __exit__(self, *failure):
        wait_until_acknowledged(self.connection, timeout_s=30)
        self.done.set()
        self.sampler.join()
        self.sample()
        name = f"{os.getpid()}-{next(self.numbers)}.json"
        with open(os.path.join(self.directory, name), "w") as out:
            json.dump({"samples": self.samples}, out)


def logging_tcp_info(connection, directory):
    """A TcpInfoLog when a directory is given, else a block that does nothing."""
    return TcpInfoLog(connection, directory) if directory else contextlib.nullcontext()


def tcp_socket(args):
    """A TCP socket with the congestion control asked for, if any (root may
    pick any the kernel has; a namespace's default can only be one the host
    allows)."""
    connection = socket.socket()
    if args.congestion:
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, args.congestion.encode())
    return connection


def listener(args, backlog=128, rcvbuf=None):
    """A listening socket on args.port; accepted connections inherit its
    congestion control."""
    server = tcp_socket(args)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if rcvbuf:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    server.bind(("0.0.0.0", args.port))
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
    with logging_tcp_info(connection, args.tcp_info):
        answer_requests(connection, args, started)
    connection.close()


def answer_requests(connection, args, started):
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


def rr_server(args):
    server = listener(args)
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
    ends = time.monotonic() + (args.duration_s or float("inf"))
    response_size = sum(int(c) for c in args.chunks.split(","))
    pieces = [int(p) for p in args.pieces.split(",")]
    for _ in range(args.connections):
        connection = tcp_socket(args)
        connection.settimeout(args.connect_timeout)
        try:
            connection.connect((args.server, args.port))
        except OSError:
            connection.close()
            continue
        connection.settimeout(30)
        if args.nodelay:
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        time.sleep(args.first_request_delay_ms / 1000)
        for _ in range(args.requests):
            if time.monotonic() >= ends:
                break
            try:
                for index, piece in enumerate(pieces):
                    if index:
                        time.sleep(args.piece_pause_ms / 1000)
                    connection.sendall(b"q" * piece)
                if read_request(connection, response_size) is None:
                    break
            except ConnectionResetError:
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
    server = listener(args)
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


def relay(args):
    server = listener(args, rcvbuf=args.rcvbuf)
    log_lock = threading.Lock()

    def log_connect(started, connected):
        """The relay's own account of each connection to the back tier."""
        if not args.log:
            return
        line = json.dumps({"accepted": started, "connect_s": time.time() - started,
                           "connected": connected})
        with log_lock, open(args.log, "a") as log:
            log.write(line + "\n")

    def copy(source, destination):
        """Each read is written on at once, as a proxy streaming bytes does."""
        try:
            while piece := source.recv(65536):
                destination.sendall(piece)
            destination.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def serve(connection):
        started = time.time()
        try:
            back = socket.create_connection((args.back, args.back_port),
                                            timeout=args.connect_timeout)
        except OSError:
            log_connect(started, connected=False)
            connection.close()
            return
        log_connect(started, connected=True)
        back.settimeout(None)
        for side, nodelay in ((connection, args.nodelay), (back, args.back_nodelay)):
            side.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, nodelay)
        backwards = threading.Thread(target=copy, args=(back, connection), daemon=True)
        backwards.start()
        copy(connection, back)
        backwards.join()
        connection.close()
        back.close()

    while True:
        connection, _ = server.accept()
        threading.Thread(target=serve, args=(connection,), daemon=True).start()


def haproxy(args):
    """HAProxy in the foreground with a pool of at most `pool_size`
    connections to the back tier, shared by every client's requests."""
    config = "\n".join([
        "global", "  maxconn 1000",
        "defaults", "  mode http", "  option forwardfor", "  http-reuse always",
        "  timeout connect 5s", "  timeout client 30s", "  timeout server 30s",
        "frontend front", f"  bind 0.0.0.0:{args.port}", "  default_backend back",
        "backend back",
        f"  server back {args.back}:{args.back_port} maxconn {args.pool_size}", ""])
    directory = tempfile.mkdtemp(prefix="twlab-haproxy-")
    path = os.path.join(directory, "haproxy.cfg")
    with open(path, "w") as out:
        out.write(config)
    os.execvp("haproxy", ["haproxy", "-db", "-f", path])


def read_http_message(connection, buffered=b""):
    """One HTTP/1.1 message with a Content-Length (none: no body); returns
    (message, bytes read past it), or (None, b"") at the end of the stream."""
    while b"\r\n\r\n" not in buffered:
        piece = connection.recv(65536)
        if not piece:
            return None, b""
        buffered += piece
    head, _, rest = buffered.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(rest) < length:
        piece = connection.recv(65536)
        if not piece:
            return None, b""
        rest += piece
    return head + b"\r\n\r\n" + rest[:length], rest[length:]


def http_server(args):
    server = listener(args)
    body = b"r" * args.body_bytes

    def serve(connection):
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        left = b""
        while True:
            request, left = read_http_message(connection, left)
            if request is None:
                break
            time.sleep(args.think_ms / 1000)
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body)
                               + body)
        connection.close()

    while True:
        connection, _ = server.accept()
        threading.Thread(target=serve, args=(connection,), daemon=True).start()


def http_client(args):
    sources = args.sources.split(",") if args.sources else [""]
    workers = [threading.Thread(target=http_client_connection,
                                args=(args, index, sources[index % len(sources)]))
               for index in range(args.parallel)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()


def http_client_connection(args, index, source):
    """One keep-alive connection from `source`: GET /c{index}/r{n}, one after another."""
    time.sleep(index * args.stagger_ms / 1000)
    connection = socket.socket()
    connection.bind((source, 0))
    connection.settimeout(30)
    connection.connect((args.server, args.port))
    connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    left = b""
    for number in range(1, args.requests + 1):
        connection.sendall(f"GET /c{index}/r{number} HTTP/1.1\r\nHost: twlab\r\n\r\n".encode())
        response, left = read_http_message(connection, left)
        if response is None:
            break
        time.sleep(args.client_think_ms / 1000)
    connection.close()


def sink(args):
    server = listener(args, rcvbuf=args.rcvbuf)
    while True:
        connection, _ = server.accept()
        threading.Thread(target=receive_bulk, args=(connection, args), daemon=True).start()


def source(args):
    server = listener(args)
    while True:
        connection, _ = server.accept()
        threading.Thread(target=send_bulk, args=(connection, args), daemon=True).start()


def upload(args):
    connection = tcp_socket(args)
    if args.rcvbuf:
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, args.rcvbuf)
    connection.connect((args.server, args.port))
    if args.give_up_s:
        # A writer the receiver stopped reading from gives up when its writes block this long.
        connection.settimeout(args.give_up_s)
    try:
        send_bulk(connection, args)
    except socket.timeout:
        connection.close()


def download(args):
    connection = tcp_socket(args)
    if args.rcvbuf:
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, args.rcvbuf)
    connection.connect((args.server, args.port))
    receive_bulk(connection, args)


def send_bulk(connection, args):
    """Writes `bytes` in writes of `write_size`, optionally paced (one write
    every `pace_ms`) or each waiting until the peer has acknowledged all,
    then closes once the peer has."""
    if args.sndbuf:
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, args.sndbuf)
    if args.nodelay:
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    writes = [args.write_size] * (args.bytes // args.write_size)
    if args.bytes % args.write_size:
        writes.append(args.bytes % args.write_size)
    with logging_tcp_info(connection, args.tcp_info):
        started = time.monotonic()
        for index, size in enumerate(writes):
            time.sleep(max(0.0, started + index * args.pace_ms / 1000 - time.monotonic()))
            connection.sendall(b"u" * size)
            if args.wait_acked:
                wait_until_acknowledged(connection)
    connection.shutdown(socket.SHUT_WR)
    connection.recv(1)
    connection.close()


def receive_bulk(connection, args):
    """Reads to the end, `read_size` at a time with a pause after each read,
    optionally only once `rcvlowat` bytes are there (whole records), or
    asking for an immediate ACK after each read."""
    if args.rcvlowat:
        # Reads wait for this much data, as an application reading whole records would.
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVLOWAT, args.rcvlowat)
    while True:
        if args.quickack:
            # Not sticky: Linux leaves quick-ACK mode again on its own.
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
        if not connection.recv(args.read_size):
            break
        time.sleep(args.read_pause_ms / 1000)
    connection.close()


def wait_until_acknowledged(connection, timeout_s=None):
    """Like a send-and-wait application: the next write only once the peer
    has acknowledged everything sent."""
    gives_up = time.monotonic() + (timeout_s or float("inf"))
    while struct.unpack("i", fcntl.ioctl(connection.fileno(), TIOCOUTQ, b"\0" * 4))[0]:
        if time.monotonic() > gives_up:
            return
        time.sleep(0.0002)


def slow_accept(args):
    server = listener(args, backlog=args.backlog)
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
                                        "download", "slow-accept", "front", "relay",
                                        "haproxy", "http-server", "http-client",
                                        "app-server", "app-client"])
    parser.add_argument("--server", default="10.77.0.2")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--think-ms", type=float, default=0)
    parser.add_argument("--chunks", default="100", help="response write sizes, e.g. 6,45")
    parser.add_argument("--chunk-pause-ms", type=float, default=0)
    parser.add_argument("--request-size", type=int, default=100)
    parser.add_argument("--pieces", default="100", help="request write sizes, e.g. 50,50")
    parser.add_argument("--piece-pause-ms", type=float, default=0,
                        help="the client's pause between two pieces of a request")
    parser.add_argument("--nodelay", type=int, default=0)
    parser.add_argument("--requests", type=int, default=10)
    parser.add_argument("--connections", type=int, default=1)
    parser.add_argument("--read-to-close", type=int, default=0,
                        help="the client closes only after the server has")
    parser.add_argument("--client-think-ms", type=float, default=0)
    parser.add_argument("--first-request-delay-ms", type=float, default=0,
                        help="the client's wait between connecting and its first request")
    parser.add_argument("--duration-s", type=float, default=0,
                        help="the client sends no new request after this long")
    parser.add_argument("--between-connections-ms", type=float, default=0)
    parser.add_argument("--parallel", type=int, default=1, help="client connections at once")
    parser.add_argument("--stagger-ms", type=float, default=0, help="delay between parallel starts")
    parser.add_argument("--back", default="10.77.1.2")
    parser.add_argument("--back-port", type=int, default=9090)
    parser.add_argument("--pool-size", type=int, default=8,
                        help="the front tier's or HAProxy's most connections to the back tier")
    parser.add_argument("--body-bytes", type=int, default=200, help="http-server's response body")
    parser.add_argument("--sources", default="",
                        help="http-client: addresses its connections leave from, in turn")
    parser.add_argument("--back-nodelay", type=int, default=0,
                        help="TCP_NODELAY on the relay's connections to the back tier")
    parser.add_argument("--log", default="", help="where the relay logs each connection it opens")
    parser.add_argument("--connect-timeout", type=float, default=30)
    parser.add_argument("--close-after", type=int, default=0, help="requests before the server closes")
    parser.add_argument("--stall-every-s", type=float, default=0)
    parser.add_argument("--stall-ms", type=float, default=0)
    parser.add_argument("--rcvbuf", type=int, default=0)
    parser.add_argument("--sndbuf", type=int, default=0)
    parser.add_argument("--read-size", type=int, default=65536)
    parser.add_argument("--rcvlowat", type=int, default=0, help="bytes the sink's reads wait for")
    parser.add_argument("--read-pause-ms", type=float, default=0)
    parser.add_argument("--quickack", type=int, default=0,
                        help="the reader asks for an immediate ACK before each read")
    parser.add_argument("--bytes", type=int, default=1_000_000)
    parser.add_argument("--give-up-s", type=float, default=0,
                        help="upload: how long a blocked write waits before the client gives up")
    parser.add_argument("--write-size", type=int, default=65536)
    parser.add_argument("--wait-acked", type=int, default=0, help="each write waits until all is ACKed")
    parser.add_argument("--pace-ms", type=float, default=0, help="one bulk write every so often")
    parser.add_argument("--congestion", default="",
                        help="the sockets' congestion control (cubic, reno, bbr...)")
    parser.add_argument("--tcp-info", default="",
                        help="a directory for each sending connection's TCP_INFO samples")
    parser.add_argument("--backlog", type=int, default=1)
    parser.add_argument("--accept-every-s", type=float, default=1.0)
    args = parser.parse_args()
    apps = {"rr-server": rr_server, "rr-client": rr_client, "sink": sink, "source": source,
            "upload": upload, "download": download, "slow-accept": slow_accept, "front": front,
            "relay": relay, "haproxy": haproxy, "http-server": http_server,
            "http-client": http_client,
            "app-server": app_server, "app-client": app_client}
    apps[args.app](args)


if __name__ == "__main__":
    main()
