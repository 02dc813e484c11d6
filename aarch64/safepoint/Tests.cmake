# LLVM-lowered safepoint polls on AArch64, included by aarch64/CMakeLists.txt
# (whose functions and variables it uses):
#
#   poll.ll --opt jitlock-lower<thread=T> (polls=auto: the module's flag)-->
#      --llc AArch64 [-mattr=+lse]--> .o
#   .o + libjitlock_aarch64_safepoint_harness.a + the runtime --static link-->
#      safepoint_T_A --qemu-aarch64 -cpu max --threads 4--> "harness: PASS"
#
# Tests (labels aarch64 and safepoint), thread=tls and thread=call, each with
# the ARMv8.0 exclusive loops (nolse) and the ARMv8.1 CAS (lse) in the
# monitor the locked loop takes:
#
#   aarch64.safepoint.<T>.<A>   4 threads loop and poll while the harness
#                               takes 100 safepoints (no counter moves while
#                               one is held; every one moves once it is
#                               released) and handshakes each thread, then
#                               stops the loops
#
# The link is the harness's, so the runtime's TLS offset is the probe's
# (aarch64/harness.cpp), and the harness refuses code lowered for another.

set(safepoint_src "${here}/safepoint/poll.ll")
foreach(thread tls call)
  set(lowered "safepoint.${thread}")
  jitlock_aarch64_lower(${lowered} "${safepoint_src}" ${thread})
  foreach(atomics nolse lse)
    jitlock_aarch64_llc(${lowered} ${atomics})
    set(obj "${out}/${lowered}.${atomics}.o")
    set(exe "safepoint_${thread}_${atomics}")
    add_custom_command(OUTPUT "${out}/${exe}"
      COMMAND "${JITLOCK_AARCH64_CXX}" -static -pthread -o "${out}/${exe}"
              "${obj}"
              -Wl,--whole-archive "${safepoint_harness_lib}" "${rt_lib}"
              -Wl,--no-whole-archive -Wl,--require-defined=sp_count_locked
      DEPENDS "${obj}" "${safepoint_harness_lib}" "${rt_lib}"
              jitlock_aarch64_cross
      COMMENT "Linking AArch64 executable ${exe}"
      VERBATIM)
    list(APPEND all_outputs "${out}/${exe}")
    set(test aarch64.safepoint.${thread}.${atomics})
    add_test(NAME ${test}
      COMMAND ${qemu} "${out}/${exe}" --threads 4 --safepoints 100)
    set_tests_properties(${test} PROPERTIES
      LABELS "aarch64;safepoint" TIMEOUT 300 REQUIRED_FILES "${out}/${exe}"
      PASS_REGULAR_EXPRESSION "harness: PASS"
      FAIL_REGULAR_EXPRESSION "harness: (refusing to run|FAIL)")
  endforeach()
endforeach()
