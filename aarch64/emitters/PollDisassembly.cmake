# Disassembles the AArch64 safepoint poll and checks its shape. Run by CTest
# (aarch64/emitters/Tests.cmake):
#
#   cmake -DQEMU=qemu-aarch64 -DTESTS=<jitlock-a64-emitter-tests>
#         -DLLVM_MC=llvm-mc-19 -DMODE=outofline|labels -DOUT_DIR=<dir>
#         -P PollDisassembly.cmake
#
# The test binary prints the poll (thread in x28, scratch x16, the runtime's
# default layout) and llvm-mc disassembles it, as docs/emitters.md shows:
#
#   qemu-aarch64 -cpu max jitlock-a64-emitter-tests --dump-poll labels > x.hex
#   llvm-mc-19 --disassemble -triple=aarch64-linux-gnu x.hex
#
# Checked: P1 is `ldrb w16, [x28, #off]` and one bit test, `tbz` over the
# glue out of line, `tbnz` to the glue after the method's `ret` in Labels
# mode; the glue keeps sp - 0x2b0 in its frame with the one scratch
# register and adds it back at the end, passes the thread alone (x0, and
# nothing into x1), calls once, and stores nothing through the thread.
include("${CMAKE_CURRENT_LIST_DIR}/DisassembleDump.cmake")
disassemble_dump(PollDisassembly.cmake poll)

set(p1 "^[\t ]*\\.text\n\tldrb\tw16, \\[x28, #[0-9]+\\]\n")
set(glue "\tsub\tx16, sp, #688\n\tand\tsp, x16, #0xfffffffffffffff0\n\tstr\tx16, \\[sp, #160\\]\n")
if(MODE STREQUAL "outofline")
  if(NOT asm MATCHES "${p1}\ttbz\tw16, #0, #[0-9]+\n${glue}")
    message(FATAL_ERROR "not ldrb/tbz followed by the one-scratch glue")
  endif()
  if(NOT asm MATCHES "\tldr\tx16, \\[sp, #160\\]\n\tadd\tsp, x16, #688\n$")
    message(FATAL_ERROR "the glue does not end by restoring sp")
  endif()
  count("\tb(\\.[a-z]+)?\t" 0)
elseif(MODE STREQUAL "labels")
  if(NOT asm MATCHES "${p1}\ttbnz\tw16, #0, #8\n\tret\n${glue}")
    message(FATAL_ERROR "not ldrb/tbnz to the glue after the ret")
  endif()
  if(NOT asm MATCHES "\tadd\tsp, x16, #688\n\tb\t#-[0-9]+\n$")
    message(FATAL_ERROR "the glue does not restore sp and branch back")
  endif()
else()
  message(FATAL_ERROR "MODE=${MODE}: outofline or labels")
endif()
count("\ttb[n]?z\t" 1)
count("\tblr\tx16\n" 1)
count("\tblr\t" 1)
count("\tmov\tx0, x28\n" 1)
count("\t(mov|ldr|add|sub|movz|movk)\tx1, " 0)
count("\tst[a-z]*\t[^\n]*\\[x28" 0)
message(STATUS "poll ${MODE}: as expected")
