/* discover_sys.h: the platform interface of discovery (discover.c, interp.c).
 *
 * Everything discovery needs to know about the operating system that is not a plain
 * file question (fs.h): where Pythons are usually installed, how library files are
 * named, listing a directory, running an interpreter as a last resort, the PEP 514
 * registry, and the environment for isolated init.  discover_posix.c and
 * discover_win32.c implement it.  Paths are UTF-8.
 */
#ifndef PYHOST_DISCOVER_SYS_H
#define PYHOST_DISCOVER_SYS_H

#include <stddef.h>

/* The separator of PATH-like lists (':' or ';') and the executable suffix ("" or
 * ".exe"). */
extern const char pyhost__sys_list_sep;
extern const char *const pyhost__sys_exe_suffix;

/* 1 when path is absolute on this platform ("/x", "C:\\x", "\\\\server\\x"). */
int pyhost__sys_is_absolute(const char *path);

/* Calls fn(ctx, name) for each entry of dir except "." and "..", in sorted order.
 * 0, or -1 when the directory cannot be read. */
int pyhost__sys_list_dir(const char *dir, void (*fn)(void *ctx, const char *name), void *ctx);

/* 1 when path is a file the current user may execute. */
int pyhost__sys_is_executable(const char *path);

/* Library file names: 1 when name is a versioned CPython library of this platform
 * (libpython3.11.so.1.0, libpython3.6m.so, libpython3.12.dylib, python311.dll,
 * python313t.dll) and fills major, minor and the ABI flags ("", "m", "d", "t", "td").
 * The stable-ABI forwarders (libpython3.so, python3.dll) are not versioned: 0. */
int pyhost__sys_lib_name(const char *name, unsigned *major, unsigned *minor, char *flags,
                         size_t flags_cap);

/* The preferred library file names for Python major.minor, best first, written into
 * out as NUL-separated strings ending with an empty one ("libpython3.11.so.1.0\0
 * libpython3.11.so\0\0").  Used to look inside one installation's lib directory. */
void pyhost__sys_lib_names_for(unsigned major, unsigned minor, char *out, size_t cap);

/* The standard places where Python libraries live, in search order: calls fn(ctx, dir,
 * kind) where kind is "dir" (look for library files in dir), "framework" (dir is a
 * Python.framework/Versions directory: look for 3.X/Python in it) or "prefixes"
 * (dir holds installation prefixes, as pyenv's versions/ does; prefix/lib is searched).
 * POSIX: LD_LIBRARY_PATH's absolute entries, the directories of ld.so.conf (and its
 * includes), the usual lib directories, pyenv's versions, the macOS framework places.
 * pyenv_root may be "" (not set). */
void pyhost__sys_std_places(const char *pyenv_root,
                            void (*fn)(void *ctx, const char *dir, const char *kind), void *ctx);

/* Where a Python tool keeps what it installs or reads, as the tool itself computes it
 * from its variables (docs/discovery.md cites each tool's documentation):
 *   "uv"          uv's managed Pythons: UV_PYTHON_INSTALL_DIR, else $XDG_DATA_HOME/uv/python
 *                 or ~/.local/share/uv/python (Windows: %APPDATA%\uv\data\python);
 *   "uv-config"   uv's user configuration folder, for its global .python-version;
 *   "mise"        mise's data folder (installs/python, shims): MISE_DATA_DIR, else
 *                 $XDG_DATA_HOME/mise or ~/.local/share/mise (Windows: %LOCALAPPDATA%\mise);
 *   "mise-config" mise's global configuration folder: MISE_CONFIG_DIR, else
 *                 $XDG_CONFIG_HOME/mise or ~/.config/mise;
 *   "asdf"        asdf's data folder: ASDF_DATA_DIR, else ~/.asdf (none on Windows).
 * 0, or -1 when this platform or environment has none. */
int pyhost__sys_tool_dir(const char *tool, char *out, size_t cap);

/* The usual folders of conda installations (each a base environment), for when no
 * variable names one: ~/miniforge3, ~/miniconda3, ~/anaconda3, ~/mambaforge, /opt/conda
 * (Windows: the same under %USERPROFILE%, then %ProgramData%).  Calls fn per folder. */
void pyhost__sys_conda_roots(void (*fn)(void *ctx, const char *dir), void *ctx);

/* The loader configuration std_places reads (POSIX: "/etc/ld.so.conf"); a test seam. */
extern const char *pyhost__sys_ld_conf;

/* The installation lib directories of a prefix: prefix/lib, prefix/lib64,
 * prefix/lib/<multiarch> on POSIX; the prefix itself on Windows.  Calls fn per dir. */
void pyhost__sys_prefix_lib_dirs(const char *prefix, void (*fn)(void *ctx, const char *dir),
                                 void *ctx);

/* Where the system loader looks for a bare library name (no directory), as far as a
 * process can know it, in one line of text for error messages. */
void pyhost__sys_loader_search(char *out, size_t cap);

/* The user's home directory into out; 0 or -1. */
int pyhost__sys_home(char *out, size_t cap);

/* The current directory into out; 0 or -1.  Read to find pyenv's .python-version
 * files and to make a relative library path the host gave absolute; never searched. */
int pyhost__sys_cwd(char *out, size_t cap);

/* Runs argv[0] (an absolute path) with argv, no shell, stdin from the null device,
 * and collects up to cap-1 bytes of its stdout into out.  Gives up (and kills it) after
 * timeout_ms.  Returns the exit status, or -1 with the reason in err. */
int pyhost__sys_run(const char *const *argv, int timeout_ms, char *out, size_t cap, char *err,
                    size_t errlen);

/* The character set of the locale the environment names for LC_CTYPE (LC_ALL, LC_CTYPE,
 * LANG), as setlocale(LC_CTYPE, "") would give it, found without changing the
 * process's locale ("UTF-8", "ANSI_X3.4-1968"; an unknown locale gives the "C"
 * locale's, as setlocale leaves it).  0, or -1 where the platform has no such notion
 * (Windows: Python does not take its encoding from the C locale there). */
int pyhost__sys_env_codeset(char *out, size_t cap);

/* PEP 514: calls fn(ctx, company, tag, install_path, executable) for each registered
 * Python (HKEY_CURRENT_USER first, then HKEY_LOCAL_MACHINE, 64- then 32-bit views).
 * A no-op off Windows. */
void pyhost__sys_registry(void (*fn)(void *ctx, const char *company, const char *tag,
                                     const char *install_path, const char *executable),
                          void *ctx);

/* Isolated init: saves every PYTHON* variable into a token (own result), removes them
 * from the process environment and sets PYTHONNOUSERSITE=1 and PYTHONUSERBASE=userbase.
 * 0, or -1 when out of memory (then nothing was changed; restore the token anyway).
 * pyhost__sys_env_restore puts the saved variables back and frees the token (NULL is a
 * no-op).  Not thread-safe, like the environment itself. */
struct pyhost__env_saved;
int pyhost__sys_env_isolate(struct pyhost__env_saved **saved, const char *userbase);
void pyhost__sys_env_restore(struct pyhost__env_saved *saved);

#endif
