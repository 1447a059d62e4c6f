# Installs a nonlin build tree into a fresh prefix (a test fixture for the find_package test).
# Usage: cmake -DBUILD_DIR=<build> -DPREFIX=<prefix> [-DCONFIG=<config>] -P install.cmake
file(REMOVE_RECURSE "${PREFIX}")
set(config_args "")
if(CONFIG)
  set(config_args --config "${CONFIG}")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}" ${config_args}
                COMMAND_ERROR_IS_FATAL ANY)
