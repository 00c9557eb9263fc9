#!/usr/bin/env python3
"""Real TCP traffic for benchmark and example captures.

`server` listens on two ports: a bulk sink that reads until the peer closes,
and a request/response service that answers each request line with the
number of bytes it asks for, then closes. `client` sends one bulk upload and
then makes many short request/response connections, a few at a time.
Standard library only, so it runs on any machine with Python 3.
"""

import argparse
import asyncio
import random
import socket

BULK_PORT = 5001
SERVICE_PORT = 8080
CHUNK = 1 << 20


async def sink(reader, writer):
    while await reader.read(CHUNK):
        pass
    writer.close()


async def service(reader, writer):
    request = await reader.readline()
    try:
        size = int(request.split()[1])
    except (IndexError, ValueError):
        size = 0
    writer.write(b"x" * size)
    await writer.drain()
    writer.close()


async def serve(address):
    bulk = await asyncio.start_server(sink, address, BULK_PORT, backlog=1024)
    answers = await asyncio.start_server(service, address, SERVICE_PORT, backlog=1024)
    async with bulk, answers:
        await asyncio.gather(bulk.serve_forever(), answers.serve_forever())


def upload(address, total_bytes):
    chunk = b"b" * CHUNK
    with socket.create_connection((address, BULK_PORT)) as connection:
        sent = 0
        while sent < total_bytes:
            piece = chunk[: min(CHUNK, total_bytes - sent)]
            connection.sendall(piece)
            sent += len(piece)
        connection.shutdown(socket.SHUT_WR)
        connection.recv(1)


async def one_exchange(address, response_bytes):
    reader, writer = await asyncio.open_connection(address, SERVICE_PORT)
    writer.write(b"GET %d\n" % response_bytes)
    await writer.drain()
    while await reader.read(CHUNK):
        pass
    writer.close()
    await writer.wait_closed()


async def exchanges(address, count, concurrency, mean_response):
    rng = random.Random(7)
    sizes = [int(rng.expovariate(1 / mean_response)) + 1 for _ in range(count)]
    pending = iter(sizes)

    async def worker():
        for size in pending:
            try:
                await one_exchange(address, size)
            except OSError:
                pass

    await asyncio.gather(*(worker() for _ in range(concurrency)))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("role", choices=["server", "client"])
    parser.add_argument("address")
    parser.add_argument("--bulk-bytes", type=int, default=0)
    parser.add_argument("--connections", type=int, default=0)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--mean-response", type=int, default=4000)
    args = parser.parse_args()
    if args.role == "server":
        asyncio.run(serve(args.address))
        return
    if args.bulk_bytes:
        upload(args.address, args.bulk_bytes)
    if args.connections:
        asyncio.run(
            exchanges(args.address, args.connections, args.concurrency, args.mean_response)
        )


if __name__ == "__main__":
    main()
