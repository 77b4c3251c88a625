#!/usr/bin/env python3
"""A loopback TCP proxy in front of the S3 gateway whose faults a test changes while it runs.

Usage: FaultProxy.py UPSTREAM_HOST UPSTREAM_PORT [LIFETIME_SECONDS]

Listens on a free port of 127.0.0.1 and prints one line, `listening PORT`, once it does. Then reads
commands from stdin, one a line, and answers each with one line on stdout (`ok`, a JSON document
for `counts`, or `error TEXT`):

  pass               forward bytes both ways (the mode it starts in).
  cut                reset every open connection at once, and every new one as soon as it is
                     accepted: a partition the client sees at once.
  blackhole          every open connection, and every new one, goes silent: what the client sends
                     is read and thrown away, nothing is forwarded and nothing is answered, so only
                     the client's timeouts end its requests. A connection that went silent stays
                     silent after the mode changes back, until its client closes it.
  drop P SEED        each new connection is reset before anything is forwarded with probability P
                     (drawn from a generator seeded with SEED when the mode is set); the others,
                     and the connections already open, pass.
  droprequests P SEED
                     each request, on open connections as on new ones, is answered by resetting
                     its connection with probability P (drawn as for drop) once its request line
                     and headers have arrived; the others pass. A warm keep-alive connection is
                     not affected by `drop`; this makes its requests fail now and then.
  delay MS           each new connection forwards its first byte MS milliseconds after it is
                     accepted; then it passes.
  counts             {"accepted": N, "reset": N, "requests": [[method, target, forwarded], ...]}:
                     connections accepted, connections the proxy reset, and the request line of
                     every HTTP/1.1 request clients sent (silenced ones too, with forwarded false).
  zero               sets the counts to zero.
  quit               exits.

Requests are found by following HTTP/1.1 framing on the client's side of each connection: the head
up to its empty line, then a body of Content-Length bytes or a chunked one, then the next request
of a keep-alive connection. A stream that stops looking like HTTP/1.1 is forwarded but no longer
parsed.

It never outlives its test: it exits when stdin ends, when its parent process is gone, after
LIFETIME_SECONDS (default 1800), and on SIGTERM or SIGKILL.
"""

import asyncio
import json
import os
import random
import resource
import signal
import socket
import struct
import sys

upstream_host, upstream_port = sys.argv[1], int(sys.argv[2])
lifetime = float(sys.argv[3]) if len(sys.argv) > 3 else 1800.0

# The test process starts children with most signals blocked (its threads block them).
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
signal.signal(signal.SIGTERM, signal.SIG_DFL)
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if soft < hard:
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
parent = os.getppid()

MAXIMUM_HEAD = 64 * 1024


class RequestParser:
    """Follows the requests of one client stream, calling `found(method, target)` for each head."""

    def __init__(self, found):
        self.found = found
        self.buffer = b""
        self.state = "head"  # head, body, chunk-size, chunk-data, chunk-end, trailer, lost
        self.remaining = 0

    def feed(self, data):
        if self.state == "lost":
            return
        self.buffer += data
        while self.step():
            pass

    def line(self):
        end = self.buffer.find(b"\r\n")
        if end < 0:
            if len(self.buffer) > MAXIMUM_HEAD:
                self.state = "lost"
            return None
        text, self.buffer = self.buffer[:end], self.buffer[end + 2 :]
        return text

    def step(self):
        if self.state == "head":
            # Empty lines before a request line are allowed (RFC 9112 section 2.2).
            stripped = self.buffer.lstrip(b"\r\n")
            if len(stripped) != len(self.buffer):
                self.buffer = stripped
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buffer) > MAXIMUM_HEAD:
                    self.state = "lost"
                return False
            head, self.buffer = self.buffer[:end], self.buffer[end + 4 :]
            lines = head.split(b"\r\n")
            parts = lines[0].split(b" ")
            if len(parts) != 3 or not parts[2].startswith(b"HTTP/1."):
                self.state = "lost"
                return False
            self.found(parts[0].decode("latin-1"), parts[1].decode("latin-1"))
            length, chunked = 0, False
            for header in lines[1:]:
                name, _, value = header.partition(b":")
                name, value = name.strip().lower(), value.strip().lower()
                if name == b"transfer-encoding" and value.endswith(b"chunked"):
                    chunked = True
                elif name == b"content-length":
                    try:
                        length = int(value)
                    except ValueError:
                        self.state = "lost"
                        return False
            if chunked:
                self.state = "chunk-size"
            elif length > 0:
                self.state, self.remaining = "body", length
            return True
        if self.state in ("body", "chunk-data"):
            taken = min(self.remaining, len(self.buffer))
            self.buffer = self.buffer[taken:]
            self.remaining -= taken
            if self.remaining > 0:
                return False
            self.state = "head" if self.state == "body" else "chunk-end"
            return True
        if self.state == "chunk-end":
            if len(self.buffer) < 2:
                return False
            if self.buffer[:2] != b"\r\n":
                self.state = "lost"
                return False
            self.buffer = self.buffer[2:]
            self.state = "chunk-size"
            return True
        if self.state == "chunk-size":
            text = self.line()
            if text is None:
                return False
            try:
                size = int(text.split(b";")[0].strip(), 16)
            except ValueError:
                self.state = "lost"
                return False
            if size == 0:
                self.state = "trailer"
            else:
                self.state, self.remaining = "chunk-data", size
            return True
        if self.state == "trailer":
            text = self.line()
            if text is None:
                return False
            if text == b"":
                self.state = "head"
            return True
        return False


