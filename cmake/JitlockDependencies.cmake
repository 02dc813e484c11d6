# Finds every external dependency with find_package. A missing one stops the
# configure step with a message that names the Debian package to install.
# Only what the chosen parts need is looked for: the libraries need Threads,
# asmjit and (JITLOCK_ENABLE_LLVM) LLVM 19; GoogleTest, lit and FileCheck
# are for JITLOCK_BUILD_TESTS, Google Benchmark for JITLOCK_BUILD_BENCHMARKS.
# cmake/jitlockConfig.cmake.in finds the libraries' own dependencies again
# for an installed jitlock.

# A macro, not a function, so that the package's variables reach the caller.
macro(jitlock_require_package name debian_package)
  find_package(${name} ${ARGN} QUIET)
  if(NOT ${name}_FOUND)
    message(FATAL_ERROR
      "jitlock: required dependency '${name}' was not found.\n"
      "Install the Debian package '${debian_package}' "
      "(apt-get install ${debian_package}), or run scripts/install-deps.sh.")
  endif()
endmacro()

find_package(Threads REQUIRED)

# asmjit: the baseline-tier emitters.
jitlock_require_package(asmjit libasmjit-dev CONFIG)

# GoogleTest: unit tests.
if(JITLOCK_BUILD_TESTS)
  jitlock_require_package(GTest libgtest-dev)
endif()

# Google Benchmark: jitlock-bench, which also needs LLVM.
if(JITLOCK_BUILD_BENCHMARKS AND JITLOCK_ENABLE_LLVM)
  jitlock_require_package(benchmark libbenchmark-dev)
endif()

# LLVM 19: the passes, the plugin, the JIT library; the lit tools (FileCheck,
# not) for the tests.
if(JITLOCK_ENABLE_LLVM)
  jitlock_require_package(LLVM llvm-19-dev 19.1 CONFIG
    HINTS /usr/lib/llvm-19/lib/cmake/llvm)
  message(STATUS "jitlock: LLVM ${LLVM_PACKAGE_VERSION} in ${LLVM_DIR}")
  # LLVM_DEFINITIONS is one string of -D flags; a list of bare definitions
  # serves target_compile_definitions.
  separate_arguments(JITLOCK_LLVM_DEFINITIONS UNIX_COMMAND
    "${LLVM_DEFINITIONS}")
  list(TRANSFORM JITLOCK_LLVM_DEFINITIONS REPLACE "^-D" "")
  if(JITLOCK_BUILD_TESTS)
    find_program(JITLOCK_FILECHECK FileCheck HINTS ${LLVM_TOOLS_BINARY_DIR} NO_DEFAULT_PATH)
    find_file(JITLOCK_LIT lit.py HINTS /usr/lib/llvm-19/build/utils/lit NO_DEFAULT_PATH)
    if(NOT JITLOCK_FILECHECK OR NOT JITLOCK_LIT)
      message(FATAL_ERROR
        "jitlock: FileCheck or lit.py from LLVM 19 was not found.\n"
        "Install the Debian package 'llvm-19-tools' (apt-get install llvm-19-tools).")
    endif()
  endif()
endif()
