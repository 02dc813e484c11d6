# AArch64: code cross-compiled and executed under qemu-aarch64. Included by
# the top-level CMakeLists.txt when JITLOCK_ENABLE_AARCH64 is on, before
# unittests/ and test/, which run what it builds:
#
#   lib/Runtime, test/AArch64/Harness, unittests/Emitters/A64*
#     --aarch64-linux-gnu-g++ (cmake/aarch64-cross, an ExternalProject)-->
#   the runtime and the harnesses (static libraries), the probe, and
#   jitlock-a64-emitter-tests
#
# unittests/Emitters runs jitlock-a64-emitter-tests under qemu (CTest, labels
# aarch64 and asmjit). The lit tests in test/AArch64 lower, compile, link
# with the harnesses and run code under qemu, and test/Emitters/AArch64
# disassembles what the emitters wrote (test/lit.cfg.py: the aarch64-exec
# feature and its substitutions).
#
# Sets, for those directories:
#   JITLOCK_AARCH64_CXX         the cross compiler (which links the tests)
#   JITLOCK_QEMU_AARCH64        qemu-aarch64
#   JITLOCK_AARCH64_DIR         what the cross build writes: the libraries,
#                               the probe and the emitter tests
#   JITLOCK_AARCH64_GTEST       Debian's arm64 libgtest.a
#   JITLOCK_AARCH64_OUTPUTS     the files the tests need
# and the target jitlock_aarch64 (built by `all`).

macro(jitlock_require_program var program debian_package)
  find_program(${var} ${program} ${ARGN})
  if(NOT ${var})
    message(FATAL_ERROR
      "jitlock: required program '${program}' was not found.\n"
      "Install the Debian package '${debian_package}' "
      "(apt-get install ${debian_package}), or run scripts/install-deps.sh; "
      "or configure with -DJITLOCK_ENABLE_AARCH64=OFF to skip the AArch64 "
      "tests.")
  endif()
endmacro()

jitlock_require_program(JITLOCK_AARCH64_CXX aarch64-linux-gnu-g++ g++-aarch64-linux-gnu)
jitlock_require_program(JITLOCK_QEMU_AARCH64 qemu-aarch64 qemu-user)
# The lit tests' tools beyond opt, llc and FileCheck.
foreach(tool llvm-objdump llvm-mc)
  string(TOUPPER "JITLOCK_${tool}" var)
  string(REPLACE "-" "_" var "${var}")
  jitlock_require_program(${var} ${tool} llvm-19
    HINTS ${LLVM_TOOLS_BINARY_DIR} NO_DEFAULT_PATH)
endforeach()

# The cross build needs Debian's arm64 asmjit and GoogleTest (multiarch). Say
# so now rather than fail in the middle of the build.
set(multiarch_dir "/usr/lib/aarch64-linux-gnu")
foreach(lib libasmjit.a libgtest.a)
  if(NOT EXISTS "${multiarch_dir}/${lib}")
    message(FATAL_ERROR
      "jitlock: ${multiarch_dir}/${lib} is missing: the AArch64 tests need "
      "Debian's arm64 asmjit and GoogleTest. Run scripts/install-deps.sh, "
      "or: dpkg --add-architecture arm64 && apt-get update && apt-get "
      "install libasmjit-dev:arm64 libgtest-dev:arm64; or configure with "
      "-DJITLOCK_ENABLE_AARCH64=OFF.")
  endif()
endforeach()
set(JITLOCK_AARCH64_GTEST "${multiarch_dir}/libgtest.a")

include(ExternalProject)
set(JITLOCK_AARCH64_DIR "${PROJECT_BINARY_DIR}/aarch64-cross")
set(JITLOCK_AARCH64_OUTPUTS "")
foreach(lib rt_aarch64 aarch64_harness aarch64_stackbang_harness
            aarch64_safepoint_harness aarch64_detached_harness
            aarch64_deopt_harness)
  list(APPEND JITLOCK_AARCH64_OUTPUTS "${JITLOCK_AARCH64_DIR}/libjitlock_${lib}.a")
endforeach()
list(APPEND JITLOCK_AARCH64_OUTPUTS
  "${JITLOCK_AARCH64_DIR}/jitlock-aarch64-probe"
  "${JITLOCK_AARCH64_DIR}/jitlock-a64-emitter-tests"
  "${JITLOCK_AARCH64_DIR}/jitlock-a64-exit-race-test")
ExternalProject_Add(jitlock_aarch64_cross
  SOURCE_DIR "${PROJECT_SOURCE_DIR}/cmake/aarch64-cross"
  BINARY_DIR "${JITLOCK_AARCH64_DIR}"
  # Stamps inside the build directory: deleting it rebuilds from scratch.
  STAMP_DIR "${JITLOCK_AARCH64_DIR}/stamp"
  TMP_DIR "${JITLOCK_AARCH64_DIR}/tmp"
  CMAKE_ARGS
    "-DCMAKE_TOOLCHAIN_FILE=${PROJECT_SOURCE_DIR}/cmake/aarch64-linux-gnu.cmake"
    "-DCMAKE_CXX_COMPILER=${JITLOCK_AARCH64_CXX}"
    "-DCMAKE_BUILD_TYPE=RelWithDebInfo"
    "-DJITLOCK_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
    "-DJITLOCK_LLVM_INCLUDE_DIR=${LLVM_INCLUDE_DIRS}"
  # Rebuilt (incrementally) on every build, so that edits to lib/Runtime or
  # the harnesses reach the AArch64 libraries.
  BUILD_ALWAYS ON
  CONFIGURE_HANDLED_BY_BUILD ON
  BUILD_BYPRODUCTS ${JITLOCK_AARCH64_OUTPUTS}
  INSTALL_COMMAND "")
add_custom_target(jitlock_aarch64 ALL DEPENDS jitlock_aarch64_cross)
