# The install test (cmake -P; unittests/Embedding/CMakeLists.txt passes the
# variables): jitlock as an outside project sees it.
#
#   1. cmake --install BUILD_DIR into WORK_DIR/staged, then move the tree to
#      WORK_DIR/prefix: the package must not depend on where it was
#      installed; no installed text file may name the build or source tree;
#      the example modules are under share/jitlock/examples, and the
#      installed jitlock-run runs one; every installed tool prints jitlock's
#      version with --version;
#   2. examples/embedding/orc-lljit and asmjit-baseline: configured with
#      CMAKE_PREFIX_PATH=<prefix> (and no package registry), which must find
#      jitlock there, built, and run; each prints OK and exits 0 (the asmjit
#      one after recovering from a deliberate stack overflow);
#      Inputs/deopt-consumer (jitlock::deopt) likewise, and
#      Inputs/components-consumer (COMPONENTS rt emitters) with LLVM out of
#      reach;
#   3. C_CONSUMER compiled exactly as the README writes it,
#      `cc c-consumer.c $(pkg-config --cflags --libs jitlock)` with
#      PKG_CONFIG_LIBDIR=<prefix>/lib/pkgconfig, and run with nothing else
#      (the run path finds the shared runtime, whose SONAME carries the ABI
#      version); again with jitlock-static, which must not need the shared
#      runtime; then compiled with PLUGIN_C_COMPILER (LLVM 19's clang, when
#      there is one) and -fpass-plugin=<plugindir>/JitlockPlugin.so, which
#      lowers its jitlock.monitor.* calls ahead of time (and adds the layout
#      check), and run; finally the lowered source compiled without the
#      plugin: it links, and stops at its first monitor operation with a
#      message that says how to lower it.

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

foreach(module counter bank prodcons)
  if(NOT EXISTS "${prefix}/share/jitlock/examples/${module}.ll")
    message(FATAL_ERROR "no share/jitlock/examples/${module}.ll in ${prefix}")
  endif()
endforeach()
file(GLOB installed_tools "${prefix}/bin/jitlock-*")
foreach(tool IN LISTS installed_tools)
  get_filename_component(name "${tool}" NAME)
  run("${name} --version" "${tool}" --version)
  if(NOT run_output MATCHES "^${name} \\(jitlock [0-9]+\\.[0-9]+\\.[0-9]+\\), runtime C ABI [0-9]+\\.[0-9]+\n")
    message(FATAL_ERROR "${name} --version printed:\n${run_output}")
  endif()
endforeach()
if(EXISTS "${prefix}/bin/jitlock-run")
  run("jitlock-run on an installed example" "${prefix}/bin/jitlock-run"
      --threads 2 --iterations 1000 "${prefix}/share/jitlock/examples/counter.ll")
endif()

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

set(inputs "${CMAKE_CURRENT_LIST_DIR}/Inputs")
set(src_orc-lljit "${SOURCE_DIR}/examples/embedding/orc-lljit")
set(src_asmjit-baseline "${SOURCE_DIR}/examples/embedding/asmjit-baseline")
set(src_deopt-consumer "${inputs}/deopt-consumer")
set(src_components-consumer "${inputs}/components-consumer")
# The runtime and the emitters need no LLVM: none may be found.
set(args_components-consumer -DLLVM_DIR=/nonexistent
  -DCMAKE_DISABLE_FIND_PACKAGE_LLVM=ON)
set(exe_deopt-consumer deopt-consumer)
set(exe_components-consumer components-consumer)
foreach(example orc-lljit asmjit-baseline deopt-consumer components-consumer)
  set(src "${src_${example}}")
  set(bin "${WORK_DIR}/${example}")
  set(exe "${example}-example")
  if(DEFINED exe_${example})
    set(exe "${exe_${example}}")
  endif()
  run("configuring ${example}" "${CMAKE_COMMAND}" -S "${src}" -B "${bin}"
      ${configure_args} ${args_${example}})
  # The package came from the prefix, not from the build tree.
  file(STRINGS "${bin}/CMakeCache.txt" found REGEX "^jitlock_DIR:")
  if(NOT found STREQUAL "jitlock_DIR:PATH=${prefix}/lib/cmake/jitlock")
    message(FATAL_ERROR "${example} found jitlock elsewhere: ${found}")
  endif()
  run("building ${example}" "${CMAKE_COMMAND}" --build "${bin}" --parallel 2)
  run("running ${example}" "${bin}/${exe}")
  message(STATUS "${example}:\n${run_output}")
  if(NOT run_output MATCHES "\nOK\n$")
    message(FATAL_ERROR "${example} did not print OK")
  endif()
