# LLVM-lowered method-entry stack checks on AArch64, included by
# aarch64/CMakeLists.txt (whose functions and variables it uses):
#
#   recurse.ll --opt jitlock-lower<thread=T;bang=M>--> --llc AArch64--> .o
#   .o + libjitlock_aarch64_stackbang_harness.a + the runtime
#      --static link, -Wl,--wrap=jitlock_rt_stack_bang--> stackbang_M_T_A
#      --qemu-aarch64 -cpu max --mode M--> "harness: PASS"
#
# Tests (labels aarch64 and stackbang):
#
#   aarch64.stackbang.watermark.tls.lse     the fast path (no slow call once
#   aarch64.stackbang.watermark.call.nolse  the watermark is low enough) and
#                                           100 overflows caught by the entry
#                                           check, recovered in
#                                           jitlock_rt_call_guarded
#   aarch64.stackbang.always.tls.lse        no slow call; 10 overflows caught
#                                           by the SIGSEGV backstop
#
# The link is the harness's, so the runtime's TLS offset is the probe's
# (aarch64/harness.cpp), and the harness refuses code lowered for another.

set(stackbang_src "${here}/stackbang/recurse.ll")
foreach(variant watermark.tls.lse watermark.call.nolse always.tls.lse)
  string(REPLACE "." ";" parts "${variant}")
  list(GET parts 0 mode)
  list(GET parts 1 thread)
  list(GET parts 2 atomics)
  set(lowered "stackbang.${mode}.${thread}")
  jitlock_aarch64_lower(${lowered} "${stackbang_src}" ${thread}
    -DEXTRA_PARAMS=bang=${mode})
  jitlock_aarch64_llc(${lowered} ${atomics})
  set(obj "${out}/${lowered}.${atomics}.o")
  set(exe "stackbang_${mode}_${thread}_${atomics}")
  add_custom_command(OUTPUT "${out}/${exe}"
    COMMAND "${JITLOCK_AARCH64_CXX}" -static -pthread -o "${out}/${exe}"
            "${obj}" -Wl,--wrap=jitlock_rt_stack_bang
            -Wl,--whole-archive "${stackbang_harness_lib}" "${rt_lib}"
            -Wl,--no-whole-archive -Wl,--require-defined=sb_recurse
    DEPENDS "${obj}" "${stackbang_harness_lib}" "${rt_lib}"
            jitlock_aarch64_cross
    COMMENT "Linking AArch64 executable ${exe}"
    VERBATIM)
  list(APPEND all_outputs "${out}/${exe}")
  set(rounds 100)
  if(mode STREQUAL "always")
    set(rounds 10)
  endif()
  set(test aarch64.stackbang.${variant})
  add_test(NAME ${test}
    COMMAND ${qemu} "${out}/${exe}" --mode ${mode} --rounds ${rounds})
  set_tests_properties(${test} PROPERTIES
    LABELS "aarch64;stackbang" TIMEOUT 120 REQUIRED_FILES "${out}/${exe}"
    PASS_REGULAR_EXPRESSION "harness: PASS"
    FAIL_REGULAR_EXPRESSION "harness: (refusing to run|FAIL)")
endforeach()
