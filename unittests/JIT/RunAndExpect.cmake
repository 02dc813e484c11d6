# Runs COMMAND (arguments separated by '|') and fails unless it exits with
# EXPECT_STATUS (a crash is never a number) and its stderr matches
# EXPECT_REGEX; when EXPECT_STDOUT is given, its stdout must match that too.
string(REPLACE "|" ";" cmd "${COMMAND}")
execute_process(COMMAND ${cmd}
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
message("${err}")
if(NOT "${status}" STREQUAL "${EXPECT_STATUS}")
  message(FATAL_ERROR "exit status '${status}', expected ${EXPECT_STATUS}")
endif()
if(NOT err MATCHES "${EXPECT_REGEX}")
  message(FATAL_ERROR "stderr does not match '${EXPECT_REGEX}'")
endif()
if(DEFINED EXPECT_STDOUT AND NOT out MATCHES "${EXPECT_STDOUT}")
  message(FATAL_ERROR "stdout does not match '${EXPECT_STDOUT}'")
endif()
