# check_docs.cmake: staleness a reader of README.md and docs/ would trip over.
#   cmake -DSRC=<project source> -DFLOOR=3.6 -DNEWEST=3.15 -P check_docs.cmake
# - Every range from the floor ("3.6 to 3.N", "3.6 through 3.N", "3.6-3.N", "3.6–3.N")
#   names the newest tested minor: a range from the floor is a claim about what is
#   tested, and it goes stale when a minor is added.  A narrower fact is written another
#   way ("3.11 and older").  NEWEST comes from cmake/PyhostTestPythons.cmake.
# - Every file name ending in .md that the text mentions exists, next to the page or at
#   the project root.
file(GLOB pages "${SRC}/docs/*.md")
list(PREPEND pages "${SRC}/README.md")
string(REPLACE "." "\\." floor_re "${FLOOR}")
set(problems "")
foreach(page IN LISTS pages)
  file(RELATIVE_PATH rel "${SRC}" "${page}")
  get_filename_component(dir "${page}" DIRECTORY)
  file(STRINGS "${page}" lines)
  foreach(line IN LISTS lines)
    string(REGEX MATCHALL "${floor_re}( to | through |-|–)3\\.[0-9]+" ranges "${line}")
    foreach(r IN LISTS ranges)
      string(REGEX MATCH "3\\.[0-9]+$" last "${r}")
      if(NOT last STREQUAL NEWEST)
        string(APPEND problems "\n${rel}: \"${r}\" should end at ${NEWEST}, the newest tested minor: ${line}")
      endif()
    endforeach()
    string(REGEX MATCHALL "[A-Za-z0-9_./-]+\\.md" names "${line}")
    foreach(name IN LISTS names)
      if(NOT EXISTS "${dir}/${name}" AND NOT EXISTS "${SRC}/${name}")
        string(APPEND problems "\n${rel}: mentions ${name}, which does not exist: ${line}")
      endif()
    endforeach()
  endforeach()
endforeach()
if(problems)
  message(FATAL_ERROR "stale documentation:${problems}")
endif()
list(LENGTH pages count)
message(STATUS "${count} pages checked: version ranges end at ${NEWEST}, every .md named exists")
