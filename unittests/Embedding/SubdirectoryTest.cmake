# The add_subdirectory test (cmake -P; unittests/Embedding/CMakeLists.txt
# passes the variables): a parent project that adds the jitlock source tree
# with add_subdirectory and the default options.
#
#   * it configures with GoogleTest and Google Benchmark made unfindable
#     (CMAKE_DISABLE_FIND_PACKAGE_*): the libraries need neither;
#   * the parent's CMAKE_BUILD_TYPE (Debug) is kept, and the AArch64 tests
#     are off;
#   * every jitlock:: target exists under the name the installed package
#     gives it;
#   * the parent's CTest lists only the parent's test, which runs a C program
#     linked with jitlock::rt, also with JITLOCK_BUILD_TOOLS on.

cmake_minimum_required(VERSION 3.25)

foreach(var SOURCE_DIR WORK_DIR GENERATOR C_COMPILER CXX_COMPILER C_CONSUMER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "SubdirectoryTest.cmake: ${var} is not set")
  endif()
endforeach()

include("${CMAKE_CURRENT_LIST_DIR}/RunCommand.cmake")

file(REMOVE_RECURSE "${WORK_DIR}")
set(parent "${WORK_DIR}/parent")
set(bin "${WORK_DIR}/build")
file(MAKE_DIRECTORY "${parent}")
file(WRITE "${parent}/CMakeLists.txt" "
cmake_minimum_required(VERSION 3.25)
project(parent LANGUAGES C CXX)
enable_testing()
add_subdirectory(\"${SOURCE_DIR}\" jitlock)
foreach(target jitlock::rt jitlock::rt_shared jitlock::emitters
               jitlock::passes jitlock::jit jitlock::plugin)
  if(NOT TARGET \${target})
    message(FATAL_ERROR \"no target \${target}\")
  endif()
endforeach()
add_executable(consumer \"${C_CONSUMER}\")
target_link_libraries(consumer PRIVATE jitlock::rt)
add_test(NAME parent_consumer COMMAND consumer)
")

set(configure_args -G "${GENERATOR}"
  "-DCMAKE_C_COMPILER=${C_COMPILER}"
  "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
  -DCMAKE_BUILD_TYPE=Debug
  -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON
  -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON)
if(MAKE_PROGRAM)
  list(APPEND configure_args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
run("configuring the parent" "${CMAKE_COMMAND}" -S "${parent}" -B "${bin}"
    ${configure_args})

file(STRINGS "${bin}/CMakeCache.txt" cache
  REGEX "^(CMAKE_BUILD_TYPE|JITLOCK_[A-Z_]+):")
foreach(expected "CMAKE_BUILD_TYPE:STRING=Debug"
                 "JITLOCK_BUILD_TESTS:BOOL=OFF"
                 "JITLOCK_BUILD_TOOLS:BOOL=OFF"
                 "JITLOCK_BUILD_BENCHMARKS:BOOL=OFF"
                 "JITLOCK_INSTALL:BOOL=OFF")
  if(NOT expected IN_LIST cache)
    message(FATAL_ERROR "expected ${expected} in the parent's cache:\n"
      "${cache}")
  endif()
endforeach()
# A dependent option that is off is not in the cache at all, or is OFF.
foreach(line IN LISTS cache)
  if(line MATCHES "^JITLOCK_ENABLE_AARCH64:.*=ON$")
    message(FATAL_ERROR "the AArch64 tests are on in a parent project")
  endif()
endforeach()

run("listing the parent's tests" "${CMAKE_COMMAND}" -E chdir "${bin}"
    "${CMAKE_CTEST_COMMAND}" -N)
if(NOT run_output MATCHES "Total Tests: 1\n")
  message(FATAL_ERROR "the parent's CTest lists other tests:\n${run_output}")
endif()

# With the tools on (their smoke tests are jitlock's tests), still only the
# parent's test: jitlock registers tests only with JITLOCK_BUILD_TESTS.
run("configuring the parent with the tools" "${CMAKE_COMMAND}" -S "${parent}"
    -B "${bin}-tools" ${configure_args} -DJITLOCK_BUILD_TOOLS=ON)
run("listing the parent's tests" "${CMAKE_COMMAND}" -E chdir "${bin}-tools"
    "${CMAKE_CTEST_COMMAND}" -N)
if(NOT run_output MATCHES "Total Tests: 1\n")
  message(FATAL_ERROR "with JITLOCK_BUILD_TOOLS, the parent's CTest lists "
    "other tests:\n${run_output}")
endif()

run("building the consumer" "${CMAKE_COMMAND}" --build "${bin}"
    --target consumer --parallel 2)
run("running the parent's test" "${CMAKE_COMMAND}" -E chdir "${bin}"
    "${CMAKE_CTEST_COMMAND}" --output-on-failure)
message(STATUS "${run_output}")
