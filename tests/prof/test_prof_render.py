#!/usr/bin/env python3
"""The HTML report rendered in headless Chromium (Debian's `chromium`): the charts drew.

What: prof_driver writes a report with every kind of record, and `tandem seq query --profile-html` one from
a real engine run; Chromium renders each to a PNG screenshot (the page has no script: what is checked is
what the browser drew from the SVG), which is decoded here with zlib alone, and every chart's own colour
must cover clearly more pixels than its legend swatch (12x12 px): CPU / H2D / D2H bars of the split chart,
p50 and p95 bars, the host memory area (engine run) and device memory lines (driver), routing bars, scatter points, and the timeline's user, op and gpu spans.
Without Chromium the test says so and exits 77, which CTest reports as skipped (apt-get install chromium).
Why: the report is only useful if a browser draws it; a chart that fails to render (bad SVG, zero sizes,
coordinates off the canvas) leaves no pixels of its colour.
"""

import argparse
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

SKIP = 77

# The colours prof_html.c gives each series (the test fails if they drift apart).
DRIVER_EXPECT = {
    "split CPU bars": ((0x4E, 0x79, 0xA7), 2000),
    "split H2D bars": ((0xF2, 0x8E, 0x2B), 1000),
    "split D2H bars": ((0xE1, 0x57, 0x59), 1000),
    "p50 bars": ((0x76, 0xB7, 0xB2), 1000),
    "p95 bars": ((0xED, 0xC9, 0x48), 1000),
    "device used line": ((0x17, 0xBE, 0xCF), 400),
    "device reserved line": ((0xBC, 0xBD, 0x22), 400),
    "routing bars": ((0xB0, 0x7A, 0xA1), 1000),
    "scatter points": ((0xFF, 0x9D, 0xA7), 300),
    "timeline user spans": ((0x8C, 0x56, 0x4B), 400),
    "timeline gpu spans": ((0x2C, 0xA0, 0x2C), 200),
}
CLI_EXPECT = {
    "split CPU bars": ((0x4E, 0x79, 0xA7), 2000),
    "p50 bars": ((0x76, 0xB7, 0xB2), 400),
    "memory area": ((0xBA, 0xB0, 0xAC), 5000),
    "routing bars": ((0xB0, 0x7A, 0xA1), 1000),
    "timeline op spans": ((0x1F, 0x77, 0xB4), 300),
}


def decode_png(path):
    """(width, height, rows of bytes, bytes per pixel) for an 8-bit, non-interlaced RGB/RGBA PNG."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
    w, h, depth, ctype, _, _, interlace = hdr
    assert depth == 8 and ctype in (2, 6) and not interlace, "PNG format %r" % (hdr,)
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        ft = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ft == 1:
                line[i] = (line[i] + a) & 255
            elif ft == 2:
                line[i] = (line[i] + b) & 255
            elif ft == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ft == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, rows, bpp


def colour_counts(path, wanted):
    w, h, rows, bpp = decode_png(path)
    want = {c: 0 for c, _ in wanted.values()}
    for row in rows:
        for x in range(0, w * bpp, bpp):
            c = (row[x], row[x + 1], row[x + 2])
            if c in want:
                want[c] += 1
    return want


def render(chromium, html, png, tmp):
    cmd = [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--force-device-scale-factor=1",
           "--user-data-dir=" + os.path.join(tmp, "profile"), "--window-size=1300,3400", "--screenshot=" + png,
           "file://" + os.path.abspath(html)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if p.returncode or not os.path.exists(png):
        sys.exit("FAIL: chromium did not render %s (exit %d): %s" % (html, p.returncode, p.stderr[-1500:]))


def check(name, png, expect):
    got = colour_counts(png, expect)
    bad = []
    for what, (colour, least) in expect.items():
        n = got[colour]
        print("  %-22s #%02x%02x%02x: %6d px (need >= %d)" % (what, *colour, n, least))
        if n < least:
            bad.append(what)
    if bad:
        sys.exit("FAIL: %s: not drawn: %s" % (name, ", ".join(bad)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tandem", required=True)
    ap.add_argument("--driver", required=True)
    a = ap.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("SKIPPED: headless Chromium not installed (apt-get install chromium); the report was not rendered")
        sys.exit(SKIP)
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "drv")
        subprocess.run([a.driver, prefix, "262144", "200"], check=True, capture_output=True)
        render(chromium, prefix + ".html", prefix + ".png", tmp)
        print("driver report:")
        check("driver report", prefix + ".png", DRIVER_EXPECT)
        pats, store, stm, ht = (os.path.join(tmp, n) for n in ("p.jsonl", "p.store", "stm.jsonl", "cli.html"))
        subprocess.run([a.tandem, "seq", "gen", "--patterns", "20000", "--seed", "9", "--vocab", "500", "--out", pats, "--quiet"], check=True)
        subprocess.run([a.tandem, "seq", "build", "--input", pats, "--out", store, "--quiet"], check=True, capture_output=True)
        with open(pats) as f, open(stm, "w") as g:
            g.writelines(next(f) for _ in range(20))
        subprocess.run([a.tandem, "seq", "query", "--store", store, "--metric", "difflib", "--threshold", "0.2", "--stm", stm,
                        "--profile-html", ht], check=True, capture_output=True)
        render(chromium, ht, ht + ".png", tmp)
        print("tandem seq query report:")
        check("cli report", ht + ".png", CLI_EXPECT)
    print("PASS")


if __name__ == "__main__":
    main()
