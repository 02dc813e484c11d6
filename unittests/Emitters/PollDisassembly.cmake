# Disassembles the x86_64 safepoint poll and checks its shape. Run by CTest
# (unittests/Emitters/CMakeLists.txt):
#
#   cmake -DBASELINE=<jitlock-baseline> -DLLVM_MC=llvm-mc-19 -DOUT_DIR=<dir>
#         -P PollDisassembly.cmake
#
# jitlock-baseline writes the poll with its registers (Thread = r12) and
# llvm-mc disassembles it, as docs/emitters.md shows:
#
#   jitlock-baseline --dump-sequences DIR
#   llvm-mc-19 --disassemble -triple=x86_64 -output-asm-variant=1 DIR/poll.hex
#
# Checked, for both slow-path modes: P1 is one `test byte ptr [r12 + off],
# 1` (the poll word's armed byte, tested in memory: no register written)
# and one branch, `je` over the glue out of line, `jne` to the glue after
# the method's `ret` in Labels mode; the glue passes the thread alone (rdi,
# nothing into rsi), calls once, and writes nothing through the thread.
foreach(var BASELINE LLVM_MC OUT_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "PollDisassembly.cmake: -D${var}=... is required")
  endif()
endforeach()

file(MAKE_DIRECTORY "${OUT_DIR}")
execute_process(COMMAND "${BASELINE}" --dump-sequences "${OUT_DIR}"
  OUTPUT_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "jitlock-baseline --dump-sequences failed (${rc})")
endif()

function(disassemble name out)
  execute_process(
    COMMAND "${LLVM_MC}" --disassemble -triple=x86_64 -output-asm-variant=1
            "${OUT_DIR}/${name}.hex"
    OUTPUT_VARIABLE asm ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR err MATCHES "invalid")
    message(FATAL_ERROR "llvm-mc failed on ${name} (${rc}):\n${err}")
  endif()
  message("${name}:\n${asm}")
  set(${out} "${asm}" PARENT_SCOPE)
endfunction()

function(count asm regex want what)
  string(REGEX MATCHALL "${regex}" hits "${asm}")
  list(LENGTH hits n)
  if(NOT n EQUAL want)
    message(FATAL_ERROR "${what}: expected ${want} x '${regex}', found ${n}")
  endif()
endfunction()

set(p1 "^[\t ]*\\.text\n\ttest\tbyte ptr \\[r12 \\+ [0-9]+\\], 1\n")
foreach(name poll poll.labels)
  disassemble(${name} asm)
  count("${asm}" "\tcall\t" 1 ${name})
  count("${asm}" "\tmov\trdi, r12\n" 1 ${name})
  count("${asm}" "\t[a-z]+\trsi, " 0 ${name})
  count("${asm}" "\\[r12" 1 ${name})
  if(name STREQUAL "poll")
    if(NOT asm MATCHES "${p1}\tje\t[0-9]+\n\tpush\trbx\n")
      message(FATAL_ERROR "poll: not test/je over the glue")
    endif()
    count("${asm}" "\tj[a-z]+\t" 1 ${name})
  else()
    if(NOT asm MATCHES "${p1}\tjne\t[0-9]+\n\tret\n\tpush\trbx\n")
      message(FATAL_ERROR "poll.labels: not test/jne to the glue after ret")
    endif()
    if(NOT asm MATCHES "\tjmp\t-[0-9]+\n$")
      message(FATAL_ERROR "poll.labels: the glue does not jump back")
    endif()
  endif()
endforeach()
message(STATUS "x86_64 safepoint poll: as expected")
