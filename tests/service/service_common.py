"""Shared helpers for the service tests in this directory (not a test itself: CTest runs test_*.py).

Starts the real `tandem serve` on a free loopback port (--listen 127.0.0.1:0; the port is read from the
first line the server prints) with a temporary data directory, talks to it with http.client (standard
library only), and stops it with SIGTERM, or SIGKILL for the crash test. Checks print what failed and the
test exits non-zero at the end with a count.
"""

import argparse
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def parse_args(doc):
    p = argparse.ArgumentParser(description=doc.strip().splitlines()[0])
    p.add_argument("--tandem", required=True, help="path of the tandem binary")
    p.add_argument("--keep", action="store_true", help="keep the data directory")
    return p.parse_args()


class Server:
    """One `tandem serve` process on a data directory."""

    def __init__(self, tandem, data_dir, extra=(), env=None):
        self.tandem, self.data_dir, self.extra, self.env = tandem, data_dir, list(extra), env
        self.proc = None
        self.port = None

    def start(self, timeout=60):
        env = dict(os.environ)
        env.setdefault("TANDEM_THREADS", "4")
        if self.env:
            env.update(self.env)
        self.proc = subprocess.Popen([self.tandem, "serve", "--listen", "127.0.0.1:0", "--data", self.data_dir, "--quiet"]
                                     + self.extra, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
        line = self.proc.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)", line)
        if not m:
            err = self.proc.stderr.read() if self.proc.poll() is not None else ""
            raise RuntimeError("server did not start: %r %s" % (line, err))
        self.port = int(m.group(1))
        self.started_line = line
        return self

    def stop(self, sig=signal.SIGTERM):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        rc = self.proc.returncode if self.proc else None
        if self.proc:
            self.proc.stdout.close()
            self.proc.stderr.close()
        self.proc = None
        return rc

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def request(self, method, path, body=None, raw=None, headers=None, timeout=30):
        """Returns (status, parsed JSON or None, raw text)."""
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        h = {"Content-Type": "application/json"}
        if headers:
            h.update(headers)
        data = raw if raw is not None else (json.dumps(body) if body is not None else None)
        c.request(method, path, body=data, headers=h)
        r = c.getresponse()
        text = r.read().decode("utf-8")
        c.close()
        try:
            js = json.loads(text) if text else None
        except ValueError:
            js = None
        return r.status, js, text


class Checker:
    def __init__(self):
        self.failed = 0
        self.passed = 0

    def check(self, cond, what, detail=""):
        if cond:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL: %s %s" % (what, detail), flush=True)
        return cond

    def status(self, got, want, what):
        st, js, text = got
        return self.check(st == want, what, "(status %s, want %s: %s)" % (st, want, text[:300]))

    def done(self):
        print("%d passed, %d failed" % (self.passed, self.failed), flush=True)
        sys.exit(1 if self.failed else 0)


def temp_dir(prefix):
    return tempfile.mkdtemp(prefix=prefix)


def remove(path, keep=False):
    if keep:
        print("kept", path)
    else:
        shutil.rmtree(path, ignore_errors=True)


def wait_until(pred, timeout, step=0.05):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(step)
    return pred()
