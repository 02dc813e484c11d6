# Install rules and the CMake package (included by the top-level
# CMakeLists.txt when JITLOCK_INSTALL is on). Everything installed is
# relocatable: paths are relative to the install prefix, and the libraries'
# external dependencies are found again by jitlockConfig.cmake on the user's
# machine. docs/embedding.md shows the three ways to consume it.
#
#   include/jitlock/*.h, *.def               the public headers
#   lib/libjitlock_rt.a, libjitlock_rt.so.*   the runtime, static and shared
#   lib/libjitlock_{emitters,passes,jit,deopt}.a  the C++ libraries
#   lib/JitlockPlugin.so                      the pass plugin (opt, clang)
#   lib/cmake/jitlock/                        find_package(jitlock CONFIG),
#                                             with components
#   lib/pkgconfig/jitlock.pc                  pkg-config, the shared runtime
#   lib/pkgconfig/jitlock-static.pc           pkg-config, the static runtime
#   share/jitlock/examples/*.ll               the example modules
#                                             (jitlock-run's input)
#   bin/                                      the tools that were built
#
# (lib is CMAKE_INSTALL_LIBDIR.)

include(CMakePackageConfigHelpers)

set(JITLOCK_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/jitlock")

install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/jitlock"
  DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
  COMPONENT jitlock_development
  FILES_MATCHING PATTERN "*.h" PATTERN "*.def")

# The exported targets, as jitlock::<EXPORT_NAME>: rt, rt_shared, emitters,
# and with LLVM passes, jit, deopt, plugin and llvm (LLVM's usage
# requirements, which the config completes).
set(exported jitlock_rt jitlock_rt_shared jitlock_emitters)
if(JITLOCK_ENABLE_LLVM)
  list(APPEND exported jitlock_llvm jitlock_passes jitlock_jit jitlock_deopt
    JitlockPlugin)
endif()
install(TARGETS ${exported}
  EXPORT jitlockTargets
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT jitlock_development
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT jitlock_runtime
          NAMELINK_COMPONENT jitlock_development
  RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT jitlock_runtime)
install(EXPORT jitlockTargets
  NAMESPACE jitlock::
  DESTINATION "${JITLOCK_CMAKE_DIR}"
  COMPONENT jitlock_development)

# The tools that were built. jitlock-run and jitlock-bench link libLLVM,
# which may live outside the loader's default path: keep that directory,
# never a build directory, in their run path.
foreach(tool jitlock-run jitlock-bench jitlock-baseline jitlock-demo)
  if(TARGET ${tool})
    set_target_properties(${tool} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
    install(TARGETS ${tool}
      RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT jitlock_tools)
  endif()
endforeach()

configure_package_config_file(
  "${CMAKE_CURRENT_LIST_DIR}/jitlockConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/jitlockConfig.cmake"
  INSTALL_DESTINATION "${JITLOCK_CMAKE_DIR}"
  NO_SET_AND_CHECK_MACRO)
# 0.x: a minor release may change the C++ interfaces.
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/jitlockConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES
  "${PROJECT_BINARY_DIR}/jitlockConfig.cmake"
  "${PROJECT_BINARY_DIR}/jitlockConfigVersion.cmake"
  DESTINATION "${JITLOCK_CMAKE_DIR}"
  COMPONENT jitlock_development)

# pkg-config, for C users of the shared runtime. The prefix is computed from
# the .pc file's own location (${pcfiledir}), so the package can be moved.
set(pc_file_dir "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(JITLOCK_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH up "/root/${pc_file_dir}" "/root")
  string(REGEX REPLACE "/$" "" up "${up}")
  set(JITLOCK_PC_PREFIX "\${pcfiledir}/${up}")
endif()
configure_file("${CMAKE_CURRENT_LIST_DIR}/jitlock.pc.in"
  "${PROJECT_BINARY_DIR}/jitlock.pc" @ONLY)
configure_file("${CMAKE_CURRENT_LIST_DIR}/jitlock-static.pc.in"
  "${PROJECT_BINARY_DIR}/jitlock-static.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/jitlock.pc"
  "${PROJECT_BINARY_DIR}/jitlock-static.pc"
  DESTINATION "${pc_file_dir}"
  COMPONENT jitlock_development)

# The example modules, for jitlock-run and as a frontend's reference.
install(DIRECTORY "${PROJECT_SOURCE_DIR}/examples/"
  DESTINATION "${CMAKE_INSTALL_DATADIR}/jitlock/examples"
  COMPONENT jitlock_development
  FILES_MATCHING PATTERN "*.ll"
  PATTERN "embedding" EXCLUDE)

# The build tree as a package too (jitlock_DIR=<build>), for trying a
# consumer against a build without installing it.
export(EXPORT jitlockTargets NAMESPACE jitlock::
  FILE "${PROJECT_BINARY_DIR}/jitlockTargets.cmake")
