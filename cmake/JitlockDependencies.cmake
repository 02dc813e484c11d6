# Finds every external dependency with find_package. A missing one stops the
# configure step with a message that names the Debian package to install.

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

# GoogleTest: unit tests.
jitlock_require_package(GTest libgtest-dev)

# asmjit: the baseline-tier emitters.
jitlock_require_package(asmjit libasmjit-dev)

# Google Benchmark: jitlock-bench.
jitlock_require_package(benchmark libbenchmark-dev)

# LLVM 19: the pass plugin, the JIT driver, and the lit tools (FileCheck, not).
if(JITLOCK_ENABLE_LLVM)
  jitlock_require_package(LLVM llvm-19-dev 19.1 CONFIG
    HINTS /usr/lib/llvm-19/lib/cmake/llvm)
  message(STATUS "jitlock: LLVM ${LLVM_PACKAGE_VERSION} in ${LLVM_DIR}")
  find_program(JITLOCK_FILECHECK FileCheck HINTS ${LLVM_TOOLS_BINARY_DIR} NO_DEFAULT_PATH)
  find_file(JITLOCK_LIT lit.py HINTS /usr/lib/llvm-19/build/utils/lit NO_DEFAULT_PATH)
  if(NOT JITLOCK_FILECHECK OR NOT JITLOCK_LIT)
    message(FATAL_ERROR
      "jitlock: FileCheck or lit.py from LLVM 19 was not found.\n"
      "Install the Debian package 'llvm-19-tools' (apt-get install llvm-19-tools).")
  endif()
endif()