endforeach()

#===-- 3. C through pkg-config, plain and lowered by the plugin ------------===#

# Only the prefix's .pc files: no jitlock installed on the machine can
# answer instead. `sh -c` runs the README's command lines as they are.
set(pkg_env "PKG_CONFIG_LIBDIR=${prefix}/lib/pkgconfig" PKG_CONFIG_PATH=
            "PKG_CONFIG=${PKG_CONFIG}")
set(pkg "${CMAKE_COMMAND}" -E env ${pkg_env} "${PKG_CONFIG}")
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
find_program(READELF readelf)

# compile_as_readme(<what> <exe> <cc> <package> <extra flags>...): compiles
# C_CONSUMER with `<cc> <extra> c-consumer.c $(pkg-config --cflags --libs
# <package>) -o <exe>` through the shell, as a user types it.
function(compile_as_readme what exe cc package)
  string(JOIN " " extra ${ARGN})
  run("compiling the C consumer (${what})" "${CMAKE_COMMAND}" -E env
      ${pkg_env} sh -c
      "\"${cc}\" -O2 -Wall -Werror ${extra} \"${C_CONSUMER}\" \$(\"\$PKG_CONFIG\" --cflags --libs ${package}) -o \"${exe}\"")
endfunction()

if(NOT EXISTS "${plugindir}/JitlockPlugin.so")
  message(FATAL_ERROR "no JitlockPlugin.so in ${plugindir}")
endif()
set(variants plain static)
if(PLUGIN_C_COMPILER)
  list(APPEND variants lowered unlowered)
endif()
foreach(variant IN LISTS variants)
  set(exe "${WORK_DIR}/c-consumer-${variant}")
  if(variant STREQUAL "plain")
    compile_as_readme(${variant} "${exe}" "${C_COMPILER}" jitlock)
  elseif(variant STREQUAL "static")
    compile_as_readme(${variant} "${exe}" "${C_COMPILER}" jitlock-static)
  elseif(variant STREQUAL "lowered")
    compile_as_readme(${variant} "${exe}" "${PLUGIN_C_COMPILER}" jitlock
      "-fpass-plugin=${plugindir}/JitlockPlugin.so" -DJITLOCK_LOWERED)
  else()
    # The lowered source, the plugin forgotten.
    compile_as_readme(${variant} "${exe}" "${C_COMPILER}" jitlock
      -DJITLOCK_LOWERED)
  endif()
  if(READELF)
    execute_process(COMMAND "${READELF}" -d "${exe}" OUTPUT_VARIABLE dynamic)
    string(FIND "${dynamic}" "libjitlock_rt.so" needs_shared)
    if(variant STREQUAL "static" AND NOT needs_shared EQUAL -1)
      message(FATAL_ERROR "the jitlock-static consumer needs the shared "
        "runtime:\n${dynamic}")
    elseif(NOT variant STREQUAL "static" AND needs_shared EQUAL -1)
      message(FATAL_ERROR "the ${variant} consumer does not link the shared "
        "runtime:\n${dynamic}")
    endif()
  endif()
  # Nothing but the binary: no LD_LIBRARY_PATH, no extra run path.
  if(variant STREQUAL "unlowered")
    execute_process(COMMAND "${exe}" RESULT_VARIABLE rc
      OUTPUT_VARIABLE out ERROR_VARIABLE out)
    if(rc EQUAL 0 OR NOT out MATCHES
        "jitlock\\.monitor\\.enter was called, but this code was never lowered by the jitlock passes: compile it with -fpass-plugin=")
      message(FATAL_ERROR "the unlowered C consumer should stop with a "
        "message that says how to lower it; it exited with ${rc}:\n${out}")
    endif()
    message(STATUS "C consumer (unlowered) stops as it should:\n${out}")
    continue()
  endif()
  run("running the C consumer (${variant})" "${exe}")
  message(STATUS "C consumer (${variant}):\n${run_output}")
  if(NOT run_output MATCHES "\nOK\n$")
    message(FATAL_ERROR "the C consumer (${variant}) did not print OK")
  endif()
endforeach()
