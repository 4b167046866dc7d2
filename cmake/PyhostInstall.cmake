# PyhostInstall.cmake: what `cmake --install` puts where (GNUInstallDirs places):
#   include/pyhost.h, include/pyhost.hpp (the header-only C++ layer), include/pyhost/*.h
#   lib/libpyhost.so.0.1.0 (SONAME libpyhost.so.0) + links, lib/libpyhost.a
#     (Windows: bin/libpyhost.dll, lib/libpyhost.dll.a, lib/libpyhost_static.a)
#   bin/pyhost                          the command, when PYHOST_BUILD_CLI
#   libexec/pyhost-worker               the worker of process-level plugins
#                                       (Windows: bin/pyhost-worker.exe, beside the DLL)
#   lib/cmake/pyhost/pyhostConfig.cmake, pyhostConfigVersion.cmake, pyhostTargets*.cmake
#                                       find_package(pyhost): pyhost::pyhost, pyhost::pyhost_static
#   lib/pkgconfig/pyhost.pc             pkg-config pyhost (relocatable: ${pcfiledir})
# Included from the top-level CMakeLists.txt after the targets exist.  The libraries
# are built from the objects of pyhost_objects ($<TARGET_OBJECTS:>, not a link), so the
# export set needs only the two real targets.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(PYHOST_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/pyhost" CACHE STRING
    "Where pyhostConfig.cmake goes, relative to the prefix")
set(PYHOST_INSTALL_PKGCONFIGDIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig" CACHE STRING
    "Where pyhost.pc goes, relative to the prefix")

install(TARGETS pyhost pyhost_static EXPORT pyhostTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES include/pyhost.h include/pyhost.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/pyhost DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
if(TARGET pyhost_cli)
  # The installed command finds the installed library wherever the prefix is.
  if(UNIX AND NOT APPLE AND NOT IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
    file(RELATIVE_PATH _bin2lib "/p/${CMAKE_INSTALL_BINDIR}" "/p/${CMAKE_INSTALL_LIBDIR}")
    set_target_properties(pyhost_cli PROPERTIES INSTALL_RPATH "$ORIGIN/${_bin2lib}")
  endif()
  install(TARGETS pyhost_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
# the worker program of process-level plugins, where plugin_proc.c looks for it
install(TARGETS pyhost_worker RUNTIME DESTINATION ${PYHOST_WORKER_INSTALL_DIR})
install(FILES LICENSE README.md CHANGELOG.md DESTINATION ${CMAKE_INSTALL_DOCDIR} OPTIONAL)
# the user guide beside README.md, so that README's docs/... links work where installed
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
        FILES_MATCHING PATTERN "*.md" PATTERN "*.png" PATTERN "Doxyfile")

install(EXPORT pyhostTargets NAMESPACE pyhost:: FILE pyhostTargets.cmake
  DESTINATION ${PYHOST_INSTALL_CMAKEDIR})
configure_package_config_file(cmake/pyhostConfig.cmake.in
  "${CMAKE_CURRENT_BINARY_DIR}/pyhostConfig.cmake"
  INSTALL_DESTINATION ${PYHOST_INSTALL_CMAKEDIR})
# Within one major version pyhost only adds (docs/abi.md), so any 0.y.z >= the
# requested version will do.
write_basic_package_version_file("${CMAKE_CURRENT_BINARY_DIR}/pyhostConfigVersion.cmake"
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/pyhostConfig.cmake"
  "${CMAKE_CURRENT_BINARY_DIR}/pyhostConfigVersion.cmake"
  DESTINATION ${PYHOST_INSTALL_CMAKEDIR})

# pyhost.pc: the prefix is found from the .pc file's own place, so a prefix chosen at
# install time (cmake --install --prefix) or a moved tree still works.
if(IS_ABSOLUTE "${PYHOST_INSTALL_PKGCONFIGDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}"
   OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(PYHOST_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _rel "/p/${PYHOST_INSTALL_PKGCONFIGDIR}" "/p")
  string(REGEX REPLACE "/$" "" _rel "${_rel}")
  set(PYHOST_PC_PREFIX "\${pcfiledir}/${_rel}")
endif()
set(PYHOST_PC_LIBS_PRIVATE "")
foreach(l IN LISTS CMAKE_DL_LIBS)
  string(APPEND PYHOST_PC_LIBS_PRIVATE " -l${l}")
endforeach()
configure_file(cmake/pyhost.pc.in "${CMAKE_CURRENT_BINARY_DIR}/pyhost.pc" @ONLY)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/pyhost.pc" DESTINATION ${PYHOST_INSTALL_PKGCONFIGDIR})
