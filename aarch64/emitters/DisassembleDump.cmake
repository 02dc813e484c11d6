# Included by PollDisassembly.cmake and StackBangDisassembly.cmake: runs the
# AArch64 emitter tests' --dump-<what> <MODE> under qemu, disassembles the
# bytes with llvm-mc into `asm` (printed), and defines count(regex want),
# which fails unless `regex` matches `asm` exactly `want` times.
#
#   disassemble_dump(<script name> <what>)   e.g. (PollDisassembly.cmake poll)

macro(disassemble_dump script what)
  foreach(var QEMU TESTS LLVM_MC MODE OUT_DIR)
    if(NOT DEFINED ${var})
      message(FATAL_ERROR "${script}: -D${var}=... is required")
    endif()
  endforeach()

  set(hex "${OUT_DIR}/emitted.${what}.${MODE}.hex")
  execute_process(
    COMMAND ${QEMU} -cpu max "${TESTS}" --dump-${what} ${MODE}
    OUTPUT_FILE "${hex}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "--dump-${what} ${MODE} failed (${rc})")
  endif()
  execute_process(
    COMMAND "${LLVM_MC}" --disassemble -triple=aarch64-linux-gnu "${hex}"
    OUTPUT_VARIABLE asm ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR err MATCHES "invalid")
    message(FATAL_ERROR "llvm-mc failed (${rc}):\n${err}")
  endif()
  message("${asm}")
endmacro()

function(count regex want)
  string(REGEX MATCHALL "${regex}" hits "${asm}")
  list(LENGTH hits n)
  if(NOT n EQUAL want)
    message(FATAL_ERROR "expected ${want} x '${regex}', found ${n}")
  endif()
endfunction()
