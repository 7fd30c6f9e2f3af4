#!/usr/bin/env python3
"""PNG frames for the runtime's folder input, written by Pillow, and the grey levels they must read as.

  png_frames.py make DIR KIND [FRAMES]   writes DIR/0000.png ... in the form KIND
  png_frames.py check DIR KIND OUT.npy   compares OUT.npy (the program's copy) with the expected levels
  png_frames.py fuzz DIR EXE COUNT       COUNT pictures with random bytes of their image data changed and
                                         the chunk CRCs made right again (so the inflater and the filters
                                         see the damage), each read by EXE --in I=...: it must succeed or
                                         fail with exit status 2, never crash; prints `fuzz: N ok`

KIND: grey8, grey16, grey1, rgb, rgba, palette, grey-alpha, stored (compression level 0: stored deflate
blocks), large (level 9: dynamic Huffman codes), tiny (2 x 1 pixels: fixed codes). Expected grey levels
in [0, 255]: 8-bit samples as they are, 16-bit / 257, 1-bit 0 or 255, colour 0.299 R + 0.587 G + 0.114 B.
Prints `KIND: ok` or exits 1 with the largest difference.
"""
import os
import sys

import numpy as np
from PIL import Image

SIZES = {"large": (97, 61), "tiny": (2, 1)}


def pictures(kind, frames):
    rng = np.random.default_rng(len(kind))
    w, h = SIZES.get(kind, (23, 17))
    out = []
    for _ in range(frames):
        # Smooth content and noise, so that every filter type and both match kinds appear.
        yy, xx = np.mgrid[0:h, 0:w]
        smooth = (np.sin(xx / 5.0) + np.cos(yy / 3.0) + 2) * 60
        rgb = np.stack([smooth, smooth[::-1], smooth[:, ::-1]], axis=2) + rng.integers(0, 12, (h, w, 3))
        rgb = np.clip(rgb, 0, 255).astype(np.uint8)
        if kind in ("grey8", "stored", "large", "tiny"):
            out.append((Image.fromarray(rgb[:, :, 0], "L"), rgb[:, :, 0].astype(np.float64)))
        elif kind == "grey16":
            v = rgb[:, :, 0].astype(np.uint16) * 257 + rng.integers(0, 257, (h, w)).astype(np.uint16)
            out.append((Image.fromarray(v, "I;16"), v.astype(np.float64) / 257))
        elif kind == "grey1":
            bits = rgb[:, :, 0] > 128
            out.append((Image.fromarray(bits.astype(np.uint8) * 255, "L").convert("1"), bits * 255.0))
        elif kind in ("rgb", "rgba"):
            grey = 0.299 * rgb[:, :, 0] + 0.587 * rgb[:, :, 1] + 0.114 * rgb[:, :, 2]
            image = Image.fromarray(rgb, "RGB")
            if kind == "rgba":
                image.putalpha(Image.fromarray(rgb[:, :, 1], "L"))
            out.append((image, grey))
        elif kind == "palette":
            image = Image.fromarray(rgb, "RGB").quantize(colors=16)
            pal = np.array(image.getpalette()[:48], dtype=np.float64).reshape(16, 3)
            idx = np.asarray(image)
            grey = 0.299 * pal[idx, 0] + 0.587 * pal[idx, 1] + 0.114 * pal[idx, 2]
            out.append((image, grey))
        elif kind == "grey-alpha":
            image = Image.fromarray(rgb[:, :, 0], "L")
            image.putalpha(Image.fromarray(rgb[:, :, 2], "L"))
            out.append((image, rgb[:, :, 0].astype(np.float64)))
        else:
            sys.exit(f"png_frames: unknown kind {kind}")
    return out


def fuzz(folder, exe, count):
    import struct
    import subprocess
    import zlib
    rng = np.random.default_rng(7)
    image, _ = pictures("large", 1)[0]
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "0000.png")
    image.save(path, compress_level=9)
    clean = open(path, "rb").read()
    idat = clean.index(b"IDAT") - 4
    length = struct.unpack(">I", clean[idat:idat + 4])[0]
    statuses = {}
    for n in range(count):
        body = bytearray(clean[idat + 8:idat + 8 + length])
        for _ in range(int(rng.integers(1, 4))):
            body[int(rng.integers(0, len(body)))] = int(rng.integers(0, 256))
        if n % 4 == 3:
            body = body[:int(rng.integers(0, len(body)))]
        chunk = struct.pack(">I", len(body)) + b"IDAT" + bytes(body)
        chunk += struct.pack(">I", zlib.crc32(chunk[4:]) & 0xFFFFFFFF)
        with open(path, "wb") as f:
            f.write(clean[:idat] + chunk + clean[idat + 12 + length:])
        status = subprocess.run([exe, "--in", f"I={folder}"], capture_output=True).returncode
        if status not in (0, 2):
            sys.exit(f"fuzz: picture {n} ended with status {status}")
        statuses[status] = statuses.get(status, 0) + 1
    print(f"fuzz: {count} ok")


def main():
    if sys.argv[1] == "fuzz":
        return fuzz(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    command, folder, kind = sys.argv[1:4]
    if command == "make":
        frames = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    else:
        frames = len([n for n in os.listdir(folder) if n.endswith(".png")])
    made = pictures(kind, frames)
    if command == "make":
        os.makedirs(folder, exist_ok=True)
        level = {"stored": 0, "large": 9}.get(kind, 6)
        for t, (image, _) in enumerate(made):
            image.save(os.path.join(folder, f"{t:04d}.png"), compress_level=level)
        with open(os.path.join(folder, "notes.txt"), "w") as f:  # not a picture: ignored
            f.write("frames of kind " + kind + "\n")
        return
    got = np.load(sys.argv[4])
    want = np.stack([grey for _, grey in made])
    if got.shape != want.shape:
        sys.exit(f"{kind}: shape {got.shape}, expected {want.shape}")
    diff = float(np.abs(got - want).max())
    if diff > 1e-3:
        sys.exit(f"{kind}: largest difference {diff}")
    print(f"{kind}: ok")


if __name__ == "__main__":
    main()
