#!/usr/bin/python3
"""An Alertmanager webhook receiver for the end-to-end tests.

Listens on 127.0.0.1 (port 0: the OS picks one, written to --port_file once listening) and
appends every POST as one JSON line to --out:
  {"path": "/pager", "received_at_unix_nano": N, "body": <the notification>}
and answers 200. Standard library only.
"""
import argparse
import http.server
import json
import os
import threading
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", required=True, help="JSON lines, one per POST")
    ap.add_argument("--port_file", required=True, help="written with the port once listening")
    args = ap.parse_args()
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            received = time.time_ns()
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw)
            except ValueError:
                body = {"unparsed": raw.decode("utf-8", "replace")}
            line = json.dumps({"path": self.path, "received_at_unix_nano": received, "body": body})
            with lock, open(args.out, "a") as f:
                f.write(line + "\n")
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, fmt, *a):  # one line per request on stderr is enough
            print(fmt % a, flush=True)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
