#!/usr/bin/env python3
"""Real applications for the sweep's application classes: Debian's servers
and clients, each configured for one run and started in a host's namespace
as `realapps.py NAME [options]`.

Servers (in the foreground until terminated; each writes its configuration
into a directory of its own and removes it on the way out):

- nginx: static objects (/obj/N, /big), /missing (404), /broken (500) and
  /app/ proxied to an upstream in the same process that thinks before it
  answers; HTTP or TLS with a self-signed certificate.
- postgres: PostgreSQL with pgbench's tables (scale 1), copied from a
  template made once; `trust` authentication.
- redis, memcached, iperf3, sshd: as Debian ships them, on --port.

Clients (given --server ADDRESS by the sweep):

- curl: GETs of paths, in a row on one connection or over --parallel
  connections, optionally rate-limited (--limit-rate) or one connection
  per request; TLS with -k.
- http-idle: a Python keep-alive client: a few requests, then the
  connection left idle before the client closes it (TLS: close_notify,
  then FIN).
- pgbench, redis-benchmark, iperf3: the Debian tools.
- memcache: sets and gets of the text protocol, one at a time.
- ssh-typist: an OpenSSH session on a pty, typed by a person: 100-300 ms
  a key, seconds of thought between commands.
"""

import argparse
import contextlib
import fcntl
import http.client
import http.server
import os
import pty
import random
import select
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import threading
import time

SHARED = "/dev/shm/twapp-shared"  # made once, read by every run: pgbench's tables, ssh keys
UPSTREAM_PORT = 9000
SSH_COMMANDS = ("ls /etc", "uptime", "date", "echo hello", "cat /etc/hostname", "id",
                "ls -l /usr/share", "df -h /", "pwd", "uname -a", "whoami", "free -m")


# Servers.

class Workdir:
    """A directory of the run's own, removed when the server stops."""

    def __enter__(self):
        self.path = tempfile.mkdtemp(prefix="twapp-")
        os.chmod(self.path, 0o755)
        return self.path

    def __exit__(self, *failure):
        shutil.rmtree(self.path, ignore_errors=True)


def serve_until_terminated(command, **options):
    """Runs a server in the foreground until this process is terminated,
    then stops it and waits for it to exit."""
    server = subprocess.Popen(command, **options)
    for stop in (signal.SIGTERM, signal.SIGINT):
        signal.signal(stop, lambda *_: server.terminate())
    server.wait()


def self_signed_certificate(directory):
    key, certificate = os.path.join(directory, "key.pem"), os.path.join(directory, "cert.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                    "-subj", "/CN=twapp.invalid", "-keyout", key, "-out", certificate],
                   check=True, capture_output=True)
    return certificate, key


class ThinkingUpstream(http.server.BaseHTTPRequestHandler):
    """An application server behind nginx that takes its time to answer."""

    protocol_version = "HTTP/1.1"
    think_s, body = 0.0, b""

    def do_GET(self):
        time.sleep(self.think_s)
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *_):
        pass


def start_upstream(think_ms, body_bytes):
    ThinkingUpstream.think_s, ThinkingUpstream.body = think_ms / 1000, b"u" * body_bytes
    upstream = http.server.ThreadingHTTPServer(("127.0.0.1", UPSTREAM_PORT), ThinkingUpstream)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()


def write_objects(root, sizes, big_bytes):
    os.makedirs(os.path.join(root, "obj"))
    for index, size in enumerate(sizes):
        with open(os.path.join(root, "obj", str(index)), "wb") as out:
            out.write(os.urandom(size))
    with open(os.path.join(root, "big"), "wb") as out:
        out.write(os.urandom(big_bytes))


