# Disassembles an emitted stack-bang sequence and checks its shape. Run by
# CTest (aarch64/emitters/Tests.cmake):
#
#   cmake -DQEMU=qemu-aarch64 -DTESTS=<jitlock-a64-emitter-tests>
#         -DLLVM_MC=llvm-mc-19 -DMODE=watermark|labels|always
#         -DOUT_DIR=<dir> -P StackBangDisassembly.cmake
#
# The test binary prints the sequence (thread in x28, scratch x16/x17, a
# 1024-byte frame, the runtime's default layout) and llvm-mc disassembles it,
# as docs/emitters.md shows:
#
#   qemu-aarch64 -cpu max jitlock-a64-emitter-tests --dump-stackbang labels > x.hex
#   llvm-mc-19 --disassemble -triple=aarch64-linux-gnu x.hex
#
# Checked: the watermark check is sub/ldr/cmp and one conditional branch
# with no store before it (b.hi over the glue out of line, b.ls to the glue
# in Labels mode), and the glue calls once (blr x16). Always is one
# `str wzr` per shadow page (20 by default) and neither branches nor calls.
include("${CMAKE_CURRENT_LIST_DIR}/DisassembleDump.cmake")
disassemble_dump(StackBangDisassembly.cmake stackbang)

set(check "^[\t ]*\\.text\n\tsub\tx16, sp, #1024\n\tldr\tx17, \\[x28, #[0-9]+\\]\n\tcmp\tx16, x17\n")
if(MODE STREQUAL "watermark")
  if(NOT asm MATCHES "${check}\tb\\.hi\t#[0-9]+\n\tmov\tx16, sp\n")
    message(FATAL_ERROR "not sub/ldr/cmp/b.hi followed by the glue")
  endif()
  count("\tblr\t" 1)
  count("\tb\\.ls\t" 0)
elseif(MODE STREQUAL "labels")
  if(NOT asm MATCHES "${check}\tb\\.ls\t#8\n\tret\n\tmov\tx16, sp\n")
    message(FATAL_ERROR "not sub/ldr/cmp/b.ls to the glue after the ret")
  endif()
  count("\tblr\t" 1)
  if(NOT asm MATCHES "\tb\t#-[0-9]+\n$")
    message(FATAL_ERROR "the glue does not end with a branch back")
  endif()
elseif(MODE STREQUAL "always")
  count("\tstr\twzr, \\[x16\\]\n" 20)
  count("\tstr\t" 20)
  count("\tb[.a-z]*\t" 0)
  count("\tblr\t" 0)
  count("\tldr\t" 0)
else()
  message(FATAL_ERROR "MODE=${MODE}: watermark, labels or always")
endif()
message(STATUS "stackbang ${MODE}: as expected")
