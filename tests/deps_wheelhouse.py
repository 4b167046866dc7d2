#!/usr/bin/env python3
"""deps_wheelhouse.py: the deps tests' own package index, made by hand (issue 35).

Usage: deps_wheelhouse.py DIR

Writes into DIR (made afresh) what the tests point pip at with PIP_NO_INDEX=1 and
PIP_FIND_LINKS=DIR, as a user points it at a private wheelhouse:

  pyhostdemo 1.0 and 2.0   pure-Python wheels; pyhostdemo.VERSION says which
  pyhostuser 1.0           a wheel that requires pyhostdemo==2.0
  pyhostbroken 1.0         an sdist whose build raises: a failing build

A wheel is a zip with the package, NAME-VER.dist-info/METADATA, WHEEL and RECORD
(sha256 of each file, urlsafe base64 without padding; RECORD's own row empty).
"""
import base64
import hashlib
import io
import os
import shutil
import sys
import tarfile
import zipfile


def record_hash(data):
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def wheel(out, name, version, files, requires=()):
    dist = "%s-%s.dist-info" % (name, version)
    meta = ["Metadata-Version: 2.1", "Name: " + name, "Version: " + version,
            "Summary: a package of pyhost's deps tests"]
    meta += ["Requires-Dist: " + r for r in requires]
    files = dict(files)
    files[dist + "/METADATA"] = "\n".join(meta) + "\n"
    files[dist + "/WHEEL"] = ("Wheel-Version: 1.0\nGenerator: pyhost-tests\n"
                              "Root-Is-Purelib: true\nTag: py3-none-any\n")
    rows = []
    path = os.path.join(out, "%s-%s-py3-none-any.whl" % (name, version))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for arc, text in sorted(files.items()):
            data = text.encode()
            z.writestr(arc, data)
            rows.append("%s,%s,%d" % (arc, record_hash(data), len(data)))
        rows.append(dist + "/RECORD,,")
        z.writestr(dist + "/RECORD", "\n".join(rows) + "\n")


def sdist(out, name, version, files):
    base = "%s-%s" % (name, version)
    path = os.path.join(out, base + ".tar.gz")
    files = dict(files)
    files["PKG-INFO"] = "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version)
    with tarfile.open(path, "w:gz") as t:
        for arc, text in sorted(files.items()):
            data = text.encode()
            info = tarfile.TarInfo(base + "/" + arc)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))


def main(out):
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    for v in ("1.0", "2.0"):
        wheel(out, "pyhostdemo", v, {"pyhostdemo/__init__.py": "VERSION = %r\n" % v})
    wheel(out, "pyhostuser", "1.0",
          {"pyhostuser/__init__.py": "import pyhostdemo\nUSES = pyhostdemo.VERSION\n"},
          requires=["pyhostdemo==2.0"])
    # an in-tree build backend (no build requirements to fetch: offline, every pip
    # from 19 reaches it) and a setup.py for older pips, each failing the same way
    fails = "raise SystemExit('pyhostbroken: this build fails on purpose')\n"
    sdist(out, "pyhostbroken", "1.0", {
        "setup.py": fails,
        "pyproject.toml": ('[build-system]\nrequires = []\nbuild-backend = "failing_backend"\n'
                           'backend-path = ["."]\n'),
        "failing_backend.py": fails})


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