class Connection:
    def __init__(self, proxy, reader, writer):
        self.proxy = proxy
        self.reader, self.writer = reader, writer
        self.upstream = None
        self.silent = False
        self.was_reset = False
        self.drop_now = False
        self.parser = RequestParser(self.found)

    def found(self, method, target):
        mode = self.proxy.mode
        if mode[0] == "droprequests" and not self.silent and self.proxy.random.random() < mode[1]:
            self.drop_now = True
        self.proxy.requests.append([method, target, not self.silent and not self.drop_now])

    def reset(self):
        """Closes both sides with a TCP reset; counted once."""
        if not self.was_reset:
            self.was_reset = True
            self.proxy.reset += 1
        for writer in (self.writer, self.upstream):
            if writer is None:
                continue
            try:
                sock = writer.get_extra_info("socket")
                if sock is not None:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            except OSError:
                pass
            writer.transport.abort()

    async def client_to_upstream(self):
        while True:
            data = await self.reader.read(65536)
            if not data:
                break
            self.parser.feed(data)
            if self.drop_now and not self.was_reset:
                self.reset()
            if self.silent or self.was_reset:
                continue
            self.upstream.write(data)
            await self.upstream.drain()
        if not self.silent and not self.was_reset and self.upstream.can_write_eof():
            self.upstream.write_eof()

    async def upstream_to_client(self):
        while True:
            data = await self.upstream_reader.read(65536)
            if not data:
                break
            if self.silent or self.was_reset:
                continue
            self.writer.write(data)
            await self.writer.drain()
        if not self.silent and not self.was_reset:
            self.writer.close()

    async def silence(self):
        """Reads and throws away what the client sends until it closes the connection."""
        while True:
            data = await self.reader.read(65536)
            if not data:
                return
            self.parser.feed(data)

    async def run(self, mode):
        name = mode[0]
        if name == "cut":
            self.reset()
            return
        if name == "drop" and self.proxy.random.random() < mode[1]:
            self.reset()
            return
        if name == "blackhole":
            self.silent = True
            await self.silence()
            return
        if name == "delay":
            await asyncio.sleep(mode[1] / 1000)
            if self.was_reset:
                return
            if self.silent:
                await self.silence()
                return
        try:
            self.upstream_reader, self.upstream = await asyncio.open_connection(upstream_host, upstream_port)
        except OSError:
            self.reset()
            return
        if self.was_reset:
            self.reset()
            return
        if self.silent:
            await self.silence()
            return
        await asyncio.gather(self.client_to_upstream(), self.upstream_to_client())


class Proxy:
    def __init__(self):
        self.mode = ("pass",)
        self.random = random.Random(0)
        self.connections = set()
        self.accepted = 0
        self.reset = 0
        self.requests = []

    async def accept(self, reader, writer):
        self.accepted += 1
        connection = Connection(self, reader, writer)
        self.connections.add(connection)
        try:
            await connection.run(self.mode)
        except (OSError, asyncio.IncompleteReadError):
            pass
        except Exception:
            connection.reset()
        finally:
            self.connections.discard(connection)
            for side in (connection.writer, connection.upstream):
                if side is not None:
                    side.transport.abort() if connection.was_reset else side.close()

    def command(self, text):
        words = text.split()
        if not words:
            return "error empty command"
        verb = words[0]
        if verb == "pass" and len(words) == 1:
            self.mode = ("pass",)
        elif verb == "cut" and len(words) == 1:
            self.mode = ("cut",)
            for connection in list(self.connections):
                connection.reset()
        elif verb == "blackhole" and len(words) == 1:
            self.mode = ("blackhole",)
            for connection in self.connections:
                connection.silent = True
        elif verb == "drop" and len(words) == 3:
            probability, seed = float(words[1]), int(words[2])
            if not 0 <= probability <= 1:
                return "error the probability is not between 0 and 1"
            self.mode = ("drop", probability)
            self.random = random.Random(seed)
        elif verb == "droprequests" and len(words) == 3:
            probability, seed = float(words[1]), int(words[2])
            if not 0 <= probability <= 1:
                return "error the probability is not between 0 and 1"
            self.mode = ("droprequests", probability)
            self.random = random.Random(seed)
        elif verb == "delay" and len(words) == 2:
            self.mode = ("delay", int(words[1]))
        elif verb == "counts" and len(words) == 1:
            return json.dumps({"accepted": self.accepted, "reset": self.reset, "requests": self.requests})
        elif verb == "zero" and len(words) == 1:
            self.accepted, self.reset, self.requests = 0, 0, []
        elif verb == "quit":
            os._exit(0)
        else:
            return "error unknown command: " + text.strip()[:200]
        return "ok"


def answer(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


async def watch_parent():
    loop = asyncio.get_running_loop()
    deadline = loop.time() + lifetime
    while os.getppid() == parent and loop.time() < deadline:
        await asyncio.sleep(0.5)
    os._exit(0)


async def main():
    proxy = Proxy()
    server = await asyncio.start_server(proxy.accept, "127.0.0.1", 0, backlog=1024)
    port = server.sockets[0].getsockname()[1]
    loop = asyncio.get_running_loop()
    commands = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(commands), sys.stdin)
    watcher = asyncio.ensure_future(watch_parent())  # held, so that it is not collected
    answer(f"listening {port}")
    while True:
        line = await commands.readline()
        if not line:
            os._exit(0)
        try:
            answer(proxy.command(line.decode("utf-8", "replace")))
        except ValueError as error:
            answer(f"error {error}")


asyncio.run(main())
