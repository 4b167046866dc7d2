# consumer_test.cmake: one way of adopting pyhost, end to end.
#   cmake -DMODE=install|find_package|pkg-config|add_subdirectory -DSRC=<pyhost source>
#         -DBUILD=<pyhost build> -DWORK=<scratch dir> -DCC=<C compiler>
#         -DGEN=<generator> -DLIBS=<python libs, "@@"-separated> -DVERSIONS=<"3.X"@@...>
#         [-DLAUNCHER_NEW=<the last library's launcher, "@@"-separated, "@@"-ended>]
#         [-DCFLAGS=<C flags> -DLDFLAGS=<linker flags>]
#         -P consumer_test.cmake
# install: `cmake --install BUILD --prefix WORK/prefix` (the fixture of the next two).
# The others configure and build tests/consumer in WORK/<MODE> from nothing, then run
# each executable it made on each Python and check what it prints.
string(REPLACE "@@" ";" LIBS "${LIBS}")
string(REPLACE "@@" ";" VERSIONS "${VERSIONS}")
set(prefix "${WORK}/prefix")

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(rc)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}")
  endif()
endfunction()

if(MODE STREQUAL "install")
  file(REMOVE_RECURSE "${prefix}")
  run(${CMAKE_COMMAND} --install "${BUILD}" --prefix "${prefix}")
  include(GNUInstallDirs) # the same relative places the build used
  foreach(f include/pyhost.h include/pyhost.hpp include/pyhost/version.h)
    if(NOT EXISTS "${prefix}/${f}")
      message(FATAL_ERROR "install did not put ${f}")
    endif()
  endforeach()
  file(GLOB_RECURSE found RELATIVE "${prefix}" "${prefix}/*")
  foreach(re "share/doc/pyhost/README\\.md$" "share/doc/pyhost/docs/getting-started\\.md$"
             "libexec/pyhost-worker$"
             "lib[^/]*/libpyhost\\.so\\.0$" "lib[^/]*/libpyhost\\.a$" "lib[^/]*/pkgconfig/pyhost\\.pc$"
             "lib[^/]*/cmake/pyhost/pyhostConfig\\.cmake$" "lib[^/]*/cmake/pyhost/pyhostConfigVersion\\.cmake$")
    set(hit "")
    foreach(f IN LISTS found)
      if(f MATCHES "${re}")
        set(hit "${f}")
      endif()
    endforeach()
    if(NOT hit)
      message(FATAL_ERROR "install put nothing matching ${re}; it put:\n${found}")
    endif()
  endforeach()
  # the installed command runs from the prefix, finding the installed library
  if(EXISTS "${prefix}/bin/pyhost")
    execute_process(COMMAND "${prefix}/bin/pyhost" --pyhost-version RESULT_VARIABLE rc OUTPUT_VARIABLE out)
    if(rc OR NOT out MATCHES "^pyhost [0-9]+\\.[0-9]+\\.[0-9]+ ")
      message(FATAL_ERROR "installed bin/pyhost --pyhost-version: exit ${rc}: ${out}")
    endif()
  endif()
  message(STATUS "installed ${prefix}: ${found}")
  return()
endif()

set(bin "${WORK}/${MODE}")
file(REMOVE_RECURSE "${bin}")
set(cfg -S "${SRC}/tests/consumer" -B "${bin}" -G "${GEN}" -DCMAKE_C_COMPILER=${CC}
    -DPYHOST_CONSUMER_MODE=${MODE} -DCMAKE_BUILD_TYPE=RelWithDebInfo
    # the flags pyhost was built with (the asan preset's sanitizers must link here too)
    "-DCMAKE_C_FLAGS=${CFLAGS}" "-DCMAKE_CXX_FLAGS=${CFLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${LDFLAGS}"
    "-DCMAKE_SHARED_LINKER_FLAGS=${LDFLAGS}")
set(exes consumer)
if(MODE STREQUAL "find_package")
  list(APPEND cfg "-DCMAKE_PREFIX_PATH=${prefix}")
  list(APPEND exes consumer_static)
elseif(MODE STREQUAL "pkg-config")
  file(GLOB pcdirs LIST_DIRECTORIES true "${prefix}/lib*/pkgconfig" "${prefix}/lib/*/pkgconfig")
  string(REPLACE ";" ":" pcpath "${pcdirs}")
  set(ENV{PKG_CONFIG_PATH} "${pcpath}")
  set(ENV{PKG_CONFIG_LIBDIR} "${pcpath}") # only this prefix, never a pyhost.pc of the system
elseif(MODE STREQUAL "add_subdirectory")
  list(APPEND cfg "-DPYHOST_SOURCE_DIR=${SRC}")
endif()
run(${CMAKE_COMMAND} ${cfg})
run(${CMAKE_COMMAND} --build "${bin}" -j2)

include(${CMAKE_CURRENT_LIST_DIR}/run_on_pythons.cmake)
if(EXISTS "${bin}/consumer_cxx")
  list(APPEND exes consumer_cxx) # when a C++ compiler was found
endif()
# the C++ plugin host (examples/cpp), built from the installed pyhost.hpp and library
if(EXISTS "${bin}/consumer_cpp_example")
  file(READ "${SRC}/examples/cpp/plugin_host.expected-re" cpp_re)
  set(cpp_args "${SRC}/examples/cpp/plugins/scorer.py")
  pyhost_run_on_pythons("${bin}/consumer_cpp_example" "${cpp_re}" "${MODE}: consumer_cpp_example"
                        ARGS "${cpp_args}" EXIT 1)
elseif(MODE STREQUAL "find_package" OR MODE STREQUAL "pkg-config")
  find_program(cxx NAMES c++ g++ clang++)
  if(cxx)
    message(FATAL_ERROR "${MODE}: a C++ compiler (${cxx}) exists but consumer_cpp_example was not built")
  endif()
endif()
# The worker program: beside the installed library (the shared library's consumers
# find it there, no variable set); a host linked with the static library has no library
# to look beside, and the installed one is named to it (the build tree's would be found
# otherwise).
unset(ENV{PYHOST_WORKER})
foreach(exe IN LISTS exes)
  if(exe STREQUAL "consumer_static")
    set(ENV{PYHOST_WORKER} "${prefix}/libexec/pyhost-worker")
  endif()
  pyhost_run_on_pythons("${bin}/${exe}"
    "^consumer: pyhost [0-9]+\\.[0-9]+\\.[0-9]+, Python @VER@: 45, in a worker process: 45\n$"
    "${MODE}: ${exe}")
  unset(ENV{PYHOST_WORKER})
endforeach()
