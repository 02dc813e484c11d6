# Lowers one example module with opt and the jitlock plugin, then adds the
# constants the harness checks before it runs anything:
#
#   @jitlock_lowered_layout      the "jitlock.lowered-layout" module flag
#   @jitlock_lowered_thread      the thread mode: "tls" or "call"
#   @jitlock_lowered_tls_offset  the tls-offset compiled in (0 for call)
#
#   cmake -DOPT=<opt> -DPLUGIN=<JitlockPlugin.so> -DINPUT=<x.ll> -DOUTPUT=<y.ll>
#         -DTHREAD=tls|call [-DTLS_OFFSET_FILE=<file>] [-DTLS_OFFSET_SKEW=N]
#         [-DEXTRA_PARAMS=key=value,...] -P LowerExample.cmake
#
# thread=tls reads the offset from TLS_OFFSET_FILE (written by
# ProbeTlsOffset.cmake). TLS_OFFSET_SKEW and EXTRA_PARAMS exist for the
# tests that check that the harness refuses code lowered for something else.
foreach(var OPT PLUGIN INPUT OUTPUT THREAD)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "LowerExample.cmake: -D${var}=... is required")
  endif()
endforeach()

set(params "thread=${THREAD}")
set(tls_offset 0)
if(THREAD STREQUAL "tls")
  if(NOT DEFINED TLS_OFFSET_FILE)
    message(FATAL_ERROR "LowerExample.cmake: thread=tls needs -DTLS_OFFSET_FILE")
  endif()
  file(READ "${TLS_OFFSET_FILE}" tls_offset)
  string(STRIP "${tls_offset}" tls_offset)
  if(DEFINED TLS_OFFSET_SKEW)
    math(EXPR tls_offset "${tls_offset} + (${TLS_OFFSET_SKEW})")
  endif()
  string(APPEND params ";tls-offset=${tls_offset}")
elseif(NOT THREAD STREQUAL "call")
  message(FATAL_ERROR "LowerExample.cmake: THREAD must be tls or call, not '${THREAD}'")
endif()
if(EXTRA_PARAMS)
  string(REPLACE "," ";" extra "${EXTRA_PARAMS}")
  string(APPEND params ";${extra}")
endif()

string(RANDOM LENGTH 8 tag)
set(tmp "${OUTPUT}.${tag}.tmp")
execute_process(
  COMMAND "${OPT}" "-load-pass-plugin=${PLUGIN}" "-passes=jitlock-lower<${params}>"
          -S "${INPUT}" -o "${tmp}"
  RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  file(REMOVE "${tmp}")
  message(FATAL_ERROR "LowerExample.cmake: opt -passes='jitlock-lower<${params}>' "
    "${INPUT} failed (${rc}):\n${err}")
endif()

file(READ "${tmp}" ir)
file(REMOVE "${tmp}")
if(NOT ir MATCHES "!\"jitlock\\.lowered-layout\", !\"([^\"\\\\]*)\"")
  message(FATAL_ERROR "LowerExample.cmake: ${INPUT} lowered with '${params}' "
    "carries no jitlock.lowered-layout module flag (no monitor operations?)")
endif()
set(stamp "${CMAKE_MATCH_1}")
string(LENGTH "${stamp}" stamp_len)
math(EXPR stamp_size "${stamp_len} + 1")
string(LENGTH "${THREAD}" thread_len)
math(EXPR thread_size "${thread_len} + 1")

string(APPEND ir "
; Added by aarch64/LowerExample.cmake (jitlock-lower<${params}>): what this
; module was lowered for. aarch64/harness.cpp refuses to run it on a runtime
; whose layout or TLS offset differs.
@jitlock_lowered_layout = constant [${stamp_size} x i8] c\"${stamp}\\00\"
@jitlock_lowered_thread = constant [${thread_size} x i8] c\"${THREAD}\\00\"
@jitlock_lowered_tls_offset = constant i64 ${tls_offset}
")
file(WRITE "${OUTPUT}" "${ir}")
