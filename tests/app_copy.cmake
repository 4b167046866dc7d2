# app_copy.cmake: a library copied into an application's own folder with its standard
# library and no bin/python3.X beside it, while PATH offers another python3:
# sys.executable must not name that unrelated interpreter (it is "").
#   cmake -DPYHOST="launcher@@pyhost" -DLIB=libpython -DVER=3.X -DDIR=scratch
#         -DPATH_DIR=dir-with-a-python3 -P app_copy.cmake
string(REPLACE "@@" ";" PYHOST "${PYHOST}")
get_filename_component(name "${LIB}" NAME)
get_filename_component(libdir "${LIB}" DIRECTORY)
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}/lib")
file(COPY "${LIB}" DESTINATION "${DIR}/lib")
# the standard library, found through the copy's own lib/ (a link: the test only needs
# it to be there, and the library's own path is what home and executable come from)
foreach(up "${libdir}/python${VER}" "${libdir}/../python${VER}" "${libdir}/../lib/python${VER}")
  if(EXISTS "${up}/encodings")
    file(CREATE_LINK "${up}" "${DIR}/lib/python${VER}" SYMBOLIC)
    break()
  endif()
endforeach()
set(ENV{PATH} "${PATH_DIR}:$ENV{PATH}")
execute_process(COMMAND ${PYHOST} --python "${DIR}/lib/${name}" -c
                        "import sys; print(repr(sys.executable)); print(sys.prefix)"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
file(REMOVE_RECURSE "${DIR}")
if(NOT rc EQUAL 0 OR NOT out MATCHES "^''\n")
  message(FATAL_ERROR "exit ${rc}; expected sys.executable '' with PATH starting at ${PATH_DIR}\n"
                      "--- stdout ---\n${out}\n--- stderr ---\n${err}")
endif()
