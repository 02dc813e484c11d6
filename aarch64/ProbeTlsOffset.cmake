# Runs the probe (the harness without an example) under qemu and writes the
# runtime's layout.thread_tls_offset in that static AArch64 executable to
# OUTPUT. The file is rewritten only when the value changes, so relinking the
# probe does not relower every example.
#
#   cmake -DQEMU=qemu-aarch64 -DPROBE=<probe> -DOUTPUT=<file> -P ProbeTlsOffset.cmake
foreach(var QEMU PROBE OUTPUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "ProbeTlsOffset.cmake: -D${var}=... is required")
  endif()
endforeach()

execute_process(COMMAND "${QEMU}" -cpu max "${PROBE}" --print-tls-offset
  RESULT_VARIABLE rc OUTPUT_VARIABLE offset ERROR_VARIABLE err
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0 OR NOT offset MATCHES "^-?[0-9]+$")
  message(FATAL_ERROR "ProbeTlsOffset.cmake: '${QEMU} -cpu max ${PROBE} "
    "--print-tls-offset' failed (${rc}): '${offset}' ${err}")
endif()

set(old "")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
  string(STRIP "${old}" old)
endif()
if(NOT old STREQUAL offset)
  file(WRITE "${OUTPUT}" "${offset}\n")
endif()
message(STATUS "jitlock: runtime thread_tls_offset in static AArch64 executables: ${offset}")
