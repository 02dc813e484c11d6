# The install test (cmake -P; unittests/Embedding/CMakeLists.txt passes the
# variables): jitlock as an outside project sees it.
#
#   1. cmake --install BUILD_DIR into WORK_DIR/staged, then move the tree to
#      WORK_DIR/prefix: the package must not depend on where it was
#      installed; no installed text file may name the build or source tree;
#   2. examples/embedding/orc-lljit and asmjit-baseline: configured with
#      CMAKE_PREFIX_PATH=<prefix> (and no package registry), which must find
#      jitlock there, built, and run; each prints OK and exits 0;
#   3. C_CONSUMER compiled with the flags pkg-config gives for jitlock with
#      PKG_CONFIG_LIBDIR=<prefix>/lib/pkgconfig, run against the shared
#      runtime (whose SONAME carries the ABI version), then compiled again
#      with PLUGIN_C_COMPILER (LLVM 19's clang, when there is one) and
#      -fpass-plugin=<plugindir>/JitlockPlugin.so, which lowers its
#      jitlock.monitor.* calls ahead of time, and run.

cmake_minimum_required(VERSION 3.25)

foreach(var SOURCE_DIR BUILD_DIR WORK_DIR GENERATOR C_COMPILER CXX_COMPILER
            C_CONSUMER PKG_CONFIG)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "InstallTest.cmake: ${var} is not set")
  endif()
endforeach()

include("${CMAKE_CURRENT_LIST_DIR}/RunCommand.cmake")

file(REMOVE_RECURSE "${WORK_DIR}")
set(staged "${WORK_DIR}/staged")
set(prefix "${WORK_DIR}/prefix")

#===-- 1. Install, move ----------------------------------------------------===#

run("cmake --install" "${CMAKE_COMMAND}" --install "${BUILD_DIR}"
    --prefix "${staged}")
file(RENAME "${staged}" "${prefix}")
file(GLOB_RECURSE text_files
  "${prefix}/*.cmake" "${prefix}/*.pc" "${prefix}/*.h")
if(NOT text_files)
  message(FATAL_ERROR "nothing was installed under ${prefix}")
endif()
foreach(file IN LISTS text_files)
  file(READ "${file}" text)
  foreach(path "${BUILD_DIR}" "${SOURCE_DIR}" "${staged}")
    string(FIND "${text}" "${path}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "${file} names ${path}: the package is not "
        "relocatable")
    endif()
  endforeach()
endforeach()
message(STATUS "installed and moved to ${prefix}")

#===-- 2. The examples, as outside projects --------------------------------===#

set(configure_args -G "${GENERATOR}"
  "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
  -DCMAKE_BUILD_TYPE=Release
  "-DCMAKE_PREFIX_PATH=${prefix}"
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
  -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF)
if(MAKE_PROGRAM)
  list(APPEND configure_args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()

foreach(example orc-lljit asmjit-baseline)
  set(src "${SOURCE_DIR}/examples/embedding/${example}")
  set(bin "${WORK_DIR}/${example}")
  run("configuring ${example}" "${CMAKE_COMMAND}" -S "${src}" -B "${bin}"
      ${configure_args})
  # The package came from the prefix, not from the build tree.
  file(STRINGS "${bin}/CMakeCache.txt" found REGEX "^jitlock_DIR:")
  if(NOT found STREQUAL "jitlock_DIR:PATH=${prefix}/lib/cmake/jitlock")
    message(FATAL_ERROR "${example} found jitlock elsewhere: ${found}")
  endif()
  run("building ${example}" "${CMAKE_COMMAND}" --build "${bin}" --parallel 2)
  run("running ${example}" "${bin}/${example}-example")
  message(STATUS "${example}:\n${run_output}")
  if(NOT run_output MATCHES "\nOK\n$")
    message(FATAL_ERROR "${example} did not print OK")
  endif()
endforeach()

#===-- 3. C through pkg-config, plain and lowered by the plugin ------------===#

# Only the prefix's .pc files: no jitlock installed on the machine can
# answer instead.
set(pkg "${CMAKE_COMMAND}" -E env "PKG_CONFIG_LIBDIR=${prefix}/lib/pkgconfig"
        PKG_CONFIG_PATH= "${PKG_CONFIG}")
run("pkg-config" ${pkg} --cflags --libs jitlock)
separate_arguments(pkg_flags UNIX_COMMAND "${run_output}")
run("pkg-config" ${pkg} --variable=libdir jitlock)
string(STRIP "${run_output}" libdir)
run("pkg-config" ${pkg} --variable=plugindir jitlock)
string(STRIP "${run_output}" plugindir)
run("pkg-config" ${pkg} --variable=abi_version jitlock)
string(STRIP "${run_output}" abi)
if(NOT EXISTS "${libdir}/libjitlock_rt.so.${abi}")
  message(FATAL_ERROR "no libjitlock_rt.so.${abi} (the ABI version's SONAME) "
    "in ${libdir}")
endif()

# The plugin loads into the clang of the LLVM it was built against.
set(variants "plain")
if(NOT EXISTS "${plugindir}/JitlockPlugin.so")
  message(FATAL_ERROR "no JitlockPlugin.so in ${plugindir}")
endif()
if(PLUGIN_C_COMPILER)
  list(APPEND variants "lowered")
endif()
foreach(variant IN LISTS variants)
  set(exe "${WORK_DIR}/c-consumer-${variant}")
  set(cc "${C_COMPILER}")
  set(extra)
  if(variant STREQUAL "lowered")
    set(cc "${PLUGIN_C_COMPILER}")
    set(extra "-fpass-plugin=${plugindir}/JitlockPlugin.so" -DJITLOCK_LOWERED)
  endif()
  run("compiling the C consumer (${variant})" "${cc}" -O2 -Wall
      -Werror ${extra} "${C_CONSUMER}" ${pkg_flags} "-Wl,-rpath,${libdir}"
      -o "${exe}")
  run("running the C consumer (${variant})" "${exe}")
  message(STATUS "C consumer (${variant}):\n${run_output}")
  if(NOT run_output MATCHES "\nOK\n$")
    message(FATAL_ERROR "the C consumer (${variant}) did not print OK")
  endif()
endforeach()