def nginx(args):
    with Workdir() as work:
        root = os.path.join(work, "root")
        write_objects(root, [int(size) for size in args.objects.split(",") if size],
                      args.big_bytes)
        listen = f"{args.port} ssl" if args.tls else str(args.port)
        tls = ""
        if args.tls:
            certificate, key = self_signed_certificate(work)
            tls = f"ssl_certificate {certificate}; ssl_certificate_key {key};"
        start_upstream(args.think_ms, args.body_bytes)
        config = f"""
daemon off; master_process off; worker_processes 1;
pid {work}/nginx.pid; error_log {work}/error.log;
events {{ worker_connections 512; }}
http {{
  access_log off; sendfile on; tcp_nodelay on;
  keepalive_timeout {args.keepalive_s}s; keepalive_requests 10000;
  client_body_temp_path {work}/body; proxy_temp_path {work}/proxy;
  fastcgi_temp_path {work}/fastcgi; uwsgi_temp_path {work}/uwsgi; scgi_temp_path {work}/scgi;
  default_type application/octet-stream;
  server {{
    listen {listen}; {tls}
    root {root};
    location = /broken {{ return 500; }}
    location /app/ {{ proxy_pass http://127.0.0.1:{UPSTREAM_PORT}; proxy_http_version 1.1;
                     proxy_set_header Connection ""; }}
  }}
}}
"""
        path = os.path.join(work, "nginx.conf")
        with open(path, "w") as out:
            out.write(config)
        serve_until_terminated(["nginx", "-c", path, "-p", work])


