/* tools.h: what the Python installers and environment managers people use write, read
 * from their files without running them (docs/discovery.md): uv, python-build-standalone,
 * conda / mamba / pixi, mise and asdf.  pins.c reads their version pins, layouts.c their
 * installation folders. */
#ifndef PYHOST_TOOLS_H
#define PYHOST_TOOLS_H

#include <stddef.h>

#include "interp.h"

/* A version request as uv, mise and asdf write them ("3", "3.12", "3.12.7",
 * "cpython@3.12", "cp312", "cpython-3.12.7-linux-x86_64-gnu", "3.13t", "3.12+debug"). */
struct pyhost__request {
  unsigned major, minor; /* minor 0: any */
  int patch;             /* -1: any */
  int freethreaded, debug;
};

/* 0 when text names a CPython version, -1 for anything else (a specifier such as
 * ">=3.12", a path, "pypy", "system"). */
int pyhost__parse_request(const char *text, struct pyhost__request *r);

/* 1 when the version major.minor.patch (patch -1: unknown) with those build flags
 * satisfies r. */
int pyhost__request_matches(const struct pyhost__request *r, unsigned major, unsigned minor,
                            int patch, int freethreaded, int debug);

/* A pin: what the tool would run, as written (several requests separated by blanks for
 * asdf and mise, tried in order), and where it was read (a file, or a variable). */
struct pyhost__pin {
  char versions[512];
  char origin[PYHOST__IPATH];
};

/* uv's pin (uv's version_files.rs): UV_PYTHON; else the nearest directory from the
 * current one upwards holding .python-version (its first request) or .python-versions;
 * else .python-version in uv's user configuration folder.  0, or -1 when none. */
int pyhost__uv_pin(struct pyhost__pin *pin);

/* asdf's version of python: ASDF_PYTHON_VERSION, else the `python` line of the nearest
 * .tool-versions from the current directory upwards, else ~/.tool-versions. */
int pyhost__asdf_pin(struct pyhost__pin *pin);

/* mise's version of python: MISE_PYTHON_VERSION, else from the current directory
 * upwards the first of mise.local.toml, mise.toml, .mise.local.toml, .mise.toml,
 * .config/mise.toml, .config/mise/config.toml (their [tools] python = ...) and
 * .tool-versions, else the global config.toml, else ~/.tool-versions. */
int pyhost__mise_pin(struct pyhost__pin *pin);

/* The installation in dir (a tool's folder of installations) that request names, newest
 * first: uv's folders are named cpython-3.12.7[+variant]-<os>-<arch>-<libc>, mise's and
 * asdf's 3.12.7.  Fills out with its path; 0, or -1 when none matches. */
int pyhost__pick_install(const char *dir, const char *request, int uv_names, char *out, size_t cap);

/* The version in an installation folder's name (uv's or a bare "3.12.7"); 0 or -1. */
int pyhost__install_version(const char *name, int uv_names, unsigned *major, unsigned *minor,
                            int *patch, int *freethreaded, int *debug);

/* The library of the one Python 3 version whose library prefix's lib directories hold
 * (free-threaded builds aside; a debug build only when it is alone there); 0, or -1
 * when none or several. */
int pyhost__prefix_only_library(const char *prefix, char *out, size_t cap, unsigned *major,
                                unsigned *minor);

/* The library of one installation prefix (a python-build-standalone "python/" folder with
 * install/ inside is followed): the library of the one Python 3 version in its lib
 * directories.  0; else -1 with *code ("no-shared-library" for a statically linked
 * build, "missing") and the reason in why. */
int pyhost__install_library(const char *prefix, char *lib, size_t cap, const char **code, char *why,
                            size_t wcap);

/* 1 when prefix is a conda environment (conda, mamba and pixi write conda-meta/ in it). */
int pyhost__is_conda_env(const char *prefix);

/* 1 when the conda environment prefix is a base installation (it holds condabin/, as
 * conda's base does, or is MAMBA_ROOT_PREFIX), not an environment made from one. */
int pyhost__is_conda_base(const char *prefix);

/* The tool a library (or interpreter) path belongs to, as a short phrase ("uv (managed
 * Python cpython-3.12.7-linux-x86_64-gnu)", "conda (environment /x/envs/app)"), or ""
 * when the files do not tell. */
void pyhost__tool_of(const char *path, char *out, size_t cap);

#endif
