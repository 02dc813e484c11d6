# How the jitlock libraries and tools are declared, once.

# jitlock_add_library(<target> EXPORT <name> SOURCES <files>... LINK <libs>...
#                     [LLVM])
# A static library installed as jitlock::<name>, whose users get the
# repository's (or the installed) include/. LLVM: it compiles against LLVM's
# headers, so it follows LLVM's RTTI setting.
function(jitlock_add_library target)
  cmake_parse_arguments(ARG "LLVM" "EXPORT" "SOURCES;LINK" ${ARGN})
  add_library(${target} STATIC ${ARG_SOURCES})
  target_include_directories(${target} PUBLIC
    "$<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>"
    "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>")
  if(ARG_LLVM AND NOT LLVM_ENABLE_RTTI)
    target_compile_options(${target} PRIVATE -fno-rtti)
  endif()
  target_link_libraries(${target} PUBLIC ${ARG_LINK})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${ARG_EXPORT})
  add_library(jitlock::${ARG_EXPORT} ALIAS ${target})
endfunction()

# jitlock_add_tool(<target> SOURCES <files>... LINK <libs>...)
# A tool of tools/: its command line and diagnostics come from tools/common
# (jitlock_tool_support, which brings LLVM), so it follows LLVM's RTTI
# setting.
function(jitlock_add_tool target)
  cmake_parse_arguments(ARG "" "" "SOURCES;LINK" ${ARGN})
  add_executable(${target} ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE jitlock_tool_support ${ARG_LINK})
  if(NOT LLVM_ENABLE_RTTI)
    target_compile_options(${target} PRIVATE -fno-rtti)
  endif()
endfunction()
