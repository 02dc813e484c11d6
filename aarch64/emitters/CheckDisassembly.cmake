# Disassembles one emitted sequence and checks that it is the variant it
# claims to be. Run by CTest (aarch64/emitters/Tests.cmake):
#
#   cmake -DQEMU=qemu-aarch64 -DTESTS=<jitlock-a64-emitter-tests>
#         -DLLVM_MC=llvm-mc-19 -DOP=enter|exit -DATOMICS=lse|llsc
#         -DOUT_DIR=<dir> -P CheckDisassembly.cmake
#
# The test binary prints the sequence's bytes (--dump, under qemu) and
# llvm-mc disassembles them, as docs/emitters.md shows:
#
#   qemu-aarch64 -cpu max jitlock-a64-emitter-tests --dump enter lse > x.hex
#   llvm-mc-19 --disassemble -triple=aarch64-linux-gnu -mattr=+lse x.hex
#
# Checked: the atomics are the requested kind with the protocol's orderings
# (LSE: casa for E5/M1, casl for X4/N3; LL/SC: ldaxr/stxr and ldxr/stlxr
# loops that leave through clrex), one of each per CAS site, no barrier
# (dmb), a plain ldr for the header, the full lock-stack test before the
# header's bits are tested, and one absolute call (blr x16) in the
# out-of-line slow path.
foreach(var QEMU TESTS LLVM_MC OP ATOMICS OUT_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "CheckDisassembly.cmake: -D${var}=... is required")
  endif()
endforeach()

set(hex "${OUT_DIR}/emitted.${OP}.${ATOMICS}.hex")
execute_process(
  COMMAND ${QEMU} -cpu max "${TESTS}" --dump ${OP} ${ATOMICS}
  OUTPUT_FILE "${hex}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "--dump ${OP} ${ATOMICS} failed (${rc})")
endif()
execute_process(
  COMMAND "${LLVM_MC}" --disassemble -triple=aarch64-linux-gnu -mattr=+lse
          "${hex}"
  OUTPUT_VARIABLE asm ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR err MATCHES "invalid")
  message(FATAL_ERROR "llvm-mc failed (${rc}):\n${err}")
endif()
message("${asm}")

function(count mnemonic want)
  string(REGEX MATCHALL "[\t ]${mnemonic}[\t \n]" hits "${asm}\n")
  list(LENGTH hits n)
  if(NOT n EQUAL want)
    message(FATAL_ERROR "expected ${want} x '${mnemonic}', found ${n}")
  endif()
endfunction()

set(enter_lse 0)
set(exit_lse 0)
set(enter_llsc 0)
set(exit_llsc 0)
set(${OP}_${ATOMICS} 2)
count(casa ${enter_lse})
count(casl ${exit_lse})
count(ldaxr ${enter_llsc})
count(stxr ${enter_llsc})
count(ldxr ${exit_llsc})
count(stlxr ${exit_llsc})
if(ATOMICS STREQUAL "llsc")
  count(clrex 2)
else()
  count(clrex 0)
endif()
foreach(never cas casal ldar stlr ldaxp dmb)
  count(${never} 0)
endforeach()
count(blr 1)
if(OP STREQUAL "enter" AND NOT asm MATCHES "^[\t ]*\\.text[\n\t ]+ldr\tx9, \\[x0\\]\n\tldr\tw10, \\[x28\\]\n\tcmp\tw10, #128\n\tb\\.hs\t[^\n]*\n\ttbnz\tw9, #1,")
  message(FATAL_ERROR "enter does not start with E1 (ldr x9, [x0]), E2 (ldr w10, [x28]; cmp w10, #128; b.hs) and E3 (tbnz w9, #1)")
endif()
message(STATUS "${OP} ${ATOMICS}: as expected")
