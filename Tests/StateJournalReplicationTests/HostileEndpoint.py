#!/usr/bin/env python3
"""An S3 endpoint that misbehaves, on loopback, for the untrusted-bucket tests.

Usage: HostileEndpoint.py MODE LOG
  redirect  answers every request with 307 to another origin (127.0.0.2, another port), where a
            second listener records each request it receives, and whether it carried an
            Authorization header, as one line of LOG.
  drip      answers every request with 200 and a Content-Length of 4096, then sends one byte of
            the body every half second, as a server that stalls a client would; records each
            request it receives as one line of LOG, before it answers.
  slow      answers every request with 200 and a Content-Length of 24576, then sends the body at
            2 KiB a second (256 bytes every eighth of a second): slow, but steady.
  list-loop answers every object read with 404 (but `replica.json`, with the bytes of the file named
            by the third argument, when there is one), and every listing with a page that says
            more follows under the same continuation token, for ever.
Prints one line, `PORT`, the port of the endpoint, once it listens; runs until killed.
"""

import ctypes
import http.server
import os
import signal
import socketserver
import sys
import threading
import time

mode, log_path = sys.argv[1], sys.argv[2]
# The test process starts it with most signals blocked (its threads block them): unblock SIGTERM so
# that stopping it works, end with the test process even when that dies (PR_SET_PDEATHSIG), and end
# by itself after fifteen minutes whatever happens, so that it never outlives a test run (a test on a
# loaded machine can take minutes, so this is no time limit of the tests).
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
signal.signal(signal.SIGTERM, signal.SIG_DFL)
ctypes.CDLL("libc.so.6").prctl(1, signal.SIGTERM)
threading.Timer(900, os._exit, [0]).start()


class Recorder(http.server.BaseHTTPRequestHandler):
    def record(self):
        with open(log_path, "a") as log:
            log.write(f"{self.command} {self.path} authorization={'Authorization' in self.headers}\n")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = record

    def log_message(self, *args):
        pass


class Redirector(http.server.BaseHTTPRequestHandler):
    target = ""

    def redirect(self):
        self.send_response(307)
        self.send_header("Location", self.target + self.path)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = redirect

    def log_message(self, *args):
        pass


class Dripper(http.server.BaseHTTPRequestHandler):
    def drip(self):
        with open(log_path, "a") as log:
            log.write(f"{self.command} {self.path}\n")
        self.send_response(200)
        self.send_header("Content-Length", "4096")
        self.end_headers()
        try:
            for _ in range(4096):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(0.5)
        except OSError:
            pass

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = drip

    def log_message(self, *args):
        pass


class Slow(http.server.BaseHTTPRequestHandler):
    def send_slowly(self):
        self.send_response(200)
        self.send_header("Content-Length", "24576")
        self.end_headers()
        try:
            for _ in range(96):
                self.wfile.write(b"y" * 256)
                self.wfile.flush()
                time.sleep(0.125)
        except OSError:
            pass

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = send_slowly

    def log_message(self, *args):
        pass


class ListLoop(http.server.BaseHTTPRequestHandler):
    def answer(self):
        if IDENTITY is not None and self.path.split("?")[0].endswith("/replica.json"):
            body = IDENTITY
            self.send_response(200)
        elif "list-type=2" in self.path:
            body = (b'<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>bucket</Name>'
                    b"<IsTruncated>true</IsTruncated><NextContinuationToken>again</NextContinuationToken>"
                    b"</ListBucketResult>")
            self.send_response(200)
        else:
            body = b"<Error><Code>NoSuchKey</Code></Error>"
            self.send_response(404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = answer

    def log_message(self, *args):
        pass


IDENTITY = open(sys.argv[3], "rb").read() if len(sys.argv) > 3 else None


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def serve(server):
    threading.Thread(target=server.serve_forever, daemon=True).start()


if mode == "redirect":
    recorder = Server(("127.0.0.2", 0), Recorder)
    serve(recorder)
    Redirector.target = f"http://127.0.0.2:{recorder.server_address[1]}"
    endpoint = Server(("127.0.0.1", 0), Redirector)
elif mode == "drip":
    endpoint = Server(("127.0.0.1", 0), Dripper)
elif mode == "slow":
    endpoint = Server(("127.0.0.1", 0), Slow)
elif mode == "list-loop":
    endpoint = Server(("127.0.0.1", 0), ListLoop)
else:
    sys.exit(f"unknown mode {mode}")
print(endpoint.server_address[1], flush=True)
endpoint.serve_forever()
