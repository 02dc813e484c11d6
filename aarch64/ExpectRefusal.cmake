# Runs a harness that must refuse its example: exit status 3 and a message
# matching EXPECT on stderr. Anything else, running the example included,
# fails the test.
#
#   cmake -DQEMU=qemu-aarch64 -DHARNESS=<exe> -DEXPECT=<regex> -P ExpectRefusal.cmake
foreach(var QEMU HARNESS EXPECT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "ExpectRefusal.cmake: -D${var}=... is required")
  endif()
endforeach()

execute_process(COMMAND "${QEMU}" -cpu max "${HARNESS}" --threads 4
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc STREQUAL "3")
  message(FATAL_ERROR "expected the harness to refuse (exit status 3), got '${rc}'")
endif()
if(NOT err MATCHES "${EXPECT}")
  message(FATAL_ERROR "the refusal does not match '${EXPECT}'")
endif()
message(STATUS "refused as expected")
