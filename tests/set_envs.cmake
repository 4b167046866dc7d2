# set_envs.cmake: included by the -P test scripts: ENVS ("VAR=value@@...") into this
# process's environment, which the commands they run inherit.
string(REPLACE "@@" ";" ENVS "${ENVS}")
foreach(kv IN LISTS ENVS)
  if(kv MATCHES "^([^=]+)=(.*)$")
    set(ENV{${CMAKE_MATCH_1}} "${CMAKE_MATCH_2}")
  endif()
endforeach()
