# opt -load-pass-plugin=PLUGIN -passes=PASSES lowers INPUT ahead of time into
# OUTPUT; jitlock-run must then exit with EXPECT_STATUS (0: accepted and the
# invariant held; 2: refused). A crash is never a number.
execute_process(
  COMMAND ${OPT} -load-pass-plugin=${PLUGIN} "-passes=${PASSES}"
          ${INPUT} -o ${OUTPUT}
  RESULT_VARIABLE status ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "opt failed (${status}): ${err}")
endif()
execute_process(COMMAND ${RUN} --threads 4 ${OUTPUT}
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT "${status}" STREQUAL "${EXPECT_STATUS}")
  message(FATAL_ERROR "jitlock-run exited with '${status}', expected ${EXPECT_STATUS}")
endif()
