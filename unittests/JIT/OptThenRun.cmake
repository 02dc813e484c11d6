# opt -load-pass-plugin=PLUGIN -passes=PASSES lowers INPUT ahead of time into
# OUTPUT; jitlock-run (with RUN_ARGS, separated by '|'; default --threads 4)
# must then exit with EXPECT_STATUS (0: accepted and the invariant held; 2:
# refused). A crash is never a number. When given, EXPECT_STDERR and
# EXPECT_STDOUT are regexes its stderr and stdout must match.
execute_process(
  COMMAND ${OPT} -load-pass-plugin=${PLUGIN} "-passes=${PASSES}"
          ${INPUT} -o ${OUTPUT}
  RESULT_VARIABLE status ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "opt failed (${status}): ${err}")
endif()
if(DEFINED RUN_ARGS)
  string(REPLACE "|" ";" run_args "${RUN_ARGS}")
else()
  set(run_args --threads 4)
endif()
execute_process(COMMAND ${RUN} ${run_args} ${OUTPUT}
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT "${status}" STREQUAL "${EXPECT_STATUS}")
  message(FATAL_ERROR "jitlock-run exited with '${status}', expected ${EXPECT_STATUS}")
endif()
if(DEFINED EXPECT_STDERR AND NOT err MATCHES "${EXPECT_STDERR}")
  message(FATAL_ERROR "stderr does not match '${EXPECT_STDERR}'")
endif()
if(DEFINED EXPECT_STDOUT AND NOT out MATCHES "${EXPECT_STDOUT}")
  message(FATAL_ERROR "stdout does not match '${EXPECT_STDOUT}'")
endif()
