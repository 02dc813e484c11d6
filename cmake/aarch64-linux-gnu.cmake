# CMake toolchain file: 64-bit Arm Linux with the Debian cross compiler
# (package g++-aarch64-linux-gnu), running what it builds under qemu-aarch64
# (package qemu-user).
#
#   cmake -S cmake/aarch64-cross -B build/aarch64 \
#         --toolchain "$PWD/cmake/aarch64-linux-gnu.cmake"   # an absolute path
#
# cmake/JitlockAArch64.cmake builds the AArch64 runtime, harnesses and
# emitter tests this way, as an ExternalProject of the host build.
# Executables are linked statically so that qemu-aarch64 runs them without an
# AArch64 sysroot (no -L needed).

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(JITLOCK_AARCH64_TRIPLE aarch64-linux-gnu)

# The host build passes the compiler it found; standalone use finds it on
# PATH.
if(NOT CMAKE_C_COMPILER)
  set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
endif()
if(NOT CMAKE_CXX_COMPILER)
  set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
endif()

# Headers and libraries from the cross sysroot only; programs from the host.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")

# try_run and add_test run AArch64 executables through qemu. `-cpu max`
# enables every extension qemu emulates, LSE atomics (ARMv8.1) among them.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -cpu max)