@contextlib.contextmanager
def locked(name):
    """An exclusive lock shared by every run on this machine."""
    os.makedirs(SHARED, exist_ok=True)
    with open(os.path.join(SHARED, name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def as_postgres():
    import pwd
    account = pwd.getpwnam("postgres")
    os.setgid(account.pw_gid)
    os.setuid(account.pw_uid)


def postgres_bin(name):
    versions = sorted(os.listdir("/usr/lib/postgresql"))
    return os.path.join("/usr/lib/postgresql", versions[-1], "bin", name)


def pgbench_template():
    """A data directory holding pgbench's tables at scale 1, made once and
    copied for every run (initdb and pgbench -i take seconds)."""
    template = os.path.join(SHARED, "pgdata")
    with locked("pgdata"):
        if os.path.exists(os.path.join(template, "ready")):
            return template
        shutil.rmtree(template, ignore_errors=True)
        os.makedirs(template)
        shutil.chown(template, "postgres", "postgres")
        run = {"check": True, "capture_output": True, "preexec_fn": as_postgres}
        subprocess.run([postgres_bin("initdb"), "-D", template, "-U", "postgres",
                        "--auth", "trust"], **run)
        with open(os.path.join(template, "pg_hba.conf"), "a") as hba:
            hba.write("host all all 0.0.0.0/0 trust\n")
        socket_dir = tempfile.mkdtemp(prefix="twapp-pg-")
        shutil.chown(socket_dir, "postgres", "postgres")
        # The server pg_ctl leaves running would hold captured output open: it logs to a file.
        subprocess.run([postgres_bin("pg_ctl"), "-D", template, "-w", "-l",
                        os.path.join(socket_dir, "log"), "-o",
                        f"-c listen_addresses='' -c unix_socket_directories={socket_dir}",
                        "start"], check=True, preexec_fn=as_postgres,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            subprocess.run(["pgbench", "-i", "-s", "1", "-h", socket_dir, "-U", "postgres",
                            "postgres"], **run)
        finally:
            subprocess.run([postgres_bin("pg_ctl"), "-D", template, "-w", "stop"], **run)
            shutil.rmtree(socket_dir, ignore_errors=True)
        open(os.path.join(template, "ready"), "w").close()
        return template


def postgres(args):
    template = pgbench_template()
    with Workdir() as work:
        data = os.path.join(work, "data")
        shutil.copytree(template, data, ignore=shutil.ignore_patterns("ready", "postmaster.pid"))
        for directory, _, files in os.walk(work):
            shutil.chown(directory, "postgres", "postgres")
            for name in files:
                shutil.chown(os.path.join(directory, name), "postgres", "postgres")
        os.chmod(data, 0o700)
        serve_until_terminated(
            [postgres_bin("postgres"), "-D", data, "-p", str(args.port),
             "-c", "listen_addresses=*", "-c", f"unix_socket_directories={work}",
             "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "max_connections=50"],
            preexec_fn=as_postgres, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def redis(args):
    with Workdir() as work:
        serve_until_terminated(["redis-server", "--port", str(args.port), "--bind", "0.0.0.0",
                                "--protected-mode", "no", "--save", "", "--appendonly", "no",
                                "--dir", work, "--daemonize", "no", "--loglevel", "warning"],
                               stdout=subprocess.DEVNULL)


def memcached(args):
    serve_until_terminated(["memcached", "-u", "nobody", "-p", str(args.port), "-U", "0",
                            "-l", "0.0.0.0", "-t", "1", "-m", "64"])


def iperf3_server(args):
    serve_until_terminated(["iperf3", "-s", "-p", str(args.port)], stdout=subprocess.DEVNULL)


def ssh_keys():
    """The client's key pair and the server's host key, made once."""
    directory = os.path.join(SHARED, "ssh")
    with locked("ssh"):
        if not os.path.exists(os.path.join(directory, "ready")):
            shutil.rmtree(directory, ignore_errors=True)
            os.makedirs(directory, mode=0o700)
            for name in ("client", "host"):
                subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                                os.path.join(directory, name)], check=True)
            open(os.path.join(directory, "ready"), "w").close()
    return directory


def sshd(args):
    keys = ssh_keys()
    os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
    with Workdir() as work:
        config = os.path.join(work, "sshd_config")
        with open(config, "w") as out:
            out.write(f"Port {args.port}\nListenAddress 0.0.0.0\n"
                      f"HostKey {keys}/host\nPidFile {work}/sshd.pid\n"
                      f"AuthorizedKeysFile {keys}/client.pub\nStrictModes no\n"
                      "PermitRootLogin prohibit-password\nUsePAM no\n"
                      "PasswordAuthentication no\nKbdInteractiveAuthentication no\n"
                      "PrintMotd no\nPrintLastLog no\nUseDNS no\n")
        serve_until_terminated(["/usr/sbin/sshd", "-D", "-e", "-f", config],
                               stderr=subprocess.DEVNULL)


# Clients.

def curl(args):
    scheme = "https" if args.tls else "http"
    urls = [f"{scheme}://{args.server}:{args.port}{path}" for path in args.paths.split(",")]
    command = ["curl", "-s", "-k", "--http1.1", "--max-time", "120"]
    if args.parallel > 1:
        command += ["--parallel", "--parallel-max", str(args.parallel), "--parallel-immediate"]
    if args.limit_rate:
        command += ["--limit-rate", str(args.limit_rate)]
    if args.close_each:
        command += ["-H", "Connection: close"]
    for url in urls:
        command += ["-o", "/dev/null", url]
    subprocess.run(command, check=True)


def http_idle(args):
    """Requests on one keep-alive connection, then the connection left idle
    before the client closes it: close_notify first when it is TLS."""
    if args.tls:
        context = ssl.create_default_context()
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
        connection = http.client.HTTPSConnection(args.server, args.port, context=context,
                                                 timeout=30)
    else:
        connection = http.client.HTTPConnection(args.server, args.port, timeout=30)
    for index, path in enumerate(args.paths.split(",")):
        if index:
            time.sleep(args.think_ms / 1000)
        connection.request("GET", path)
        response = connection.getresponse()
        response.read()
        if response.status != 200:
            raise SystemExit(f"http-idle: {path} answered {response.status}")
    time.sleep(args.idle_s)
    if args.tls:
        # unwrap() sends close_notify, then waits for nginx's, which closes without one.
        with contextlib.suppress(ssl.SSLEOFError):
            connection.sock.unwrap()
    connection.close()


def pgbench(args):
    command = ["pgbench", "-h", args.server, "-p", str(args.port), "-U", "postgres", "-n",
               "-c", str(args.clients), "-j", str(args.clients), "-t", str(args.transactions)]
    work = tempfile.mkdtemp(prefix="twapp-pgbench-")
    try:
        if args.sleep_ms:
            script = os.path.join(work, "sleep.sql")
            with open(script, "w") as out:
                out.write("\\set aid random(1, 100000)\n"
                          "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n"
                          f"SELECT pg_sleep({args.sleep_ms / 1000:.4f});\n")
            command += ["-f", script]
        elif args.select_only:
            command += ["-S"]
        subprocess.run([*command, "postgres"], check=True, capture_output=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def redis_benchmark(args):
    command = ["redis-benchmark", "-h", args.server, "-p", str(args.port), "-q",
               "-c", str(args.clients), "-n", str(args.requests), "-P", str(args.pipeline),
               "-d", str(args.value_bytes), "-t", args.tests]
    if args.reconnect:
        command += ["-k", "0"]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)


def memcache(args):
    """Sets then gets, one at a time, over one connection."""
    value = b"m" * args.value_bytes
    with socket.create_connection((args.server, args.port), timeout=30) as connection:
        reader = connection.makefile("rb")
        for index in range(args.requests):
            key = f"key{index % 50}".encode()
            if index < 50 or index % 2:
                connection.sendall(b"set %s 0 0 %d\r\n%s\r\n" % (key, len(value), value))
                if reader.readline() != b"STORED\r\n":
                    raise SystemExit("memcache: a set was not stored")
            else:
                connection.sendall(b"get %s\r\n" % key)
                while reader.readline() != b"END\r\n":
                    pass
            time.sleep(args.think_ms / 1000)
        connection.sendall(b"quit\r\n")


def iperf3_client(args):
    command = ["iperf3", "-c", args.server, "-p", str(args.port), "-n", str(args.bytes)]
    if args.reverse:
        command += ["-R"]
    if args.fq_rate:
        command += ["--fq-rate", str(args.fq_rate)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)


def ssh_typist(args):
    """Logs in with ssh on a pty and types commands as a person does: a key
    every 100-300 ms, seconds of thought before each command."""
    keys = ssh_keys()
    person = random.Random(args.seed)
    pid, terminal = pty.fork()
    if pid == 0:
        os.execvp("ssh", ["ssh", "-tt", "-p", str(args.port), "-i", f"{keys}/client",
                          "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
                          "-o", "BatchMode=yes", "-o", "LogLevel=ERROR",
                          f"root@{args.server}", "bash", "--norc", "-i"])
    reader = threading.Thread(target=drain, args=(terminal,), daemon=True)
    reader.start()
    commands = person.sample(SSH_COMMANDS, args.commands) + ["exit"]
    time.sleep(2)  # the login
    for command in commands:
        time.sleep(person.uniform(args.think_low_s, args.think_high_s))
        for key in command + "\r":
            os.write(terminal, key.encode())
            time.sleep(person.uniform(0.1, 0.3))
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"ssh-typist: ssh exited with {os.waitstatus_to_exitcode(status)}")


def drain(terminal):
    """Reads what the session prints, as a terminal would."""
    while True:
        try:
            ready, _, _ = select.select([terminal], [], [], 1)
            if ready and not os.read(terminal, 65536):
                return
        except OSError:
            return


APPS = {"nginx": nginx, "postgres": postgres, "redis": redis, "memcached": memcached,
        "iperf3-server": iperf3_server, "sshd": sshd, "curl": curl, "http-idle": http_idle,
        "pgbench": pgbench, "redis-benchmark": redis_benchmark, "memcache": memcache,
        "iperf3": iperf3_client, "ssh-typist": ssh_typist}


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("app", choices=list(APPS))
    parser.add_argument("--server", default="10.77.0.2")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--tls", type=int, default=0)
    parser.add_argument("--objects", default="", help="nginx: sizes of /obj/0, /obj/1...")
    parser.add_argument("--big-bytes", type=int, default=1_000_000, help="nginx: size of /big")
    parser.add_argument("--think-ms", type=float, default=0,
                        help="nginx: the upstream's think time; clients: pause between requests")
    parser.add_argument("--body-bytes", type=int, default=500, help="nginx: the upstream's body")
    parser.add_argument("--keepalive-s", type=float, default=300)
    parser.add_argument("--paths", default="/big")
    parser.add_argument("--parallel", type=int, default=1)
    parser.add_argument("--limit-rate", default="")
    parser.add_argument("--close-each", type=int, default=0,
                        help="curl: a connection per request (Connection: close)")
    parser.add_argument("--idle-s", type=float, default=0)
    parser.add_argument("--clients", type=int, default=1)
    parser.add_argument("--transactions", type=int, default=10)
    parser.add_argument("--select-only", type=int, default=0)
    parser.add_argument("--sleep-ms", type=float, default=0,
                        help="pgbench: each transaction sleeps so long in the server")
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--pipeline", type=int, default=1)
    parser.add_argument("--value-bytes", type=int, default=100)
    parser.add_argument("--tests", default="set,get")
    parser.add_argument("--reconnect", type=int, default=0,
                        help="redis-benchmark: a new connection per request")
    parser.add_argument("--bytes", type=int, default=1_000_000)
    parser.add_argument("--reverse", type=int, default=0, help="iperf3: the server sends")
    parser.add_argument("--fq-rate", default="", help="iperf3: the sender's pacing rate")
    parser.add_argument("--commands", type=int, default=4)
    parser.add_argument("--think-low-s", type=float, default=1.0)
    parser.add_argument("--think-high-s", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    APPS[args.app](args)


if __name__ == "__main__":
    main()
