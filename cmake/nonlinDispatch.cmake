# nonlin_add_dispatch(<target> SOURCES <file>...)
#
# Compiles each source once per x86-64 level (x86-64-v2, -v3, -v4, with NONLIN_DISPATCH_LEVEL=2,
# 3, 4) into <target>, for nonlin::dispatch (include/nonlin/dispatch.hpp): the sources include
# <nonlin/dispatch_level.hpp> and list what the program dispatches with
# NONLIN_DISPATCH_ELEMENTWISE(F, T). The copies see <target>'s include directories and compile
# definitions. On other processors the sources are not compiled: nonlin::dispatch calls the
# caller's own build there.
function(nonlin_add_dispatch target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES")
  if(NOT arg_SOURCES)
    message(FATAL_ERROR "nonlin_add_dispatch(${target}): no SOURCES")
  endif()
  if(NOT CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
    return()
  endif()
  foreach(level 2 3 4)
    set(copy ${target}_nonlin_dispatch_v${level})
    add_library(${copy} OBJECT ${arg_SOURCES})
    target_link_libraries(${copy} PRIVATE nonlin::nonlin)
    target_include_directories(${copy}
                               PRIVATE $<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>)
    target_compile_definitions(${copy}
                               PRIVATE $<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>
                                       NONLIN_DISPATCH_LEVEL=${level})
    # After any -march of the project's flags (the last one counts).
    target_compile_options(${copy} PRIVATE -march=x86-64-v${level})
    target_sources(${target} PRIVATE $<TARGET_OBJECTS:${copy}>)
  endforeach()
endfunction()
