/* status.c: names and texts of the status codes, expanded from PYHOST_STATUS_MAP. */
#include "pyhost.h"

const char *pyhost_status_name(int status) {
  switch (status) {
#define NAME_CASE(name, code, text) \
  case code: return "PYHOST_" #name;
    PYHOST_STATUS_MAP(NAME_CASE)
#undef NAME_CASE
  }
  return "PYHOST_UNKNOWN";
}

const char *pyhost_errstr(int status) {
  switch (status) {
#define TEXT_CASE(name, code, text) \
  case code: return text;
    PYHOST_STATUS_MAP(TEXT_CASE)
#undef TEXT_CASE
  }
  return "unknown status code";
}

unsigned long pyhost_version(void) {
  return PYHOST_VERSION_HEX;
}

const char *pyhost_version_string(void) {
  return PYHOST_VERSION_STRING;
}

unsigned long pyhost_abi_version(void) {
  return PYHOST_LIMITED_API_HEX;
}
