/* pyhost/version.h: pyhost's own version, as macros.  The run-time mirrors are
 * pyhost_version() and pyhost_version_string(); a host can compare the two to make
 * sure the header it compiled against matches the library it runs with. */
#ifndef PYHOST_VERSION_H
#define PYHOST_VERSION_H

/* This header's version: semantic versioning (docs/versions-and-abi.md). */
#define PYHOST_VERSION_MAJOR 0
#define PYHOST_VERSION_MINOR 1
#define PYHOST_VERSION_PATCH 0
#define PYHOST_VERSION_STRING "0.1.0"

/* (major << 16) | (minor << 8) | patch */
#define PYHOST_VERSION_HEX \
  ((PYHOST_VERSION_MAJOR << 16) | (PYHOST_VERSION_MINOR << 8) | PYHOST_VERSION_PATCH)

/* True when this header is at least version x.y.z. */
#define PYHOST_AT_LEAST_VERSION(x, y, z) (PYHOST_VERSION_HEX >= (((x) << 16) | ((y) << 8) | (z)))

#endif
