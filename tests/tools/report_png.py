#!/usr/bin/env python3
"""Check that a PNG (a browser screenshot) is not blank.

usage: report_png.py FILE.png [RRGGBB ...]

Decodes the PNG with the standard library (zlib; 8-bit RGB or RGBA,
non-interlaced, as Chromium writes) and prints "ok WxH N colours, D%
non-white" when the image has several colours and at least 1% of its
pixels are not white; else prints why and exits 1.  With colours, also
prints "RRGGBB N" for each: the sampled pixels of exactly that colour.
"""
import struct
import sys
import zlib


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def main():
    data = open(sys.argv[1], "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("not a PNG")
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, typ = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if typ == b"IHDR":
            w, h, depth, ctype, _, _, inter = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or inter:
                sys.exit("unsupported PNG form")
            bpp = 3 if ctype == 2 else 4
        elif typ == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    colours, nonwhite, i = set(), 0, 0
    want = {bytes.fromhex(c): 0 for c in sys.argv[2:]}
    for _ in range(h):
        f = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + ((a + b) >> 1)) & 255
            elif f == 4:
                line[x] = (line[x] + paeth(a, b, c)) & 255
        for x in range(0, stride, bpp * 4):	# every 4th pixel
            px = bytes(line[x:x + 3])
            if len(colours) < 1000:
                colours.add(px)
            if px != b"\xff\xff\xff":
                nonwhite += 1
            if px in want:
                want[px] += 1
        prev = line
    sampled = h * ((w + 3) // 4)
    share = 100.0 * nonwhite / max(sampled, 1)
    if len(colours) < 3 or share < 1:
        print("blank: %d colours, %.1f%% non-white" % (len(colours), share))
        sys.exit(1)
    print("ok %dx%d %d colours, %.1f%% non-white" % (w, h, len(colours),
                                                    share))
    for c, n in want.items():
        print("%s %d" % (c.hex(), n))


if __name__ == "__main__":
    main()
