# The pkg-config route: `pkg-config --cflags nonlin` from the installed nonlin.pc must find the
# installed headers (and xsimd's flags through Requires), and the consumer built with those and
# -std=c++20 alone must compile and run. Usage (tests/package/CMakeLists.txt):
#   cmake -DPKG_CONFIG=... -DPC_DIR=... -DCXX=... -DSOURCE=... -DWORK_DIR=...
#         -DEXPECTED_VERSION=... -DEXPECTED_INCLUDE=... -P pkg_config.cmake
set(ENV{PKG_CONFIG_PATH} "${PC_DIR}")
execute_process(COMMAND "${PKG_CONFIG}" --modversion nonlin
                OUTPUT_VARIABLE version OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
if(NOT version STREQUAL EXPECTED_VERSION)
  message(FATAL_ERROR "pkg-config --modversion nonlin: ${version}, expected ${EXPECTED_VERSION}")
endif()
execute_process(COMMAND "${PKG_CONFIG}" --cflags nonlin
                OUTPUT_VARIABLE cflags OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
separate_arguments(cflags UNIX_COMMAND "${cflags}")
# The relocatable prefix (${pcfiledir}/../..) must name the installed include directory.
set(found_include "")
foreach(flag IN LISTS cflags)
  if(flag MATCHES "^-I(.*)")
    file(REAL_PATH "${CMAKE_MATCH_1}" found_include)
  endif()
endforeach()
file(REAL_PATH "${EXPECTED_INCLUDE}" expected_include)
if(NOT found_include STREQUAL expected_include)
  message(FATAL_ERROR "pkg-config --cflags nonlin: '${cflags}' does not name ${expected_include}")
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
execute_process(COMMAND "${CXX}" -std=c++20 ${cflags} "${SOURCE}" -o "${WORK_DIR}/consumer"
                COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND "${WORK_DIR}/consumer" OUTPUT_VARIABLE out COMMAND_ERROR_IS_FATAL ANY)
if(NOT out MATCHES "nonlin ${EXPECTED_VERSION}")
  message(FATAL_ERROR "consumer printed '${out}', expected nonlin ${EXPECTED_VERSION}")
endif()
message(STATUS "pkg-config: ${cflags} -> ${out}")
