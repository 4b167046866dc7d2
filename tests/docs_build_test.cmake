# docs_build_test.cmake: the build lines a reader copies from a page, run as written.
#   cmake -DMODE=readme|getting-started -DSRC=<pyhost source> -DBUILD=<pyhost build>
#         -DPREFIX=<install prefix> -DWORK=<scratch dir> -DLIBS=<libs, "@@"-separated>
#         -DVERSIONS=<"3.X"@@...> [-DLAUNCHER_NEW=<the last library's launcher>]
#         -P docs_build_test.cmake
# Every line that starts with "cc " in a ```sh block of the page is run by sh in a
# scratch folder laid out as the page assumes: README.md's lines in a copy of the
# source tree's shape (examples/, include/ and build/, the last being this build);
# getting-started.md's with pyhost.pc of the installed prefix on PKG_CONFIG_PATH and
# myapp.c made from the page's "A first host" program.  Each program a line makes
# (-o NAME) must then start and run on the oldest and the newest Python: the docs and
# this test cannot drift apart, since the test has no build line of its own.
string(REPLACE "@@" ";" LIBS "${LIBS}")
string(REPLACE "@@" ";" VERSIONS "${VERSIONS}")
if(MODE STREQUAL "readme")
  set(page "${SRC}/README.md")
else()
  set(page "${SRC}/docs/getting-started.md")
endif()
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

file(STRINGS "${page}" lines)
set(in_sh FALSE)
set(in_c FALSE)
set(after_first_host FALSE)
set(cc_lines "")
set(program "")
foreach(line IN LISTS lines)
  if(line MATCHES "^## A first host")
    set(after_first_host TRUE)
  endif()
  if(in_c)
    if(line MATCHES "^```")
      set(in_c FALSE)
      set(after_first_host FALSE) # the first program only
    else()
      string(APPEND program "${line}\n")
    endif()
  elseif(line MATCHES "^```sh")
    set(in_sh TRUE)
  elseif(line MATCHES "^```c$" AND after_first_host)
    set(in_c TRUE)
  elseif(line MATCHES "^```")
    set(in_sh FALSE)
  elseif(in_sh AND line MATCHES "^cc ")
    list(APPEND cc_lines "${line}")
  endif()
endforeach()
list(LENGTH cc_lines n)
if(n EQUAL 0)
  message(FATAL_ERROR "${page} has no `cc ...` line in a ```sh block")
endif()

list(GET LIBS 0 lib_old)
if(MODE STREQUAL "readme")
  foreach(d examples include)
    file(CREATE_LINK "${SRC}/${d}" "${WORK}/${d}" SYMBOLIC)
  endforeach()
  file(CREATE_LINK "${BUILD}" "${WORK}/build" SYMBOLIC)
  set(expect "^Python @VER@ says hello\n$")
else()
  if(program STREQUAL "")
    message(FATAL_ERROR "${page} has no ```c program under \"## A first host\"")
  endif()
  file(WRITE "${WORK}/myapp.c" "${program}")
  file(GLOB pcdirs LIST_DIRECTORIES true "${PREFIX}/lib*/pkgconfig" "${PREFIX}/lib/*/pkgconfig")
  string(REPLACE ";" ":" pcpath "${pcdirs}")
  set(ENV{PKG_CONFIG_PATH} "${pcpath}")
  set(ENV{PKG_CONFIG_LIBDIR} "${pcpath}") # only this prefix, never a pyhost.pc of the system
  set(expect "^45\n$")
endif()

# the lines may run what they built: on a Python of the matrix, not whatever is found
set(ENV{PYHOST_PYTHON_LIBRARY} "${lib_old}")
include(${CMAKE_CURRENT_LIST_DIR}/run_on_pythons.cmake)
foreach(line IN LISTS cc_lines)
  if(NOT line MATCHES " -o ([^ ]+)")
    message(FATAL_ERROR "${page}: `${line}` names no output (-o NAME) to run")
  endif()
  set(exe "${CMAKE_MATCH_1}")
  execute_process(COMMAND sh -c "${line}" WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc)
    message(FATAL_ERROR "${page}: `${line}` failed (${rc}) in ${WORK}\n--- stdout ---\n${out}\n--- stderr ---\n${err}")
  endif()
  pyhost_run_on_pythons("${WORK}/${exe}" "${expect}" "${page}: ${exe} (from `${line}`)")
endforeach()
